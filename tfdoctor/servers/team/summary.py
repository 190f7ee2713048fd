"""What the fleet table shows of one report, read from the report itself (pure: no I/O, no server deps).

The status is the worst result the machine saw; the cause is the first failing (else warning) check's
one-line summary, and the first step is the first command of the report's own repair plan; the key facts
are the ones that decide whether TensorFlow works: Python, TensorFlow, CUDA, cuDNN, NumPy, Keras, driver.

Every verdict the server shows or stores is the report document's own (report/document.py's Verdict): `summarize`
reads it once per report and stores it beside the report.
"""

from __future__ import annotations

import hashlib
from typing import Any, Mapping

from tfdoctor.report.document import FAILING, KEY_FACTS, WORST_FIRST, ReportDocument, Verdict  # noqa: F401 - FAILING, KEY_FACTS: the store's, the app's

STATUS_ORDER = (*WORST_FIRST, "skip")  # worst first (the fleet table's order)
STATUS_RANK = {status: rank for rank, status in enumerate(STATUS_ORDER)}

DIFF_FIELDS_FIRST = ("TensorFlow version", "Built for CUDA", "Built for cuDNN", "numpy", "keras", "tf-keras",
                     "NVIDIA driver", "Driver's CUDA", "Python version", "TensorFlow import", "Devices")


def key_facts(document: Mapping[str, Any]) -> dict[str, str | None]:
    return ReportDocument(dict(document)).key_facts()


CAUSE_CHARS = 300
STEP_CHARS = 500


def _one_line(value: Any, limit: int) -> str | None:
    if not isinstance(value, str) or not value.strip():
        return None
    line = " ".join(value.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _first_step(document: Mapping[str, Any]) -> str | None:
    """The first command of the report's repair plan (as the doctor spelt it for that machine)."""
    plan = found if isinstance(found := document.get("plan"), Mapping) else {}
    for step in plan.get("steps") or ():
        if isinstance(step, Mapping) and step.get("command"):
            return _one_line(step.get("command"), STEP_CHARS)
    return None


def summarize(document: Mapping[str, Any]) -> dict[str, Any]:
    """The verdict stored beside a report: status, the first failing check and its one-line cause (with a key
    that machines failing for the same reason share), the plan's first step, counts per status, key facts,
    each check's status."""
    results = found if isinstance(found := document.get("results"), list) else []
    target = found if isinstance(found := document.get("target"), Mapping) else {}
    facts = found if isinstance(found := document.get("facts"), Mapping) else {}
    python_facts = found if isinstance(found := facts.get("python"), Mapping) else {}
    verdict = Verdict.of(results)
    problem = verdict.first_problem
    failing = problem.check_id if problem is not None else None
    cause = _one_line(problem.summary, CAUSE_CHARS) if problem is not None else None
    totals = {status: verdict.counts.get(status, 0) for status in STATUS_ORDER}
    return {
        "status": verdict.status,
        "first_failing_check": failing,
        "cause": cause,
        "cause_key": hashlib.sha256(f"{failing}\n{cause}".encode("utf-8")).hexdigest()[:16] if failing else None,
        "first_step": _first_step(document) if failing else None,
        "totals": totals,
        "python": str(target.get("python") or python_facts.get("executable") or "not recorded")[:500],
        "key_facts": key_facts(document),
        "checks": {str(r.get("id")): str(r.get("status")) for r in results if isinstance(r, Mapping)},
    }


def diff_rows_first(differences: list[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """`tfdoctor diff`'s rows with the ones that matter first (TensorFlow, CUDA, cuDNN, NumPy, Keras, driver,
    Python), then the rest in their order."""
    rank = {name: i for i, name in enumerate(DIFF_FIELDS_FIRST)}
    return sorted(differences, key=lambda row: rank.get(str(row.get("field")), len(rank)))
