"""The planner (tfdoctor/plan/planner.py) on realistic facts and the repairs the checks ask for: one plan per run,
specifiers intersected, TensorFlow kept where it is unless a repair must move it (and then why), conflicts
named instead of printed, pip brought up first, and the commands spelled for the environment's installer and
shell. The facts come from the shared builders (tests/builders.py: tensorflow-cpu 2.21.0's real pins)."""

from __future__ import annotations

import copy
import shlex

import pytest

from tests.fixtures_support import fixture_id, fixture_paths, load_fixture
from tests.plan_support import argvs, plan_of, results_of
from tests.builders import (ENV_PYTHON, IMPORTED, MISSING_LIB, TF_221_WHEEL, integrity_facts,
                            tensorflow_environment, verified_distribution)
from tfdoctor.results.model import CheckResult, Remediation, Status
from tfdoctor.plan.planner import build_plan, satisfiable
from tfdoctor.checking.registry import all_checks
from tfdoctor.results.repairs import Action, Repair
from tfdoctor.report.run import RunReport
from tfdoctor.checking.runner import run_checks

from packaging.specifiers import SpecifierSet

INSTALL_CHECKS = ("dependencies", "tensorflow-install", "keras", "install-integrity", "installer", "tensorflow-import")
DEPENDENT = {"name": "tensorflow-metadata", "version": "1.13.1", "top_level": ["tensorflow_metadata"],
             "requires": ["protobuf<4,>=3.20.3", "absl-py<2.0.0,>=0.9"]}


def asked(check_id: str, *repairs: Repair, status: Status = Status.FAIL) -> CheckResult:
    """A result of another check asking for these repairs (what the planner reads of a result)."""
    return CheckResult(check_id, check_id, status, "constructed", (), Remediation("advice", repairs=repairs))


def with_pip(facts: dict, pip: str | None, *wheels: dict) -> dict:
    facts = copy.deepcopy(facts)
    facts["installers"] = {"pip": pip, "conda": None, "wheels": list(wheels)}
    return facts


# ---- merging ---------------------------------------------------------------------------------------

def test_pins_of_one_distribution_from_two_requirers_are_intersected_into_one_requirement():
    jax_like = {"name": "jax-like", "version": "1.0", "requires": ["numpy<2.3,>=2.0.0", "tensorflow>=2.0"]}
    facts = tensorflow_environment({"numpy": "1.25.2", "protobuf": "5.28.0"}, extra=[jax_like], tensorflow=IMPORTED)
    plan = plan_for_checks(facts, "dependencies")
    (step,) = plan.steps
    assert shlex.split(step.command) == [ENV_PYTHON, "-m", "pip", "install", "--", "protobuf<8.0.0,>=6.31.1", "numpy<2.3,>=2.0.0",
                                         "tensorflow-cpu==2.21.0"]
    # each requirer is named in the step's reasons
    reasons = " ".join(r.reason for r in step.reasons)
    assert "tensorflow-cpu 2.21.0's numpy>=1.26.0" in reasons and "jax-like 1.0's numpy<2.3,>=2.0.0" in reasons


def test_two_checks_asking_for_the_same_install_share_one_step():
    facts = tensorflow_environment({"protobuf": "3.20.3"}, tensorflow={
        "status": "import_error", "imported": False, "stage": "import_failed", "exit_code": 1,
        "exception": {"type": "ImportError", "message": "cannot import name 'runtime_version' from 'google.protobuf'"}})
    plan = plan_for_checks(facts, "dependencies", "tensorflow-import")
    assert argvs(plan) == [[ENV_PYTHON, "-m", "pip", "install", "--", "protobuf<8.0.0,>=6.31.1", "tensorflow-cpu==2.21.0"]]
    assert plan.steps_for("dependencies") == plan.steps_for("tensorflow-import") == [1]


def test_a_clash_is_a_conflict_naming_both_requirers_and_no_command():
    facts = tensorflow_environment({"protobuf": "5.29.0"}, extra=[DEPENDENT], tensorflow=IMPORTED)
    plan = plan_for_checks(facts, "dependencies")
    (conflict,) = plan.conflicts
    assert conflict.distribution == "protobuf"
    assert "protobuf<8.0.0,>=6.31.1 and protobuf<4,>=3.20.3" in conflict.why
    whys = [why for _, _, why in conflict.wants]
    assert any(w.startswith("protobuf 5.29.0 is outside tensorflow-cpu 2.21.0's") for w in whys)
    assert any(w.startswith("protobuf 5.29.0 is outside tensorflow-metadata 1.13.1's") for w in whys)
    assert all("protobuf" not in step.command for step in plan.steps)
    data = plan.to_dict()["conflicts"][0]
    assert {w["check"] for w in data["wants"]} == {"dependencies"} and len(data["wants"]) == 2


@pytest.mark.parametrize("specifier, ok", [
    ("<8.0.0,>=6.31.1", True), ("<4,>=3.20.3,>=6.31.1", False), ("==2.21.0,<2.22", True), ("==2.15.*,>=2.16", False),
    ("~=2.15.0,<2.15.1", True), (">2,<=2", False), ("==2.21.0,!=2.21.0", False),
])
def test_satisfiable(specifier, ok):
    assert satisfiable(SpecifierSet(specifier)) is ok


# ---- a release the plan replaces -------------------------------------------------------------------

# tensorflow-text 2.15.0's Requires-Dist as pip records it (fixtures/linux/companions-built-for-older-...): made for
# TensorFlow 2.15, and requiring tensorflow-hub, which 2.21.1, the release made for TensorFlow 2.21, does not.
TEXT_215 = {"name": "tensorflow-text", "version": "2.15.0", "location": "/env/lib/python3.11/site-packages",
            "top_level": ["tensorflow_text"],
            "requires": ["tensorflow-hub (>=0.13.0)",
                         'tensorflow (<2.16,>=2.15.0) ; platform_machine != "arm64" or platform_system != "Darwin"',
                         'tensorflow-macos (<2.16,>=2.15.0) ; platform_machine == "arm64" and platform_system == "Darwin"',
                         "tensorflow-cpu (<2.14,>=2.13.0) ; extra == 'tensorflow_cpu'", "absl-py ; extra == 'tests'"]}


def test_the_requirements_of_a_release_the_plan_replaces_are_not_installed():
    """Issue 29: tensorflow-text 2.15.0 requires tensorflow-hub, which is missing; the plan replaces 2.15.0 with
    2.21.1 (made for the installed TensorFlow, needing no hub), so hub is no part of it (it used to be, and hub's
    KerasLayer then broke the repaired environment under Keras 3)."""
    facts = tensorflow_environment(extra=[TEXT_215], tensorflow=IMPORTED)
    result = results_of(facts, "dependencies")[0]
    assert "tensorflow-hub>=0.13.0" in [p for r in result.remediation.repairs for p in r.packages]  # the check asks
    plan = plan_of(facts, result)
    assert [step.packages for step in plan.steps] == [("tensorflow-text==2.21.1",)]
    assert not any("tensorflow-hub" in step.command for step in plan.steps)
    assert any(note.startswith("tensorflow-hub>=0.13.0 left out: a requirement of tensorflow-text 2.15.0, which this "
                               "plan replaces (tensorflow-text==2.21.1)") for note in plan.notes), plan.notes


def test_a_requirement_of_a_release_the_plan_keeps_or_of_another_is_installed():
    def install(*requirements: str, required_by: str | None = None) -> Repair:
        return Repair.install(*requirements, reason="r", required_by=required_by)

    facts = tensorflow_environment(extra=[{"name": "x-lib", "version": "1.0", "location": "/env/lib/python3.11/site-packages"}],
                                   tensorflow=IMPORTED)
    carried = asked("dependencies", install("y-lib>=2", required_by="x-lib==1.0"), install("z-lib", required_by="w-lib==3"))
    kept = build_plan([carried], facts)  # nothing replaces x-lib 1.0
    assert kept.steps[0].packages[:2] == ("y-lib>=2", "z-lib") and not kept.notes
    replaced = build_plan([carried, asked("companions", install("x-lib==2.0"))], facts)
    assert replaced.steps[0].packages[:2] == ("z-lib", "x-lib==2.0")
    assert replaced.notes == ("y-lib>=2 left out: a requirement of x-lib 1.0, which this plan replaces (x-lib==2.0).",)
    removed = build_plan([carried, asked("companions", Repair.uninstall("x-lib", reason="r"))], facts)
    assert [step.packages for step in removed.steps][-1][0] == "z-lib" and "which this plan removes" in removed.notes[0]
    # a requirement that admits the installed release does not replace it
    assert build_plan([carried, asked("companions", install("x-lib>=1"))], facts).steps[0].packages[0] == "y-lib>=2"


# ---- TensorFlow ------------------------------------------------------------------------------------

def test_the_installed_tensorflow_is_pinned_into_the_resolver_step():
    facts = tensorflow_environment({"h5py": "3.15.1"}, tensorflow=IMPORTED)
    (step,) = plan_for_checks(facts, "dependencies").steps
    assert shlex.split(step.command)[-1] == "tensorflow-cpu==2.21.0"
    assert step.packages == ("h5py<3.15.0,>=3.11.0", "tensorflow-cpu==2.21.0") and not plan_has_move(facts)
    # the pin is the planner's, not a check's: no reason of a check claims it
    assert [r.check for r in step.reasons] == ["dependencies"]


def test_a_repair_that_excludes_the_installed_tensorflow_moves_it_with_the_reason():
    model = {"name": "my-model", "version": "1.0", "requires": ["tensorflow<2.16,>=2.15"]}
    facts = tensorflow_environment(tf_name="tensorflow", extra=[model], tensorflow=IMPORTED)
    plan = plan_for_checks(facts, "dependencies")
    assert plan.moves_tensorflow is not None
    move = plan.to_dict()["moves_tensorflow"]
    assert move["from"] == "tensorflow==2.21.0" and move["to"] == "tensorflow<2.16,>=2.15"
    assert "my-model 1.0's tensorflow<2.16,>=2.15" in move["why"] and "TensorFlow must move" in move["why"]
    assert argvs(plan) == [[ENV_PYTHON, "-m", "pip", "install", "--", "tensorflow<2.16,>=2.15"]]  # no pin of the old one


def test_a_second_build_without_uninstalling_the_installed_one_is_a_conflict():
    facts = tensorflow_environment(tensorflow=IMPORTED)
    plan = plan_of(facts, [asked("gpu-visible", Repair.install("tensorflow[and-cuda]==2.21.0", reason="CUDA wanted"))])
    (conflict,) = plan.conflicts
    assert conflict.distribution == "tensorflow" and "two TensorFlow builds" in conflict.why
    assert ("", "tensorflow-cpu==2.21.0", "installed") in conflict.wants
    assert plan.steps == ()
    # with the installed build uninstalled in the same plan, it is a move, and the plan says why
    plan = plan_of(facts, [asked("gpu-visible", Repair.uninstall("tensorflow-cpu", reason="a CPU-only build"),
                                 Repair.install("tensorflow[and-cuda]==2.21.0", reason="CUDA wanted"))])
    assert not plan.conflicts and plan.moves_tensorflow.why == "CUDA wanted"
    assert argvs(plan) == [[ENV_PYTHON, "-m", "pip", "uninstall", "-y", "--", "tensorflow-cpu"],
                           [ENV_PYTHON, "-m", "pip", "install", "--", "tensorflow[and-cuda]==2.21.0"]]


def test_legacy_keras_without_tf_keras_is_one_no_deps_step_both_checks_point_at():
    """TF_USE_LEGACY_KERAS=1, no tf-keras, tensorflow-cpu 2.21.0 (issue 17): tensorflow-install and keras ask for
    the same tf-keras; tf-keras 2.21.0 requires `tensorflow` (companion table), so the plan installs it
    --no-deps and no second TensorFlow build lands beside tensorflow-cpu."""
    path = next(p for p in fixture_paths() if p.name == "tensorflow-2.21-legacy-keras-without-tf-keras.json")
    facts = load_fixture(path)["facts"]
    results = {r.check_id: r for r in run_checks(all_checks(), facts)}
    assert results["tensorflow-install"].remediation.repairs == tuple(
        Repair.install("tf-keras==2.21.0", reason=r.reason) for r in results["keras"].remediation.repairs)
    plan = build_plan(list(results.values()), facts)
    (step,) = plan.steps
    assert step.no_deps and step.packages == ("tf-keras==2.21.0",) and step.command.endswith("--no-deps -- 'tf-keras==2.21.0'")
    assert plan.steps_for("tensorflow-install") == plan.steps_for("keras") == [1]
    assert not plan.conflicts and plan.moves_tensorflow is None


# ---- the installer ---------------------------------------------------------------------------------

def test_a_pip_too_old_is_upgraded_before_every_other_step():
    facts = with_pip(tensorflow_environment({"protobuf": "5.28.0"}, tensorflow=IMPORTED), "20.2.4", TF_221_WHEEL)
    plan = plan_for_checks(facts, "dependencies", "installer")
    assert [s.command for s in plan.steps] == [
        f"{ENV_PYTHON} -m pip install --upgrade pip",
        f"{ENV_PYTHON} -m pip install -- 'protobuf<8.0.0,>=6.31.1' 'tensorflow-cpu==2.21.0'"]
    assert plan.steps_for("installer") == [1] and plan.steps_for("dependencies") == [2]
    # the planner does it by itself when the installer check is not run
    alone = plan_for_checks(facts, "dependencies")
    assert alone.steps[0].command == f"{ENV_PYTHON} -m pip install --upgrade pip"
    assert alone.steps[0].reasons[0].check == "installer"


def test_no_pip_is_bootstrapped_with_ensurepip_then_upgraded():
    facts = with_pip(tensorflow_environment({"protobuf": "5.28.0"}, tensorflow=IMPORTED), None, TF_221_WHEEL)
    plan = plan_for_checks(facts, "dependencies", "installer")
    assert [s.command for s in plan.steps][:2] == [f"{ENV_PYTHON} -m ensurepip --upgrade", f"{ENV_PYTHON} -m pip install --upgrade pip"]
    assert plan.steps[0].missing and len(plan.steps) == 3


def test_a_new_pip_gets_no_upgrade_step():
    facts = with_pip(tensorflow_environment({"protobuf": "5.28.0"}, tensorflow=IMPORTED), "24.0", TF_221_WHEEL)
    assert [s.action for s in plan_for_checks(facts, "dependencies", "installer").steps] == [Action.INSTALL]


def test_uv_installs_with_uv_and_needs_no_pip():
    facts = with_pip(tensorflow_environment({"protobuf": "5.28.0"}, tensorflow=IMPORTED), None, TF_221_WHEEL)
    facts["python"]["uv_version"] = "0.5.1"
    plan = plan_for_checks(facts, "dependencies", "installer")
    assert plan.installer == "uv"
    assert [s.command for s in plan.steps] == [
        f"uv pip install --python {ENV_PYTHON} -- 'protobuf<8.0.0,>=6.31.1' 'tensorflow-cpu==2.21.0'"]


# ---- spellings -------------------------------------------------------------------------------------

def test_what_conda_installed_is_reinstalled_with_conda_into_its_prefix():
    truncated = {"path": "numpy/_core/_multiarray_umath.cpython-311-x86_64-linux-gnu.so", "problem": "size",
                 "expected_size": 100, "size": 10}
    facts = integrity_facts(verified_distribution("tensorflow-cpu", "2.21.0", MISSING_LIB),
                            verified_distribution("numpy", "2.4.6", truncated, installer="conda"))
    facts["python"].update(conda=True, in_venv=False, prefix="/opt/conda/envs/tf")
    plan = plan_for_checks(facts, "install-integrity")
    assert plan.installer == "conda"
    assert [s.command for s in plan.steps] == [
        "conda install -p /opt/conda/envs/tf --force-reinstall --no-deps -y -- 'numpy=2.4.6'",
        "/venv/bin/python -m pip install --force-reinstall --no-deps -- 'tensorflow-cpu==2.21.0'"]
    assert plan.steps[0].manager == "conda" and plan.steps[0].argv(plan_spelling(facts))[:2] == ["conda", "install"]


def test_a_windows_host_gets_powershell_lines():
    python = r"C:\Program Files\Python311\python.exe"
    facts = tensorflow_environment({"protobuf": "5.28.0"}, system="Windows", machine="AMD64", tensorflow=IMPORTED)
    facts["python"]["executable"] = python
    plan = plan_for_checks(facts, "dependencies")
    assert plan.shell == "powershell"
    assert [s.command for s in plan.steps] == [
        f"& '{python}' -m pip install '--' 'protobuf<8.0.0,>=6.31.1' 'tensorflow-cpu==2.21.0'"]  # single quotes: nothing expands
    assert "&&" not in plan.steps[0].command


def test_environment_variables_are_manual_steps_after_the_installs():
    facts = tensorflow_environment({"protobuf": "5.28.0"}, tensorflow=IMPORTED)
    results = results_of(facts, "dependencies") + [
        asked("keras", Repair.unset_env("TF_USE_LEGACY_KERAS", reason="tf.keras is Keras 3 without it")),
        asked("gpu-visible", Repair.set_env("CUDA_VISIBLE_DEVICES", "0", reason="the only GPU is 0"))]
    plan = plan_of(facts, results)
    assert [(s.command, s.manual) for s in plan.steps] == [
        (f"{ENV_PYTHON} -m pip install -- 'protobuf<8.0.0,>=6.31.1' 'tensorflow-cpu==2.21.0'", False),
        ("export CUDA_VISIBLE_DEVICES=0", True), ("unset TF_USE_LEGACY_KERAS", True)]
    assert [s.number for s in plan.runnable] == [1]
    facts["host"]["system"] = "Windows"
    windows = plan_of(facts, results)
    assert [s.command for s in windows.steps if s.manual] == ["$env:CUDA_VISIBLE_DEVICES = 0",
                                                              "Remove-Item Env:TF_USE_LEGACY_KERAS"]


# ---- the report ------------------------------------------------------------------------------------

def test_each_checks_remediation_points_at_its_plan_steps_in_the_json():
    facts = with_pip(tensorflow_environment({"protobuf": "5.28.0"}, tensorflow=IMPORTED), "20.2.4", TF_221_WHEEL)
    results = [r for r in run_checks(all_checks(), facts) if r.check_id in ("dependencies", "installer")]
    document = RunReport(facts, results).to_dict()
    by_id = {r["id"]: r for r in document["results"]}
    assert by_id["installer"]["remediation"]["plan_steps"] == [1]
    assert by_id["dependencies"]["remediation"]["plan_steps"] == [2]
    steps = document["plan"]["steps"]
    assert [s["action"] for s in steps] == ["upgrade-installer", "install"]
    assert steps[1]["reasons"][0] == {"check": "dependencies", "reason": by_id["dependencies"]["summary"]}
    assert by_id["dependencies"]["remediation"]["repairs"] == [
        {"action": "install", "reason": by_id["dependencies"]["summary"], "packages": ["protobuf<8.0.0,>=6.31.1"],
         "required_by": "tensorflow-cpu==2.21.0"}]  # schema 1.3: the release whose Requires-Dist line it carries


def test_a_healthy_report_has_an_empty_plan():
    facts = with_pip(tensorflow_environment(tensorflow=IMPORTED), "24.0", TF_221_WHEEL)
    results = run_checks(all_checks(), facts)
    assert not any(r.status in (Status.FAIL, Status.WARN) and r.check_id in INSTALL_CHECKS for r in results)
    plan = RunReport(facts, results).to_dict()["plan"]
    assert plan["steps"] == [] and plan["conflicts"] == [] and plan["moves_tensorflow"] is None


def test_a_passing_checks_repairs_are_not_planned():
    facts = tensorflow_environment(tensorflow=IMPORTED)
    plan = plan_of(facts, [asked("keras", Repair.install("tf-keras~=2.21.0", reason="x"), status=Status.PASS)])
    assert plan.steps == ()


# ---- the fixtures ----------------------------------------------------------------------------------

@pytest.mark.parametrize("path", fixture_paths(), ids=fixture_id)
def test_every_fixture_the_install_checks_judge_gets_a_plan_without_conflict_or_pip_lines(path):
    """Every recorded machine: the install checks' repairs make a plan with no conflict, and none of them writes
    an install command of its own (the plan is the one place commands are spelled)."""
    facts = load_fixture(path)["facts"]
    results = run_checks(all_checks(), facts)
    mine = [r for r in results if r.check_id in INSTALL_CHECKS and r.status in (Status.WARN, Status.FAIL)]
    plan = build_plan(results, facts)
    assert not [c for c in plan.conflicts if any(check in INSTALL_CHECKS for check, _, _ in c.wants)], plan.conflicts
    for result in mine:
        for command in result.remediation.commands if result.remediation else ():
            if _native_environment_install(result, command):
                continue
            assert not any(spelled in command for spelled in (" -m pip ", "uv pip ", "conda install ")), (
                result.check_id, command)


def test_the_fixture_property_is_exercised():
    planned = 0
    for path in fixture_paths():
        facts = load_fixture(path)["facts"]
        plan = build_plan(run_checks(all_checks(), facts), facts)
        planned += any(plan.steps_for(check) for check in INSTALL_CHECKS)
    assert planned >= 8


def _native_environment_install(result: CheckResult, command: str) -> bool:
    """The install into a *new* native arm64 environment that native_environment (remedies/arm64.py) writes (the
    Rosetta fixtures); that helper is converted with the platform checks on branch convert-platform."""
    return command.startswith(("python -m pip install", "uv pip install 'tensorflow")) and "arm64" in " ".join(
        result.remediation.commands)


def plan_has_move(facts: dict) -> bool:
    return plan_for_checks(facts, "dependencies").moves_tensorflow is not None


def plan_for_checks(facts: dict, *check_ids: str):
    return plan_of(facts, results_of(facts, *check_ids))


def plan_spelling(facts: dict):
    from tfdoctor.environment.spell import spelling_for

    return spelling_for(facts)


def test_a_companion_that_requires_a_companion_requiring_tensorflow_goes_no_deps_too():
    """tensorflow-hub 0.16.1 requires tf-keras>=2.14.1, and tf-keras 2.21.0 requires `tensorflow` (both from
    PyPI's METADATA, tfdoctor/knowledge/companions.toml): pip resolving tensorflow-hub beside tensorflow-cpu
    would add `tensorflow`. Both go --no-deps, their other requirements into the resolver step. The plan is closed
    over its result (issue 38): tensorflow-hub 0.16.1 imports pkg_resources without requiring setuptools, and this
    environment has none, so setuptools<82 (module_providers.toml) joins the resolver step."""
    facts = tensorflow_environment(tensorflow=IMPORTED)
    plan = plan_of(facts, asked("dependencies", Repair.install("tensorflow-hub>=0.13.0", reason="my-app requires it"),
                                status=Status.WARN))
    assert [shlex.split(step.command)[3:] for step in plan.steps] == [
        ["install", "--", "setuptools<82", "numpy>=1.12.0", "protobuf>=3.19.6", "tensorflow-cpu==2.21.0"],
        ["install", "--no-deps", "--", "tensorflow-hub==0.16.1", "tf-keras==2.21.0"]]
    assert not plan.conflicts and not plan.moves_tensorflow
