"""`--deep` is opt-in: without it the workload check is not part of a run (its time and output stay as
they were); named in --only, or in a saved report that holds a workload, it is."""

from __future__ import annotations

from tfdoctor.diagnosis.doctor import selected_checks
from tfdoctor.operations.explain import explained_document as explain
from tfdoctor.report.saved import parse_report

import json


def ids(checks):
    return [c.id for c in checks]


def test_workload_only_on_request():
    assert "workload" not in ids(selected_checks(deep=False))
    assert "workload" in ids(selected_checks(deep=True))
    assert ids(selected_checks(("workload",), deep=False)) == ["workload"]
    assert ids(selected_checks(("deep",), deep=False)) == ["workload"]


def test_listing_shows_every_check():
    assert "workload" in ids(selected_checks())


def _explained(facts):
    saved = parse_report(json.dumps({"schema_version": "1.0", "facts": facts}).encode(), "report.json")
    return [r["id"] for r in explain(saved)["results"]]


def test_explain_judges_a_saved_workload_and_only_then():
    base = {"host": {"system": "Linux", "machine": "x86_64"}, "tensorflow": {"status": "ok", "version": "2.21.0"}}
    assert "workload" not in _explained(base)
    with_workload = {**base, "tensorflow": {**base["tensorflow"], "workload": {}}}
    assert "workload" in _explained(with_workload)
