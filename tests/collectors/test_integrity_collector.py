"""The integrity collector (tfdoctor/collect/integrity.py): it verifies only when a selected check needs it,
gives the hashing less time when no TensorFlow child runs beside it, and nices its child only then."""

from __future__ import annotations

import json
import sys


def test_the_collector_verifies_only_when_a_selected_check_needs_it():
    from tfdoctor.collect.integrity import collect_integrity
    from tfdoctor.collect.options import CollectOptions

    both = collect_integrity(CollectOptions(python=sys.executable, sections=frozenset({"integrity"})), budget_s=0.0)
    assert set(both) == {"integrity", "installers"} and both["installers"]["pip"]
    assert collect_integrity(CollectOptions(python=sys.executable, sections=frozenset({"installers"}))).keys() == {"installers"}


def test_hashing_gets_less_time_when_no_tensorflow_child_runs_beside_it():
    """Without the TensorFlow child the integrity child is the run's critical path: a shorter budget,
    recorded in the facts (the check names it when it stopped the hashing)."""
    from tfdoctor.collect.integrity import HASH_BUDGET_ALONE_S, HASH_BUDGET_S, collect_integrity
    from tfdoctor.collect.options import CollectOptions

    alone = collect_integrity(CollectOptions(python=sys.executable, sections=frozenset({"integrity"})))
    beside = collect_integrity(CollectOptions(python=sys.executable, sections=frozenset({"integrity", "tensorflow"})))
    assert HASH_BUDGET_ALONE_S < HASH_BUDGET_S
    assert alone["integrity"]["budget_s"] == HASH_BUDGET_ALONE_S
    assert beside["integrity"]["budget_s"] == HASH_BUDGET_S


def test_the_child_is_niced_only_beside_the_tensorflow_import(monkeypatch):
    import tfdoctor.collect.integrity as collector
    from tfdoctor.collect.options import CollectOptions

    arguments: list[dict] = []

    def run_command(argv, timeout, env=None):
        arguments.append(json.loads(argv[-1]))
        return {"status": "ok", "exit_code": 0, "stdout": json.dumps({"installers": {}}), "stderr": ""}

    monkeypatch.setattr(collector, "run_command", run_command)
    collector.collect_integrity(CollectOptions(python=sys.executable, sections=frozenset({"integrity", "tensorflow"})))
    collector.collect_integrity(CollectOptions(python=sys.executable, sections=frozenset({"integrity"})))
    assert [a["nice"] for a in arguments] == [True, False]
