"""Small, dependency-free version handling for the release numbers the knowledge data speaks of.

`packaging` is not a dependency of ours (the doctor must install into broken environments with as
little as possible), and only plain release numbers need comparing: '2.19.0', '2.16.0rc0', '1.2.0'.
"""

from __future__ import annotations

import re

_LEADING = re.compile(r"^\s*v?(\d+(?:\.\d+)*)")


def release(version: str | None) -> tuple[int, ...]:
    """'2.16.0rc0' -> (2, 16, 0); '' or None -> ()."""
    if not version:
        return ()
    match = _LEADING.match(str(version))
    return tuple(int(part) for part in match.group(1).split(".")) if match else ()


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
