"""One row per diagnosed environment, read from its report: what the scan table shows and JSON holds.

Pure: the rows are computed from the (redacted) report documents, so every format says the same."""

from __future__ import annotations

from typing import Any, Mapping, Optional, Sequence

from tfdoctor.facts import tensorflow_child, tensorflow_distributions
from tfdoctor.report.document import ReportDocument
from tfdoctor.scan.run import Diagnosed

CANNOT_RUN = "cannot run"


def verdict(document: Optional[Mapping[str, Any]]) -> str:
    return CANNOT_RUN if document is None else ReportDocument(dict(document)).verdict.outcome


def first_problem(document: Mapping[str, Any]) -> Optional[dict[str, str]]:
    problem = ReportDocument(dict(document)).verdict.first_problem
    return problem.to_dict() if problem is not None else None


def gpus_listed(facts: Mapping[str, Any]) -> Optional[int]:
    """GPUs TensorFlow listed; None when it did not get as far as listing devices."""
    tensorflow = facts.get("tensorflow") or {}
    if not tensorflow.get("imported") or "devices" not in tensorflow:
        return None
    return len(tensorflow_child.devices(tensorflow, "GPU"))


def row(diagnosed: Diagnosed, environment: str, python: str, reason: Optional[str]) -> dict[str, Any]:
    """The row of one environment. `environment`, `python` and `reason` come redacted from the caller."""
    document = diagnosed.document
    base = {"environment": environment, "found_as": list(diagnosed.environment.kinds), "python": python,
            "exit_code": diagnosed.exit_code, "verdict": verdict(document), "seconds": round(diagnosed.seconds, 2)}
    if document is None:
        return {**base, "python_version": None, "tensorflow": None, "tensorflow_imported": None, "gpus": None,
                "first_problem": None, "reason": reason, "results": {}}
    facts = document.get("facts") or {}
    tensorflow = facts.get("tensorflow") or {}
    return {**base,
            "python_version": (facts.get("python") or {}).get("version"),
            "tensorflow": tensorflow.get("version") or tensorflow_distributions.tensorflow_version(facts),
            "tensorflow_imported": tensorflow.get("imported") if "tensorflow" in facts else None,
            "gpus": gpus_listed(facts),
            "first_problem": first_problem(document),
            "reason": None,
            "results": {r["id"]: r["status"] for r in document.get("results") or ()}}


def rank(entry: Mapping[str, Any]) -> tuple:
    """Working with a GPU first, then working on the CPU, then failing, then the ones that could not run;
    a clean pass before a pass with warnings; then by path."""
    works = entry["exit_code"] == 0
    group = 0 if works and entry.get("gpus") else 1 if works else 2 if entry["verdict"] != CANNOT_RUN else 3
    return (group, entry["verdict"] == "warn", entry["environment"])


def sorted_rows(rows: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    return sorted(rows, key=rank)


def exit_code(rows: Sequence[Mapping[str, Any]]) -> int:
    """0 when at least one environment passes (as `tfdoctor --python` would exit 0 there), else 1."""
    return 0 if any(entry["exit_code"] == 0 for entry in rows) else 1
