"""Terminal safety: text from facts or a saved report must not drive the terminal.

A report comes from strangers (and TensorFlow colours its own log lines): an ESC sequence in it could
clear the screen, retitle the window or hide text. Every string a text or Markdown renderer prints
goes through `clean` first: ESC sequences (CSI, OSC and the like, 7-bit and 8-bit) are removed whole,
then every other control character, C0 except tab and newline, DEL and C1. JSON needs none of this:
json.dumps writes control characters as \\u escapes.
"""

from __future__ import annotations

import re
from typing import Any

_SEQUENCES = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]"  # CSI: colours, cursor moves, erase
    r"|(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"  # OSC, DCS, SOS, PM, APC
    r"|\x1b[ -/]*[0-~]"  # other escapes: ESC c (reset), ESC ( B, ...
)
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def clean(text: str) -> str:
    """`text` without escape sequences and control characters (tab and newline stay)."""
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
