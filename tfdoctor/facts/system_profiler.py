"""A pure parser of `system_profiler SPDisplaysDataType` (text form, kept raw in the facts): a Mac's GPUs, for
the memory and probe checks. Format: the real outputs the fixtures in fixtures/macos hold.
"""

from __future__ import annotations

from typing import Any, Optional


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
