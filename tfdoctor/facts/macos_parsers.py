"""Pure parsers for what macOS tools print (kept raw in the facts): sw_vers, sysctl values,
vm.swapusage, system_profiler SPDisplaysDataType. Formats: mac-system-outputs.md.
"""

from __future__ import annotations

import re
from typing import Any, Optional

from tfdoctor.versions import release


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


def is_compat_version(version: Optional[str]) -> bool:
    """10.16 is what Pythons built against a pre-11 SDK see on macOS 11 and later."""
    return release(version)[:2] == (10, 16)


def sysctl_int(value: Optional[str]) -> Optional[int]:
    """'1' -> 1; '' / None / 'unknown oid' text -> None."""
    if value is None:
        return None
    text = str(value).strip()
    return int(text) if re.fullmatch(r"-?\d+", text) else None


def sysctl_flag(value: Optional[str]) -> Optional[bool]:
    number = sysctl_int(value)
    return None if number is None else number != 0


PRESSURE_LEVELS = {1: "normal", 2: "warn", 4: "critical"}


def pressure_level(value: Optional[str]) -> Optional[str]:
    """kern.memorystatus_vm_pressure_level: 1 normal, 2 warn, 4 critical (xymon PR #242)."""
    number = sysctl_int(value)
    return PRESSURE_LEVELS.get(number) if number is not None else None


_UNITS = {"B": 1, "K": 1024, "M": 1024 ** 2, "G": 1024 ** 3, "T": 1024 ** 4}
_SWAP_FIELD = re.compile(r"(total|used|free)\s*=\s*([0-9]+(?:[.,][0-9]+)?)\s*([BKMGT])?", re.IGNORECASE)


def parse_size(number: str, unit: Optional[str]) -> int:
    """'379,25' 'M' -> bytes. A decimal comma is what a comma locale makes sysctl print."""
    return int(round(float(number.replace(",", ".")) * _UNITS[(unit or "B").upper()]))


def parse_swapusage(value: Optional[str]) -> Optional[dict[str, Any]]:
    """'total = 4096.00M  used = 2743.50M  free = 1352.50M  (encrypted)' -> bytes per field.

    Survives the decimal comma ('1024,00M') and a leading 'vm.swapusage:' key; None when no field
    parses. total 0 only means no swap file yet (macOS creates them on demand)."""
    if not value:
        return None
    fields = {name.lower(): parse_size(number, unit) for name, number, unit in _SWAP_FIELD.findall(value)}
    if not fields:
        return None
    return {
        "total_bytes": fields.get("total"),
        "used_bytes": fields.get("used"),
        "free_bytes": fields.get("free"),
        "encrypted": "encrypted" in value,
    }


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
