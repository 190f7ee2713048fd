"""The report: one versioned JSON document (facts + results), and the exit-code contract."""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass, field
from typing import Any, Mapping

from tfdoctor import __version__
from tfdoctor.model import CheckResult, Status, totals

# Major: a field removed or changed in meaning. Minor: fields added. Readers accept any 1.x.
SCHEMA_VERSION = "1.0"

EXIT_OK = 0  # no failures (warnings allowed unless --strict)
EXIT_PROBLEMS = 1  # at least one fail or error (with --strict: or warn)
EXIT_UNUSABLE = 2  # the doctor could not run: bad arguments, unknown check, unusable target or input
EXIT_INTERRUPTED = 130  # Ctrl-C (128 + SIGINT), as shells report it
EXIT_TERMINATED = 143  # SIGTERM (128 + SIGTERM)


@dataclass(frozen=True)
class Report:
    facts: Mapping[str, Any]
    results: list[CheckResult]
    created_at: str = field(default_factory=lambda: _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"))
    tool_version: str = __version__
    redacted: bool = True
    source: str | None = None  # set by `explain`: the report these facts were read from

    @property
    def target(self) -> str | None:
        python = self.facts.get("python") or {}
        return python.get("executable")

    def exit_code(self, strict: bool = False) -> int:
        return exit_code_for(self.results, strict)

    def to_dict(self) -> dict[str, Any]:
        document: dict[str, Any] = {
            "schema_version": SCHEMA_VERSION,
            "tool": {"name": "tfdoctor", "version": self.tool_version},
            "created_at": self.created_at,
            "redacted": self.redacted,
            "target": {"python": self.target},
            "facts": dict(self.facts),
            "results": [r.to_dict() for r in self.results],
            "totals": totals(self.results),
        }
        if self.source:
            document["explained_from"] = self.source
        return document


def exit_code_for(results: list[CheckResult], strict: bool = False) -> int:
    # An `error` counts as a failure: a pre-flight script must not pass when a check could not judge.
    bad = {Status.FAIL, Status.ERROR} | ({Status.WARN} if strict else set())
    return EXIT_PROBLEMS if any(r.status in bad for r in results) else EXIT_OK
