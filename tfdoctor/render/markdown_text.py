"""Literal text in Markdown: escaping for prose and table cells, inline code spans, the status emoji. Shared by
every Markdown output (the report, a diff, scan's table), apart from the report's format module so that the others
need not import it."""

from __future__ import annotations

import re
from typing import Any

EMOJI = {"pass": "✅", "warn": "⚠️", "fail": "❌", "skip": "➖", "error": "💥"}

_SPECIAL = {ord(c): "\\" + c for c in "\\`*_~[]|<>"}  # backslashed; ~ too: GitHub strikes through ~a~


# GitHub turns these into mentions and cross-references (notifying people, back-linking issues)
# even when escaped; inside a code span it does not. `owner/repo#1` starts where a run of its
# characters starts (not at every \b inside 'a.a.a...'), so a long run is scanned once, not once per dot.
_REFERENCES = re.compile(r"(?<![\w.])@[A-Za-z0-9][\w-]*|(?<![\w.-])[\w.-]+(?:/[\w.-]+)?#\d+\b|(?<![\w&])#\d+\b"
                         r"|\bGH-\d+\b")


def escape(text: Any) -> str:
    """Literal text in Markdown prose or a table cell: one line, nothing interpreted, nobody notified."""
    text = str(text).replace("\r", "").replace("\n", " ")
    parts, last = [], 0
    for match in _REFERENCES.finditer(text):
        parts += [text[last:match.start()].translate(_SPECIAL), code(match.group())]
        last = match.end()
    parts.append(text[last:].translate(_SPECIAL))
    return "".join(parts)


def code(text: Any) -> str:
    """An inline code span, safe inside a table cell."""
    body = str(text).replace("\n", " ").replace("|", "\\|")
    longest = max((len(run) for run in re.findall(r"`+", body)), default=0)
    ticks = "`" * (longest + 1)
    pad = " " if longest else ""
    return f"{ticks}{pad}{body}{pad}{ticks}"
