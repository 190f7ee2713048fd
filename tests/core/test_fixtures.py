"""Every recorded machine in fixtures/ is diagnosed, and every check's verdict is what the fixture says."""

from __future__ import annotations

import pytest

from tests.fixtures_support import fixture_id, fixture_paths, load_fixture
from tfdoctor.results.model import Status
from tfdoctor.checking.registry import all_checks
from tfdoctor.report.run import RunReport
from tfdoctor.checking.runner import run_checks

PATHS = fixture_paths()
CHECK_IDS = [c.id for c in all_checks()]


def test_there_are_fixtures():
    assert len(PATHS) >= 1


@pytest.mark.parametrize("path", PATHS, ids=[fixture_id(p) for p in PATHS])
def test_fixture_is_well_formed(path):
    fixture = load_fixture(path)
    meta = fixture["fixture"]
    assert meta["description"].strip()
    assert meta["sources"], "every fixture names where its facts come from"
    assert set(fixture["expected"]) == set(CHECK_IDS), "expected statuses must cover every check"
    for status in fixture["expected"].values():
        Status(status)


@pytest.mark.parametrize("path", PATHS, ids=[fixture_id(p) for p in PATHS])
def test_fixture_diagnosis(path):
    fixture = load_fixture(path)
    ran = run_checks(all_checks(), fixture["facts"])
    results = {r.check_id: r for r in ran}
    got = {cid: r.status.value for cid, r in results.items()}
    assert got == fixture["expected"], {cid: results[cid].summary for cid in got if got[cid] != fixture["expected"].get(cid)}
    plan = RunReport(fixture["facts"], ran).plan
    for cid, needles in (fixture.get("expected_hints") or {}).items():
        fix = results[cid].remediation
        assert fix is not None, f"{cid} has no remediation"
        # the check's own words and manual steps, and the plan steps that carry out its repairs
        steps = [step.command for step in plan.steps if step.number in plan.steps_for(cid)]
        text = " ".join([fix.advice, *fix.commands, *steps, fix.url or ""])
        for needle in needles:
            assert needle in text, f"{cid}: hint lacks {needle!r}: {text}"


def _packages(command: str, verb: str) -> set[str]:
    """Package names a pip/uv command installs or uninstalls ('tensorflow-metal==1.2.0' -> tensorflow-metal)."""
    import re

    if f" {verb} " not in command or (verb == "install" and " uninstall " in command):
        return set()
    words = command.split(f" {verb} ", 1)[1].replace("'", " ").replace('"', " ").split()
    return {re.split(r"[<>=!~\[; ]", w, 1)[0].lower() for w in words if not w.startswith("-")}


@pytest.mark.parametrize("path", PATHS, ids=[fixture_id(p) for p in PATHS])
def test_fix_commands_are_steps_not_alternatives(path):
    """Commands are run in order: a later step never undoes an earlier one (install X, then uninstall X
    means two alternatives were printed as a sequence). Uninstall-then-install is a clean reinstall."""
    for result in run_checks(all_checks(), load_fixture(path)["facts"]):
        commands = result.remediation.commands if result.remediation else ()
        installed: set[str] = set()
        for command in commands:
            assert not installed & _packages(command, "uninstall"), (result.check_id, commands)
            installed |= _packages(command, "install")
