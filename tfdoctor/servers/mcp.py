"""`tfdoctor mcp`: the doctor as a Model Context Protocol server over stdio, for AI assistants.

Built on the official Python SDK, version 2 (`pip install 'tfdoctor[mcp]'`, Python >= 3.10): its
`MCPServer` (FastMCP in SDK 1) makes each tool's JSON input schema from the function's signature. The
tools call the public API (`tfdoctor.diagnose`, `tfdoctor.explain`), `tfdoctor diff`'s and `scan`'s
functions and the fixer's flow: nothing here judges an environment.

What a server adds to the CLI's contract:
- stdout carries protocol messages only (the SDK's stdio transport points fd 1 at stderr while it
  serves, so a stray print or a child's output cannot reach the wire); logs go to stderr;
- one job that starts children (a diagnosis, a scan, a fix) runs at a time, in a worker thread, so a
  cancelled request can kill exactly its children (tfdoctor/collect/commands.py: CHILDREN) and the
  event loop keeps answering meanwhile; a hanging TensorFlow is already a result after `timeout`;
  applying or undoing a fix, once started, runs to its end (applied, or put back) even if cancelled;
- everything returned is redacted as the CLI's output is;
- apply_fix and undo_fix exist only with --allow-fix, and apply_fix applies only a plan that
  verify_fix proved on a throwaway copy in this session, while the environment is still as it was.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import stat
import threading
from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Mapping, Optional, TypeVar

import anyio
import anyio.to_thread
from mcp.server import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.resources.types import FunctionResource
from mcp.types import CallToolResult, TextContent, ToolAnnotations

from tfdoctor._version import __version__

LOG = logging.getLogger("tfdoctor.mcp")
T = TypeVar("T")

SCHEMA_URI = "tfdoctor://schema/report"
REPORT_URI = "tfdoctor://report/{key}"
MAX_TIMEOUT_S = 600.0  # a TensorFlow import (and probe) never gets longer than this from an assistant

READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)
# verify_fix writes a throwaway copy beside the environment (and removes it); the environment is untouched
PROVES_ON_A_COPY = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True,
                                   open_world_hint=True)
DESTRUCTIVE = ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=False, open_world_hint=True)

INSTRUCTIONS = """\
tfdoctor diagnoses TensorFlow installs. Start with `diagnose` (optionally `python`: the interpreter of the
environment to look at). Each failing or warning check names its cause; `explain_check` shows one check with its
facts and plan steps; `repair_plan` the ordered commands that repair the environment. `verify_fix` proves that
plan on a throwaway copy; when the server runs with --allow-fix, `apply_fix` applies a proven plan by its
plan_id and `undo_fix` restores the environment as it was before. Reports are redacted (home, user, host)."""


class Job:
    """One request's run in the worker thread: whether it started, and whether it was cancelled first."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.started = False
        self.cancelled = False


@dataclass
class VerifiedPlan:
    python: str
    plan_id: str
    only: tuple[str, ...]
    skip: tuple[str, ...]
    timeout: float


@dataclass
class DiagnosedInterpreter:
    key: str
    label: str  # the interpreter's path, redacted
    document: Dict[str, Any]


@dataclass
class DoctorSession:
    """What one server remembers between requests: the last report of each interpreter and the plans
    verify_fix proved. One per server (a stdio server serves one client)."""

    allow_fix: bool = False
    reports: Dict[str, DiagnosedInterpreter] = field(default_factory=dict)  # by the interpreter's real path
    verified: Dict[str, VerifiedPlan] = field(default_factory=dict)  # by plan id
    runner: threading.Lock = field(default_factory=threading.Lock)  # one job with children at a time


# --- helpers ------------------------------------------------------------------------------------------

def _redact_text(text: str) -> str:
    """A line redacted as the command line redacts it (tfdoctor/options.py)."""
    from tfdoctor.options import text_redactor

    return text_redactor(True)(text)


def _redacted_document(document: Dict[str, Any]) -> Dict[str, Any]:
    from tfdoctor.options import redact_document

    return redact_document(document, True)


def _interpreter(python: Optional[str]) -> str:
    """The interpreter to diagnose: this server's own Python by default, else an absolute path to an
    executable file (a clear tool error otherwise: the assistant passes paths it read somewhere)."""
    import sys

    if python is None or python == "":
        return sys.executable
    if "\x00" in python:
        raise ToolError("python: the path contains a NUL character")
    path = os.path.expanduser(python)
    if not os.path.isabs(path):
        raise ToolError(f"python: {python!r} is not an absolute path (give the interpreter's full path, "
                        "e.g. /home/me/venv/bin/python)")
    try:
        info = os.stat(path)
    except OSError as exc:
        raise ToolError(f"python: {_redact_text(path)}: {exc.strerror or exc}") from None
    if not stat.S_ISREG(info.st_mode) or not os.access(path, os.X_OK):
        raise ToolError(f"python: {_redact_text(path)} is not an executable file")
    return path


def _report_file(path: str, argument: str) -> str:
    """A saved report's path: an existing regular file (a FIFO or a device would block the read)."""
    if "\x00" in path:
        raise ToolError(f"{argument}: the path contains a NUL character")
    expanded = os.path.expanduser(path)
    if not os.path.isabs(expanded):
        raise ToolError(f"{argument}: {path!r} is not an absolute path")
    try:
        info = os.stat(expanded)
    except OSError as exc:
        raise ToolError(f"{argument}: {_redact_text(expanded)}: {exc.strerror or exc}") from None
    if not stat.S_ISREG(info.st_mode):
        raise ToolError(f"{argument}: {_redact_text(expanded)} is not a regular file")
    return expanded


def _timeout(timeout: Optional[float]) -> Optional[float]:
    if timeout is None:
        return None
    if not 1.0 <= timeout <= MAX_TIMEOUT_S:
        raise ToolError(f"timeout: {timeout} s is outside 1 to {MAX_TIMEOUT_S:g} s")
    return float(timeout)


def _ids(values: Optional[List[str]]) -> tuple[str, ...]:
    from tfdoctor.registry import split_ids

    return split_ids(list(values or ()))


def _key(python: str) -> str:
    """A report resource's name for an interpreter: its real path hashed (a path would leak the home)."""
    return hashlib.sha256(os.path.realpath(python).encode("utf-8", "surrogateescape")).hexdigest()[:16]


def _totals_line(document: Mapping[str, Any]) -> str:
    totals = document.get("totals") or {}
    steps = ((document.get("plan") or {}).get("steps")) or []
    parts = [f"{totals.get('pass', 0)} passed", f"{totals.get('warn', 0)} warnings", f"{totals.get('fail', 0)} failed"]
    if totals.get("error"):
        parts.append(f"{totals['error']} crashed")
    plan = f"; the repair plan has {len(steps)} step{'s' if len(steps) != 1 else ''}" if steps else "; nothing to repair"
    return ", ".join(parts) + plan


def _problems_lines(document: Mapping[str, Any], limit: int = 8) -> list[str]:
    from tfdoctor.render.sanitize import clean

    lines = [f"- {r['id']}: {r['status']}: {clean(str(r.get('summary') or ''))}"
             for r in document.get("results") or () if r.get("status") in ("fail", "error", "warn")]
    return lines[:limit] + ([f"- ... {len(lines) - limit} more"] if len(lines) > limit else [])


def _result(structured: Dict[str, Any], text: str) -> CallToolResult:
    from tfdoctor.render.sanitize import clean

    return CallToolResult(content=[TextContent(type="text", text=clean(text))], structured_content=structured)


def _report_schema() -> Dict[str, Any]:
    from importlib import resources

    return json.loads(resources.files("tfdoctor.schema").joinpath("report.schema.json").read_text(encoding="utf-8"))


def _saved(report: Optional[Dict[str, Any]], path: Optional[str], argument: str) -> Any:
    """A SavedReport from a report given as JSON or by path (exactly one of them)."""
    from tfdoctor.saved_reports import UnreadableReport, parse_report, read_report

    if (report is None) == (path is None):
        raise ToolError(f"{argument}: give either the report as JSON or its path, not both and not neither")
    try:
        if path is not None:
            return read_report(_report_file(path, f"{argument}_path"))
        try:
            text = json.dumps(report)
        except (TypeError, ValueError) as exc:
            raise UnreadableReport(f"not JSON: {exc}") from None
        return parse_report(text.encode("utf-8"), f"<{argument}>")
    except UnreadableReport as exc:
        raise ToolError(_redact_text(str(exc))) from None


class RecordingUi:
    """The fixer flow's Ui (tfdoctor/fixer/flow.py) for a server: nothing on a terminal, the lines kept
    (redacted) for the tool's result; never asks (the server's gate is --allow-fix and the plan id)."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self._redact = _redact_text

    def progress(self, text: str) -> Any:
        LOG.info("%s", self._redact(text))
        return nullcontext()

    def say(self, text: str, style: str = "") -> None:
        self.lines.append(self._redact(text))

    def plan(self, document: Mapping[str, Any]) -> None:
        pass

    def confirm(self, question: str) -> bool:
        return False

    def can_ask(self) -> bool:
        return False


def _plan_id(python: str, plan: Mapping[str, Any], freeze: list[str]) -> str:
    """The proof's name: the interpreter, the plan (unredacted) and the environment's freeze. Any change
    to the environment or the plan after verify_fix gives another id, and apply_fix refuses."""
    blob = json.dumps({"python": os.path.realpath(python), "plan": plan, "freeze": sorted(freeze)}, sort_keys=True)
    return "plan-" + hashlib.sha256(blob.encode("utf-8", "surrogateescape")).hexdigest()[:20]


def _step_changes(plan: Mapping[str, Any]) -> list[Dict[str, Any]]:
    """What each step of a (redacted) plan changes, in a line, beside the step itself."""
    described = []
    for step in plan.get("steps") or ():
        what = step.get("action", "")
        packages = ", ".join(step.get("packages") or ())
        change = f"{what} {packages}".strip() + (" (without dependencies)" if step.get("no_deps") else "")
        if step.get("manual"):
            change += " (manual: for your shell or project; tfdoctor does not run it)"
        described.append({"number": step.get("number"), "changes": change, "command": step.get("command"),
                          "checks": sorted({r.get("check") for r in step.get("reasons") or () if r.get("check")})})
    return described


# --- the server ---------------------------------------------------------------------------------------

def build_server(allow_fix: bool = False) -> MCPServer:
    """A new server with its own session: the tools, and apply_fix/undo_fix only when `allow_fix`."""
    session = DoctorSession(allow_fix=allow_fix)
    server: MCPServer = MCPServer("tfdoctor", version=__version__, instructions=INSTRUCTIONS)

    async def run_job(work: Callable[[], T], shielded: bool = False) -> T:
        """`work` in a worker thread, one job at a time. Cancelled (the client's notifications/cancelled,
        or the connection closing): the job's children are killed at once, so its thread ends within
        moments and the next job starts clean; a job cancelled while it waited never starts. A `shielded`
        job (applying or undoing a fix) that has started runs to its end instead: killing pip halfway, then
        the put-back's own children, would leave half a change, worse than either state."""
        from tfdoctor.collect.commands import CHILDREN

        job = Job()

        def in_thread() -> T:
            with session.runner:
                with job.lock:
                    if job.cancelled:
                        raise ToolError("cancelled")
                    job.started = True
                CHILDREN.reopen()  # a job cancelled before this one closed the registry
                return work()

        try:
            return await anyio.to_thread.run_sync(in_thread, abandon_on_cancel=True)
        except anyio.get_cancelled_exc_class():
            with job.lock:
                job.cancelled = True
                started = job.started
            if started and shielded:
                LOG.warning("request cancelled while it changes an environment: it runs to its end")
            elif started:
                LOG.info("request cancelled: killing its children")
                CHILDREN.kill_all()
            raise

    async def in_thread(work: Callable[[], T]) -> T:
        """Pure work (re-judging a saved report) off the event loop; it starts no child."""
        return await anyio.to_thread.run_sync(work, abandon_on_cancel=True)

    def remember(python: str, document: Dict[str, Any]) -> Dict[str, Any]:
        """Keep the last report of each interpreter, offered as a resource from its first diagnosis on."""
        real = os.path.realpath(python)
        key = _key(python)
        label = _redact_text(python)
        first = real not in session.reports
        session.reports[real] = DiagnosedInterpreter(key, label, document)
        if first:
            server.add_resource(FunctionResource(
                uri=REPORT_URI.format(key=key), name=f"report-{key}", title=f"Last tfdoctor report of {label}",
                description=f"The last report (JSON, redacted) of {label} diagnosed in this session.",
                mime_type="application/json",
                fn=lambda: json.dumps(session.reports[real].document, indent=1, ensure_ascii=False)))
        return document

    def diagnosis(python: Optional[str], only: tuple[str, ...], skip: tuple[str, ...], probe: bool, deep: bool,
                  timeout: Optional[float]) -> tuple[str, Dict[str, Any]]:
        """(the interpreter, its report) in the worker thread; the caller remembers it, on the event loop."""
        from tfdoctor.api import DoctorError, diagnose as api_diagnose

        target = _interpreter(python)
        try:
            report = api_diagnose(target, only=only, skip=skip, probe=probe, deep=deep, timeout=timeout)
        except DoctorError as exc:
            raise ToolError(_redact_text(str(exc))) from None
        return target, report.to_dict()

    # --- read-only tools --------------------------------------------------------------------------

    @server.tool(annotations=READ_ONLY, structured_output=False)
    async def diagnose(python: Optional[str] = None, only: Optional[List[str]] = None, skip: Optional[List[str]] = None,
                       deep: bool = False, probe: bool = False, timeout: Optional[float] = None) -> CallToolResult:
        """Diagnose a TensorFlow install: every check's verdict (pass/warn/fail/error/skip) with its cause,
        the totals and the one repair plan. `python`: the absolute path of the environment's interpreter
        (default: the Python running this server). `only`/`skip`: check ids or tags. `probe`: time the
        GPU against the CPU (seconds more). `deep`: the workload probe (up to ~15 s more). `timeout`:
        seconds the TensorFlow import may take (default 60); a hang or crash is a finding, not an error.
        Returns the report as tfdoctor's versioned JSON schema describes it, redacted."""
        only_ids, skip_ids, limit = _ids(only), _ids(skip), _timeout(timeout)
        document = remember(*await run_job(lambda: diagnosis(python, only_ids, skip_ids, probe, deep, limit)))
        text = "\n".join([f"tfdoctor: {_totals_line(document)}.", *_problems_lines(document)])
        return _result(document, text)

    @server.tool(annotations=READ_ONLY, structured_output=False)
    async def list_checks() -> CallToolResult:
        """The checks tfdoctor runs: id, title, tags, platforms (empty: all), the fact sections each
        reads, and its documentation link. Ids and tags are what `only` and `skip` take."""
        from tfdoctor.doctor import selected_checks

        checks = [{"id": c.id, "title": c.title, "tags": list(c.tags), "platforms": list(c.platforms),
                   "needs": list(c.needs), "uses": list(c.uses), "doc_url": c.doc_url} for c in selected_checks()]
        return _result({"checks": checks}, f"{len(checks)} checks: " + ", ".join(c["id"] for c in checks))

    @server.tool(annotations=READ_ONLY, structured_output=False)
    async def explain_check(check_id: str, python: Optional[str] = None, report: Optional[Dict[str, Any]] = None,
                            report_path: Optional[str] = None) -> CallToolResult:
        """One check of a report in full: its result (status, summary, details, remediation), the facts
        it judged, and the plan steps that carry out its repairs. The report: `report` (JSON) or
        `report_path` (a saved --json report, re-judged with today's checks), else the last report of
        `python` in this session, else a new diagnosis of `python` (no probe)."""
        from tfdoctor.doctor import selected_checks

        known = {c.id: c for c in selected_checks()}
        if check_id not in known:
            raise ToolError(f"check_id: unknown check {check_id!r} (list_checks gives the ids)")
        if report is not None or report_path is not None:
            saved = _saved(report, report_path, "report")
            document = await in_thread(lambda: _explained(saved, (), ()))
        else:
            target = _interpreter(python)
            remembered = session.reports.get(os.path.realpath(target))
            document = remembered.document if remembered else remember(*await run_job(
                lambda: diagnosis(target, (), (), False, False, None)))
        result = next((r for r in document.get("results") or () if r.get("id") == check_id), None)
        if result is None:
            raise ToolError(f"check_id: {check_id} was not run in that report (it was skipped by only/skip)")
        check = known[check_id]
        facts = document.get("facts") or {}
        steps = [s for s in (document.get("plan") or {}).get("steps") or ()
                 if any(r.get("check") == check_id for r in s.get("reasons") or ())]
        structured = {"check": {"id": check.id, "title": check.title, "tags": list(check.tags),
                                "doc_url": check.doc_url},
                      "result": result, "facts": {name: facts[name] for name in (*check.needs, *check.uses)
                                                  if name in facts},
                      "plan_steps": steps}
        text = f"{check_id}: {result.get('status')}: {result.get('summary')}"
        if steps:
            text += "\nRepaired by: " + "; ".join(f"step {s['number']}: {s['command']}" for s in steps)
        return _result(structured, text)

    @server.tool(annotations=READ_ONLY, structured_output=False)
    async def explain_report(report: Optional[Dict[str, Any]] = None, report_path: Optional[str] = None,
                             only: Optional[List[str]] = None, skip: Optional[List[str]] = None) -> CallToolResult:
        """Re-judge a saved report (a `tfdoctor --json` output, given as JSON in `report` or by absolute
        path in `report_path`) with today's checks, as `tfdoctor explain` does: no TensorFlow is imported.
        Returns a report of the same schema."""
        saved = _saved(report, report_path, "report")
        only_ids, skip_ids = _ids(only), _ids(skip)
        document = await in_thread(lambda: _explained(saved, only_ids, skip_ids))
        return _result(document, f"tfdoctor explain: {_totals_line(document)}.\n" + "\n".join(_problems_lines(document)))

    @server.tool(annotations=READ_ONLY, structured_output=False)
    async def repair_plan(python: Optional[str] = None, only: Optional[List[str]] = None,
                          skip: Optional[List[str]] = None, timeout: Optional[float] = None) -> CallToolResult:
        """Only the repair plan of `python`'s environment (a fresh diagnosis, no probe): the ordered steps,
        each with its exact command for the environment's installer, what it changes, and the checks it
        repairs. Pasting the non-manual steps in order repairs the environment; `verify_fix` proves it."""
        only_ids, skip_ids, limit = _ids(only), _ids(skip), _timeout(timeout)
        document = remember(*await run_job(lambda: diagnosis(python, only_ids, skip_ids, False, False, limit)))
        plan = document.get("plan") or {}
        structured = {"plan": plan, "changes": _step_changes(plan)}
        lines = [f"step {s['number']}: {s['command']}" for s in plan.get("steps") or ()]
        return _result(structured, "\n".join(lines) if lines else "Nothing to repair: the plan has no steps.")

    @server.tool(annotations=PROVES_ON_A_COPY, structured_output=False)
    async def verify_fix(python: Optional[str] = None, only: Optional[List[str]] = None,
                         skip: Optional[List[str]] = None, timeout: Optional[float] = None) -> CallToolResult:
        """Prove the repair plan on a throwaway hard-link copy of the environment (as `tfdoctor fix` does
        before it changes anything): run every step there, diagnose the copy, and say what would change.
        The real environment is not changed. When the copy comes out with no failed check, the result
        has a `plan_id` that `apply_fix` takes (if the server allows fixes)."""
        only_ids, skip_ids, limit = _ids(only), _ids(skip), _timeout(timeout)
        target = _interpreter(python)
        outcome = await run_job(lambda: _verify(target, only_ids, skip_ids, limit or 60.0))
        if outcome.get("plan_id"):
            session.verified[outcome["plan_id"]] = VerifiedPlan(target, outcome["plan_id"], only_ids, skip_ids,
                                                                limit or 60.0)
            outcome["apply_allowed"] = session.allow_fix and outcome["isolated"]
        return _result(outcome, "\n".join(outcome["messages"]) or outcome["verdict"])

    @server.tool(annotations=READ_ONLY, structured_output=False)
    async def diff_reports(a: Optional[Dict[str, Any]] = None, b: Optional[Dict[str, Any]] = None,
                           a_path: Optional[str] = None, b_path: Optional[str] = None) -> CallToolResult:
        """What differs between two saved reports (two machines, or one machine then and now): platform,
        Python, TensorFlow, GPU, packages, environment, and today's verdict of each check on each. Each
        report as JSON (`a`, `b`) or by absolute path (`a_path`, `b_path`)."""
        from tfdoctor.diff import compare

        first, second = _saved(a, a_path, "a"), _saved(b, b_path, "b")
        document = await in_thread(lambda: _redacted_document(compare(first, second, redacted=True)))
        changed = [c for c in document.get("checks") or () if c.get("a") != c.get("b")]
        text = ("The reports do not differ." if document.get("identical") else
                f"{len(document.get('differences') or ())} facts and {len(changed)} check verdicts differ.")
        return _result(document, text)

    @server.tool(annotations=READ_ONLY, structured_output=False)
    async def scan(paths: Optional[List[str]] = None, depth: int = 4, probe: bool = False,
                   timeout: Optional[float] = None) -> CallToolResult:
        """Find the Python environments on this machine (or under `paths`: absolute directories,
        environments or interpreters) and diagnose each without the probe unless `probe`: which has a
        TensorFlow that works, with the GPU? Returns one row per environment, best first."""
        if not 0 <= depth <= 8:
            raise ToolError("depth: 0 to 8 directory levels")
        checked = []
        for path in paths or ():
            expanded = os.path.expanduser(path)
            if "\x00" in path or not os.path.isabs(expanded):
                raise ToolError(f"paths: {path!r} is not an absolute path")
            if not os.path.lexists(expanded):
                raise ToolError(f"paths: {_redact_text(expanded)}: no such file or directory")
            checked.append(expanded)
        limit = _timeout(timeout)
        document = await run_job(lambda: _scan(checked, depth, probe, limit))
        rows = document["environments"]
        text = document["summary"] if isinstance(document.get("summary"), str) else f"{len(rows)} environments"
        return _result(document, text + "".join(f"\n- {r['environment']}: {r['verdict']}" for r in rows[:20]))

    # --- destructive tools, only with --allow-fix ----------------------------------------------------

    if allow_fix:
        @server.tool(annotations=DESTRUCTIVE, structured_output=False)
        async def apply_fix(plan_id: str) -> CallToolResult:
            """Apply a repair plan that `verify_fix` proved in this session, by its `plan_id`, to the real
            environment: a rollback record and snapshot are written first; if any step or the doctor
            afterwards fails, the snapshot is put back. Refused when the environment or the plan changed
            since the proof, and for a system or externally managed Python. `undo_fix` reverts it."""
            proven = session.verified.get(plan_id)
            if proven is None:
                raise ToolError(f"plan_id: {plan_id!r} was not proven by verify_fix in this session")
            outcome = await run_job(lambda: _apply(proven), shielded=True)
            session.verified.pop(plan_id, None)  # a proof is used once
            return _result(outcome, "\n".join(outcome["messages"]))

        @server.tool(annotations=DESTRUCTIVE, structured_output=False)
        async def undo_fix(python: Optional[str] = None) -> CallToolResult:
            """Restore `python`'s environment as it was before the last fix (tfdoctor fix --undo): the
            snapshot goes back and the distributions are checked against the record."""
            target = _interpreter(python)
            outcome = await run_job(lambda: _undo(target), shielded=True)
            return _result(outcome, "\n".join(outcome["messages"]))

    # --- resources --------------------------------------------------------------------------------

    @server.resource(SCHEMA_URI, name="report-schema", title="tfdoctor report JSON schema",
                     mime_type="application/schema+json")
    def report_schema() -> str:
        """The versioned JSON schema of tfdoctor's reports (what diagnose and explain_report return)."""
        return json.dumps(_report_schema(), indent=1)

    _declare_output_schemas(server)
    return server


def _declare_output_schemas(server: MCPServer) -> None:
    """The tools whose results are a report, or a part of one, say so with the report schema's pieces.
    The SDK publishes a tool's output schema from its return annotation; these tools build their own
    CallToolResult (to add a short text), so the schema is set on the registered tool."""
    report = _report_schema()
    report.pop("$schema", None)
    shapes = {
        "diagnose": report,
        "explain_report": report,
        # the report's own pieces, their $refs (#/$defs/...) resolved against the same $defs
        "repair_plan": {"type": "object", "required": ["plan", "changes"],
                        "properties": {"plan": report["properties"]["plan"], "changes": {"type": "array"}},
                        "$defs": report.get("$defs", {})},
        "explain_check": {"type": "object", "required": ["check", "result", "facts", "plan_steps"],
                          "properties": {"result": {"$ref": "#/$defs/result"}, "facts": {"type": "object"},
                                         "check": {"type": "object"}, "plan_steps": {"type": "array"}},
                          "$defs": report.get("$defs", {})},
    }
    manager = server._tool_manager  # noqa: SLF001 - the SDK has no public setter for a tool's output schema
    for name, schema in shapes.items():
        manager.get_tool(name).fn_metadata.output_schema = schema


# --- the jobs (worker thread) -------------------------------------------------------------------------

def _explained(saved: Any, only: tuple[str, ...], skip: tuple[str, ...]) -> Dict[str, Any]:
    from tfdoctor.doctor import CannotRun
    from tfdoctor.saved_reports import UnreadableReport
    from tfdoctor.saved_reports import explain as explain_saved

    try:
        document = explain_saved(saved, only, skip, redacted=True)
    except (CannotRun, UnreadableReport) as exc:
        raise ToolError(_redact_text(str(exc))) from None
    return _redacted_document(document)


def _scan(paths: list[str], depth: int, probe: bool, timeout: Optional[float]) -> Dict[str, Any]:
    """`tfdoctor scan --json`'s document, as the CLI's scan command builds it."""
    from tfdoctor.options import OptionsError, doctor_options, load_settings
    from tfdoctor.render.scan_table import render_json
    from tfdoctor.scan import summary
    from tfdoctor.scan.find import Places, find_environments
    from tfdoctor.scan.run import diagnose_all

    try:
        settings = load_settings()  # as `tfdoctor scan` reads it: the nearest pyproject.toml
    except OptionsError as exc:
        raise ToolError(str(exc)) from None
    environments = find_environments(Places.default(paths, depth))

    def options_for(environment: Any) -> Any:
        return doctor_options(settings, environment.python, timeout=timeout, probe=probe, deep=False)

    text = _redact_text
    diagnosed = diagnose_all(environments, options_for, _redacted_document, strict=bool(settings.strict),
                             workers=1 if probe else None)
    rows = summary.sorted_rows([summary.row(d, text(d.environment.prefix), text(d.environment.python),
                                            text(d.reason) if d.reason else None) for d in diagnosed])
    return json.loads(render_json(rows, redacted=True))


def _fix_options(python: str, only: tuple[str, ...], skip: tuple[str, ...], timeout: float) -> Any:
    from tfdoctor.fixer.flow import FixOptions

    return FixOptions(python, only, skip, yes=True, system=False, timeout=timeout)


def _diagnosed_plan(options: Any) -> tuple[Any, Any, Any, list[str]]:
    """The fixer's own diagnosis of the environment: (report, plan, environment, freeze)."""
    from tfdoctor.fixer.environment import Environment, freeze
    from tfdoctor.fixer.flow import diagnose

    report = diagnose(options)
    environment = Environment.from_facts(report.facts)
    return report, report.plan, environment, freeze(environment.python)


def _verify(python: str, only: tuple[str, ...], skip: tuple[str, ...], timeout: float) -> Dict[str, Any]:
    from tfdoctor.fixer import flow
    from tfdoctor.fixer.environment import FixError

    ui = RecordingUi()
    options = _fix_options(python, only, skip, timeout)
    try:
        report, plan, environment, before = _diagnosed_plan(options)
    except FixError as exc:
        raise ToolError(_redact_text(str(exc))) from None
    redacted_plan = _redacted_document(report.to_dict()).get("plan") or {}
    outcome: Dict[str, Any] = {"verified": False, "plan_id": None, "plan": redacted_plan,
                               "changes": [], "isolated": environment.isolated,
                               "environment": _redact_text(environment.prefix), "messages": ui.lines}
    steps = list(plan.runnable)
    if plan.conflicts:
        outcome["verdict"] = "The plan cannot be carried out: no install satisfies the conflicting requirements."
    elif not steps:
        failures = [r for r in report.results if r.status.value in ("fail", "error")]
        outcome["verdict"] = ("Nothing to fix: no check asks for a change to this environment." if not plan.steps
                              and not failures else "No step tfdoctor can run repairs what is left "
                              "(manual steps, or advice only).")
    else:
        try:
            after = flow._verify(steps, environment, options, ui, before,  # noqa: SLF001 - the fixer's proof
                                 flow._tensorflow_the_plan_installs(plan), plan=plan)  # noqa: SLF001
        except FixError as exc:
            ui.say(str(exc))
            after = None
        if after is not None:
            outcome.update(verified=True, plan_id=_plan_id(python, plan.to_dict(), before),
                           changes=[_redact_text(line) for line in flow.changes(before, after)])
            outcome["verdict"] = "Verified on a throwaway copy: apply_fix can apply it by plan_id."
        else:
            outcome["verdict"] = "The plan did not work on a copy: nothing was changed."
    if not environment.isolated and outcome["verified"]:
        ui.say("This is a system or externally managed Python: apply_fix will not change it (use a virtual "
               "environment, or `tfdoctor fix --yes --system` yourself).")
    return outcome


def _apply(proven: VerifiedPlan) -> Dict[str, Any]:
    from tfdoctor.fixer import flow
    from tfdoctor.fixer.environment import FixError

    ui = RecordingUi()
    options = _fix_options(proven.python, proven.only, proven.skip, proven.timeout)
    try:
        report, plan, environment, before = _diagnosed_plan(options)
        if _plan_id(proven.python, plan.to_dict(), before) != proven.plan_id:
            raise ToolError("the environment or its plan changed since verify_fix proved it: run verify_fix again")
        if not environment.isolated:
            raise ToolError("a system or externally managed Python is not changed from an assistant: "
                            "use a virtual environment, or run `tfdoctor fix --yes --system` yourself")
        code = flow._apply(list(plan.runnable), environment, options, ui,  # noqa: SLF001 - the fixer's apply
                           _redacted_document(report.to_dict()).get("plan") or {}, plan=plan)
    except FixError as exc:
        raise ToolError(_redact_text(str(exc))) from None
    from tfdoctor.fixer.environment import freeze

    after = freeze(environment.python)
    left = [_redact_text(step.command) for step in plan.manual] if code == flow.EXIT_SHELL_STEPS_LEFT else []
    return {"applied": code in (flow.EXIT_REPAIRED, flow.EXIT_SHELL_STEPS_LEFT), "exit_code": code,
            "plan_id": proven.plan_id, "changes": [_redact_text(line) for line in flow.changes(before, after)],
            "left_to_you": left, "messages": ui.lines}


def _undo(python: str) -> Dict[str, Any]:
    from tfdoctor.fixer import flow
    from tfdoctor.fixer.environment import FixError

    ui = RecordingUi()
    try:
        code = flow.undo(python, ui, yes=True)
    except FixError as exc:
        raise ToolError(_redact_text(str(exc))) from None
    return {"restored": code == flow.EXIT_REPAIRED, "exit_code": code, "messages": ui.lines}


def serve(allow_fix: bool = False) -> None:
    """Serve over stdio until the client closes stdin. Logs on stderr, never on stdout."""
    import sys

    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="tfdoctor mcp: %(levelname)s %(message)s")
    LOG.setLevel(logging.INFO)
    build_server(allow_fix).run("stdio")

