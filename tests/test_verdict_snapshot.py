"""Behaviour pinned across refactors: every fixture's results (status, summary, evidence, remediation)
and repair plan are what tests/snapshots/fixture_verdicts.json recorded (tools/snapshot_verdicts.py)."""

from __future__ import annotations

import json

import pytest

from tests.fixtures_support import fixture_id, fixture_paths
from tools.snapshot_verdicts import SNAPSHOT, verdicts

RECORDED = json.loads(SNAPSHOT.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def current() -> dict[str, dict]:
    return verdicts()


def test_the_snapshot_covers_every_fixture():
    assert set(RECORDED) == {fixture_id(p) for p in fixture_paths()}


@pytest.mark.parametrize("fixture", sorted(RECORDED))
def test_results_and_plan_are_as_recorded(fixture, current):
    got, want = current[fixture], RECORDED[fixture]
    for mine, recorded in zip(got["results"], want["results"]):
        assert mine == recorded, mine["id"]
    assert got == want
