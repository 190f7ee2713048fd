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


def in_range(version: str | None, low: str | None = None, high: str | None = None) -> bool:
    """low <= version < high, on release numbers (missing bounds are open)."""
    value = _padded(version)
    if not value:
        return False
    if low and value < _padded(low):
        return False
    if high and value >= _padded(high):
        return False
    return True


def _padded(version: str | None) -> tuple[int, ...]:
    # (2, 19) and (2, 19, 0) are the same release
    parts = release(version)
    return parts + (0,) * (4 - len(parts)) if parts else ()
