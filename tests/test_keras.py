"""tf.keras as users reach it, in a real doctor run (`python -m tfdoctor --json`) over fake TensorFlow
and Keras packages on PYTHONPATH: TensorFlow imports while its Keras is missing, of another release, or
fails to build a layer; the report must fail in the keras check and name the fix."""

from __future__ import annotations

import shlex

from tests import fakes

MINE = ("--only", "tensorflow-import,keras", "--no-probe")
PACKAGE = {"FAKE_TF_KERAS": "package"}  # the fake routes tf.keras the way TensorFlow 2.16+ does


def assert_plans_tf_keras(run: fakes.DoctorRun, keras: dict) -> None:
    """The keras check asks for the tf-keras of the installed TensorFlow (2.99.0, from its dist-info), and the
    report's plan installs it, keeping that TensorFlow where it is."""
    fix = keras["remediation"]
    assert fix["commands"] == []
    assert [(r["action"], r["packages"]) for r in fix["repairs"]] == [("install", ["tf-keras~=2.99.0"])]
    (number,) = fix["plan_steps"]
    step = run.report["plan"]["steps"][number - 1]
    assert shlex.split(step["command"])[-2:] == ["tf-keras~=2.99.0", "tensorflow==2.99.0"]


def results(run: fakes.DoctorRun) -> tuple[dict, dict]:
    assert run.report is not None, run.stderr
    return run.result("tensorflow-import"), run.result("keras")


def test_a_working_keras_passes_and_is_recorded(tmp_path):
    run = fakes.run_doctor(fakes.functional(tmp_path), *MINE)
    imported, keras = results(run)
    assert run.returncode == 0 and imported["status"] == "pass" and keras["status"] == "pass"
    record = run.tensorflow["keras"]
    assert record["layer_ok"] is True and record["step"] == "done" and record["error"] is None
    assert record["flavor"] == "builtin" and run.tensorflow["stage"] == "done"


def test_a_keras_whose_layer_fails_turns_an_all_pass_report_into_a_fail(tmp_path):
    root = fakes.install_keras(fakes.functional(tmp_path), layer_error=(
        "cannot import name 'runtime_version' from 'google.protobuf' (/env/google/protobuf/__init__.py)"))
    run = fakes.run_doctor(root, *MINE, extra_env=PACKAGE)
    imported, keras = results(run)
    assert imported["status"] == "pass"
    assert run.returncode == 1 and keras["status"] == "fail"
    record = run.tensorflow["keras"]
    assert record["flavor"] == "keras3" and record["version"] == "3.99.0" and record["step"] == "layer"
    assert record["error"]["type"] == "ImportError" and "runtime_version" in record["error"]["message"]
    assert record["error"]["traceback"], "the error is recorded as the import's is, with its traceback"
    assert keras["evidence"]["signatures"][0] == "protobuf-without-runtime-version"


def test_legacy_keras_without_tf_keras(tmp_path):
    run = fakes.run_doctor(fakes.functional(tmp_path), *MINE, extra_env={**PACKAGE, "TF_USE_LEGACY_KERAS": "1"})
    _, keras = results(run)
    assert run.returncode == 1 and keras["status"] == "fail"
    assert run.tensorflow["keras"]["legacy_env"] == "1" and run.tensorflow["keras"]["step"] == "resolve"
    assert "tf-keras is not installed" in keras["summary"]
    assert_plans_tf_keras(run, keras)


def test_legacy_keras_with_a_tf_keras_of_another_release(tmp_path):
    root = fakes.install_keras(fakes.functional(tmp_path), package="tf_keras", version="2.15.1",
                               layer_error="module 'tensorflow' has no attribute 'internal_'")
    run = fakes.run_doctor(root, *MINE, extra_env={**PACKAGE, "TF_USE_LEGACY_KERAS": "true"})
    _, keras = results(run)
    assert keras["status"] == "fail" and run.tensorflow["keras"]["flavor"] == "tf-keras"
    assert "tf-keras 2.15.1 is made for another TensorFlow than 2.99.0" in keras["summary"]
    assert_plans_tf_keras(run, keras)
