"""What a user reads for a check's fix since checks return repair intents: the run's one plan
(tfdoctor/planner.py) built from results, and the text of one result with the plan steps it points to."""

from __future__ import annotations

from typing import Any, Mapping

from tfdoctor.model import CheckResult
from tfdoctor.planner import Plan
from tfdoctor.report import Report

# A manual step or an advice never carries an installer command line: those come from the plan only.
INSTALLER_COMMANDS = (" -m pip ", "uv pip ", "conda install ")


def plan_of(facts: Mapping[str, Any], *results: CheckResult) -> Plan:
    return Report(dict(facts), list(results)).plan


def plan_commands(facts: Mapping[str, Any], *results: CheckResult) -> list[str]:
    return [step.command for step in plan_of(facts, *results).steps]


def fix_and_plan_text(facts: Mapping[str, Any], result: CheckResult) -> str:
    """The result's advice, manual commands and URL, and the commands of the plan steps it points to."""
    fix = result.remediation
    if fix is None:
        return ""
    plan = plan_of(facts, result)
    steps = [step.command for step in plan.steps if step.number in plan.steps_for(result.check_id)]
    return " ".join([fix.advice, *fix.commands, fix.url or "", *steps])
