"""Plans closed over their own result, and choices as complete plans (issue 38, build 2 and 3).

A plan's result (the releases the environment holds once it ran) is judged again by tfdoctor/plan/closure.py:
the companion tables, Requires-Dist of what stays, undeclared needs (tf_keras users, module providers) and the
family rules (knowledge/family.toml). Every printed plan of a recorded machine is closed; the cases the issue
names are repaired by one plan each; a companion with no release for the installed TensorFlow gets complete
choices, each closed, rendered with its cost and valid against the schema.
"""

from __future__ import annotations

import json

import jsonschema
import pytest

from tests.builders import ENV_SITE, IMPORTED, tensorflow_environment
from tests.fixtures_support import SEEN_ROUNDS, fixture_id, fixture_paths, fresh_fixture_paths, load_fixture
from tfdoctor.checking.registry import all_checks
from tfdoctor.checking.runner import run_checks
from tfdoctor.plan import closure
from tfdoctor.report.run import RunReport

# the recorded machines and the seen fresh cases (the held-out sets are the lead's to score)
PATHS = fixture_paths() + fresh_fixture_paths() + [p for r in SEEN_ROUNDS for p in fresh_fixture_paths(r)]

# tensorflow 2.16's Requires-Dist, the part the plans here touch (its METADATA on PyPI)
TF_216_REQUIRES = ["absl-py>=1.0.0", "protobuf!=4.21.0,!=4.21.1,!=4.21.2,!=4.21.3,!=4.21.4,!=4.21.5,<5.0.0dev,>=3.20.3",
                   "keras>=3.0.0", "numpy<2.0.0,>=1.23.5", "h5py>=3.10.0", "ml-dtypes~=0.3.1"]
TF_216_DEPENDENCIES = {"protobuf": "4.25.3", "keras": "3.3.3", "numpy": "1.26.4", "h5py": "3.11.0", "ml-dtypes": "0.3.2"}


def _report(facts) -> RunReport:
    return RunReport(facts, run_checks(all_checks(), facts))


def _commands(plan) -> list[str]:
    return [step.command.split(" -m pip ", 1)[-1] for step in plan.steps]


def _tensorflow_216(version: str = "2.16.1", extra=()):
    return tensorflow_environment(TF_216_DEPENDENCIES, tf_name="tensorflow", tf_version=version,
                                  requires=TF_216_REQUIRES, extra=list(extra),
                                  tensorflow={**IMPORTED, "version": version})


def _decision_forests(version: str, requires: list[str]) -> dict:
    return {"name": "tensorflow-decision-forests", "version": version, "location": ENV_SITE,
            "top_level": ["tensorflow_decision_forests"], "requires": requires}


@pytest.mark.parametrize("path", PATHS, ids=[fixture_id(p) for p in PATHS])
def test_every_printed_plan_of_a_fixture_is_closed_over_its_result(path):
    """The plan (and each choice) a fixture's facts get leaves nothing the tables know to be missing or unmade."""
    facts = load_fixture(path)["facts"]
    plan = _report(facts).plan
    assert closure.gaps(plan.to_dict(), facts) == [], plan.to_dict()["steps"]
    for choice in plan.choices:
        assert closure.gaps(choice.plan.to_dict(), facts) == [], (choice.number, choice.summary)


def test_tensorflow_probability_0_25_under_tensorflow_2_16_gets_0_24_with_the_tf_keras_it_imports():
    """tensorflow-probability 0.25 demands TensorFlow >= 2.18 when imported; 0.24, the release made for 2.16,
    imports tf_keras (tf_keras_users.toml), and tf.keras of 2.16 is Keras 3: one step installs both, TensorFlow
    stays (before the closure: tf-keras alone, leaving 0.25 beside 2.16, which cannot import)."""
    facts = _tensorflow_216("2.16.2", [{"name": "tensorflow-probability", "version": "0.25.0", "location": ENV_SITE,
                                        "top_level": ["tensorflow_probability"], "requires": []}])
    plan = _report(facts).plan
    packages = [package for step in plan.steps for package in step.packages]
    assert "tensorflow-probability==0.24.0" in packages and "tf-keras==2.16.0" in packages, _commands(plan)
    assert not plan.conflicts and plan.moves_tensorflow is None and not plan.choices
    assert closure.gaps(plan.to_dict(), facts) == []


def test_a_plan_that_moves_tensorflow_to_2_19_brings_the_protobuf_its_generated_code_needs():
    """tensorflow-decision-forests 1.5.0 beside tensorflow 2.16.1 and protobuf 4.25.3: moving TensorFlow to 2.19
    for decision-forests 1.12 keeps protobuf 4.25 (inside 2.19's <6 pin), which has no runtime_version for 2.19's
    gencode 5.28.3 (family.toml): the moving choice installs protobuf>=5.28.3 with it."""
    facts = _tensorflow_216(extra=[_decision_forests("1.5.0", ["numpy", "pandas", "tensorflow~=2.13.0", "six"])])
    plan = _report(facts).plan
    assert [c.distribution for c in plan.conflicts] == ["tensorflow-decision-forests"]
    summaries = {choice.summary: choice for choice in plan.choices}
    keep = summaries["keep tensorflow 2.16.1 and uninstall tensorflow-decision-forests"]
    assert _commands(keep.plan) == ["uninstall -y -- tensorflow-decision-forests"]
    assert keep.removes == ("tensorflow-decision-forests",)
    move = summaries["move TensorFlow to tensorflow 2.19.0 for tensorflow-decision-forests"]
    packages = [package for step in move.plan.steps for package in step.packages]
    assert {"tensorflow==2.19.0", "tensorflow-decision-forests==1.12.0", "tf-keras==2.19.0", "protobuf>=5.28.3"} \
        <= set(packages), _commands(move.plan)
    assert move.removes == ()
    for choice in plan.choices:
        assert not choice.plan.conflicts and closure.gaps(choice.plan.to_dict(), facts) == []


def test_family_rule_gap_names_protobuf_for_a_plan_left_without_it():
    """The closure check on a printed plan that moves TensorFlow to 2.19 and leaves protobuf 4.25."""
    facts = _tensorflow_216()
    plan = {"steps": [{"action": "install", "packages": ["tensorflow==2.19.0"], "command": "pip install tensorflow==2.19.0"}]}
    gaps = closure.gaps(plan, facts)
    assert [(gap.distribution, gap.install) for gap in gaps] == [("protobuf", "protobuf>=5.28.3")]
    assert "runtime_version" in gaps[0].why and "protobuf 4.25.3" in gaps[0].why


def _beside_tensorflow_2_21():
    return tensorflow_environment(extra=[
        _decision_forests("1.12.0", ["numpy", "pandas", "tensorflow==2.19.0", "six", "tf-keras~=2.19"]),
        {"name": "tf-keras", "version": "2.21.0", "location": ENV_SITE, "top_level": ["tf_keras"],
         "requires": ["tensorflow<2.22,>=2.21"]}], tensorflow=IMPORTED)


def test_decision_forests_beside_a_newer_tensorflow_gets_two_complete_choices_with_their_costs():
    """decision-forests 1.12.0 (its newest, tensorflow==2.19.0) beside tensorflow-cpu 2.21: keep TensorFlow and
    uninstall it, or move TensorFlow to 2.19 (the checks' own plan, as the build installed)."""
    facts = _beside_tensorflow_2_21()
    report = _report(facts)
    plan = report.plan
    assert [choice.summary for choice in plan.choices] == [
        "keep tensorflow-cpu 2.21.0 and uninstall tensorflow-decision-forests",
        "move TensorFlow to tensorflow-cpu 2.19.0 for tensorflow-decision-forests"]
    keep, move = plan.choices
    assert _commands(keep.plan) == ["uninstall -y -- tensorflow-decision-forests"] and keep.plan.moves_tensorflow is None
    assert _commands(move.plan) == _commands(plan) and move.plan.moves_tensorflow.target == "tensorflow-cpu==2.19.0"
    document = report.to_dict()
    offered = document["plan"]["choices"]
    assert [(c["number"], c["removes"], (c["moves_tensorflow"] or {}).get("to")) for c in offered] == [
        (1, ["tensorflow-decision-forests"], None), (2, [], "tensorflow-cpu==2.19.0")]
    from tfdoctor.schema import report_schema

    jsonschema.Draft202012Validator(report_schema()).validate(json.loads(json.dumps(document)))


def test_the_choices_are_printed_with_their_cost_and_the_command_that_applies_each():
    from tfdoctor.render import markdown, text

    document = _report(_beside_tensorflow_2_21()).to_dict()
    shown = text.render(document, color=False, width=400)
    assert "Choice 1: keep tensorflow-cpu 2.21.0 and uninstall tensorflow-decision-forests" in shown
    assert "removes tensorflow-decision-forests" in shown and "tfdoctor fix --choice 2" in shown
    assert "TensorFlow tensorflow-cpu==2.21.0 -> tensorflow-cpu==2.19.0" in shown
    page = markdown.render(document)
    assert "#### Choice 2: move TensorFlow to tensorflow-cpu 2.19.0" in page and "pip uninstall -y -- tensorflow-decision-forests" in page


def test_a_healthy_environment_gets_no_choice():
    plan = _report(tensorflow_environment(tensorflow=IMPORTED)).plan
    assert plan.steps == () and plan.choices == () and plan.to_dict()["choices"] == []
