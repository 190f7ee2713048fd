"""Running the CLI in-process and the saved reports it reads: the commands' tests (`tfdoctor explain`, `diff`,
`scan`, the workload's and the charts' round trips, the schema's) share these."""

from __future__ import annotations

import io
import json
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

from tfdoctor.cli.entry import run_command_line


def run_cli(args: list[str]) -> tuple[int, str, str]:
    """The CLI in-process (fast): exit code, stdout, stderr."""
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = run_command_line([str(a) for a in args])
    return code, out.getvalue(), err.getvalue()


def write(tmp_path: Path, content, name: str = "report.json") -> Path:
    """A file in tmp_path holding bytes, text or (anything else) JSON, as a saved report would be written."""
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    elif isinstance(content, str):
        path.write_text(content, encoding="utf-8")
    else:
        path.write_text(json.dumps(content), encoding="utf-8")
    return path


LINUX_FACTS = {
    "host": {"system": "Linux", "release": "6.5.0", "version": "#1", "machine": "x86_64"},
    "python": {"executable": "/home/alice/venv/bin/python", "version": "3.11.7", "machine": "x86_64",
               "implementation": "CPython", "in_venv": True, "conda": False, "uv_version": None},
}


def old_report(**overrides) -> dict:
    """A report as an older tfdoctor might have saved it: fewer sections, a check that no longer exists."""
    document = {
        "schema_version": "1.0",
        "tool": {"name": "tfdoctor", "version": "0.0.1"},
        "created_at": "2024-01-01T00:00:00+00:00",
        "redacted": False,
        "facts": dict(LINUX_FACTS),
        "results": [{"id": "retired-check", "title": "Gone", "status": "fail", "summary": "old verdict",
                     "details": [], "remediation": None, "duration_ms": 1.0}],
        "totals": {"pass": 0, "warn": 0, "fail": 1, "skip": 0, "error": 0},
    }
    document.update(overrides)
    return document
