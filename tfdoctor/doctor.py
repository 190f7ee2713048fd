"""One diagnosis, start to end: select checks, gather the facts they need, run them, build a report."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field

from tfdoctor.registry import Check, all_checks, select
from tfdoctor.report import Report
from tfdoctor.runner import run_checks


class DoctorError(Exception):
    """The doctor cannot run at all (exit 2). The message is one line, shown as is."""


@dataclass(frozen=True)
class DoctorOptions:
    python: str = field(default_factory=lambda: sys.executable)
    only: tuple[str, ...] = ()
    skip: tuple[str, ...] = ()
    timeout: float = 60.0
    probe: bool = True
    deep: bool = False  # the workload probe; see CollectOptions.deep


def selected_checks(only: tuple[str, ...] = (), skip: tuple[str, ...] = ()) -> list[Check]:
    from tfdoctor.registry import UnknownCheckError

    try:
        return select(all_checks(), only, skip)
    except UnknownCheckError as exc:
        raise DoctorError(str(exc)) from exc


def validate_python(path: str) -> str:
    if not os.path.isfile(path) or not os.access(path, os.X_OK):
        raise DoctorError(f"--python {path}: not an executable file")
    return path


def diagnose(options: DoctorOptions) -> Report:
    from tfdoctor.collect import CollectOptions, TargetUnusableError, gather

    checks = selected_checks(options.only, options.skip)
    needed = frozenset(name for check in checks for name in (*check.needs, *check.uses))
    collect_options = CollectOptions(
        python=validate_python(options.python),
        timeout=options.timeout,
        probe=options.probe,
        deep=options.deep,
        sections=needed,
    )
    try:
        facts = gather(collect_options)
    except TargetUnusableError as exc:
        raise DoctorError(f"the target interpreter is unusable: {exc}") from exc
    return Report(facts=facts, results=run_checks(checks, facts))
