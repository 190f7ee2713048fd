"""Release numbers of the versions the knowledge data and the tools speak of, read with `packaging`.

PEP 440 parsing is packaging's (the library pip vendors); these helpers only answer the questions the
knowledge tables ask, on release numbers: '2.16.0rc0' is release (2, 16, 0), and (2, 19) equals
(2, 19, 0). For specifiers and pre-release ordering use `packaging` itself (tfdoctor/knowledge/specifiers.py,
tfdoctor/facts/requires_dist.py).
"""

from __future__ import annotations

import re

from packaging.version import InvalidVersion, Version

# Tool outputs are not always PEP 440 ('12.2 (build 123)', '3.13.0+'): their leading dotted number is
# read by packaging in turn; anything else is unreadable.
_LEADING_NUMBER = re.compile(r"^\s*v?(\d+(?:\.\d+)*)")


def parse(version: str | None) -> Version | None:
    """packaging's Version, or that of the leading dotted number of a tool's output; None when unreadable."""
    if not version:
        return None
    text = str(version)
    try:
        return Version(text)
    except InvalidVersion:
        match = _LEADING_NUMBER.match(text)
        return Version(match.group(1)) if match else None


def release(version: str | None) -> tuple[int, ...]:
    """'2.16.0rc0' -> (2, 16, 0); '' or None -> ()."""
    parsed = parse(version)
    return tuple(parsed.release) if parsed else ()


def minor(version: str | None) -> tuple[int, ...]:
    """'2.19.1' -> (2, 19)."""
    return release(version)[:2]


def key(version: str | None) -> tuple[int, ...]:
    """A sort key in which (2, 19) and (2, 19, 0) are the same release; () when unreadable."""
    parts = release(version)
    return parts + (0,) * (4 - len(parts)) if parts else ()


def compare(a: str | None, b: str | None) -> int:
    """-1, 0 or 1 on release numbers; missing trailing parts count as 0."""
    left, right = release(a), release(b)
    width = max(len(left), len(right))
    left, right = left + (0,) * (width - len(left)), right + (0,) * (width - len(right))
    return (left > right) - (left < right)


def in_range(version: str | None, low: str | None = None, high: str | None = None) -> bool:
    """low <= version < high, on release numbers (missing bounds are open)."""
    if not release(version):
        return False
    if low and compare(version, low) < 0:
        return False
    if high and compare(version, high) >= 0:
        return False
    return True
