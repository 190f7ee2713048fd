"""Pure parsers of what `sw_vers` and `sysctl` print on a Mac (kept raw in the facts): the macOS version and
sysctl values as numbers and flags. Formats: the real outputs the fixtures in fixtures/macos hold.
vm.swapusage and the memory-pressure level are read by the memory check itself.
"""

from __future__ import annotations

import re
from typing import Optional


# sw_vers: "ProductName:\tmacOS\nProductVersion:\t14.2\nBuildVersion:\t23C64" (tabs in real output,
# spaces in some transcripts; ProductName was "Mac OS X" before Big Sur).
def parse_sw_vers(text: Optional[str]) -> dict[str, str]:
    values: dict[str, str] = {}
    for line in (text or "").splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip():
            values[key.strip()] = value.strip()
    return values


def product_version(text: Optional[str]) -> Optional[str]:
    return parse_sw_vers(text).get("ProductVersion") or None


def sysctl_int(value: Optional[str]) -> Optional[int]:
    """'1' -> 1; '' / None / 'unknown oid' text -> None."""
    if value is None:
        return None
    text = str(value).strip()
    return int(text) if re.fullmatch(r"-?\d+", text) else None


def sysctl_flag(value: Optional[str]) -> Optional[bool]:
    number = sysctl_int(value)
    return None if number is None else number != 0
