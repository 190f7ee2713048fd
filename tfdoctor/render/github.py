"""GitHub Actions: annotations for the problems and the Markdown report in the job summary.

Workflow commands (https://docs.github.com/en/actions/using-workflows/workflow-commands-for-github-actions)
are single lines read from the step's output: `::error title=T::message`. Their escaping follows
actions/toolkit's command.ts: in the message %, CR and LF; in a property value also ':' and ','.

A report's text comes from strangers, and a newline in a fact would start a line of its own that the
runner reads as a command (`::add-mask::`, `::error file=...`, or the older `##[command]` anywhere in
a line). So untrusted text reaches the log only inside an annotation's escaped values, or inside a
`::stop-commands::TOKEN` ... `::TOKEN::` block (`guarded`) with a random token that the text cannot
guess, in which the runner runs no command at all.
"""

from __future__ import annotations

import secrets
from typing import Any

from tfdoctor.render.formats import Look, OutputFormat
from tfdoctor.render.sanitize import clean, clean_document

LEVELS = {"fail": "error", "error": "error", "warn": "warning"}


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def guarded(text: str) -> str:
    """`text` (the report for people) between ::stop-commands::TOKEN and ::TOKEN::."""
    token = secrets.token_hex(16)
    while token in text:  # a 128-bit random token: only for the sake of the proof
        token = secrets.token_hex(16)
    body = text if text.endswith("\n") or not text else text + "\n"
    return f"::stop-commands::{token}\n{body}::{token}::\n"


def annotation(result: dict[str, Any]) -> str | None:
    """One workflow command for a fail, error or warn result; None for the others."""
    level = LEVELS.get(result.get("status", ""))
    if level is None:
        return None
    lines = [clean(str(result.get("summary", "")))]
    fix = result.get("remediation") or {}
    if fix.get("advice"):
        lines.append(f"Fix: {clean(str(fix['advice']))}")
    lines += [f"$ {clean(str(command))}" for command in fix.get("commands") or ()]
    title = f"tfdoctor {result.get('id', '')}: {clean(str(result.get('title', '')))}"
    return f"::{level} title={escape_property(title)}::{escape_data(chr(10).join(lines))}"


def workflow_annotations(document: dict[str, Any]) -> str:
    """The annotation lines of a report, '' when nothing failed or warned."""
    found = [line for line in (annotation(r) for r in document.get("results") or ()) if line]
    return "".join(line + "\n" for line in found)


def step_summary(document: dict[str, Any]) -> str:
    """What goes into $GITHUB_STEP_SUMMARY: the Markdown report (problems first)."""
    from tfdoctor.render.markdown import render

    return render(clean_document(document))


def _report(document: Any, look: "Look") -> str:
    from tfdoctor.render.text import render

    return render(document, verbose=look.verbose, color=False, width=look.width, quiet=look.quiet)


def _diff(document: Any, look: "Look") -> str:
    from tfdoctor.render.diff import render_text

    return render_text(document, look.verbose)


def _scan(rows: Any, look: "Look") -> str:
    from tfdoctor.render.scan_table import render_text

    return render_text(rows, color=False, width=look.width)


FORMAT = OutputFormat("github", "Text plus GitHub Actions annotations and the job summary.", report=_report,
                      diff=_diff, scan=_scan, annotates=True)
