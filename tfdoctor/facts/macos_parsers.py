"""Pure parsers for what macOS tools print (kept raw in the facts), shared by several checks: sw_vers,
sysctl values, system_profiler SPDisplaysDataType. Formats: the real outputs the fixtures in fixtures/macos hold.
vm.swapusage and the memory-pressure level are read by the memory check itself.
"""

from __future__ import annotations

import re
from typing import Any, Optional



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


def parse_displays(text: Optional[str]) -> list[dict[str, Any]]:
    """system_profiler SPDisplaysDataType (text form) -> [{name, chipset, cores, vendor, vram, metal}].

    Apple GPUs list 'Total Number of Cores' (sometimes missing) and no VRAM line: they share RAM."""
    gpus: list[dict[str, Any]] = []
    current: Optional[dict[str, Any]] = None
    for raw in (text or "").splitlines():
        line = raw.rstrip()
        stripped = line.strip()
        if not stripped or stripped == "Graphics/Displays:":
            continue
        indent = len(line) - len(line.lstrip())
        key, sep, value = stripped.partition(":")
        if sep and not value.strip() and indent <= 4:
            current = {"name": key.strip(), "chipset": None, "cores": None, "vendor": None, "vram": None, "metal": None}
            gpus.append(current)
            continue
        if current is None or not sep or indent > 6:
            continue  # display sub-sections (resolution, ...) sit deeper
        value = value.strip()
        if key == "Chipset Model":
            current["chipset"] = value
        elif key == "Total Number of Cores":
            current["cores"] = int(value) if value.isdigit() else None
        elif key == "Vendor":
            current["vendor"] = value
        elif key.startswith("VRAM"):
            current["vram"] = value
        elif key in ("Metal", "Metal Support", "Metal Family"):
            current["metal"] = value
    return gpus
