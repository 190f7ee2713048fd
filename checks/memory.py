"""RAM, what is available, swap in use and (macOS) the kernel's memory-pressure level.

On Apple silicon the GPU has no memory of its own: tensorflow-metal allocates from the same RAM, so
memory pressure here is GPU memory pressure too. macOS's own level (kern.memorystatus_vm_pressure_level:
1 normal, 2 warn, 4 critical) decides when recorded; otherwise swap in use against RAM and available
RAM against total, with the thresholds in tfdoctor/knowledge/macos.toml. Swap total is not judged:
macOS grows swap on demand.
"""

from __future__ import annotations

import re
from typing import Any, Optional

from tfdoctor.checking.registry import Facts, check
from tfdoctor.facts import apple_silicon, section
from tfdoctor.facts.sw_vers_sysctl import sysctl_int
from tfdoctor.facts.system_profiler import parse_displays
from tfdoctor.knowledge import rows as knowledge_rows
from tfdoctor.results.findings import Findings
from tfdoctor.results.model import Outcome, Remediation

MAC_URL = "https://github.com/tensorflow/tensorflow/issues/62773"
OTHER_URL = "https://psutil.readthedocs.io/en/latest/#psutil.virtual_memory"


def gib(value: Optional[int]) -> str:
    if value is None:
        return "?"
    return f"{value / 1024 ** 3:.1f} GiB"


def memory_numbers(facts: Facts) -> dict[str, Any]:
    """Total, available and swap in bytes: psutil's, with macOS's own sysctl values where recorded."""
    memory = section(facts, "memory")
    sysctl = section(facts, "sysctl")
    numbers = {
        "total_bytes": memory.get("total_bytes") or sysctl_int(sysctl.get("hw.memsize")),
        "available_bytes": memory.get("available_bytes"),
        "swap_total_bytes": memory.get("swap_total_bytes"),
        "swap_used_bytes": memory.get("swap_used_bytes"),
        "pressure": pressure_level(sysctl.get("kern.memorystatus_vm_pressure_level")),
    }
    swap = parse_swapusage(sysctl.get("vm.swapusage"))
    if swap:
        numbers["swap_total_bytes"] = swap["total_bytes"]
        numbers["swap_used_bytes"] = swap["used_bytes"]
    return numbers


def _threshold(name: str) -> dict:
    return next(row for row in knowledge_rows("macos", "memory_threshold") if row["name"] == name)


def _gpu_note(facts: Facts) -> Optional[str]:
    if not (apple_silicon.is_mac(facts) and apple_silicon.apple_silicon(facts)):
        return None
    gpus = parse_displays(section(facts, "system_profiler").get("SPDisplaysDataType"))
    gpu = next((g for g in gpus if (g.get("vendor") or "").startswith("Apple") or (g.get("chipset") or "").startswith("Apple")), None)
    name = f"The {gpu['chipset'] or gpu['name']} GPU" + (f" ({gpu['cores']} cores)" if gpu.get("cores") else "") if gpu else "The GPU"
    return f"{name} shares this memory (unified memory): tensorflow-metal's allocations count against the same RAM."


def _fix(facts: Facts) -> Remediation:
    if apple_silicon.is_mac(facts):
        silicon = apple_silicon.apple_silicon(facts)
        return Remediation(
            "Free memory before training: quit memory-heavy apps, use smaller batches (and smaller inputs), and "
            "restart the Python process between trainings (the Metal allocator keeps its cache). "
            + ("The GPU shares this RAM, so GPU training needs the same headroom. " if silicon else "")
            + "Watch the pressure level while training.",
            ("memory_pressure", "sysctl vm.swapusage kern.memorystatus_vm_pressure_level"),
            MAC_URL)
    return Remediation("Free memory before training: stop memory-heavy processes, use smaller batches, and restart "
                       "the Python process between trainings.",
                       ("free -h",) if section(facts, "host").get("system") == "Linux" else (), OTHER_URL)


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


@check("memory", "Memory and swap", needs=("memory",), uses=("sysctl", "system_profiler"))
def memory(facts: Facts) -> Outcome:
    """RAM, available memory, swap, macOS memory pressure

    RAM, available memory, swap and macOS memory pressure (the GPU shares this memory on Apple silicon)
    """
    numbers = memory_numbers(facts)
    total, available = numbers["total_bytes"], numbers["available_bytes"]
    swap_used = numbers["swap_used_bytes"]
    pressure = numbers["pressure"]
    if not total:
        return Outcome.skip("total memory was not recorded", **numbers)
    findings = Findings()
    gpu_note = _gpu_note(facts)
    fix = _fix(facts)

    if pressure:
        row = next(r for r in knowledge_rows("macos", "memory_pressure_level") if r["level"] == pressure)
        if row["status"] == "fail":
            findings.fail("macOS reports critical memory pressure", *(filter(None, [gpu_note])), fix=fix)
        elif row["status"] == "warn":
            findings.warn("macOS reports elevated memory pressure (warn)", *(filter(None, [gpu_note])), fix=fix)

    if swap_used is not None:
        share = swap_used / total
        for name in ("swap_used_of_ram_fail", "swap_used_of_ram_warn"):
            row = _threshold(name)
            if share >= row["value"]:
                (findings.fail if row["status"] == "fail" else findings.warn)(
                    f"{gib(swap_used)} swapped out on a {gib(total)} machine ({share:.0%} of RAM)",
                    f"Threshold: {row['value']:.0%} of RAM ({row['rationale']}).", *(filter(None, [gpu_note])), fix=fix)
                break

    if available is not None:
        share = available / total
        for name in ("available_of_ram_fail", "available_of_ram_warn"):
            row = _threshold(name)
            if share < row["value"]:
                (findings.fail if row["status"] == "fail" else findings.warn)(
                    f"Only {gib(available)} of {gib(total)} available ({share:.0%})",
                    f"Threshold: {row['value']:.0%} ({row['rationale']}).", *(filter(None, [gpu_note])), fix=fix)
                break

    parts = [f"{gib(total)} RAM"]
    if available is not None:
        parts.append(f"{gib(available)} available")
    if swap_used is not None:
        parts.append(f"{gib(swap_used)} swap used")
    if pressure:
        parts.append(f"pressure {pressure}")
    ok_details = [gpu_note] if gpu_note else []
    return findings.outcome(", ".join(parts), *ok_details, **numbers)
