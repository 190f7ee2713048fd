"""`tfdoctor explain REPORT.json`: today's checks on the facts of a saved report.

A support engineer gets a report from an old tfdoctor (or a hand-written facts file, or a fixture)
and wants today's diagnosis of that machine. Anything that is not a readable 1.x report is refused
with a one-line reason (`UnreadableReport`, exit 2), never a traceback: the input comes from strangers.
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass
from typing import Any, Mapping

from tfdoctor.report.run import SCHEMA_VERSION

READABLE_MAJOR = int(SCHEMA_VERSION.split(".")[0])
MAX_DEPTH = 64  # a report nests about 6 levels; deeper is not a report (and would exhaust the stack)
MAX_BYTES = 64 * 1024 * 1024

# Sections whose top-level type is fixed (see schema/report.schema.json). A wrong type means the
# file is not a report; a missing or null section only makes the checks that need it skip.
OBJECT_SECTIONS = ("host", "os", "sysctl", "system_profiler", "cpu", "memory", "python", "environment",
                   "nvidia", "tensorflow", "collection")
ARRAY_SECTIONS = ("distributions",)

_VERSION = re.compile(r"^(\d+)\.(\d+)$")


class UnreadableReport(Exception):
    """The input is not a report this tfdoctor can read. The message is one line."""


@dataclass(frozen=True)
class SavedReport:
    """The parts of a saved report (or fixture, or hand-written facts file) that explain needs."""

    name: str  # the path as given, for messages and `explained_from`
    schema_version: str
    facts: dict[str, Any]
    tool_version: str | None = None
    created_at: str | None = None
    redacted: bool | None = None  # None: the file does not say

    def describe(self) -> str:
        """One line: where the facts come from and what the file said about itself."""
        made_by = f"tfdoctor {self.tool_version} report" if self.tool_version else "report"
        bits = [f"{made_by}, schema {self.schema_version}"]
        if self.created_at:
            bits.append(f"created {self.created_at}")
        bits.append({True: "saved redacted", False: "saved WITHOUT redaction",
                     None: "redaction not recorded"}[self.redacted])
        return f"{self.name} ({', '.join(bits)})"

    def source_info(self) -> dict[str, Any]:
        return {"path": self.name, "schema_version": self.schema_version, "tool_version": self.tool_version,
                "created_at": self.created_at, "redacted": self.redacted}


def _type_name(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean", type(None): "null",
            int: "a number", float: "a number"}.get(type(value), type(value).__name__)


def _decode(data: bytes) -> str:
    # PowerShell 5's `>` writes UTF-16 with a BOM: accept it rather than call the report garbage.
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        encoding = "utf-16"
    else:
        encoding = "utf-8-sig"
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as exc:
        raise UnreadableReport(f"not UTF-8 text (byte {exc.start})") from None


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _finite_float(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):  # 1e400: could not be written back as JSON
        raise ValueError(f"the number {text[:20]} is out of range")
    return value


def _depth(value: Any) -> int:
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, depth = stack.pop()
        deepest = max(deepest, depth)
        if deepest > MAX_DEPTH:
            break
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else ()
        stack.extend((child, depth + 1) for child in children)
    return deepest


def _clean(value: Any) -> Any:
    """Lone surrogates (from JSON escapes like \\ud800) cannot be printed or saved: make them U+FFFD."""
    if isinstance(value, str):
        return value.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    if isinstance(value, dict):
        return {_clean(k): _clean(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_clean(v) for v in value]
    return value


def parse_report(data: bytes, name: str) -> SavedReport:
    """Pure: the bytes of a file -> a SavedReport, or UnreadableReport with the reason."""
    if not data.strip():
        raise UnreadableReport("the file is empty")
    text = _decode(data)
    try:
        document = json.loads(text, parse_constant=_reject_constant, parse_float=_finite_float)
    except RecursionError:
        raise UnreadableReport(f"nested deeper than {MAX_DEPTH} levels") from None
    except ValueError as exc:
        line = getattr(exc, "lineno", None)
        where = f" at line {line} column {getattr(exc, 'colno', '?')}" if line else ""
        message = getattr(exc, "msg", str(exc))
        opened = text.lstrip()[:1] in ("{", "[")
        closed = text.rstrip()[-1:] in ("}", "]")
        hint = " (the file looks truncated)" if opened and not closed else ""
        raise UnreadableReport(f"invalid JSON{where}: {message}{hint}") from None
    if not isinstance(document, dict):
        raise UnreadableReport(f"the top level is {_type_name(document)}, not an object")
    if _depth(document) > MAX_DEPTH:
        raise UnreadableReport(f"nested deeper than {MAX_DEPTH} levels")
    document = _clean(document)
    return _saved_report(document, name)


def _saved_report(document: Mapping[str, Any], name: str) -> SavedReport:
    version = document.get("schema_version")
    if version is None:
        raise UnreadableReport("no schema_version: not a tfdoctor report")
    match = _VERSION.match(version) if isinstance(version, str) else None
    if not match:
        raise UnreadableReport(f"schema_version {json.dumps(version)} is not of the form MAJOR.MINOR, like {json.dumps(SCHEMA_VERSION)}")
    if int(match.group(1)) != READABLE_MAJOR:
        raise UnreadableReport(f"schema_version {version} is not one this tfdoctor reads ({READABLE_MAJOR}.x); "
                          "use the tfdoctor that wrote it, or a newer one")
    facts = document.get("facts")
    if not isinstance(facts, dict):
        raise UnreadableReport(f"facts is {_type_name(facts)}, not an object" if "facts" in document else "no facts object")
    _check_sections(facts)
    tool = document.get("tool")
    tool_version = tool.get("version") if isinstance(tool, dict) else None
    created_at = document.get("created_at")
    redacted = document.get("redacted")
    return SavedReport(
        name=name,
        schema_version=version,
        facts=facts,
        tool_version=str(tool_version) if isinstance(tool_version, (str, int, float)) else None,
        created_at=created_at if isinstance(created_at, str) else None,
        redacted=redacted if isinstance(redacted, bool) else None,
    )


def _check_sections(facts: Mapping[str, Any]) -> None:
    for name in OBJECT_SECTIONS:
        value = facts.get(name)
        if value is not None and not isinstance(value, dict):
            raise UnreadableReport(f"facts.{name} is {_type_name(value)}, not an object or null")
    for name in ARRAY_SECTIONS:
        value = facts.get(name)
        if value is not None and not isinstance(value, list):
            raise UnreadableReport(f"facts.{name} is {_type_name(value)}, not a list or null")
        for index, item in enumerate(value or ()):
            if not isinstance(item, dict):
                raise UnreadableReport(f"facts.{name}[{index}] is {_type_name(item)}, not an object")


def read_report(path: str) -> SavedReport:
    """Read a report from a file ('-' for stdin)."""
    try:
        if path == "-":
            data = sys.stdin.buffer.read(MAX_BYTES + 1)
        else:
            with open(path, "rb") as handle:
                data = handle.read(MAX_BYTES + 1)
    except OSError as exc:
        raise UnreadableReport(f"cannot read {path}: {exc.strerror or exc}") from None
    if len(data) > MAX_BYTES:
        raise UnreadableReport(f"{path} is larger than {MAX_BYTES // (1024 * 1024)} MiB: not a report")
    try:
        return parse_report(data, "<stdin>" if path == "-" else path)
    except UnreadableReport as exc:
        raise UnreadableReport(f"{path} is not a readable report: {exc}") from None
