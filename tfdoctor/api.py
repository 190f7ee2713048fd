"""The Python API: a diagnosis without a subprocess, for notebooks and pre-flight scripts.

    import tfdoctor
    report = tfdoctor.diagnose(probe=False)
    report.ok, report.exit_code, report.results["tensorflow-import"].status
    report                      # in Jupyter: the Markdown report (problems first)
    tfdoctor.explain("report.json").to_markdown()

The verdict is the CLI's: the same checks, the same requirements ([tool.tfdoctor] in the nearest
pyproject.toml unless `config` says otherwise), the same exit code, and the report is redacted the
same way unless redact=False. TensorFlow is imported only in the child process; importing tfdoctor
imports neither rich nor TensorFlow.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Dict, Iterable, Mapping, Optional, Union

from tfdoctor.report.document import ReportDocument

if TYPE_CHECKING:
    from tfdoctor.diagnosis.options import ConfigLike
    from tfdoctor.results.model import CheckResult

__all__ = ["Report", "diagnose", "explain", "DoctorError"]


class DoctorError(Exception):
    """The doctor cannot run (what the CLI reports with exit 2): unknown check id, unusable
    interpreter, unreadable report, bad configuration. The message is one line."""


@dataclass(frozen=True)
class Report:
    """A finished diagnosis: the report document (redacted unless asked otherwise) and its verdict."""

    document: Dict[str, Any]
    strict: bool = False
    results: Dict[str, "CheckResult"] = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "results", dict(ReportDocument(self.document).check_results))

    @property
    def exit_code(self) -> int:
        """The CLI's exit code: 0 no failures; 1 a check failed or crashed (with strict, or a warning)."""
        return ReportDocument(self.document).exit_code(self.strict)

    @property
    def ok(self) -> bool:
        return self.exit_code == 0

    @property
    def problems(self) -> Dict[str, "CheckResult"]:
        return {check_id: r for check_id, r in self.results.items() if r.status.is_problem}

    def to_dict(self) -> Dict[str, Any]:
        return json.loads(json.dumps(self.document))  # a copy the caller may change

    def to_json(self, indent: Optional[int] = 2) -> str:
        """The JSON report, as `tfdoctor --json` writes it (the schema in tfdoctor/schema/)."""
        from tfdoctor.render.sanitize import json_dumps

        return json_dumps(self.document, indent=indent) + "\n"

    def to_markdown(self, verbose: bool = False) -> str:
        from tfdoctor.render.markdown import render

        return render(self.document, verbose=verbose)

    def to_text(self, verbose: bool = False, quiet: bool = False) -> str:
        from tfdoctor.render.text import render

        return render(self.document, verbose=verbose, color=False, quiet=quiet)

    def _repr_markdown_(self) -> str:
        return self.to_markdown()

    def __repr__(self) -> str:
        totals = self.document.get("totals") or {}
        return (f"<tfdoctor.Report {'ok' if self.ok else 'problems'}: exit {self.exit_code}, "
                f"{totals.get('pass', 0)} passed, {totals.get('warn', 0)} warnings, {totals.get('fail', 0)} failed, "
                f"{totals.get('error', 0)} crashed, {totals.get('skip', 0)} skipped>")


def diagnose(python: Optional[str] = None, *, only: Iterable[str] = (), skip: Iterable[str] = (), probe: bool = True,
             timeout: Optional[float] = None, config: "ConfigLike" = None, deep: bool = False,
             strict: Optional[bool] = None, redact: bool = True, experiments: bool = True,
             experiments_timeout: float = 30.0) -> Report:
    """Diagnose `python` (default: this interpreter), as `tfdoctor` on the command line would.
    `experiments=False` is `--no-experiments`; `experiments_timeout` is `--experiments-timeout`.

    `config`: a TOML file, a [tool.tfdoctor]-like mapping or a tfdoctor.diagnosis.config.Config; None reads the
    nearest pyproject.toml from the working directory, as the CLI does. Its only/skip/timeout/strict
    apply when the arguments leave them unset. Raises DoctorError when the doctor cannot run."""
    from tfdoctor.operations import CannotRun
    from tfdoctor.operations.common import settings
    from tfdoctor.operations.diagnose import DiagnoseRequest, diagnose as run

    try:
        diagnosis = run(DiagnoseRequest(python, tuple(only), tuple(skip), timeout, probe, deep, experiments,
                                        experiments_timeout, settings(config, discover=True), redact, strict))
    except CannotRun as exc:
        raise DoctorError(str(exc)) from None
    return Report(diagnosis.document.data, diagnosis.strict)


def explain(path_or_dict: Union[str, "os.PathLike[str]", Mapping[str, Any]], *, only: Iterable[str] = (),
            skip: Iterable[str] = (), strict: bool = False, redact: bool = True) -> Report:
    """Today's checks on a saved report (a path, '-' for stdin, or the parsed JSON as a dict); the
    requirements it recorded are judged again. Raises DoctorError when it is not a readable report."""
    from tfdoctor.operations import CannotRun
    from tfdoctor.operations.explain import ExplainRequest, explain as judge

    if not isinstance(path_or_dict, (str, os.PathLike, Mapping)):
        raise DoctorError(f"explain() takes a path, '-' or a report as a dict, not {type(path_or_dict).__name__}")
    source = path_or_dict if isinstance(path_or_dict, Mapping) else os.fspath(path_or_dict)
    try:
        diagnosis = judge(ExplainRequest(source, tuple(only), tuple(skip), None, redact, strict))
    except CannotRun as exc:
        raise DoctorError(str(exc)) from None
    return Report(diagnosis.document.data, diagnosis.strict)
