"""Terminal safety: text from facts or a saved report must not drive the terminal.

A report comes from strangers (and TensorFlow colours its own log lines): an ESC sequence in it could
clear the screen, retitle the window or hide text. Every renderer and command that prints a report's
strings (text, Markdown, GitHub, `diff`) passes its document through `clean_document` first: ESC
sequences (CSI, OSC and the like, 7-bit and 8-bit) are removed whole, then every other control
character, C0 except tab and newline, DEL and C1. JSON keeps the data but writes it with `json_dumps`:
C0 controls as json.dumps escapes them, DEL and C1 as \\u007f-\\u009f too (json.dumps leaves them raw
when ensure_ascii is off), the bidirectional and zero-width characters likewise, and `##[` as `\\u0023#[`, GitHub Actions' older workflow-command prefix, which
the runner looks for anywhere in a line of the log. Every pattern here runs in linear time.
"""

from __future__ import annotations

import json
import re
from typing import Any

_SEQUENCES = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]"  # CSI: colours, cursor moves, erase
    r"|(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"  # OSC, DCS, SOS, PM, APC
    r"|\x1b[ -/]*[0-~]"  # other escapes: ESC c (reset), ESC ( B, ...
)
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
# Invisible characters that change how the text around them reads: the bidirectional controls (embeddings,
# overrides, isolates, marks: the "Trojan Source" characters, https://trojansource.codes/, Unicode's
# UAX #9) and the zero-width ones (ZWSP, ZWNJ, ZWJ, word joiner, BOM). Shown as a visible \\uXXXX.
_INVISIBLE_RANGES = ((0x061C, 0x061C), (0x200B, 0x200F), (0x202A, 0x202E), (0x2060, 0x2064), (0x2066, 0x2069),
                     (0xFEFF, 0xFEFF))  # first, last
INVISIBLE = "".join(chr(first) if first == last else f"{chr(first)}-{chr(last)}" for first, last in _INVISIBLE_RANGES)
_INVISIBLE = re.compile(f"[{INVISIBLE}]")


def clean(text: str) -> str:
    """`text` without escape sequences and control characters (tab and newline stay), its invisible
    direction and zero-width characters spelt out (\\u202e)."""
    if _INVISIBLE.search(text):
        text = _INVISIBLE.sub(lambda match: f"\\u{ord(match[0]):04x}", text)
    if not _CONTROLS.search(text):
        return text
    return _CONTROLS.sub("", _SEQUENCES.sub("", text))


def clean_document(value: Any) -> Any:
    """A copy of a JSON-like value with every string (keys too) cleaned."""
    if isinstance(value, str):
        return clean(value)
    if isinstance(value, dict):
        return {clean(str(k)): clean_document(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [clean_document(v) for v in value]
    return value


# Raw in json.dumps(ensure_ascii=False) output only inside strings, where a \\u escape means the same.
_JSON_ESCAPES = {code: f"\\u{code:04x}" for code in range(0x7F, 0xA0)}
# from the ranges, not by matching all 65,536 code points at import (that took 30-60 ms of every run's start)
_JSON_ESCAPES.update({code: f"\\u{code:04x}" for first, last in _INVISIBLE_RANGES for code in range(first, last + 1)})


def json_dumps(value: Any, indent: int | None = 2) -> str:
    """JSON text (non-ASCII kept readable) in which no character can drive a terminal or a CI log."""
    text = json.dumps(value, indent=indent, ensure_ascii=False).translate(_JSON_ESCAPES)
    return text.replace("##[", "\\u0023#[")
