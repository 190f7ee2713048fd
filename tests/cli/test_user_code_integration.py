"""What the user's code sees, with the test setup's real tensorflow-cpu, the doctor run for real from
temporary project folders: a script named tensorflow.py there, a PYTHONPATH that puts an old NumPy first, a
companion that imports tf_keras where none is installed. A clean folder stays clean.

Skipped only where the test setup installs no TensorFlow (see tests/integration_support.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.integration_support import MARKS

pytestmark = MARKS

DOCTOR = Path(sys.executable).with_name("tfdoctor")


def doctor(cwd: Path, **env: str) -> dict:
    """The `tfdoctor` command as a user runs it from `cwd` (not `python -m`, which would put cwd first for the
    doctor too), JSON, without the probe."""
    environ = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONNOUSERSITE")}
    environ.update(env)
    completed = subprocess.run([str(DOCTOR), "--json", "--no-probe"], capture_output=True, text=True, env=environ,
                               cwd=str(cwd), timeout=300)
    assert completed.stdout.strip(), completed.stderr
    return json.loads(completed.stdout)


def result(report: dict, check_id: str) -> dict:
    return next(r for r in report["results"] if r["id"] == check_id)


def test_a_clean_folder_passes_and_plans_nothing_for_it(tmp_path):
    report = doctor(tmp_path)
    assert result(report, "shadowing")["status"] == "pass"
    assert result(report, "tensorflow-import")["status"] == "pass"
    assert result(report, "companions")["status"] == "pass"
    assert report["facts"]["tensorflow"]["companions"] == []
    assert not [s for s in report["plan"]["steps"]
                if any(r["check"] in ("shadowing", "companions") for r in s["reasons"])]


def test_a_tensorflow_py_in_the_project_folder_fails_naming_that_file(tmp_path):
    """Read, never run (issue 35): the TensorFlow child imports the installation's TensorFlow from an empty
    directory, and the shadowing check names the project's file, which nothing of the doctor executes."""
    script = tmp_path / "tensorflow.py"
    script.write_text("import tensorflow as tf\nW = tf.Variable(tf.random_uniform([1], -1.0, 1.0))\n"
                      f"open({str(tmp_path / 'RAN')!r}, 'w').write('ran')\n")
    report = doctor(tmp_path)
    assert not (tmp_path / "RAN").exists(), "the doctor ran the project folder's tensorflow.py"
    shadow = result(report, "shadowing")
    assert shadow["status"] == "fail" and str(script) in shadow["summary"]
    assert "working directory" in shadow["summary"]
    assert result(report, "tensorflow-import")["status"] == "pass"  # the installation's TensorFlow is fine
    steps = report["plan"]["steps"]
    assert [s["action"] for s in steps] == ["rename"] and steps[0]["manual"]
    assert steps[0]["command"] == f"mv -- {script} {tmp_path / 'my_tensorflow.py'}"


@pytest.fixture(scope="module")
def old_numpy(tmp_path_factory) -> Path:
    """NumPy 1.23.5 unpacked into a directory of its own, as `pip install --target` leaves it."""
    target = tmp_path_factory.mktemp("old-numpy")
    completed = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target),
                                "numpy==1.23.5"], capture_output=True, text=True, timeout=600)
    if completed.returncode != 0:
        pytest.skip(f"no NumPy 1.23.5 wheel reachable for this Python: {completed.stderr.strip()[-200:]}")
    return target


def test_pythonpath_hiding_an_old_numpy_fails_naming_pythonpath_and_installs_nothing(tmp_path, old_numpy):
    report = doctor(tmp_path, PYTHONPATH=str(old_numpy))
    shadow = result(report, "shadowing")
    assert shadow["status"] == "fail"
    assert shadow["summary"].startswith(f"`import numpy` imports {old_numpy}/numpy/__init__.py (numpy 1.23.5) from "
                                        f"the PYTHONPATH entry {old_numpy}")
    module = next(m for m in report["facts"]["python"]["module_origins"]["modules"] if m["module"] == "numpy")
    assert module["kind"] == "PYTHONPATH"
    # dependencies blames the old NumPy's pins, but no install step: PYTHONPATH would still come first
    assert result(report, "dependencies")["status"] in ("warn", "fail")
    steps = report["plan"]["steps"]
    assert [s["command"] for s in steps] == ["unset PYTHONPATH"]
    held = [repair for r in report["results"] if r["status"] in ("warn", "fail") and r["remediation"]
            for repair in r["remediation"]["repairs"] if repair["action"] not in ("set-env", "unset-env", "rename")]
    assert bool(held) == any("held back" in note for note in report["plan"]["notes"])


def test_a_companion_that_imports_tf_keras_without_it_fails_and_the_plan_adds_the_tf_keras_made_for_it(tmp_path):
    """A stand-in for tensorflow-probability 0.24+, which imports tf_keras once TensorFlow is loaded."""
    libs = tmp_path / "libs" / "tensorflow_probability"
    libs.mkdir(parents=True)
    (libs / "__init__.py").write_text("import tensorflow as tf\nimport tf_keras\n")
    project = tmp_path / "project"
    project.mkdir()
    report = doctor(project, PYTHONPATH=str(libs.parent))
    (recorded,) = report["facts"]["tensorflow"]["companions"]
    assert recorded["module"] == "tensorflow_probability" and recorded["status"] == "failed"
    assert recorded["exception"]["message"] == "No module named 'tf_keras'"
    companion = result(report, "companions")
    assert companion["status"] == "fail" and "needs tf-keras" in companion["summary"]
    assert result(report, "shadowing")["status"] == "pass" and result(report, "tensorflow-import")["status"] == "pass"
    plan = report["plan"]
    assert not plan["conflicts"] and plan["moves_tensorflow"] is None
    installs = [p for s in plan["steps"] if s["action"] == "install" for p in s["packages"]]
    assert any(p.startswith("tf-keras") and "2.21" in p for p in installs), installs
