"""Pre-flight on this machine, through real `python -m tfdoctor` runs in a directory whose pyproject.toml
sets [tool.tfdoctor]; and the Python API giving the CLI's verdict."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def tfdoctor(cwd: Path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tfdoctor", *args], capture_output=True, text=True, cwd=str(cwd),
                          timeout=300, env=env)


def requirements_result(run: subprocess.CompletedProcess) -> dict:
    document = json.loads(run.stdout)
    return next(r for r in document["results"] if r["id"] == "requirements")


@pytest.fixture(scope="module")
def require_gpu(tmp_path_factory) -> tuple[Path, subprocess.CompletedProcess]:
    """A project that requires a GPU, and one run of the doctor in it (both tests below read it)."""
    project = tmp_path_factory.mktemp("require-gpu")
    (project / "pyproject.toml").write_text('[project]\nname = "team"\n\n[tool.tfdoctor]\nrequire-gpu = true\n')
    return project, tfdoctor(project, "--format", "json", "--no-probe")


def listed_gpus(run: subprocess.CompletedProcess) -> list[dict]:
    """The GPUs the TensorFlow of this interpreter lists, as the doctor's child recorded them."""
    devices = json.loads(run.stdout)["facts"]["tensorflow"].get("devices") or []
    return [device for device in devices if device.get("device_type") == "GPU"]


def test_require_gpu_on_a_cpu_only_machine_fails_the_run(require_gpu):
    _, run = require_gpu
    if listed_gpus(run):
        pytest.skip("this machine has a GPU TensorFlow uses")
    assert run.returncode == 1, run.stderr
    result = requirements_result(run)
    assert result["status"] == "fail" and result["summary"].startswith("a GPU required: TensorFlow lists no GPU")
    assert json.loads(run.stdout)["facts"]["requirements"]["gpu"] == "any"


def test_a_tensorflow_specifier_names_the_installed_version(tmp_path):
    from importlib.metadata import version

    installed = next(version(name) for name in ("tensorflow-cpu", "tensorflow") if _has(name))
    (tmp_path / "pyproject.toml").write_text('[tool.tfdoctor]\ntensorflow = ">=2.99"\n')
    run = tfdoctor(tmp_path, "--format", "json", "--only", "requirements")
    assert run.returncode == 1
    assert requirements_result(run)["summary"] == f"TensorFlow >=2.99 required: {installed} is installed"


def _has(name: str) -> bool:
    from importlib.metadata import PackageNotFoundError, version

    try:
        version(name)
        return True
    except PackageNotFoundError:
        return False


def test_without_requirements_the_check_skips_and_the_report_has_none(tmp_path):
    run = tfdoctor(tmp_path, "--format", "json", "--only", "requirements,platform-support")
    document = json.loads(run.stdout)
    assert "requirements" not in document["facts"]
    assert requirements_result(run)["status"] == "skip" and requirements_result(run)["summary"] == "no requirements set"
    assert run.returncode == 0


def test_flags_override_the_file_and_explain_judges_the_saved_requirements(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.tfdoctor]\ntensorflow = ">=2.99"\n')
    run = tfdoctor(tmp_path, "--format", "json", "--only", "requirements", "--require-tensorflow", ">=2.0")
    assert run.returncode == 0 and requirements_result(run)["status"] == "pass"
    saved = tmp_path / "report.json"
    saved.write_text(run.stdout)
    again = tfdoctor(ROOT, "explain", str(saved), "--format", "json")
    assert requirements_result(again)["status"] == "pass"
    stricter = tfdoctor(ROOT, "explain", str(saved), "--format", "json", "--require-tensorflow", ">=2.99")
    assert stricter.returncode == 1 and requirements_result(stricter)["status"] == "fail"


def test_the_api_gives_the_cli_verdict(require_gpu):
    project, cli = require_gpu
    code = ("import tfdoctor; r = tfdoctor.diagnose(probe=False); "
            "print(r.ok, r.exit_code, r.results['requirements'].status.value)")
    api = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=str(project), timeout=300)
    cli_status = requirements_result(cli)["status"]
    assert api.stdout.split() == [str(cli.returncode == 0), str(cli.returncode), cli_status], api.stderr


def test_requirements_are_judged_even_when_only_narrows_the_run(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.tfdoctor]\ntensorflow = ">=2.99"\nonly = ["platform-support"]\n')
    run = tfdoctor(tmp_path, "--format", "json")
    assert [r["id"] for r in json.loads(run.stdout)["results"]] == ["platform-support", "requirements"]
    assert run.returncode == 1
