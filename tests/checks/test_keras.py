"""The keras check: tf.keras as users reach it (Keras 3, legacy Keras through tf-keras), on constructed facts and
in real doctor runs (python -m tfdoctor --json) over fake TensorFlow and Keras packages."""

from __future__ import annotations

import shlex

from tfdoctor.checks.keras import keras, matching_tf_keras
from tfdoctor.results.model import Status

from tests import fakes
from tests.builders import ENV_SITE, tensorflow_environment
from tests.import_support import TF_KERAS_221, UNKNOWN, install_command
from tests.plan_support import as_result, intents, plan_of


def imported(keras_record=None, **changes) -> dict:
    tf = {"status": "ok", "imported": True, "stage": "done", "version": "2.21.0", "exit_code": 0, "signal": None,
          "timed_out": False, "stderr_tail": "", "keras": keras_record}
    tf.update(changes)
    return tf


KERAS3_OK = {"legacy_env": None, "legacy_requested": False, "flavor": "keras3", "module": "keras.src.layers.core.dense",
             "version": "3.15.1", "layer_ok": True, "step": "done", "error": None, "seconds": 0.06}


LEGACY_MISSING = {"legacy_env": "1", "legacy_requested": True, "flavor": None, "module": None, "version": None,
                  "layer_ok": False, "step": "resolve", "seconds": 0.01,
                  "error": {"type": "ImportError", "message": "Keras cannot be imported. Check that it is installed.",
                            "traceback": [], "causes": []}}


def test_keras3_building_a_layer_passes():
    outcome = keras.run(tensorflow_environment(tensorflow=imported(KERAS3_OK)))
    assert outcome.status is Status.PASS and "Keras 3 (3.15.1)" in outcome.summary


def test_legacy_keras_without_tf_keras_fails_naming_the_matching_release():
    facts = tensorflow_environment(tensorflow=imported(LEGACY_MISSING))
    outcome = keras.run(facts)
    assert outcome.status is Status.FAIL and "tf-keras is not installed" in outcome.summary
    assert intents(outcome) == [("install", (TF_KERAS_221,))]
    # tf-keras requires `tensorflow` by that name (companion table): with tensorflow-cpu, the plan installs it
    # --no-deps after its other requirements, so pip adds no second build
    plan = plan_of(facts, [as_result("keras", outcome)])
    assert shlex.split(plan.steps[-1].command)[-3:] == ["--no-deps", "--", TF_KERAS_221]
    assert "tensorflow" not in {shlex.split(step.command)[-1].split("=")[0] for step in plan.steps}


def test_legacy_keras_with_tf_keras_of_another_release():
    broken = dict(LEGACY_MISSING, flavor="tf-keras", module="tf_keras.src.layers.core.dense", version="2.15.1",
                  step="layer", error={"type": "AttributeError", "message": "module 'tensorflow' has no attribute 'x'"})
    facts = tensorflow_environment({"tf-keras": "2.15.1"}, tensorflow=imported(broken))
    outcome = keras.run(facts)
    assert outcome.status is Status.FAIL and "tf-keras 2.15.1 is made for another TensorFlow" in outcome.summary
    assert intents(outcome) == [("install", (TF_KERAS_221,))]
    working = dict(broken, error=None, layer_ok=True, step="done")
    outcome = keras.run(tensorflow_environment({"tf-keras": "2.15.1"}, tensorflow=imported(working)))
    assert outcome.status is Status.WARN and intents(outcome) == [("install", (TF_KERAS_221,))]


def test_an_unused_tf_keras_of_another_release_is_a_warning_naming_the_matching_one():
    outcome = keras.run(tensorflow_environment({"tf-keras": "2.15.1"}, tensorflow=imported(KERAS3_OK)))
    assert outcome.status is Status.WARN and "tf-keras 2.15.1 is installed" in outcome.summary
    assert intents(outcome) == [("install", (TF_KERAS_221,))]
    assert keras.run(tensorflow_environment({"tf-keras": "2.21.0"}, tensorflow=imported(KERAS3_OK))).status is Status.PASS


def test_keras_below_tensorflow_pin_is_tied_to_the_pin():
    error = {"type": "ModuleNotFoundError", "message": "No module named 'keras.src'", "causes": [],
             "traceback": [f'  File "{ENV_SITE}/keras/__init__.py", line 1, in <module>']}
    record = dict(KERAS3_OK, flavor="keras2", version="2.15.0", layer_ok=False, step="resolve", error=error)
    facts = tensorflow_environment({"keras": "2.15.0"}, tensorflow=imported(record))
    outcome = keras.run(facts)
    assert outcome.status is Status.FAIL and "keras 2.15.0 is outside tensorflow-cpu 2.21.0's keras>=3.12.0" in outcome.summary
    assert install_command(facts, outcome, "keras")[-2:] == ["keras>=3.12.0", "tensorflow-cpu==2.21.0"]


def test_keras_not_tried_or_not_recorded_is_a_skip():
    died = imported(None, status="crashed", stage="probe:timing", signal="SIGSEGV", exit_code=-11)
    assert "before it tried tf.keras" in keras.run(tensorflow_environment(tensorflow=died)).summary
    assert keras.run(tensorflow_environment(tensorflow=UNKNOWN)).status is Status.SKIP


def test_a_report_without_the_childs_keras_record_is_judged_from_the_tables():
    """Issue 38: an older report (no tf.keras record) or one without the child's facts at all is judged from the
    installed distributions: TensorFlow's own keras pin and TF_USE_LEGACY_KERAS as recorded, and says so."""
    older = keras.run(tensorflow_environment(tensorflow=imported(None)))
    assert older.status is Status.PASS and older.evidence["judged"] == "tables", older.summary
    assert "Keras 3 (3.15.1)" in older.summary and "judged from the installed distributions" in older.summary
    assert keras.run(tensorflow_environment(tensorflow=imported(KERAS3_OK))).evidence["judged"] == "import"
    assert keras.run(tensorflow_environment()).status is Status.PASS  # no tensorflow section at all


def test_legacy_keras_without_tf_keras_fails_from_the_tables_as_from_the_child():
    live = keras.run(tensorflow_environment(tensorflow=imported(LEGACY_MISSING)))
    saved = tensorflow_environment()
    saved["environment"] = {"TF_USE_LEGACY_KERAS": "1"}
    stripped = keras.run(saved)
    assert stripped.status is live.status is Status.FAIL and stripped.evidence["judged"] == "tables"
    assert [r.packages for r in stripped.remediation.repairs] == [r.packages for r in live.remediation.repairs]
    other = tensorflow_environment(extra=({"name": "tf-keras", "version": "2.15.1", "location": ENV_SITE},))
    other["environment"] = {"TF_USE_LEGACY_KERAS": "1"}
    assert keras.run(other).status is Status.FAIL and "tf-keras 2.15.1 is made for another" in keras.run(other).summary


def test_keras_of_another_series_than_tensorflows_pin_fails_from_the_tables():
    """keras 2.15 under TensorFlow 2.21 (keras>=3.12.0): tf.keras breaks, the same repair as the child's failure."""
    facts = tensorflow_environment({"keras": "2.15.0"})
    outcome = keras.run(facts)
    assert outcome.status is Status.FAIL and outcome.evidence["judged"] == "tables"
    assert "admits no Keras 2.x" in outcome.summary
    assert install_command(facts, outcome, "keras")[-2:] == ["keras>=3.12.0", "tensorflow-cpu==2.21.0"]
    # a list that does not say which Keras is installed is not judged
    assert keras.run(tensorflow_environment({"keras": None})).status is Status.SKIP


def test_a_crash_while_building_the_layer_fails():
    record = dict(KERAS3_OK, layer_ok=False, step="layer")
    outcome = keras.run(tensorflow_environment(tensorflow=imported(record, status="crashed", stage="keras", signal="SIGSEGV",
                                                       exit_code=-11)))
    assert outcome.status is Status.FAIL and "SIGSEGV" in outcome.summary


def test_matching_tf_keras():
    assert matching_tf_keras("2.16.2") == "tf-keras~=2.16.0" and matching_tf_keras("2.21.0rc1") == "tf-keras~=2.21.0"


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
