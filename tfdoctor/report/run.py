"""The report: one versioned JSON document (facts + results), and the exit-code contract."""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, Mapping

from tfdoctor._version import __version__

# The exit-code contract lives with the verdict (report/document.py); its names are the run's callers' too.
from tfdoctor.report.document import (  # noqa: F401
    EXIT_INTERRUPTED,
    EXIT_NOT_POSTED,
    EXIT_OK,
    EXIT_PROBLEMS,
    EXIT_TERMINATED,
    EXIT_UNUSABLE,
    ReportDocument,
    Verdict,
)
from tfdoctor.results.model import CheckResult, totals

if TYPE_CHECKING:
    from tfdoctor.plan.planner import Plan

# Major: a field removed or changed in meaning. Minor: fields added (1.1: plan, repairs, plan_steps; 1.2: facts.experiments,
# tensorflow.companions[].keras_layers; 1.3: repairs[].required_by, plan.steps[].variable and value; 1.4: plan.choices;
# 1.5: distributions[].imports, what a library's own files import, python.abiflags and distributions[].wheel_tags).
# Readers accept any 1.x.
SCHEMA_VERSION = "1.5"



@dataclass(frozen=True)
class RunReport:
    facts: Mapping[str, Any]
    results: list[CheckResult]
    created_at: str = field(default_factory=lambda: _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"))
    tool_version: str = __version__
    redacted: bool = True
    source: str | None = None  # set by `explain`: the report these facts were read from
    source_info: Mapping[str, Any] | None = None  # and what that report said about itself (`source_report`)

    @property
    def target(self) -> str | None:
        python = self.facts.get("python") or {}
        return python.get("executable")

    def exit_code(self, strict: bool = False) -> int:
        return exit_code_for(self.results, strict)

    def document(self) -> ReportDocument:
        """The report document (not yet redacted: operations redact it as their request says)."""
        return ReportDocument(self.to_dict())

    @cached_property
    def plan(self) -> "Plan":
        """The one repair plan: every repair the results ask for, merged (tfdoctor/plan/planner.py)."""
        from tfdoctor.plan.planner import build_plan

        return build_plan(self.results, self.facts)

    def to_dict(self) -> dict[str, Any]:
        document: dict[str, Any] = {
            "schema_version": SCHEMA_VERSION,
            "tool": {"name": "tfdoctor", "version": self.tool_version},
            "created_at": self.created_at,
            "redacted": self.redacted,
            "target": {"python": self.target},
            "facts": dict(self.facts),
            "results": [self._result_dict(r) for r in self.results],
            "totals": totals(self.results),
            "plan": self.plan.to_dict(),
        }
        if self.source:
            document["explained_from"] = self.source
        if self.source_info is not None:
            document["source_report"] = dict(self.source_info)
        return document


    def _result_dict(self, result: CheckResult) -> dict[str, Any]:
        """A result, its remediation pointing at the plan steps that carry out its repairs."""
        data = result.to_dict()
        if data.get("remediation") is not None:
            data["remediation"]["plan_steps"] = self.plan.steps_for(result.check_id)
        return data


def exit_code_for(results: list[CheckResult], strict: bool = False) -> int:
    """The exit code of results (report/document.Verdict decides it, for every door)."""
    return Verdict.of(results).exit_code(strict)
