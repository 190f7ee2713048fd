"""diagnose: the doctor on an interpreter (collectors, checks, experiments), under the run's deadline, its report
redacted as asked. plan: the same, for its repair plan alone (no probe: a plan needs no timing)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Mapping, Optional

from tfdoctor.operations.common import CannotRun, Progress, interpreter, redactor
from tfdoctor.report.document import ReportDocument

if TYPE_CHECKING:
    from tfdoctor.diagnosis.config import Config
    from tfdoctor.report.run import RunReport


@dataclass(frozen=True)
class DiagnoseRequest:
    python: Optional[str] = None  # None: the interpreter running the doctor
    only: tuple[str, ...] = ()
    skip: tuple[str, ...] = ()
    timeout: Optional[float] = None  # each TensorFlow import and probe; None: the settings', else 60 s
    probe: bool = True
    deep: bool = False
    experiments: bool = True
    experiments_timeout: float = 30.0
    settings: Optional["Config"] = None  # [tool.tfdoctor] and the requirement flags (common.settings)
    redact: bool = True
    strict: Optional[bool] = None  # None: the settings' strict
    absolute_python: bool = False  # refuse a relative --python (what an assistant passes)
    environ: Optional[Mapping[str, str]] = None  # the variables to diagnose under; None: this process's


@dataclass(frozen=True)
class Diagnosis:
    """A finished diagnosis: the report document (redacted as asked) and, for the operations that act on it
    (fix, --prove), the run's own report with its live plan. Doors render `document`; they never read `run`."""

    document: ReportDocument
    strict: bool
    run: "RunReport"

    @property
    def exit_code(self) -> int:
        return self.document.exit_code(self.strict)


def diagnose(request: DiagnoseRequest, progress: Optional[Progress] = None) -> Diagnosis:
    """The doctor on `request.python`; CannotRun (one line) when it cannot run at all."""
    from tfdoctor.diagnosis import doctor
    from tfdoctor.diagnosis.options import doctor_options

    target = interpreter(request.python, absolute=request.absolute_python)
    timeout = _timeout(request.timeout)
    options = doctor_options(request.settings, target, only=request.only, skip=request.skip, timeout=timeout,
                             probe=request.probe, deep=request.deep, progress=progress,
                             experiments=request.experiments, experiments_timeout=request.experiments_timeout,
                             environ=request.environ)
    report = doctor.diagnose(options)  # the run's deadline is the doctor's own (processes/deadline.run_s)
    return finished(report, request.redact, request.strict, request.settings)


def _timeout(value: Optional[float]) -> Optional[float]:
    """A timeout in seconds, checked as [tool.tfdoctor]'s is (a positive, finite number); CannotRun otherwise."""
    from tfdoctor.diagnosis.config import timeout_seconds

    try:
        return timeout_seconds(value)
    except ValueError as exc:
        raise CannotRun(f"timeout: {exc}") from None


def finished(report: "RunReport", redact: bool, strict: Optional[bool], settings: Optional["Config"]) -> Diagnosis:
    """A run's report as an operation hands it back: its document redacted once, strictness settled."""
    strict = bool(strict) if strict is not None else bool(settings is not None and settings.strict)
    return Diagnosis(ReportDocument(redactor(redact)(report.to_dict())), strict, report)


@dataclass(frozen=True)
class PlanResult:
    diagnosis: Diagnosis

    @property
    def plan(self) -> Mapping[str, Any]:
        return self.diagnosis.document.plan


def plan(request: DiagnoseRequest, progress: Optional[Progress] = None) -> PlanResult:
    """The repair plan of the environment: a diagnosis without the probe and --deep, which a plan never needs."""
    from dataclasses import replace

    return PlanResult(diagnose(replace(request, probe=False, deep=False), progress))
