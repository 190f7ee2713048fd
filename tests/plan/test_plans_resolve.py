"""No printed plan pairs pins that cannot coexist (issue 29, part 4 of Build): every fixture's plan goes
through the offline resolver check (tfdoctor/plan/coexistence.py: releases.toml, companions.toml and the
curated import checks), and the planner corrects a companion pin that no release made for the plan's
TensorFlow satisfies, or names it as a conflict with the user's choices."""

from __future__ import annotations

import pytest
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from tests.builders import tensorflow_environment
from tests.fixtures_support import fixture_id, fixture_paths, load_fixture
from tfdoctor.plan import coexistence
from tfdoctor.facts import requires_dist as reqs
from tfdoctor.results.model import CheckResult, Remediation, Status
from tfdoctor.plan.planner import build_plan
from tfdoctor.checking.registry import all_checks
from tfdoctor.results.repairs import Repair
from tfdoctor.report.run import RunReport
from tfdoctor.checking.runner import run_checks

PATHS = fixture_paths()
LINUX_311 = {"python_version": "3.11", "python_full_version": "3.11.7", "sys_platform": "linux",
             "platform_machine": "x86_64", "platform_system": "Linux", "implementation_name": "cpython"}
MAC_311 = dict(LINUX_311, sys_platform="darwin", platform_machine="arm64", platform_system="Darwin")


def asked(check_id: str, *repairs: Repair) -> CheckResult:
    return CheckResult(check_id, check_id, Status.FAIL, "constructed", (), Remediation("advice", repairs=repairs))


@pytest.mark.parametrize("path", PATHS, ids=[fixture_id(p) for p in PATHS])
def test_every_fixture_plan_passes_the_offline_resolver_check(path):
    facts = load_fixture(path)["facts"]
    plan = RunReport(facts, run_checks(all_checks(), facts)).plan
    pin = reqs.tensorflow_pin(facts)
    wanted = coexistence.plan_requirements(plan.to_dict(), pin)
    assert coexistence.clashes(wanted, reqs.marker_environment(facts), pin.partition("==")[2] if pin else None) == [], \
        plan.to_dict()


# ---- the check itself, on the tables -----------------------------------------------------------------

def test_tf_keras_2_16_beside_tensorflow_2_19_clashes():
    (clash,) = coexistence.clashes(["tf-keras~=2.16.0", "tensorflow==2.19.*"], MAC_311)
    assert clash.distribution == "tf-keras" and "2.19" in clash.why


def test_tf_keras_of_the_same_minor_coexists():
    fitting, clashes = coexistence.fitting_tensorflow(["tf-keras~=2.19.0", "tensorflow==2.19.*"], MAC_311)
    assert clashes == [] and fitting[0].startswith("2.19.")


def test_a_tensorflow_pin_against_its_own_requires_dist_clashes():
    """tensorflow 2.15's Requires-Dist says numpy<2.0.0: numpy>=2 beside it cannot install."""
    (clash,) = coexistence.clashes(["numpy>=2.0", "tensorflow==2.15.1"], LINUX_311)
    assert clash.distribution == "numpy" and "numpy" in clash.why


def test_tensorflow_probability_floor_from_its_source_is_held_against_an_old_tensorflow():
    """tensorflow-probability names no TensorFlow in its metadata; its import check does (>=2.18 for 0.25)."""
    assert coexistence.clashes(["tensorflow-probability==0.25.0", "tensorflow-cpu==2.16.2"], LINUX_311)
    assert not coexistence.clashes(["tensorflow-probability==0.25.0", "tensorflow-cpu==2.19.0"], LINUX_311)


def test_a_companion_whose_tables_say_nothing_is_never_held_against_a_plan():
    assert coexistence.clashes(["keras>=3.0", "tensorboard", "tensorflow-cpu==2.21.0"], LINUX_311) == []


def test_a_nightly_the_table_does_not_list_is_kept_where_it_is():
    fitting, clashes = coexistence.fitting_tensorflow(["tf-nightly==2.22.0.dev20260308"], LINUX_311,
                                                      installed="2.22.0.dev20260308")
    assert fitting == ["2.22.0.dev20260308"] and clashes == []


def test_an_installed_release_without_a_wheel_for_this_python_is_no_candidate_and_pre_releases_need_naming():
    """TensorFlow 2.18.0 beside Python 3.13 (aside5's transformers case): the plan moves TensorFlow, so a tf-keras
    made for 2.18 clashes with every release pip can install there; a release candidate counts only when named."""
    python_313 = {**LINUX_311, "python_version": "3.13", "python_full_version": "3.13.2"}
    candidates = coexistence.tensorflow_candidates("tensorflow", SpecifierSet(""), python_313, installed="2.18.0")
    assert "2.18.0" not in candidates and candidates and not any(Version(v).is_prerelease for v in candidates)
    assert coexistence.clashes(["tensorflow", "tf-keras==2.18.0"], python_313, installed="2.18.0")
    named = coexistence.tensorflow_candidates("tensorflow", SpecifierSet(">=2.22.0rc0"), python_313)
    assert named and Version(named[0]).is_prerelease


# ---- the planner corrects, or names the choices ------------------------------------------------------

def test_the_planner_corrects_a_tf_keras_pin_made_for_another_tensorflow_than_the_plan_ends_with():
    """One check reasoned from TensorFlow 2.16 (tf-keras~=2.16.0), another moves TensorFlow to 2.19: the
    plan installs the tf-keras made for 2.19 and says why, never the pair that cannot install."""
    facts = tensorflow_environment(tf_name="tensorflow-cpu")
    plan = build_plan([asked("metal-plugin", Repair.install("tf-keras~=2.16.0", reason="Keras 2 for TensorFlow 2.16")),
                       asked("dependencies", Repair.install("tensorflow-cpu==2.19.*", reason="moves"))], facts)
    packages = [p for step in plan.steps for p in step.packages]
    assert "tf-keras~=2.16.0" not in packages and any(p.startswith("tf-keras==2.19.") for p in packages), packages
    assert any("corrected" in note for note in plan.notes) and not plan.conflicts
    wanted = coexistence.plan_requirements(plan.to_dict(), None)
    assert coexistence.clashes(wanted, reqs.marker_environment(facts)) == []


def test_a_companion_with_no_release_for_the_plans_tensorflow_is_a_conflict_with_choices():
    """tensorflow-decision-forests has no release made for TensorFlow 2.21 (its newest requires ~=2.19 or
    older): asked for beside the kept tensorflow-cpu 2.21.0, it is a conflict naming the user's choices,
    and the rest of the plan still prints."""
    facts = tensorflow_environment(tf_name="tensorflow-cpu")
    plan = build_plan([asked("companions", Repair.install("tensorflow-decision-forests~=1.9.0", reason="r")),
                       asked("dependencies", Repair.install("protobuf>=6.31.1", reason="pin"))], facts)
    packages = [p for step in plan.steps for p in step.packages]
    assert not any(p.startswith("tensorflow-decision-forests") for p in packages), packages
    assert "tensorflow-cpu==2.21.0" in packages and "protobuf>=6.31.1" in packages
    (conflict,) = plan.conflicts
    assert conflict.distribution == "tensorflow-decision-forests" and len(conflict.choices) == 2
    assert conflict.to_dict()["choices"] == list(conflict.choices)


def test_an_installed_build_that_cannot_import_is_replaced_not_a_conflict():
    """A repair names another build than the installed one: beside a working build that is a conflict (two
    builds in one site-packages/tensorflow/); when the installed build cannot import there is nothing to keep,
    so the plan uninstalls it and installs the named one, and says TensorFlow moves and why."""
    broken = {"status": "import_error", "imported": False, "stage": "import_failed", "exit_code": 1,
              "exception": {"type": "ImportError", "message": "libtensorflow_framework.so.2: cannot open shared object file"}}
    ask = asked("tensorflow-import", Repair.install("tensorflow==2.21.0", reason="the named build"))
    working = build_plan([ask], tensorflow_environment(tf_name="tensorflow-cpu", tensorflow={"status": "ok", "imported": True}))
    assert working.conflicts and not working.steps
    plan = build_plan([ask], tensorflow_environment(tf_name="tensorflow-cpu", tensorflow=broken))
    assert not plan.conflicts
    assert [(s.action.value, s.packages) for s in plan.steps] == [("uninstall", ("tensorflow-cpu",)),
                                                                  ("install", ("tensorflow==2.21.0",))]
    assert plan.moves_tensorflow and "cannot be imported" in plan.moves_tensorflow.why
