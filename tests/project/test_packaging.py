"""The installed package: checks/ ships as tfdoctor.checks (never a top-level `checks`), with its data,
from a wheel and from an editable install alike."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import tfdoctor.checks

import tfdoctor

ROOT = Path(__file__).resolve().parents[2]

PROBE = (
    "import importlib.util, json, tfdoctor, tfdoctor.checks;"
    "from tfdoctor.checking.registry import all_checks;"
    "from tfdoctor import knowledge;"
    "from tfdoctor.schema import report_schema;"
    "print(json.dumps({'package': tfdoctor.__file__, 'checks': tfdoctor.checks.__file__,"
    " 'ids': [c.id for c in all_checks()], 'knowledge': knowledge.names(),"
    " 'schema': report_schema()['title'], 'top_level_checks': importlib.util.find_spec('checks') is not None}))"
)


def _describe(env: dict[str, str], cwd: Path) -> dict:
    import json

    out = subprocess.run([sys.executable, "-c", PROBE], cwd=cwd, env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(ROOT)],
                   check=True, capture_output=True)
    return next(out.glob("tfdoctor-*.whl"))


def test_wheel_maps_checks_into_the_tfdoctor_namespace(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    assert "tfdoctor/checks/__init__.py" in names
    assert not any(n.startswith("checks/") for n in names), "no generic top-level 'checks' package"
    for source in sorted((ROOT / "checks").glob("*.py")):
        assert f"tfdoctor/checks/{source.name}" in names
    for data in sorted((ROOT / "tfdoctor").rglob("*")):
        if data.suffix in (".toml", ".json", ".py", ".html", ".css", ".mako") and "__pycache__" not in data.parts:
            assert data.relative_to(ROOT).as_posix() in names, f"{data} missing from the wheel"


def test_wheel_install_runs_from_its_own_files(wheel, tmp_path):
    target = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(target), str(wheel)],
                   check=True, capture_output=True)
    env = {**os.environ, "PYTHONPATH": str(target)}
    described = _describe(env, tmp_path)
    assert described["package"].startswith(str(target))
    assert described["checks"].startswith(str(target / "tfdoctor" / "checks"))
    assert len(described["ids"]) >= 12 and described["knowledge"] and described["schema"] == "tfdoctor report"
    assert described["top_level_checks"] is False


def test_editable_install_serves_checks_from_the_repository(tmp_path):
    # The test suite runs against an editable install (README's test command uses `pip install -e`).
    assert Path(tfdoctor.checks.__file__).resolve() == (ROOT / "checks" / "__init__.py").resolve()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    described = _describe(env, tmp_path)
    assert Path(described["checks"]).resolve() == (ROOT / "checks" / "__init__.py").resolve()
    assert described["top_level_checks"] is False
