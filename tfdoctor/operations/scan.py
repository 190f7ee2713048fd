"""scan: every Python environment on the machine (or under the paths given) found and diagnosed side by side, each
as `tfdoctor --python ENV` would, under one deadline for the whole scan; one row per environment, best first."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Mapping, Optional

from tfdoctor.operations.common import CannotRun, Progress, redactor, text_redactor
from tfdoctor.processes.deadline import SCAN_S

if TYPE_CHECKING:
    from tfdoctor.diagnosis.config import Config


@dataclass(frozen=True)
class ScanRequest:
    paths: tuple[str, ...] = ()  # where to look; () the usual places (scan/find.py)
    depth: int = 4
    probe: bool = False
    deep: bool = False
    timeout: Optional[float] = None
    deadline: float = SCAN_S
    jobs: Optional[int] = None  # environments at once; None: the cores (1 with --probe or --deep)
    strict: Optional[bool] = None
    settings: Optional["Config"] = None
    redact: bool = True


@dataclass(frozen=True)
class Scanned:
    """One environment's report document (redacted as asked), named by its interpreter (redacted the same way)."""

    python: str
    document: Mapping[str, Any]


@dataclass(frozen=True)
class ScanResult:
    rows: list[Mapping[str, Any]]  # best first (scan/summary.py)
    reports: list[Scanned]  # every environment that was diagnosed, for posting
    exit_code: int  # 0 when at least one environment passes, else 1


def scan(request: ScanRequest, progress: Optional[Progress] = None) -> ScanResult:
    """progress("found", {"count"}) once they are found, then progress("done", {"environment"}) as each ends."""
    from tfdoctor.diagnosis.options import doctor_options
    from tfdoctor.processes.deadline import within
    from tfdoctor.scan import summary
    from tfdoctor.scan.find import Places, find_environments
    from tfdoctor.scan.run import diagnose_all

    missing = [path for path in request.paths if not os.path.lexists(os.path.expanduser(path))]
    if missing:
        raise CannotRun(f"{missing[0]}: no such file or directory")
    strict = request.strict if request.strict is not None else bool(request.settings and request.settings.strict)
    text = text_redactor(request.redact)

    def options_for(environment: Any) -> Any:
        return doctor_options(request.settings, environment.python, timeout=request.timeout,
                              probe=request.probe or request.deep, deep=request.deep)

    with within(request.deadline):  # finding them (conda's list) and diagnosing them
        environments = find_environments(Places.default(request.paths, request.depth))
        if progress is not None:
            progress("found", {"count": len(environments)})
        done = (lambda d: progress("done", {"environment": text(d.environment.prefix)})) if progress else None
        # timings need the machine to themselves: with --probe or --deep one environment at a time
        diagnosed = diagnose_all(environments, options_for, redactor(request.redact), strict=strict,
                                 workers=request.jobs or (1 if request.probe or request.deep else None), done=done)
    rows = summary.sorted_rows([summary.row(d, text(d.environment.prefix), text(d.environment.python),
                                            text(d.reason) if d.reason else None) for d in diagnosed])
    reports = [Scanned(text(d.environment.python), d.document) for d in diagnosed if d.document is not None]
    return ScanResult(rows, reports, summary.exit_code(rows))
