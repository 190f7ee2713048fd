"""What the fleet table shows of one report, read from the report itself (pure: no I/O, no server deps).

The status is the worst result the machine saw; the key facts are the ones that decide whether
TensorFlow works (the rows a drift view puts first): Python, TensorFlow, CUDA, cuDNN, NumPy, Keras, driver.
"""

from __future__ import annotations

from typing import Any, Mapping

from tfdoctor.report.document import FAILING, KEY_FACTS, WORST_FIRST, ReportDocument, Verdict  # noqa: F401 - FAILING, KEY_FACTS: the store's, the app's

STATUS_ORDER = (*WORST_FIRST, "skip")  # worst first (the fleet table's order)

DIFF_FIELDS_FIRST = ("TensorFlow version", "Built for CUDA", "Built for cuDNN", "numpy", "keras", "tf-keras",
                     "NVIDIA driver", "Driver's CUDA", "Python version", "TensorFlow import", "Devices")


def worst_status(results: Any) -> str:
    return Verdict.of(results if isinstance(results, list) else ()).status


def first_failing_check(results: Any) -> str | None:
    """The first check that failed or crashed, else the first that warned."""
    problem = Verdict.of(results if isinstance(results, list) else ()).first_problem
    return problem.check_id if problem is not None else None


def key_facts(document: Mapping[str, Any]) -> dict[str, str | None]:
    return ReportDocument(dict(document)).key_facts()


def summarize(document: Mapping[str, Any]) -> dict[str, Any]:
    """The columns stored beside a report: status, first failing check, key facts, each check's status."""
    results = found if isinstance(found := document.get("results"), list) else []
    target = found if isinstance(found := document.get("target"), Mapping) else {}
    facts = found if isinstance(found := document.get("facts"), Mapping) else {}
    python_facts = found if isinstance(found := facts.get("python"), Mapping) else {}
    return {
        "status": worst_status(results),
        "first_failing_check": first_failing_check(results),
        "python": str(target.get("python") or python_facts.get("executable") or "not recorded")[:500],
        "key_facts": key_facts(document),
        "checks": {str(r.get("id")): str(r.get("status")) for r in results if isinstance(r, Mapping)},
    }


def diff_rows_first(differences: list[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """`tfdoctor diff`'s rows with the ones that matter first (TensorFlow, CUDA, cuDNN, NumPy, Keras, driver,
    Python), then the rest in their order."""
    rank = {name: i for i, name in enumerate(DIFF_FIELDS_FIRST)}
    return sorted(differences, key=lambda row: rank.get(str(row.get("field")), len(rank)))
