"""explain: today's checks on a saved report (a file, stdin, bytes or a parsed dict), its requirements judged again
(or the ones the request gives instead), the result redacted as asked. compare: two reports side by side."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Mapping, Optional, Union

from tfdoctor.operations.common import CannotRun, redactor
from tfdoctor.operations.diagnose import Diagnosis
from tfdoctor.report.document import ReportDocument

if TYPE_CHECKING:
    from tfdoctor.diagnosis.config import Config
    from tfdoctor.report.saved import SavedReport

Source = Union[str, bytes, Mapping[str, Any]]  # a path ('-': stdin), the file's bytes, or the parsed JSON


@dataclass(frozen=True)
class ExplainRequest:
    source: Source
    only: tuple[str, ...] = ()
    skip: tuple[str, ...] = ()
    settings: Optional["Config"] = None  # its requirements replace the report's, when it has any
    redact: bool = True
    strict: Optional[bool] = None
    name: Optional[str] = None  # how to call the source in messages (bytes and dicts have no path)


def read(source: Source, name: Optional[str] = None) -> "SavedReport":
    """The saved report behind a source; CannotRun (one line) when it is not a readable report."""
    import json

    from tfdoctor.report.saved import UnreadableReport, parse_report, read_report

    try:
        if isinstance(source, Mapping):
            try:
                text = json.dumps(source)
            except (TypeError, ValueError) as exc:  # a set, bytes, a cycle, NaN: not JSON, so not a report
                raise UnreadableReport(f"the dict is not JSON: {exc}") from None
            return parse_report(text.encode("utf-8"), name or "<dict>")
        if isinstance(source, bytes):
            return parse_report(source, name or "<report>")
        return read_report(source)
    except UnreadableReport as exc:
        raise CannotRun(str(exc)) from None


def explain(request: ExplainRequest) -> Diagnosis:
    from tfdoctor.diagnosis.doctor import with_requirements
    from tfdoctor.diagnosis.options import requirement_facts
    from tfdoctor.operations.diagnose import finished

    saved = read(request.source, request.name)
    required = requirement_facts(request.settings)
    if required is not None:
        facts = {key: value for key, value in saved.facts.items() if key != "requirements"}
        saved = replace(saved, facts=with_requirements(facts, required))
    return finished(judged(saved, request.only, request.skip, request.redact), request.redact, request.strict,
                    request.settings)


def judged(saved: "SavedReport", only: tuple[str, ...] = (), skip: tuple[str, ...] = (), redact: bool = True) -> Any:
    """Today's checks on a saved report's facts: a run report that names where its facts came from."""
    from tfdoctor.checking.runner import run_checks
    from tfdoctor.diagnosis.doctor import selected_checks
    from tfdoctor.report.run import RunReport

    tensorflow = saved.facts.get("tensorflow")
    deep = isinstance(tensorflow, dict) and tensorflow.get("workload") is not None
    checks = selected_checks(only, skip, deep=deep)
    return RunReport(facts=saved.facts, results=run_checks(checks, saved.facts), redacted=redact,
                     source=saved.describe(), source_info=saved.source_info())


@dataclass(frozen=True)
class Comparison:
    document: Mapping[str, Any]  # redacted as asked
    exit_code: int  # 0 the reports agree, 1 they differ


def compare(a: Source, b: Source, redact: bool = True) -> Comparison:
    """What differs between two reports, and the verdict of today's checks on each."""
    from tfdoctor.report import compare as comparing

    if isinstance(a, str) and isinstance(b, str) and a == "-" and b == "-":
        raise CannotRun("only one of A and B can be '-' (stdin)")
    first, second = read(a), read(b)
    document = comparing.compare(first, second, judged(first).document(), judged(second).document(), redacted=redact)
    document = redactor(redact)(document)
    return Comparison(document, comparing.exit_code(document))


def document_of(data: Any) -> ReportDocument:
    """A report document from outside (an MCP client, a reporting machine), its shape checked; CannotRun if not."""
    from tfdoctor.report.document import NotAReport

    try:
        return ReportDocument.from_dict(data)
    except NotAReport as exc:
        raise CannotRun(str(exc)) from None


def explained_document(saved: "SavedReport", only: tuple[str, ...] = (), skip: tuple[str, ...] = (),
                       redacted: bool = True) -> dict[str, Any]:
    """Today's checks on a saved report as its document, not redacted here (`redacted` is what the document says of
    itself): what a door that redacts on its own terms, or a tool scoring fixtures, reads."""
    return judged(saved, only, skip, redacted).to_dict()
