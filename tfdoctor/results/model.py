"""The result model: what a check returns and what a run reports.

Checks return an `Outcome` (data only, never rendered text); the runner wraps it into a
`CheckResult` with the check's id, title and timing. Remediation keeps advice prose apart from
the exact commands a user can paste (as Homebrew keeps its prose apart from runnable fixes).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Mapping

from tfdoctor.results.repairs import Repair


class Status(str, Enum):
    PASS = "pass"
    WARN = "warn"
    FAIL = "fail"
    SKIP = "skip"  # not applicable here, or the facts it needs were not recorded
    ERROR = "error"  # the check itself raised; the run went on

    @property
    def is_problem(self) -> bool:
        return self in (Status.WARN, Status.FAIL, Status.ERROR)


@dataclass(frozen=True)
class Remediation:
    """Advice in words, the repairs it asks of the environment (intents the planner merges into the
    run's one plan), and `commands`: steps outside the environment that no plan can carry out for the
    user (create a native arm64 environment, reboot, update the driver). Install, uninstall and
    reinstall commands are never written here: they come from the plan."""

    advice: str
    commands: tuple[str, ...] = ()
    url: str | None = None
    repairs: tuple[Repair, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"advice": self.advice, "commands": list(self.commands), "url": self.url,
                "repairs": [repair.to_dict() for repair in self.repairs]}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "Remediation":
        return cls(data["advice"], tuple(data.get("commands") or ()), data.get("url"),
                   tuple(Repair.from_dict(r) for r in data.get("repairs") or () if isinstance(r, Mapping)))


@dataclass(frozen=True)
class Outcome:
    """What a check concludes. `evidence` holds the structured values the verdict rests on."""

    status: Status
    summary: str
    details: tuple[str, ...] = ()
    remediation: Remediation | None = None
    evidence: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def ok(cls, summary: str, *details: str, **evidence: Any) -> "Outcome":
        return cls(Status.PASS, summary, tuple(details), None, evidence)

    @classmethod
    def warn(cls, summary: str, *details: str, fix: Remediation | None = None, **evidence: Any) -> "Outcome":
        return cls(Status.WARN, summary, tuple(details), fix, evidence)

    @classmethod
    def fail(cls, summary: str, *details: str, fix: Remediation | None = None, **evidence: Any) -> "Outcome":
        return cls(Status.FAIL, summary, tuple(details), fix, evidence)

    @classmethod
    def skip(cls, reason: str, *details: str, **evidence: Any) -> "Outcome":
        return cls(Status.SKIP, reason, tuple(details), None, evidence)


@dataclass(frozen=True)
class CheckResult:
    check_id: str
    title: str
    status: Status
    summary: str
    details: tuple[str, ...] = ()
    remediation: Remediation | None = None
    evidence: Mapping[str, Any] = field(default_factory=dict)
    duration_ms: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.check_id,
            "title": self.title,
            "status": self.status.value,
            "summary": self.summary,
            "details": list(self.details),
            "remediation": self.remediation.to_dict() if self.remediation else None,
            "evidence": dict(self.evidence),
            "duration_ms": round(self.duration_ms, 3),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "CheckResult":
        fix = data.get("remediation")
        return cls(
            check_id=data["id"],
            title=data["title"],
            status=Status(data["status"]),
            summary=data["summary"],
            details=tuple(data.get("details") or ()),
            remediation=Remediation.from_dict(fix) if fix else None,
            evidence=data.get("evidence") or {},
            duration_ms=float(data.get("duration_ms") or 0.0),
        )


def totals(results: list[CheckResult]) -> dict[str, int]:
    counts = {status.value: 0 for status in Status}
    for result in results:
        counts[result.status.value] += 1
    return counts
