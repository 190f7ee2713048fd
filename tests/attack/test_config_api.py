"""A careless or hostile [tool.tfdoctor] and Python API call: every refusal is one line naming the file
and the key (exit 2 on the command line, DoctorError from the API), never a guess, a traceback or a
silently ignored setting."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import tfdoctor
from tfdoctor.diagnosis.config import MAX_BYTES, ConfigError, load_config, parse_table

FIXTURE = str(Path(__file__).resolve().parents[2] / "fixtures" / "linux" / "nvidia-smi-hangs.json")


def tfdoctor_cli(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")}
    return subprocess.run([sys.executable, "-m", "tfdoctor", *args], capture_output=True, text=True, cwd=str(cwd),
                          timeout=300, env=env)


def refused(run: subprocess.CompletedProcess, *parts: str) -> None:
    assert run.returncode == 2 and run.stdout == "", run.stderr
    assert run.stderr.count("\n") == 1 and run.stderr.startswith("tfdoctor: error: "), run.stderr
    for part in parts:
        assert part in run.stderr, run.stderr


# --- require-gpu: booleans and the kinds, nothing that merely reads as one --------------------------

@pytest.mark.parametrize("value", ["yes", "no", "true", "false", "1", "0", "on", ""])
def test_require_gpu_strings_that_read_as_booleans_are_refused_alike(value):
    with pytest.raises(ConfigError, match=r"^f: tool.tfdoctor.require-gpu: must be true, false, \"any\""):
        parse_table({"require-gpu": value}, "f", "tool.tfdoctor.")


@pytest.mark.parametrize("value, kind", [(True, "any"), (False, None), ("any", "any"), ("Metal", "metal"), (" cuda", "cuda")])
def test_require_gpu_accepts_booleans_and_kinds(value, kind):
    assert parse_table({"require-gpu": value}, "f").requirements.gpu == kind


def test_require_gpu_yes_on_the_command_line_side_too(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.tfdoctor]\nrequire-gpu = "yes"\n')
    refused(tfdoctor_cli(tmp_path, "--no-probe", "--only", "memory"),
            f"{tmp_path / 'pyproject.toml'}: tool.tfdoctor.require-gpu: must be true, false")
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "pyproject.toml").parent.mkdir()
    (elsewhere / "pyproject.toml").write_text('[project]\nname = "x"\n')  # the nearest, without [tool.tfdoctor]
    refused(tfdoctor_cli(elsewhere, "--require-gpu-kind", "yes", "--no-probe"), "--require-gpu-kind: must be")


# --- the file itself ------------------------------------------------------------------------------

def test_a_pyproject_that_is_a_directory_is_an_error_naming_it(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.tfdoctor]\nrequire-gpu = true\n')  # would be read instead
    project = tmp_path / "project"
    (project / "pyproject.toml").mkdir(parents=True)
    refused(tfdoctor_cli(project, "--no-probe", "--only", "memory"), f"{project / 'pyproject.toml'}: not a file")
    with pytest.raises(ConfigError, match="not a file"):
        load_config(cwd=project)


def test_a_dangling_pyproject_link_is_an_error_naming_it(tmp_path):
    (tmp_path / "pyproject.toml").symlink_to(tmp_path / "gone.toml")
    with pytest.raises(ConfigError, match=f"^{tmp_path / 'pyproject.toml'}: not a file"):
        load_config(cwd=tmp_path)


def test_a_huge_configuration_is_refused_naming_the_file(tmp_path):
    big = tmp_path / "pyproject.toml"
    big.write_text("[tool.tfdoctor]\nstrict = true\n" + "# padding\n" * (MAX_BYTES // 10 + 1))
    refused(tfdoctor_cli(tmp_path, "--no-probe", "--only", "memory"), f"{big}: larger than 1 MiB")
    refused(tfdoctor_cli(tmp_path, "explain", FIXTURE, "--config", str(big)), f"{big}: larger than 1 MiB")


def test_an_unknown_check_in_only_or_skip_names_the_file_and_key(tmp_path):
    config = tmp_path / "pyproject.toml"
    config.write_text('[tool.tfdoctor]\nonly = ["memory", "nope"]\n')
    refused(tfdoctor_cli(tmp_path, "--no-probe"), f"{config}: tool.tfdoctor.only: unknown check id nope")
    refused(tfdoctor_cli(tmp_path, "explain", FIXTURE, "--config", str(config)),
            f"{config}: tool.tfdoctor.only: unknown check id nope")
    config.write_text('[tool.tfdoctor]\nskip = "memory,gpu-visibel"\n')
    refused(tfdoctor_cli(tmp_path, "--no-probe"), f"{config}: tool.tfdoctor.skip: unknown check id gpu-visibel")
    with pytest.raises(tfdoctor.DoctorError, match="^config argument: only: unknown check id nope"):
        tfdoctor.diagnose(config={"only": ["nope"]})


@pytest.mark.parametrize("key", ["tensorflow", "python"])
@pytest.mark.parametrize("value", ["", "   "])
def test_an_empty_specifier_is_refused(key, value):
    with pytest.raises(ConfigError, match=f"^f: {key}: must not be empty"):
        parse_table({key: value}, "f")


def test_an_empty_specifier_in_the_file_exits_2(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.tfdoctor]\ntensorflow = ""\n')
    refused(tfdoctor_cli(tmp_path, "--no-probe", "--only", "memory"), "tool.tfdoctor.tensorflow: must not be empty")


# --- the Python API -------------------------------------------------------------------------------

@pytest.mark.parametrize("argument", [5, None, 3.5, b"report.json", ["report.json"], object()])
def test_explain_of_something_that_is_no_report_raises_doctor_error(argument):
    with pytest.raises(tfdoctor.DoctorError, match="explain\\(\\) takes a path"):
        tfdoctor.explain(argument)


@pytest.mark.parametrize("document", [{"facts": {1, 2}}, {"schema_version": "1.0", "facts": {"x": b"y"}}])
def test_explain_of_a_dict_that_is_not_json_raises_doctor_error(document):
    with pytest.raises(tfdoctor.DoctorError, match="not JSON"):
        tfdoctor.explain(document)


@pytest.mark.parametrize("timeout", [0, -1, 0.5, float("nan"), float("inf"), True, "60"])
def test_diagnose_refuses_a_timeout_that_cannot_be_one(timeout):
    with pytest.raises(tfdoctor.DoctorError, match="^timeout: must be a number of seconds, 1 or more"):
        tfdoctor.diagnose(timeout=timeout, probe=False, only=["memory"], config={})
