"""macOS facts: sysctl keys, sw_vers and system_profiler, kept as the raw strings the tools print."""

from __future__ import annotations

import os
import platform
from typing import Any

from tfdoctor.collect.options import CollectOptions
from tfdoctor.processes.commands import run_command

# sysctl.proc_translated is deliberately absent: it is per process, so the target interpreter asks
# it of itself (child/target_info.py); asking here would describe the doctor, not the target.
SYSCTL_KEYS = (
    "hw.optional.arm64",
    "machdep.cpu.brand_string",
    "machdep.cpu.features",
    "machdep.cpu.leaf7_features",
    "hw.optional.avx1_0",
    "hw.optional.avx2_0",
    "hw.memsize",
    "hw.pagesize",
    "hw.ncpu",
    "hw.perflevel0.physicalcpu",
    "hw.perflevel1.physicalcpu",
    "vm.swapusage",
    "kern.memorystatus_vm_pressure_level",
)


def parse_sysctl_lines(text: str, keys: tuple[str, ...]) -> dict[str, str | None]:
    """`sysctl key...` prints 'key: value' per known key; unknown keys are absent (None)."""
    values: dict[str, str | None] = {key: None for key in keys}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip() in values:
            values[key.strip()] = value.strip()
    return values


def collect_sysctl(options: CollectOptions) -> dict[str, Any]:
    if platform.system() != "Darwin":
        return {"sysctl": None}
    # -i: unknown keys (Intel-only or Apple-only ones) are skipped instead of failing the whole call.
    # LC_ALL=C: vm.swapusage otherwise prints a decimal comma in some locales.
    result = run_command(["sysctl", "-i", *SYSCTL_KEYS], options.command_timeout,
                         env={**os.environ, "LC_ALL": "C"})
    return {"sysctl": parse_sysctl_lines(result["stdout"], SYSCTL_KEYS)}


def collect_displays(options: CollectOptions) -> dict[str, Any]:
    """GPU model and core count (Apple silicon) from system_profiler; slow-ish, so it runs in parallel."""
    if platform.system() != "Darwin":
        return {}
    displays = run_command(["system_profiler", "SPDisplaysDataType"], options.command_timeout)
    return {"system_profiler": {"SPDisplaysDataType": displays["stdout"] if displays["status"] == "ok" else None,
                                "status": displays["status"]}}
