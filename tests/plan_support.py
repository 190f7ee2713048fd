"""The repair plan of a few checks on constructed facts, for the tests of the checks that ask for repairs:
a check's intents are asserted, and so is what the planner makes of them (the commands a user pastes)."""

from __future__ import annotations

import shlex
from typing import Any, Iterable, Mapping

from tfdoctor.results.model import CheckResult, Outcome
from tfdoctor.plan.planner import Plan, build_plan
from tfdoctor.checking.registry import all_checks
from tfdoctor.checking.runner import run_check


def check(check_id: str):
    return next(c for c in all_checks() if c.id == check_id)


def results_of(facts: Mapping[str, Any], *check_ids: str) -> list[CheckResult]:
    return [run_check(check(check_id), facts) for check_id in check_ids]


def as_result(check_id: str, outcome: Outcome) -> CheckResult:
    """An Outcome from `check.run(facts)` as the runner would record it."""
    return CheckResult(check_id, check_id, outcome.status, outcome.summary, outcome.details, outcome.remediation,
                       dict(outcome.evidence))


# A manual step or an advice never carries an installer command line: those come from the plan only.
INSTALLER_COMMANDS = (" -m pip ", "uv pip ", "conda install ")


def plan_of(facts: Mapping[str, Any], *results: CheckResult | Iterable[CheckResult]) -> Plan:
    """The plan of these results (given one by one, or as lists) on these facts."""
    flat = [r for item in results for r in (item if isinstance(item, (list, tuple)) else [item])]
    return build_plan(flat, facts)


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


def plan_for(facts: Mapping[str, Any], *check_ids: str) -> Plan:
    """The plan of these checks alone on these facts."""
    return plan_of(facts, results_of(facts, *check_ids))


def argvs(plan: Plan) -> list[list[str]]:
    """Every step's command line, split as a POSIX shell would."""
    return [shlex.split(step.command) for step in plan.steps]


def intents(result: CheckResult | Outcome) -> list[tuple[str, tuple[str, ...]]]:
    """(action, packages) of each repair a check asked for."""
    fix = result.remediation
    return [(repair.action.value, repair.packages) for repair in (fix.repairs if fix else ())]
