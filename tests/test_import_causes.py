"""An import error tied to its cause (tfdoctor/facts/import_causes.py) and the tensorflow-import and keras
checks on constructed facts: the error texts are the real ones reproduced on tensorflow-cpu 2.21.0 with
one dependency swapped (their signatures cite public reports of the same texts)."""

from __future__ import annotations

import shlex

from tfdoctor.checks.keras import keras, matching_tf_keras
from tfdoctor.checks.tensorflow_import import tensorflow_import
from tfdoctor.facts import import_causes
from tfdoctor.model import Status
from tests.plan_support import as_result, intents, plan_of
from tests.import_support import H5PY_FOR_NUMPY1, LIBRARY_MISSING, ML_DTYPES_TOO_OLD, PROTOBUF_TOO_OLD, SITE, TF_KERAS_221, UNKNOWN, facts_with, failed_import, install_command











def test_the_modules_an_error_names_map_to_installed_distributions():
    facts = facts_with(tensorflow=PROTOBUF_TOO_OLD)
    assert import_causes.named_distributions(facts, PROTOBUF_TOO_OLD["exception"])[:2] == ["protobuf", "tensorflow-cpu"]
    assert "h5py" in import_causes.named_distributions(facts, H5PY_FOR_NUMPY1["exception"])
    assert import_causes.named_distributions(facts, ML_DTYPES_TOO_OLD["exception"])[0] == "ml-dtypes"


def test_protobuf_below_the_pin_names_the_pin_and_repairs_it_keeping_tensorflow():
    facts = facts_with({"protobuf": "3.20.3"}, tensorflow=PROTOBUF_TOO_OLD)
    outcome = tensorflow_import.run(facts)
    assert outcome.status is Status.FAIL
    assert "protobuf 3.20.3 is outside tensorflow-cpu 2.21.0's protobuf<8.0.0,>=6.31.1" in outcome.summary
    assert outcome.evidence["explained_by"] == "dependencies"
    (repair,) = outcome.remediation.repairs
    assert repair.packages == ("protobuf<8.0.0,>=6.31.1",) and repair.reason.startswith("protobuf 3.20.3 is outside")
    assert install_command(facts, outcome)[-2:] == ["protobuf<8.0.0,>=6.31.1", "tensorflow-cpu==2.21.0"]
    assert "does not know" not in outcome.remediation.advice


def test_numpy_is_not_blamed_alone_when_protobuf_breaks_too():
    # TensorFlow 2.15 with NumPy 2 and protobuf 5: the import dies of the NumPy error, but the printed fix
    # must satisfy both pins or TensorFlow stays broken after it (issue 11, "Why")
    tf215 = ["protobuf!=4.21.0,!=4.21.1,!=4.21.2,!=4.21.3,!=4.21.4,!=4.21.5,<5.0.0dev,>=3.20.3",
             "numpy<2.0.0,>=1.23.5", "ml-dtypes~=0.2.0"]
    tensorflow = failed_import("ImportError", "numpy.core.multiarray failed to import",
                               [f"{SITE}/tensorflow/__init__.py", f"{SITE}/tensorflow/python/pywrap_tensorflow.py"])
    tensorflow["stderr_tail"] = ("A module that was compiled using NumPy 1.x cannot be run in\nNumPy 2.0.0 as it may "
                                 "crash. To support both 1.x and 2.x\nversions of NumPy, modules must be compiled with "
                                 "NumPy 2.0.")
    facts = facts_with({"numpy": "2.0.0", "protobuf": "5.28.3", "ml-dtypes": "0.2.0"}, requires=tf215,
                       tf_version="2.15.1", tensorflow=tensorflow)
    outcome = tensorflow_import.run(facts)
    assert outcome.status is Status.FAIL and "numpy 2.0.0 is outside" in outcome.summary
    words = install_command(facts, outcome)
    assert "numpy<2.0.0,>=1.23.5" in words and any(w.startswith("protobuf") and "<5.0.0dev" in w for w in words)
    assert words[-1] == "tensorflow-cpu==2.15.1"


def test_ml_dtypes_and_h5py_below_their_pins():
    facts = facts_with({"ml-dtypes": "0.4.1"}, tensorflow=ML_DTYPES_TOO_OLD)
    outcome = tensorflow_import.run(facts)
    assert outcome.status is Status.FAIL and "ml-dtypes 0.4.1 is outside" in outcome.summary
    assert "ml-dtypes-missing-type" in outcome.evidence["signatures"]
    assert "ml-dtypes<1.0.0,>=0.5.1" in install_command(facts, outcome)
    facts = facts_with({"h5py": "3.8.0"}, tensorflow=H5PY_FOR_NUMPY1)
    outcome = tensorflow_import.run(facts)
    assert "h5py 3.8.0 is outside" in outcome.summary and "h5py<3.15.0,>=3.11.0" in install_command(facts, outcome)


def test_a_signature_with_every_pin_held_keeps_its_own_fix():
    # gencode 6.31.1 and runtime 5.29.3 with a TensorFlow whose metadata allows both: the error's own numbers
    tensorflow = failed_import(
        "google.protobuf.runtime_version.VersionError", "Detected mismatched Protobuf Gencode/Runtime major versions "
        "when loading tensorflow/core/framework/attr_value.proto: gencode 6.31.1 runtime 5.29.3. Same major version "
        "is required. See Protobuf version guarantees at https://protobuf.dev/support/cross-version-runtime-guarantee.",
        [f"{SITE}/tensorflow/__init__.py", f"{SITE}/google/protobuf/runtime_version.py"])
    facts = facts_with({"protobuf": "5.29.3"}, requires=["protobuf>=5.28.0"], tensorflow=tensorflow)
    outcome = tensorflow_import.run(facts)
    assert outcome.evidence["signatures"][0] == "protobuf-runtime-older-than-gencode"
    assert "explained_by" not in outcome.evidence
    assert install_command(facts, outcome)[-2:] == ["protobuf>=6.31.1,<7", "tensorflow-cpu==2.21.0"]


def test_a_library_missing_from_the_install_is_reinstalled_exactly():
    integrity = {"distributions": [{"name": "tensorflow-cpu", "version": "2.21.0", "record": True, "problems": [
        {"path": "tensorflow/libtensorflow_framework.so.2", "problem": "missing", "expected_size": 40000000}]}]}
    facts = facts_with(tensorflow=LIBRARY_MISSING, integrity=integrity)
    outcome = tensorflow_import.run(facts)
    assert outcome.status is Status.FAIL and outcome.evidence["explained_by"] == "install-integrity"
    assert "tensorflow/libtensorflow_framework.so.2 is missing" in outcome.summary
    assert install_command(facts, outcome)[-3:] == ["--force-reinstall", "--no-deps", "tensorflow-cpu==2.21.0"]
    # without the integrity facts (an older report) the signature gives the same repair
    facts = facts_with(tensorflow=LIBRARY_MISSING)
    outcome = tensorflow_import.run(facts)
    assert outcome.evidence["signatures"][0] == "tensorflow-library-missing"
    assert install_command(facts, outcome)[-3:] == ["--force-reinstall", "--no-deps", "tensorflow-cpu==2.21.0"]


def test_an_unknown_error_with_unmet_pins_is_tied_to_them_not_unknown():
    outcome = tensorflow_import.run(facts_with({"protobuf": "5.29.3"}, tensorflow=UNKNOWN))
    assert outcome.evidence["explained_by"] == "dependencies"
    assert "does not know" not in outcome.remediation.advice
    # a healthy environment: the error stays unknown, said plainly
    outcome = tensorflow_import.run(facts_with(tensorflow=UNKNOWN))
    assert "does not know" in outcome.remediation.advice and "explained_by" not in outcome.evidence


# ------------------------------------------------------------------------------------------------- keras

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
    outcome = keras.run(facts_with(tensorflow=imported(KERAS3_OK)))
    assert outcome.status is Status.PASS and "Keras 3 (3.15.1)" in outcome.summary


def test_legacy_keras_without_tf_keras_fails_naming_the_matching_release():
    facts = facts_with(tensorflow=imported(LEGACY_MISSING))
    outcome = keras.run(facts)
    assert outcome.status is Status.FAIL and "tf-keras is not installed" in outcome.summary
    assert intents(outcome) == [("install", (TF_KERAS_221,))]
    # tf-keras requires `tensorflow` by that name (companion table): with tensorflow-cpu, the plan installs it
    # --no-deps after its other requirements, so pip adds no second build
    plan = plan_of(facts, [as_result("keras", outcome)])
    assert shlex.split(plan.steps[-1].command)[-2:] == ["--no-deps", TF_KERAS_221]
    assert "tensorflow" not in {shlex.split(step.command)[-1].split("=")[0] for step in plan.steps}


def test_legacy_keras_with_tf_keras_of_another_release():
    broken = dict(LEGACY_MISSING, flavor="tf-keras", module="tf_keras.src.layers.core.dense", version="2.15.1",
                  step="layer", error={"type": "AttributeError", "message": "module 'tensorflow' has no attribute 'x'"})
    facts = facts_with({"tf-keras": "2.15.1"}, tensorflow=imported(broken))
    outcome = keras.run(facts)
    assert outcome.status is Status.FAIL and "tf-keras 2.15.1 is made for another TensorFlow" in outcome.summary
    assert intents(outcome) == [("install", (TF_KERAS_221,))]
    working = dict(broken, error=None, layer_ok=True, step="done")
    outcome = keras.run(facts_with({"tf-keras": "2.15.1"}, tensorflow=imported(working)))
    assert outcome.status is Status.WARN and intents(outcome) == [("install", (TF_KERAS_221,))]


def test_an_unused_tf_keras_of_another_release_is_a_warning_naming_the_matching_one():
    outcome = keras.run(facts_with({"tf-keras": "2.15.1"}, tensorflow=imported(KERAS3_OK)))
    assert outcome.status is Status.WARN and "tf-keras 2.15.1 is installed" in outcome.summary
    assert intents(outcome) == [("install", (TF_KERAS_221,))]
    assert keras.run(facts_with({"tf-keras": "2.21.0"}, tensorflow=imported(KERAS3_OK))).status is Status.PASS


def test_keras_below_tensorflow_pin_is_tied_to_the_pin():
    error = {"type": "ModuleNotFoundError", "message": "No module named 'keras.src'", "causes": [],
             "traceback": [f'  File "{SITE}/keras/__init__.py", line 1, in <module>']}
    record = dict(KERAS3_OK, flavor="keras2", version="2.15.0", layer_ok=False, step="resolve", error=error)
    facts = facts_with({"keras": "2.15.0"}, tensorflow=imported(record))
    outcome = keras.run(facts)
    assert outcome.status is Status.FAIL and "keras 2.15.0 is outside tensorflow-cpu 2.21.0's keras>=3.12.0" in outcome.summary
    assert install_command(facts, outcome, "keras")[-2:] == ["keras>=3.12.0", "tensorflow-cpu==2.21.0"]


def test_keras_not_tried_or_not_recorded_is_a_skip():
    assert keras.run(facts_with(tensorflow=imported(None))).status is Status.SKIP
    died = imported(None, status="crashed", stage="probe:timing", signal="SIGSEGV", exit_code=-11)
    assert "before it tried tf.keras" in keras.run(facts_with(tensorflow=died)).summary
    assert keras.run(facts_with(tensorflow=UNKNOWN)).status is Status.SKIP


def test_a_crash_while_building_the_layer_fails():
    record = dict(KERAS3_OK, layer_ok=False, step="layer")
    outcome = keras.run(facts_with(tensorflow=imported(record, status="crashed", stage="keras", signal="SIGSEGV",
                                                       exit_code=-11)))
    assert outcome.status is Status.FAIL and "SIGSEGV" in outcome.summary


def test_matching_tf_keras():
    assert matching_tf_keras("2.16.2") == "tf-keras~=2.16.0" and matching_tf_keras("2.21.0rc1") == "tf-keras~=2.21.0"


def test_a_file_two_builds_share_is_no_reinstall_advice():
    """tensorflow and tensorflow-cpu both list the file: reinstalling either overwrites the other again, so
    the advice keeps one (tensorflow-install's commands) and never says 'reinstall as it was'."""
    integrity = {"distributions": [{"name": "tensorflow-cpu", "version": "2.21.0", "record": True, "problems": [
        {"path": "tensorflow/libtensorflow_framework.so.2", "problem": "missing", "expected_size": 40000000,
         "also_in": ["tensorflow"]}]}]}
    facts = facts_with(tensorflow=LIBRARY_MISSING, integrity=integrity)
    outcome = tensorflow_import.run(facts)
    fix = outcome.remediation
    assert fix is not None
    assert "Reinstall" not in fix.advice and "keep one" in fix.advice, fix.advice
    # the repair keeps one of them (as install-integrity and tensorflow-install do), never a reinstall
    assert intents(outcome) == [("uninstall", ("tensorflow", "tensorflow-cpu")), ("install", ("tensorflow==2.21.0",))]
    plan = plan_of(facts, [as_result("tensorflow-import", outcome)])
    assert not any("--force-reinstall" in step.command for step in plan.steps), plan.steps
