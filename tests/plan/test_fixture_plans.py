"""Every recorded machine in fixtures/ gets one repair plan (issue 17) from the platform checks' repair
intents: verdicts as the fixture pins them, no conflict in the plan, every repair carried by a plan step,
and no manual step or advice of those checks that spells an installer command (the plan is the one
place commands come from).

Scope: the checks converted on this branch. tensorflow-install, dependencies, install-integrity,
installer, tensorflow-import and keras, and the remediations that facts/tensorflow_child.py builds from a failure
signature (gpu-visible and probe quote them: their evidence names the signature), are converted
separately; until then they may still carry command lines, so they are left out of the command rule.
"""

from __future__ import annotations

import pytest

from tests.fixtures_support import FIXTURES, fixture_id, fixture_paths, load_fixture
from tests.plan_support import INSTALLER_COMMANDS
from tfdoctor.plan.planner import MANUAL
from tfdoctor.checking.registry import all_checks
from tfdoctor.report.run import RunReport
from tfdoctor.checking.runner import run_checks

PLATFORM_CHECKS = {"platform-support", "architecture", "macos-version", "cpu-instructions", "metal-plugin",
                   "nvidia-driver", "cuda-build", "gpu-visible", "memory", "probe", "requirements", "workload"}
# (fixture, distribution) -> why that machine's plan truly cannot be satisfied.
EXPECTED_CONFLICTS: dict[tuple[str, str], str] = {
    # its own pin wants TensorFlow < 2.22 beside 2.99.0, and which release of it is made for 2.99.0 is not in the
    # tables: the plan does not move TensorFlow back on its own; the choices keep it (uninstall) or move it back
    ("linux/tensorflow-2.99-text-pinned-to-2.21", "tensorflow-text"):
        "tensorflow-text 2.21.0 beside a TensorFlow newer than the tables",
}
PATHS = fixture_paths()


def _converted(result) -> bool:
    return (result.check_id in PLATFORM_CHECKS and result.remediation is not None
            and "signature" not in result.evidence)


@pytest.mark.parametrize("path", PATHS, ids=[fixture_id(p) for p in PATHS])
def test_the_plan_of_a_recorded_machine(path):
    fixture = load_fixture(path)
    results = run_checks(all_checks(), fixture["facts"])
    assert {r.check_id: r.status.value for r in results} == fixture["expected"]
    for result in filter(_converted, results):
        fix = result.remediation
        for line in (*fix.commands, fix.advice):
            assert not any(marker in f" {line} " for marker in INSTALLER_COMMANDS), (result.check_id, line)
    plan = RunReport(fixture["facts"], results).plan
    conflicts = {(fixture_id(path), c.distribution) for c in plan.conflicts}
    assert conflicts == {key for key in EXPECTED_CONFLICTS if key[0] == fixture_id(path)}, plan.to_dict()["conflicts"]
    # a copy that hides a module holds every install step back (Repair.unhides): then only the manual steps stay
    repairs = [r for result in results if result.status.is_problem and result.remediation
               for r in result.remediation.repairs]
    held = any(r.unhides for r in repairs)
    assert (held and any(r.action not in MANUAL for r in repairs)) == any("held back" in n for n in plan.notes)
    for result in results:
        if result.status.is_problem and result.remediation and result.remediation.repairs and not held:
            assert plan.steps_for(result.check_id), (result.check_id, "its repairs are in no plan step")


def test_m1_with_tensorflow_2_20_and_metal_gets_one_step_that_keeps_tensorflow():
    """The README's Mac: no tensorflow-metal loads into TF 2.20+, so the plan uninstalls the plugin (one
    step, TensorFlow stays); the way to the GPU (TF 2.19 with metal 1.2.0) is advice in words."""
    import json
    import subprocess
    import sys

    path = FIXTURES / "macos" / "m1-tf220-metal120-import-fails.json"
    run = subprocess.run([sys.executable, "-m", "tfdoctor", "explain", str(path), "--json"],
                         capture_output=True, text=True, timeout=120)
    document = json.loads(run.stdout)
    plan = document["plan"]
    assert [s["command"] for s in plan["steps"]] == ["/opt/miniconda3/envs/metal/bin/python -m pip uninstall -y -- "
                                                     "tensorflow-metal"]
    assert plan["moves_tensorflow"] is None and plan["conflicts"] == []
    metal = next(r for r in document["results"] if r["id"] == "metal-plugin")
    assert metal["remediation"]["plan_steps"] == [1] and metal["remediation"]["commands"] == []
    assert "tensorflow==2.19.*, tensorflow-metal==1.2.0" in metal["remediation"]["advice"]
