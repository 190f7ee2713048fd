"""The checks on recorded experiment facts (issue 29): tensorflow-import, keras and companions say "proven by
experiment" with a repair that repairs; without the experiments' facts they say what they said before; the
doctor runs experiments only for a failure no check explained; `explain` of a saved report reaches the
same verdict. The trials' shapes are those tfdoctor/collect/experiments.py records (its own test runs them)."""

from __future__ import annotations

import json

import pytest

from tests.builders import check_result, tensorflow_environment, tensorflow_result
from tfdoctor.diagnosis import doctor
from tfdoctor.results.model import Status
from tfdoctor.plan.planner import build_plan
from tfdoctor.report.run import RunReport
from tfdoctor.results.repairs import Action
from tfdoctor.checking.registry import all_checks
from tfdoctor.checking.runner import run_checks

PROTOBUF_ERROR = {"type": "ImportError", "message": "cannot import name '_message' from 'google.protobuf.pyext' "
                  "(/env/lib/python3.11/site-packages/google/protobuf/pyext/__init__.py)"}


def failed_import(error=PROTOBUF_ERROR) -> dict:
    return tensorflow_result(status="import_error", imported=False, stage="import_failed", exception=error,
                             version=None, devices=None, exit_code=3,
                             stderr_tail="UserWarning: Selected implementation cpp is not available.")


def trial(description, works, changes, goal="import", **more) -> dict:
    return {"goal": goal, "module": more.pop("module", None), "changes": changes, "description": description,
            "works": works, "step": "done" if works else "import", "error": None if works else PROTOBUF_ERROR,
            "signal": None, "timed_out": False, "network": [], "seconds": 2.5, **more}


def protobuf_experiments() -> dict:
    """What the collector records for PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION=cpp beside an innocent XLA_FLAGS."""
    variable = "variable:PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION"
    return {"budget_s": 30.0, "seconds": 7.9, "stopped": "proven", "goals": [{"kind": "import"}], "keras_config": None,
            "variables_set": {"PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION": "cpp", "XLA_FLAGS": "--xla_dump_to=/tmp/x"},
            "trials": [trial("PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION unset + XLA_FLAGS unset", True, [variable, "variable:XLA_FLAGS"]),
                       trial("PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION unset", True, [variable])],
            "proofs": [{"goal": {"kind": "import"}, "changes": [variable], "kind": "variable",
                        "description": "PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION unset",
                        "unset": ["PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION"], "set": [], "flags": [], "trial": 1,
                        "works": True}]}


def keras_config_facts(with_experiments=True) -> dict:
    keras = {"legacy_env": None, "legacy_requested": False, "flavor": None, "module": None, "version": None,
             "layer_ok": False, "step": "resolve",
             "error": {"type": "ImportError", "message": "Keras cannot be imported. Check that it is installed."}}
    facts = tensorflow_environment(tensorflow=tensorflow_result(keras=keras))
    if with_experiments:
        facts["experiments"] = {
            "budget_s": 30.0, "seconds": 6.1, "stopped": "proven", "goals": [{"kind": "keras"}],
            "keras_config": {"path": "/home/u/.keras/keras.json", "readable": True, "backend": "jax"},
            "variables_set": {}, "trials": [trial("Keras's configuration file ignored", True, ["keras-config"], goal="keras")],
            "proofs": [{"goal": {"kind": "keras"}, "changes": ["keras-config"], "kind": "keras-config",
                        "description": "Keras's configuration file ignored", "unset": [], "set": [], "flags": [],
                        "trial": 0, "works": True}]}
    return facts


def hub_facts(with_experiments=True, tf_keras="2.21.0") -> dict:
    hub = {"module": "tensorflow_hub", "status": "ok", "version": "0.16.1", "origin": "/env/.../tensorflow_hub/__init__.py",
           "exception": None, "warnings": [], "log": [], "seconds": 0.4,
           "keras_layers": [{"name": "KerasLayer", "tf_keras_layer": False, "base_module": "tf_keras.src.engine.base_layer"}]}
    keras = {"flavor": "keras3", "version": "3.15.1", "module": "keras.src.layers.core.dense", "layer_ok": True, "step": "done",
             "error": None, "legacy_env": None, "legacy_requested": False}
    extra = [{"name": "tensorflow-hub", "version": "0.16.1", "location": "/env/lib/python3.11/site-packages",
              "top_level": ["tensorflow_hub"], "requires": ["numpy>=1.12.0", "protobuf>=3.19.6", "tf-keras>=2.14.1"]}]
    if tf_keras:
        extra.append({"name": "tf-keras", "version": tf_keras, "location": "/env/lib/python3.11/site-packages",
                      "top_level": ["tf_keras"], "requires": ["tensorflow<2.22,>=2.21"]})
    facts = tensorflow_environment(extra=extra, tensorflow=tensorflow_result(keras=keras, companions=[hub]))
    if with_experiments:
        refused = {"type": "ValueError", "message": "Only instances of `keras.Layer` can be added to a Sequential model. "
                   "Received: <tensorflow_hub.keras_layer.KerasLayer object at 0x7f> (of type <class 'tensorflow_hub.keras_layer.KerasLayer'>)"}
        as_is = dict(trial("as it is", False, [], goal="use", module="tensorflow_hub"), step="use", error=refused)
        legacy = trial("TF_USE_LEGACY_KERAS=1", True, ["set-variable:TF_USE_LEGACY_KERAS"], goal="use", module="tensorflow_hub")
        goal = {"kind": "use", "module": "tensorflow_hub", "layer": "KerasLayer"}
        facts["experiments"] = {
            "budget_s": 30.0, "seconds": 9.0, "stopped": "proven", "goals": [goal], "keras_config": None, "variables_set": {},
            "trials": [as_is, legacy],
            "proofs": [{"goal": goal, "changes": ["set-variable:TF_USE_LEGACY_KERAS"], "kind": "set-variable",
                        "description": "TF_USE_LEGACY_KERAS=1", "unset": [], "set": [["TF_USE_LEGACY_KERAS", "1"]],
                        "flags": [], "trial": 1, "works": True, "failure": as_is}]}
    return facts


def test_a_proven_variable_is_the_import_failures_cause_and_unset_in_the_plan():
    facts = tensorflow_environment(tensorflow=failed_import())
    facts["experiments"] = protobuf_experiments()
    result = check_result("tensorflow-import", facts)
    assert result.status is Status.FAIL
    assert "proven by experiment: `import tensorflow` works with PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION unset" in result.summary
    assert any("PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION=cpp is set" in line for line in result.details)
    (repair,) = result.remediation.repairs
    assert repair.action is Action.UNSET_ENV and repair.variable == "PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION"
    assert "shell profile" in result.remediation.advice
    assert "XLA_FLAGS" not in result.remediation.advice, "the bisection cleared it"
    plan = build_plan([result], facts)
    assert [(s.command, s.manual) for s in plan.steps] == [("unset PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION", True)]


def test_without_experiments_the_import_failure_is_unknown_and_wants_them():
    facts = tensorflow_environment(tensorflow=failed_import())
    result = check_result("tensorflow-import", facts)
    # the error names google.protobuf: protobuf is the suspect (a hypothesis), and the experiments still run
    assert result.status is Status.FAIL and "suspect protobuf" in result.summary
    assert result.evidence["diagnosis"] == "suspected"
    assert doctor.experiment_goals(facts, [result]) == [{"kind": "import"}]
    unnamed = failed_import({**PROTOBUF_ERROR, "type": "ImportError", "message": "initialization failed",
                             "traceback": []})
    plain = check_result("tensorflow-import", tensorflow_environment(tensorflow=unnamed))
    assert "does not know this error" in plain.remediation.advice
    assert doctor.experiment_goals(facts, [plain]) == [{"kind": "import"}]


def test_a_hanging_import_runs_no_experiment():
    """Each trial would wait out the import's timeout again; the hang's finding arrives at the timeout."""
    facts = tensorflow_environment(tensorflow={**failed_import(), "status": "timed_out", "timed_out": True})
    result = check_result("tensorflow-import", facts)
    assert result.status is Status.FAIL
    assert doctor.experiment_goals(facts, [result]) == []


def test_experiments_that_proved_nothing_are_named():
    facts = tensorflow_environment(tensorflow=failed_import())
    section = protobuf_experiments()
    section.update(stopped="exhausted", proofs=[], trials=[trial("XLA_FLAGS unset", False, ["variable:XLA_FLAGS"])])
    facts["experiments"] = section
    result = check_result("tensorflow-import", facts)
    assert "suspect protobuf" in result.summary and "tfdoctor --prove" in result.remediation.advice
    assert any(line.startswith("experiments: none of 1 trial made it work: XLA_FLAGS unset") for line in result.details)


def test_keras_configuration_proof_spells_the_exact_edit():
    result = check_result("keras", keras_config_facts())
    assert result.status is Status.FAIL and "proven by experiment: tf.keras works with Keras's configuration file ignored" in result.summary
    advice = result.remediation.advice
    assert 'Edit /home/u/.keras/keras.json and change "backend": "jax" to "backend": "tensorflow"' in advice
    assert result.remediation.repairs == ()  # an edit of the user's file: a named manual step, no command
    before = check_result("keras", keras_config_facts(with_experiments=False))
    assert "Nothing in the environment's metadata explains it" in before.remediation.advice


def test_a_companion_keras_2_layer_under_keras_3_is_proven_on_use_and_routed_to_tf_keras():
    result = check_result("companions", hub_facts())
    assert result.status is Status.FAIL
    assert "tensorflow_hub.KerasLayer fails in a tf.keras model: proven by experiment" in result.summary
    assert any("Only instances of `keras.Layer`" in line for line in result.details)
    assert [(r.action, r.variable, r.value) for r in result.remediation.repairs] == [(Action.SET_ENV, "TF_USE_LEGACY_KERAS", "1")]


def test_a_companion_layer_without_tf_keras_gets_it_installed_with_the_variable():
    result = check_result("companions", hub_facts(with_experiments=False, tf_keras=None))
    assert result.status is Status.FAIL and "a tf.keras model refuses it" in result.summary
    actions = [(r.action, r.packages or r.variable) for r in result.remediation.repairs]
    assert actions[-1] == (Action.SET_ENV, "TF_USE_LEGACY_KERAS") and actions[0][0] is Action.INSTALL
    assert "tf-keras" in actions[0][1][0]


def test_goals_none_when_healthy_or_explained():
    checks = list(all_checks())
    healthy = tensorflow_environment(tensorflow=tensorflow_result(keras={"flavor": "keras3", "version": "3.15.1",
                                                                          "layer_ok": True, "step": "done", "error": None},
                                                                   companions=[]))
    assert doctor.experiment_goals(healthy, run_checks(checks, healthy)) == []
    explained = tensorflow_environment({"protobuf": "5.29.5"}, tensorflow=failed_import(
        {"type": "TypeError", "message": "Descriptors cannot be created directly."}))
    results = run_checks(checks, explained)
    importing = next(r for r in results if r.check_id == "tensorflow-import")
    if importing.remediation and importing.remediation.repairs:
        assert doctor.experiment_goals(explained, results) == []


def test_the_doctor_runs_no_experiment_on_a_healthy_environment(monkeypatch):
    def never(*args, **kwargs):
        raise AssertionError("an experiment ran on a healthy environment")

    monkeypatch.setattr("tfdoctor.collect.experiments.collect_experiments", never)
    checks = list(all_checks())
    healthy = tensorflow_environment(tensorflow=tensorflow_result(keras={"flavor": "keras3", "version": "3.15.1",
                                                                          "layer_ok": True, "step": "done", "error": None},
                                                                   companions=[]))
    facts, results = doctor.with_experiments(checks, dict(healthy), run_checks(checks, healthy), doctor.DoctorOptions())
    assert "experiments" not in facts


@pytest.mark.parametrize("make", [lambda: dict(tensorflow_environment(tensorflow=failed_import()),
                                               experiments=protobuf_experiments()),
                                  keras_config_facts, hub_facts], ids=["import", "keras", "use"])
def test_explain_of_the_saved_report_reaches_the_same_verdict(make):
    from tfdoctor.api import explain

    facts = make()
    checks = doctor.selected_checks(deep=False)  # what a plain run selects; explain runs the same
    report = RunReport(facts=facts, results=run_checks(checks, facts))
    saved = json.loads(json.dumps(report.to_dict()))
    again = explain(saved, redact=False).to_dict()
    wanted = {r["id"]: (r["status"], r["summary"]) for r in saved["results"]}
    assert {r["id"]: (r["status"], r["summary"]) for r in again["results"]} == wanted
    assert again["plan"] == saved["plan"]
