"""Install integrity: the check judges the integrity child's facts (constructed here: missing, truncated and
clashing files, what conda installed, what cannot be verified) and asks for reinstalls the planner spells.
The child on real files: tests/child/test_integrity_child.py; its collector: tests/collectors/."""

from __future__ import annotations

from tfdoctor.checks.install_integrity import install_integrity as integrity_check
from tfdoctor.facts import integrity
from tfdoctor.results.model import Status
from tfdoctor.results.repairs import Action
from tests.builders import MISSING_LIB, integrity_facts, verified_distribution
from tests.plan_support import as_result, intents, plan_of

PYTHON = "/venv/bin/python"  # integrity_facts' interpreter


def planned(found: dict, outcome) -> list[str]:
    return [step.command for step in plan_of(found, [as_result("install-integrity", outcome)]).steps]


def test_a_missing_file_fails_and_reinstalls_exactly_that_distribution():
    found = integrity_facts(verified_distribution("tensorflow-cpu", "2.21.0", MISSING_LIB), verified_distribution("numpy", "2.4.6"))
    outcome = integrity_check.run(found)
    assert outcome.status is Status.FAIL
    assert "tensorflow-cpu 2.21.0" in outcome.summary and "libtensorflow_framework.so.2 is missing" in outcome.summary
    assert outcome.remediation.commands == ()
    (repair,) = outcome.remediation.repairs
    assert (repair.action, repair.packages, repair.manager) == (Action.REINSTALL, ("tensorflow-cpu==2.21.0",), None)
    assert repair.reason == ("tensorflow-cpu 2.21.0: tensorflow/libtensorflow_framework.so.2 is missing (RECORD)")
    assert planned(found, outcome) == [f"{PYTHON} -m pip install --force-reinstall --no-deps -- 'tensorflow-cpu==2.21.0'"]


def test_problems_in_two_distributions_give_one_reinstall_of_both():
    truncated = {"path": "numpy/_core/_multiarray_umath.cpython-311-x86_64-linux-gnu.so", "problem": "size",
                 "expected_size": 100, "size": 10}
    found = integrity_facts(verified_distribution("tensorflow-cpu", "2.21.0", MISSING_LIB), verified_distribution("numpy", "2.4.6", truncated))
    outcome = integrity_check.run(found)
    assert intents(outcome) == [("reinstall", ("tensorflow-cpu==2.21.0", "numpy==2.4.6"))]
    assert planned(found, outcome) == [
        f"{PYTHON} -m pip install --force-reinstall --no-deps -- 'tensorflow-cpu==2.21.0' 'numpy==2.4.6'"]
    assert any("numpy 2.4.6" in line for line in outcome.details)



def test_what_conda_installed_conda_reinstalls_and_pip_the_rest():
    # a conda environment where numpy came from conda and TensorFlow from pip (TensorFlow's own advice):
    # pip laying its numpy over conda's would leave conda's record of the package wrong
    truncated = {"path": "numpy/_core/_multiarray_umath.cpython-311-x86_64-linux-gnu.so", "problem": "size",
                 "expected_size": 100, "size": 10}
    found = integrity_facts(verified_distribution("tensorflow-cpu", "2.21.0", MISSING_LIB), verified_distribution("numpy", "2.4.6", truncated, installer="conda"))
    found["python"].update(conda=True, in_venv=False, prefix="/opt/conda/envs/tf")
    outcome = integrity_check.run(found)
    conda, pip = outcome.remediation.repairs
    assert (conda.packages, conda.manager, conda.prefix) == (("numpy==2.4.6",), "conda", "/opt/conda/envs/tf")
    assert (pip.packages, pip.manager) == (("tensorflow-cpu==2.21.0",), None)
    assert planned(found, outcome) == [
        "conda install -p /opt/conda/envs/tf --force-reinstall --no-deps -y -- 'numpy=2.4.6'",
        f"{PYTHON} -m pip install --force-reinstall --no-deps -- 'tensorflow-cpu==2.21.0'"]
    only_conda = integrity_facts(verified_distribution("numpy", "2.4.6", truncated, installer="conda"), verified_distribution("tensorflow-cpu", "2.21.0"))
    only_conda["python"].update(conda=True, prefix="/opt/my envs/tf")
    outcome = integrity_check.run(only_conda)
    assert planned(only_conda, outcome) == ["conda install -p '/opt/my envs/tf' --force-reinstall --no-deps -y -- 'numpy=2.4.6'"]
    assert "docs.conda.io" in outcome.remediation.url

def test_only_a_missing_console_script_warns():
    script = {"path": "../../../bin/tensorboard", "problem": "missing", "expected_size": 200, "size": None, "outside": True}
    found = integrity_facts(verified_distribution("tensorboard", "2.20.0", script))
    outcome = integrity_check.run(found)
    assert outcome.status is Status.WARN
    assert intents(outcome) == [("reinstall", ("tensorboard==2.20.0",))]
    assert planned(found, outcome) == [f"{PYTHON} -m pip install --force-reinstall --no-deps -- 'tensorboard==2.20.0'"]


def test_intact_files_pass_and_say_what_was_verified_and_what_not():
    outcome = integrity_check.run(integrity_facts(verified_distribution("tensorflow-cpu", "2.21.0", native_files=70, hashed_files=60),
                                      verified_distribution("keras", "3.1.0", record=False, installer="conda"), stopped=True))
    assert outcome.status is Status.PASS
    text = " ".join((outcome.summary, *outcome.details))
    assert "sha256 of 60 of 70 native libraries" in text and "budget stopped the rest" in text
    assert "cannot verify keras 3.1.0: installed by conda (no RECORD)" in text


def test_an_unverifiable_tensorflow_is_said_in_the_summary():
    outcome = integrity_check.run(integrity_facts(verified_distribution("tensorflow", "2.15.0", record=False, metadata="egg-info")))
    assert outcome.status is Status.PASS
    assert outcome.summary.startswith("cannot verify tensorflow (an egg-info install (no RECORD))")


def test_no_family_distribution_skips():
    assert integrity_check.run(integrity_facts()).status is Status.SKIP


def test_a_library_named_in_an_error_is_tied_to_its_missing_file():
    found = integrity_facts(verified_distribution("tensorflow-cpu", "2.21.0", MISSING_LIB))
    problem = integrity.problem_for_library(found, "libtensorflow_framework.so.2")
    assert problem is not None and problem.requirement == "tensorflow-cpu==2.21.0"
    assert integrity.problem_for_library(found, "libcudart.so.12") is None


def test_two_builds_sharing_files_fail_without_a_reinstall_that_would_bring_the_clash_back():
    clash = {**MISSING_LIB, "problem": "size", "size": 1, "also_in": ["tensorflow"]}
    truncated = {"path": "numpy/__init__.py", "problem": "size", "expected_size": 100, "size": 10}
    found = integrity_facts(verified_distribution("tensorflow", "2.21.0"), verified_distribution("tensorflow-cpu", "2.21.0", clash), verified_distribution("numpy", "2.4.6", truncated))
    outcome = integrity_check.run(found)
    assert outcome.status is Status.FAIL
    # the damage with a repair comes first; the clash is named in the details
    assert intents(outcome) == [("reinstall", ("numpy==2.4.6",))]
    assert any("tensorflow, tensorflow-cpu install the same files" in line for line in outcome.details)
    alone_facts = integrity_facts(verified_distribution("tensorflow", "2.21.0"), verified_distribution("tensorflow-cpu", "2.21.0", clash))
    alone = integrity_check.run(alone_facts)
    assert alone.status is Status.FAIL and alone.summary.startswith("tensorflow, tensorflow-cpu install the same files")
    # uninstall both, install one: the one tensorflow-install keeps (the newest, as `tensorflow` on Linux x86-64)
    assert alone.remediation.commands == () and "tensorflow-install" in alone.remediation.advice
    assert intents(alone) == [("uninstall", ("tensorflow", "tensorflow-cpu")), ("install", ("tensorflow==2.21.0",))]
    assert not any(r.action is Action.REINSTALL for r in alone.remediation.repairs)
    plan = plan_of(alone_facts, [as_result("install-integrity", alone)])
    assert [step.command for step in plan.steps] == [f"{PYTHON} -m pip uninstall -y -- tensorflow tensorflow-cpu",
                                                     f"{PYTHON} -m pip install -- 'tensorflow==2.21.0'"]
    assert not plan.conflicts


def test_a_clash_is_repaired_as_tensorflow_install_repairs_the_same_two_builds():
    """Both checks see tensorflow and tensorflow-cpu in one site-packages/tensorflow/: they ask for the same
    uninstall and the same build kept, so the plan has one uninstall and one install."""
    from tests.plan_support import results_of

    clash = {**MISSING_LIB, "problem": "size", "size": 1, "also_in": ["tensorflow-cpu"]}
    found = integrity_facts(verified_distribution("tensorflow", "2.20.0", clash), verified_distribution("tensorflow-cpu", "2.21.0"))
    found["python"]["version"] = "3.11.7"
    found["distributions"] = [{"name": "tensorflow-cpu", "version": "2.21.0", "top_level": ["tensorflow"]},
                              {"name": "tensorflow", "version": "2.20.0", "top_level": ["tensorflow"]}]
    results = results_of(found, "tensorflow-install", "install-integrity")
    assert [r.status for r in results] == [Status.FAIL, Status.FAIL]
    assert intents(results[0])[1:] == intents(results[1])[1:] == [("install", ("tensorflow==2.21.0",))]
    plan = plan_of(found, results)
    assert [step.command for step in plan.steps] == [f"{PYTHON} -m pip uninstall -y -- tensorflow tensorflow-cpu",
                                                     f"{PYTHON} -m pip install -- 'tensorflow==2.21.0'"]
    assert plan.steps_for("tensorflow-install") == plan.steps_for("install-integrity") == [1, 2]
    # the installed build (tensorflow-cpu, first on the path) is replaced: the plan says so, and why
    move = plan.moves_tensorflow
    assert (move.source, move.target) == ("tensorflow-cpu==2.21.0", "tensorflow==2.21.0")
    assert "two real TensorFlow builds" in move.why and "install the same files" in move.why


def test_a_clash_of_other_distributions_keeps_the_one_installed_last():
    """keras-nightly's files overwrote keras's (keras's RECORD no longer matches): keras-nightly stays."""
    shared = {"path": "keras/__init__.py", "problem": "hash", "also_in": ["keras-nightly"]}
    found = integrity_facts(verified_distribution("keras", "3.12.0", shared), verified_distribution("keras-nightly", "3.13.0.dev2025110103"))
    outcome = integrity_check.run(found)
    assert intents(outcome) == [("uninstall", ("keras", "keras-nightly")), ("install", ("keras-nightly==3.13.0.dev2025110103",))]
