"""Runs checks against facts. A check that raises becomes an `error` result; the others still run."""

from __future__ import annotations

import time
import traceback

from tfdoctor.checking.registry import Check, Facts
from tfdoctor.checking.view import FactsView, UndeclaredFactRead, strict_from_environment
from tfdoctor.facts import PLATFORM_NAMES, host_system, is_recorded
from tfdoctor.results.model import CheckResult, Outcome, Status


def _applicability(check: Check, facts: Facts) -> Outcome | None:
    """A skip outcome when the check does not apply or lacks its facts, else None."""
    system = host_system(facts)
    if check.platforms and system and system not in check.platforms:
        where = " or ".join(PLATFORM_NAMES.get(p, p) for p in check.platforms)
        return Outcome.skip(f"applies to {where} only; this is {PLATFORM_NAMES.get(system, system)}")
    missing = [name for name in check.needs if not is_recorded(facts, name)]
    if missing:
        return Outcome.skip(f"not recorded: {', '.join(missing)}", missing=missing)
    return None


def run_check(check: Check, facts: Facts, strict: bool | None = None) -> CheckResult:
    """One check on the facts. Strict (the test suite's default, tfdoctor/checking/view.py): the check
    reads them through a view of its declared sections, and an undeclared read makes its result an error."""
    started = time.perf_counter()
    if strict is None:
        strict = strict_from_environment()
    try:
        view = FactsView(facts, check.readable, check.id) if strict else None
        outcome = _applicability(check, facts) or check.run(facts if view is None else view)
        if view is not None and view.undeclared:  # a refused read that a reader swallowed
            raise UndeclaredFactRead(check.id, view.undeclared[0])
        if not isinstance(outcome, Outcome):
            raise TypeError(f"check returned {type(outcome).__name__}, not Outcome")
    except Exception as exc:  # noqa: BLE001 - a broken check must not take the run down
        frames = traceback.format_exception(type(exc), exc, exc.__traceback__)
        outcome = Outcome(
            Status.ERROR,
            f"the check itself failed: {type(exc).__name__}: {exc}",
            details=tuple(line.rstrip() for line in "".join(frames[-3:]).splitlines()),
        )
    elapsed_ms = (time.perf_counter() - started) * 1000
    return CheckResult(
        check.id,
        check.title,
        outcome.status,
        outcome.summary,
        outcome.details,
        outcome.remediation,
        dict(outcome.evidence),
        elapsed_ms,
    )


def run_checks(checks: list[Check], facts: Facts, strict: bool | None = None) -> list[CheckResult]:
    return [run_check(check, facts, strict) for check in checks]
