"""The project folder is read, not run (issue 35). A json.py, struct.py and binascii.py in the folder the
doctor runs from, each writing a marker file when imported: before, the doctor's own probes of the target
imported them (5 times for `--only platform-support`) and a plain json.py ended the run with "target
interpreter is unusable". Now every probe runs from an empty directory of its own, and the shadowing check
finds the files by reading the folder's names and asks to rename them.

Checked against main at 9527ef8 (this file copied into a worktree of main): both tests fail there (exit 2,
"unusable", and the markers written). The doctor runs as its console script does: its own sys.path does
not start with the working directory (`python -c` would put it there for the doctor itself)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests import fakes

CHECKOUT = Path(__file__).resolve().parents[2]
# sys.path[0] is the checkout, not '' (the working directory): as the console script's is its bin directory
_LAUNCH = "import sys; sys.path[0] = sys.argv.pop(1); from tfdoctor.__main__ import main; sys.exit(main())"
PLANTED = ("json", "struct", "binascii")


@pytest.fixture
def project(tmp_path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    for name in PLANTED:
        (folder / f"{name}.py").write_text(
            "import os\n"
            "with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), 'IMPORTED'), 'a') as _marker:\n"
            f"    _marker.write('{name} %d\\n' % os.getpid())\n", encoding="utf-8")
    return folder


def doctor(project: Path, fake: Path, *args: str) -> subprocess.CompletedProcess:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(project.parent / "home"), "PYTHONPATH": str(fake),
           "XDG_CACHE_HOME": str(project.parent / "cache"), "XDG_CONFIG_HOME": str(project.parent / "config"),
           "NO_COLOR": "1", "FAKE_TF_MODE": "cpu"}
    return subprocess.run([sys.executable, "-c", _LAUNCH, str(CHECKOUT), "--json", "--no-redact", *args],
                          capture_output=True, text=True, cwd=str(project), env=env, timeout=300)


def imported(project: Path) -> str:
    marker = project / "IMPORTED"
    return marker.read_text() if marker.exists() else ""


def test_a_whole_run_reports_the_files_and_imports_none_of_them(project, tmp_path):
    fake = fakes.functional(tmp_path / "fake")  # a TensorFlow that imports in a moment: its child runs too
    run = doctor(project, fake, "--no-probe")
    assert imported(project) == "", "the doctor's probes imported the project folder's files"
    assert run.returncode == 1, run.stderr
    report = json.loads(run.stdout)
    assert report["facts"]["tensorflow"]["status"] == "ok"
    shadowing = next(r for r in report["results"] if r["id"] == "shadowing")
    assert shadowing["status"] == "fail"
    shadows = {s["module"]: s for s in report["facts"]["python"]["module_origins"]["stdlib_shadows"]}
    assert set(shadows) == set(PLANTED)
    hiding = {h["module"] for h in shadowing["evidence"]["hiding"] if h.get("stdlib")}
    assert hiding == {name for name in PLANTED if not shadows[name]["masked_by"]} >= {"json", "struct"}
    steps = [step["command"] for step in report["plan"]["steps"]]
    for name in hiding:
        assert f"mv -- {project / name}.py {project / ('my_' + name)}.py" in steps


def test_only_platform_support_imports_nothing_of_the_folder(project, tmp_path):
    run = doctor(project, tmp_path / "no-fake", "--only", "platform-support")
    assert imported(project) == ""
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["results"][0]["id"] == "platform-support"
