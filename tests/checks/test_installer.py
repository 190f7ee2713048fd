"""Installer capability: which pip installs which wheel tags, judged from constructed facts, and the
property that no check prints an install command the target's pip cannot carry out."""

from __future__ import annotations

import copy

import pytest

from tests.builders import TF_221_WHEEL, installed_wheel
from tests.fixtures_support import fixture_id, fixture_paths, load_fixture
from tests.plan_support import as_result, intents, plan_of
from tfdoctor.checks.installer import installer_capability
from tfdoctor.environment.pip import installer_for, pip_needs, wheel_need
from tfdoctor.results.model import Outcome, Remediation, Status
from tfdoctor.checking.registry import all_checks
from tfdoctor.results.repairs import Action, Repair
from tfdoctor.checking.runner import run_checks

PYTHON = "/venv/bin/python"
UPGRADE = f"{PYTHON} -m pip install --upgrade pip"


def facts(pip: str | None, *wheels: dict, system: str = "Linux", machine: str = "x86_64",
          distributions: list | None = None, **python) -> dict:
    names = distributions if distributions is not None else [w["name"] for w in wheels]
    return {
        "host": {"system": system, "machine": machine},
        "python": {"executable": PYTHON, "in_venv": True, "machine": machine, "version": "3.11.7", **python},
        "distributions": [{"name": n, "version": "1"} for n in names],
        "installers": {"pip": pip, "conda": None, "wheels": list(wheels)},
    }


TF215 = installed_wheel("tensorflow", "2.15.0", "cp311-cp311-manylinux_2_17_x86_64", "cp311-cp311-manylinux2014_x86_64")


@pytest.mark.parametrize("tags, requires_python, pip", [
    (("cp311-cp311-manylinux_2_27_x86_64",), None, "20.3"),
    (("cp311-cp311-manylinux_2_17_x86_64", "cp311-cp311-manylinux2014_x86_64"), None, "19.3"),  # any one tag
    (("cp38-cp38-manylinux2010_x86_64",), None, "19.0"),
    (("cp36-cp36m-manylinux1_x86_64",), None, "8.1"),
    (("cp311-cp311-macosx_12_0_arm64",), None, "20.3"),
    (("cp39-cp39-macosx_10_15_x86_64",), None, None),
    (("py3-none-any",), ">=3.9", "9.0"),
    (("cp311-cp311-win_amd64",), None, None),
])
def test_the_oldest_pip_for_a_wheel(tags, requires_python, pip):
    need = wheel_need("x", "1", tags, requires_python)
    assert (need.pip if need else None) == pip


def test_pip_too_old_for_the_installed_tensorflow_fails_and_upgrades_first():
    outcome = installer_capability.run(facts("19.3.1", TF_221_WHEEL))
    assert outcome.status is Status.FAIL
    assert "pip 19.3.1 cannot install tensorflow-cpu 2.21.0's wheel" in outcome.summary
    assert "manylinux_2_27" in outcome.summary and "20.3" in outcome.summary
    assert outcome.remediation.commands == ()
    (repair,) = outcome.remediation.repairs
    assert (repair.action, repair.minimum, repair.missing) == (Action.UPGRADE_INSTALLER, "20.3", False)
    assert "pip 19.3.1 cannot install tensorflow-cpu 2.21.0's wheel" in repair.reason
    plan = plan_of(facts("19.3.1", TF_221_WHEEL), [as_result("installer", outcome)])
    assert [step.command for step in plan.steps] == [UPGRADE]


def test_pip_too_old_for_a_manylinux2014_tensorflow_fails():
    outcome = installer_capability.run(facts("19.2.3", TF215))
    assert outcome.status is Status.FAIL and "19.3" in outcome.summary


def test_pip_that_reinstalls_what_is_there_but_not_the_newest_tensorflow_warns():
    outcome = installer_capability.run(facts("20.2.4", TF215))
    assert outcome.status is Status.WARN
    assert "the newest tensorflow (2.21.0)" in outcome.summary
    assert intents(outcome) == [("upgrade-installer", ("pip",))]
    assert [s.command for s in plan_of(facts("20.2.4", TF215), [as_result("installer", outcome)]).steps] == [UPGRADE]


def test_no_tensorflow_and_a_pip_that_cannot_see_its_wheel_fails():
    outcome = installer_capability.run(facts("20.2.4", distributions=["numpy"]))
    assert outcome.status is Status.FAIL
    assert "`pip install tensorflow` finds no wheel or an older TensorFlow" in outcome.summary


@pytest.mark.parametrize("python, pip, status, needed", [
    ("3.9.18", "19.2.3", Status.FAIL, "19.3"),  # newest TensorFlow for 3.9 is 2.20: manylinux2014
    ("3.9.18", "20.0.2", Status.PASS, None),
    ("3.6.15", "18.1", Status.FAIL, "19.0"),  # 2.6.5: manylinux2010; pip 18.1 is what Python 3.6.15 ships
    ("3.14.0", "19.0", Status.PASS, None),  # no TensorFlow for 3.14 (platform-support says so), nothing to need
])
def test_the_tensorflow_to_install_is_the_newest_for_this_python(python, pip, status, needed):
    outcome = installer_capability.run(facts(pip, distributions=["numpy"], version=python))
    assert outcome.status is status
    if needed:
        assert f"need pip {needed} or newer" in outcome.summary


def test_a_new_pip_passes_and_names_the_newest_need():
    outcome = installer_capability.run(facts("24.0", TF_221_WHEEL))
    assert outcome.status is Status.PASS and "pip 24.0" in outcome.summary and "20.3" in outcome.summary


def test_macos_arm64_tags_need_pip_20_3():
    tf = installed_wheel("tensorflow", "2.16.2", "cp311-cp311-macosx_12_0_arm64")
    outcome = installer_capability.run(facts("20.2.3", tf, system="Darwin", machine="arm64"))
    assert outcome.status is Status.FAIL and "macOS 11+" in outcome.summary


def test_windows_wheels_need_no_recent_pip():
    tf = installed_wheel("tensorflow", "2.10.0", "cp310-cp310-win_amd64", requires_python=None)
    assert installer_capability.run(facts("19.0", tf, system="Windows", machine="AMD64")).status is Status.PASS


def test_requires_python_needs_pip_9():
    tf = installed_wheel("tensorflow", "2.10.0", "cp310-cp310-win_amd64", requires_python=">=3.7")
    outcome = installer_capability.run(facts("8.1.2", tf, system="Windows", machine="AMD64"))
    assert outcome.status is Status.FAIL and "Requires-Python" in outcome.summary


def test_no_pip_warns_and_bootstraps_it():
    outcome = installer_capability.run(facts(None, TF_221_WHEEL))
    assert outcome.status is Status.WARN and "No module named pip" in outcome.summary
    assert outcome.remediation.commands == () and outcome.remediation.repairs[0].missing
    plan = plan_of(facts(None, TF_221_WHEEL), [as_result("installer", outcome)])
    assert [step.command for step in plan.steps] == [f"{PYTHON} -m ensurepip --upgrade", UPGRADE]


def test_an_externally_managed_python_is_told_the_policy_its_plan_follows():
    """One policy (issue 26): the check said such a Python gets "a virtual environment of its own" while the
    plan for it runs pip with --break-system-packages in place; now both say the plan's policy."""
    managed = facts("24.0", TF_221_WHEEL, in_venv=False, externally_managed=True)
    outcome = installer_capability.run(managed)
    assert outcome.status is Status.PASS and "--break-system-packages" in outcome.summary
    assert "virtual environment" not in outcome.summary
    pinned = Outcome.warn("numpy is outside a pin", fix=Remediation("Install the pin.", repairs=(
        Repair.install("numpy<2", reason="pinned"),)))
    plan = plan_of(managed, [as_result("installer", outcome), as_result("dependencies", pinned)])
    assert plan.installer == "managed"
    assert len(plan.steps) == 1  # the Python diagnosed is repaired in place (TensorFlow pinned where it is)
    assert plan.steps[0].command.startswith(f"{PYTHON} -m pip install --break-system-packages -- 'numpy<2' ")


def test_uv_environments_install_with_uv():
    outcome = installer_capability.run(facts(None, TF_221_WHEEL, uv_version="0.5.1"))
    assert outcome.status is Status.PASS and "uv 0.5.1" in outcome.summary


def test_not_recorded_skips_saying_so():
    from tfdoctor.checking.runner import run_check

    result = run_check(installer_capability, {"host": {"system": "Linux"}, "python": {"executable": PYTHON}})
    assert result.status is Status.SKIP and "installers" in result.summary


def test_an_old_pip_is_known_to_need_the_release_its_wheels_name():
    installer = installer_for(facts("19.3.1", TF_221_WHEEL))
    assert installer.upgrade_pip_to == "20.3" and not installer.pip_missing and installer.uses_pip


def test_a_new_pip_needs_nothing():
    assert installer_for(facts("24.0", TF_221_WHEEL)).upgrade_pip_to is None
    assert installer_for({"python": {"executable": PYTHON, "in_venv": True}}).upgrade_pip_to is None


def test_needs_come_newest_first():
    needs = pip_needs(facts("19.0", TF215, installed_wheel("keras", "3.0.0", "py3-none-any")))
    assert [n.pip for n in needs] == ["20.3", "19.3", "9.0"]


# ---- the property across every check: on a machine with an old pip, the plan brings pip up before any
# ---- pip step (every check's repairs are steps of that one plan; no check writes a pip command itself)

def with_old_pip(path) -> dict:
    document = copy.deepcopy(load_fixture(path)["facts"])
    document["installers"] = {"pip": "19.2.3", "conda": None, "wheels": []}
    return document


def pip_steps(plan, executable: str) -> list:
    return [step for step in plan.runnable if step.command.startswith(f"{executable} -m pip ")]


@pytest.mark.parametrize("path", fixture_paths(), ids=fixture_id)
def test_no_plan_runs_pip_before_an_old_pip_is_upgraded(path):
    document = with_old_pip(path)
    executable = str(document.get("python", {}).get("executable") or "python3")
    installer = installer_for(document)
    results = run_checks(all_checks(), document)
    plan = plan_of(document, results)
    steps = pip_steps(plan, executable)
    if installer.upgrade_pip_to and installer.uses_pip and len(steps) > 0:
        assert steps[0].command == f"{executable} -m pip install --upgrade pip", [s.command for s in plan.steps]
        assert steps[0].number == 1
    elif not installer.upgrade_pip_to:
        assert all("--upgrade pip" not in step.command for step in plan.steps)


def test_the_property_is_exercised():
    """Some fixtures' plans run pip with an old pip (else the test above proves nothing), and there the
    upgrade comes first with more steps after it."""
    exercised = 0
    for path in fixture_paths():
        document = with_old_pip(path)
        executable = str(document.get("python", {}).get("executable") or "python3")
        if installer_for(document).upgrade_pip_to:
            steps = pip_steps(plan_of(document, run_checks(all_checks(), document)), executable)
            exercised += len(steps) > 1
    assert exercised >= 3


def test_old_pip_and_a_deleted_tensorflow_library_upgrade_pip_then_reinstall_exactly():
    """The live case 'old-pip-and-deleted-library': pip 20.2.4 (no manylinux_2_27 wheels) and a deleted
    libtensorflow_framework.so.2 of tensorflow-cpu 2.21.0. The plan: pip first, then the exact reinstall."""
    document = facts("20.2.4", TF_221_WHEEL, distributions=[])
    document["distributions"] = [{"name": "tensorflow-cpu", "version": "2.21.0", "top_level": ["tensorflow"],
                                  "location": "/venv/lib/python3.11/site-packages"}]
    document["integrity"] = {"budget_s": 1.0, "hash_stopped": False, "distributions": [
        {"name": "tensorflow-cpu", "version": "2.21.0", "installer": "pip", "record": True, "problems_total": 1,
         "problems": [{"path": "tensorflow/libtensorflow_framework.so.2", "problem": "missing",
                       "expected_size": 65222328, "size": None}]}]}
    document["tensorflow"] = {"status": "import_failed", "imported": False, "stage": "import_failed", "exit_code": 1,
                              "exception": {"type": "ImportError", "message": "libtensorflow_framework.so.2: cannot "
                                            "open shared object file: No such file or directory"}}
    results = run_checks(all_checks(), document)
    statuses = {r.check_id: r.status for r in results}
    assert statuses["installer"] is Status.FAIL and statuses["install-integrity"] is Status.FAIL
    assert statuses["tensorflow-import"] is Status.FAIL
    plan = plan_of(document, results)
    assert [step.command for step in plan.steps] == [
        UPGRADE, f"{PYTHON} -m pip install --force-reinstall --no-deps -- 'tensorflow-cpu==2.21.0'"]
    assert not plan.conflicts and plan.moves_tensorflow is None
    assert {r.check for r in plan.steps[1].reasons} == {"install-integrity", "tensorflow-import"}
    assert plan.steps_for("installer") == [1]
