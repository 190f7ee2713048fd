"""Issue 29: the whole dependency closure (facts/requires_dist.py), the traceback -> owning distributions
mapping (facts/owners.py) and the dependencies check tying a violated requirement outside TensorFlow's
family to the tf.keras error it causes; RECORD-less installs in the plan (facts/record_less.py, planner).
Facts are built from the real case: tensorflow-cpu 2.21.0 with typing-extensions 4.5.0, which breaks
optree 0.20.0 (`typing-extensions>=4.10.0`) and with it Keras ("Keras cannot be imported")."""

from __future__ import annotations

import checks.dependencies  # noqa: F401 - registers the check
from tfdoctor.facts import owners, record_less, requires_dist
from tfdoctor.plan.planner import build_plan
from tfdoctor.results.repairs import Action

from tests.builders import ENV_SITE, check_result, tensorflow_environment
from tests.import_support import KERAS_ERROR
from tests.import_support import closure_environment as _closure_environment


def test_the_closure_reaches_optree_through_keras_and_follows_no_extra_nobody_asked_for():
    names = [e["name"] for e in requires_dist.closure_members(_closure_environment())]
    assert "optree" in names and "typing-extensions" in names
    assert "jax" not in names  # optree[jax] is not requested: jax's absurd numpy>=9 is never judged


def test_a_pin_of_a_distribution_outside_the_family_is_judged_with_markers_for_the_target():
    unmet = requires_dist.unmet_requirements(_closure_environment(python="3.11.7"))
    assert [(u.requirer, u.name, u.specifier) for u in unmet] == [("optree", "typing-extensions", ">=4.10.0")]
    unmet = requires_dist.unmet_requirements(_closure_environment("4.11.0", python="3.13.1"))
    assert [(u.requirer, u.specifier) for u in unmet] == [("optree", ">=4.12.0")]  # the 3.13 marker applies
    assert requires_dist.unmet_requirements(_closure_environment("4.12.2")) == []


def test_failing_frames_and_the_modules_messages_name_map_to_their_distributions():
    found = owners.error_owners(_closure_environment(), KERAS_ERROR)
    assert [(o.name, o.how) for o in found] == [("tensorflow-cpu", "frame"), ("keras", "frame"), ("optree", "message")]
    text_only = {"message": "x", "traceback": [f'  File "{ENV_SITE}/keras/src/tree/tree_api.py", line 17, in <module>',
                                              '  File "/usr/lib/python3.11/typing.py", line 3, in <module>']}
    assert [o.name for o in owners.error_owners(_closure_environment(), text_only)] == ["keras"]


def test_the_violated_requirement_the_error_points_into_fails_dependencies_naming_the_suspect():
    result = check_result("dependencies", _closure_environment())
    assert result.status.value == "fail"
    assert "typing-extensions 4.5.0 is outside optree 0.20.0's typing-extensions>=4.10.0" in result.summary
    assert "points into optree 0.20.0 (suspect)" in " ".join(result.details)
    assert [r.packages for r in result.remediation.repairs] == [("typing-extensions>=4.10.0",)]


def test_while_tf_keras_works_the_same_pin_only_warns_and_a_healthy_closure_passes():
    assert check_result("dependencies", _closure_environment(keras_error=None)).status.value == "warn"
    assert check_result("dependencies", _closure_environment("4.15.0", keras_error=None)).status.value == "pass"


def test_a_record_less_distribution_the_plan_replaces_has_its_metadata_removed_first():
    facts = _closure_environment(te_record=False)
    plan = build_plan([check_result("dependencies", facts)], facts)
    assert [s.action for s in plan.steps] == [Action.REMOVE_METADATA, Action.INSTALL]
    assert plan.steps[0].packages == ("typing-extensions==4.5.0",)
    assert plan.steps[0].command.endswith(" typing-extensions 4.5.0")
    assert "no RECORD" in plan.steps[0].reasons[0].reason


def test_a_record_less_distribution_the_plan_leaves_alone_gets_no_step():
    facts = _closure_environment("4.15.0", keras_error=None)
    facts["distributions"][-3]["has_record"] = False  # optree, satisfied and kept
    assert record_less.replaced(facts, {"optree": ">=0.1"}) == []
    assert [e["name"] for e in record_less.replaced(facts, {"optree": None})] == ["optree"]


def test_a_dependency_older_than_tensorflows_ci_tested_is_named_with_the_tested_release():
    from tfdoctor.facts import tested_locks

    rows = [{"tensorflow": "2.21.0", "python": "3.11", "name": "gast", "version": "0.4.0",
             "source": "https://github.com/tensorflow/tensorflow/blob/v2.21.0/requirements_lock_3_11.txt"},
            {"tensorflow": "2.21.0", "python": "3.12", "name": "absl-py", "version": "9.0"}]
    facts = tensorflow_environment({"gast": "0.2.2"})
    assert [b.describe() for b in tested_locks.behind_ci(facts, rows)] == [
        "gast 0.2.2 is older than the gast 0.4.0 TensorFlow 2.21.0's CI tested on Python 3.11"]
    assert tested_locks.behind_ci(tensorflow_environment({"gast": "0.7.0"}), rows) == []
    assert tested_locks.behind_ci(tensorflow_environment({"gast": "0.2.2"}, tf_version="2.20.0"), rows) == []


def test_dependencies_warns_with_the_tested_release_as_the_candidate(monkeypatch):
    from tfdoctor.facts import tested_locks

    row = {"tensorflow": "2.21.0", "python": "3.11", "name": "gast", "version": "0.4.0",
           "source": "https://github.com/tensorflow/tensorflow/blob/v2.21.0/requirements_lock_3_11.txt"}
    monkeypatch.setattr(tested_locks, "table_rows", lambda: [row])
    result = check_result("dependencies", tensorflow_environment({"gast": "0.2.2"}))
    assert result.status.value == "warn" and result.summary.startswith("gast 0.2.2 is older than the gast 0.4.0")
    assert [r.packages for r in result.remediation.repairs] == [("gast==0.4.0",)]
    assert check_result("dependencies", tensorflow_environment({"gast": "0.7.0"})).status.value == "pass"


def test_an_older_report_without_the_tf_keras_record_keeps_the_closures_declared_incompatibility():
    """Issue 38: TensorFlow imported, tf.keras not tried (an older report): optree's violated pin is in what tf.keras
    loads (keras -> optree), so the declaration stands as where nothing was tried, a failure (the live run's child
    shows tf.keras failing on it); a pin outside that closure (h5py above TensorFlow's own) still only warns."""
    older = check_result("dependencies", _closure_environment(keras_error=False))
    assert older.status.value == "fail", older.summary
    assert "typing-extensions 4.5.0 is outside optree 0.20.0's typing-extensions>=4.10.0" in older.summary
    assert any("tf.keras was not tried" in line for line in older.details), older.details
    assert [r.packages for r in older.remediation.repairs] == [("typing-extensions>=4.10.0",)]
    h5py = _closure_environment("4.15.0", keras_error=False)
    next(e for e in h5py["distributions"] if e["name"] == "h5py")["version"] = "3.16.0"
    assert check_result("dependencies", h5py).status.value == "warn"


def test_tf_keras_judged_from_the_tables_fails_on_a_pin_violated_in_what_it_loads():
    """Issue 38: without the child's tf.keras record, keras's closure (keras -> optree -> typing-extensions) is read
    from the recorded Requires-Dist: the same failure, cause and repair as the child's (tests/live closure case)."""
    live = check_result("keras", _closure_environment())
    for facts in (_closure_environment(keras_error=False), _without_tensorflow(_closure_environment())):
        saved = check_result("keras", facts)
        assert saved.status is live.status and saved.status.value == "fail", saved.summary
        assert saved.evidence["judged"] == "tables" and saved.evidence["explained_by"] == "dependencies"
        assert saved.evidence["cause"] == live.evidence["cause"] == ["typing-extensions"]
        assert "typing-extensions 4.5.0 is outside optree 0.20.0's typing-extensions>=4.10.0" in saved.summary
        assert [r.packages for r in saved.remediation.repairs] == [r.packages for r in live.remediation.repairs]
    healthy = check_result("keras", _without_tensorflow(_closure_environment("4.15.0")))
    assert healthy.status.value == "pass", healthy.summary


def _without_tensorflow(facts: dict) -> dict:
    facts.pop("tensorflow")
    return facts


def test_the_dependencies_verdict_says_whether_the_childs_import_decided_it():
    assert check_result("dependencies", _closure_environment()).evidence["judged"] == "import"
    assert check_result("dependencies", _closure_environment(keras_error=False)).evidence["judged"] == "tables"
    assert check_result("dependencies", _without_tensorflow(_closure_environment())).evidence["judged"] == "tables"
