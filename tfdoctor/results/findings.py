"""Several findings, one verdict: a check that looks at many things reports the worst one first.

The worst finding gives the status, the summary and the fix; the others follow as details, so a
user fixing the first problem already sees the next one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from tfdoctor.results.model import Outcome, Remediation, Status

_RANK = {Status.PASS: 0, Status.WARN: 1, Status.FAIL: 2}


@dataclass(frozen=True)
class Finding:
    status: Status
    summary: str
    details: tuple[str, ...] = ()
    fix: Remediation | None = None
    evidence: Mapping[str, Any] = field(default_factory=dict)  # the worst finding's evidence joins the outcome's


@dataclass
class Findings:
    items: list[Finding] = field(default_factory=list)

    def add(self, status: Status, summary: str, *details: str, fix: Remediation | None = None,
            **evidence: Any) -> None:
        """A problem whose status is computed (FAIL or WARN); PASS is a note."""
        self.items.append(Finding(status, summary, details, fix if status is not Status.PASS else None, evidence))

    def fail(self, summary: str, *details: str, fix: Remediation | None = None, **evidence: Any) -> None:
        self.add(Status.FAIL, summary, *details, fix=fix, **evidence)

    def warn(self, summary: str, *details: str, fix: Remediation | None = None, **evidence: Any) -> None:
        self.add(Status.WARN, summary, *details, fix=fix, **evidence)

    def note(self, summary: str, *details: str) -> None:
        self.items.append(Finding(Status.PASS, summary, details))

    def problems(self) -> list[Finding]:
        return [f for f in self.items if f.status is not Status.PASS]

    def outcome(self, ok_summary: str, *ok_details: str, **evidence: Any) -> Outcome:
        problems = sorted(self.problems(), key=lambda f: _RANK[f.status], reverse=True)
        notes = [detail for f in self.items if f.status is Status.PASS for detail in (f.summary, *f.details)]
        if not problems:
            return Outcome(Status.PASS, ok_summary, tuple(ok_details) + tuple(notes), None, evidence)
        worst, rest = problems[0], problems[1:]
        details = list(worst.details)
        for other in rest:
            details.append(f"Also ({other.status.value}): {other.summary}")
            details.extend(other.details)
        details.extend(notes)
        evidence = {**evidence, **worst.evidence,
                    "problems": [{"status": f.status.value, "summary": f.summary} for f in problems]}
        return Outcome(worst.status, worst.summary, tuple(details), worst.fix, evidence)

