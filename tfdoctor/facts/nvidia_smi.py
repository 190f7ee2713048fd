"""NVIDIA facts, parsed: pure functions of the raw outputs the nvidia collector records.

Raw outputs stay in facts["nvidia"] (see tfdoctor/collect/nvidia.py); everything here reads them, so a
saved report can be diagnosed again by newer parsers. Formats are taken from real outputs (the
fixtures in fixtures/linux and fixtures/other hold them verbatim with their public sources):

- `nvidia-smi` table: the header line carries `Driver Version:` and, from driver 410 on,
  `CUDA Version:` (the newest CUDA the loaded libcuda serves, "N/A" when it has none). The column
  layout changed (79 columns before R530, 91 after; `Persistence-M` on Linux, `TCC/WDDM` or
  `Driver-Model` on Windows) and NVIDIA does not promise it stays stable, so values are found by
  regular expressions on labels, never by column positions. Names are truncated with '...'.
- `nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap --format=csv`: full names and
  the compute capability. Drivers before ~R510 reject `compute_cap` (exit 2, 'Field "compute_cap"
  is not a valid field to query.').
- `/proc/driver/nvidia/version`: the kernel module's version ("Kernel Module  384.130" or
  "Open Kernel Module for x86_64  580.95.05"); absent on WSL2, where the driver is Windows' (read by the
  nvidia-driver check alone).

`detected_gpus(facts)` joins the two nvidia-smi outputs into one list; whether an NVIDIA GPU is here at
all (PCI bus, TensorFlow's log) is facts/gpu_evidence.py's question. Readers that one check alone needs
live in it (driver_summary in nvidia-driver).
"""

from __future__ import annotations

import csv
import io
import re
from typing import Any, Mapping, Sequence

from tfdoctor.facts import Facts, section

# The fields asked for, in this order (the order of the real outputs the fixtures hold).
QUERY_FIELDS = ("name", "driver_version", "memory.total", "compute_cap")
QUERY_FIELDS_OLD_DRIVER = ("name", "driver_version", "memory.total")
SMI_TABLE_ARGV = ("nvidia-smi",)


def smi_query_argv(fields: Sequence[str] = QUERY_FIELDS) -> list[str]:
    return ["nvidia-smi", f"--query-gpu={','.join(fields)}", "--format=csv"]



_SMI_VERSION = re.compile(r"NVIDIA-SMI\s+([0-9][0-9.]*)")
_DRIVER_VERSION = re.compile(r"Driver Version:\s*([0-9][0-9.]*)")
_CUDA_VERSION = re.compile(r"CUDA Version:\s*([0-9][0-9.]*|N/A)?")
# "|   0  Tesla T4                       On  |   00000000:00:1E.0 Off |" (Linux, wide)
# "|   0  GeForce GTX 108... WDDM  | 00000000:01:00.0 Off |" (Windows, narrow)
_GPU_ROW = re.compile(
    r"^\|\s*(?P<index>\d+)\s+(?P<name>.+?)\s+(?P<mode>On|Off|WDDM|TCC|MCDM|N/A)\s*\|"
    r"\s*(?P<bus>[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-9A-Fa-f])"
)
_MEMORY = re.compile(r"(\d+)\s*MiB\s*/\s*(\d+)\s*MiB")


def parse_smi_table(text: str | None) -> dict[str, Any] | None:
    """The header versions and one entry per GPU row; None when no header is found."""
    if not text:
        return None
    lines = [line.strip() for line in text.splitlines()]
    header = next((line for line in lines if "Driver Version:" in line), None)
    if header is None:
        return None
    driver = _DRIVER_VERSION.search(header)
    smi = _SMI_VERSION.search(header)
    cuda = _CUDA_VERSION.search(header)
    cuda_value = cuda.group(1) if cuda else None
    gpus: list[dict[str, Any]] = []
    for number, line in enumerate(lines):
        row = _GPU_ROW.match(line)
        if not row:
            continue
        name = row.group("name").strip()
        memory = _MEMORY.search(lines[number + 1]) if number + 1 < len(lines) else None
        gpus.append({
            "index": int(row.group("index")),
            "name": name,
            "name_truncated": name.endswith("..."),
            "bus_id": row.group("bus"),
            "memory_used_mib": int(memory.group(1)) if memory else None,
            "memory_total_mib": int(memory.group(2)) if memory else None,
        })
    return {
        "smi_version": smi.group(1) if smi else None,
        "driver_version": driver.group(1) if driver else None,
        "cuda_version": cuda_value if cuda_value and cuda_value != "N/A" else None,
        "gpus": gpus,
    }



_MISSING_VALUES = ("[N/A]", "[Not Supported]", "N/A", "")
_HEADER_NAME = re.compile(r"^\s*([a-z_.]+)")


def _cell(value: str) -> str | None:
    value = value.strip()
    return None if value in _MISSING_VALUES else value


def _mib(value: str | None) -> int | None:
    if value is None:
        return None
    match = re.match(r"^(\d+)", value)
    return int(match.group(1)) if match else None


def parse_smi_query(text: str | None, fields: Sequence[str] = QUERY_FIELDS) -> list[dict[str, Any]]:
    """Rows of `--query-gpu ... --format=csv[,noheader][,nounits]`, keyed by field name.

    With a header ("name, driver_version, memory.total [MiB], compute_cap") the columns are named
    by it, so any field order reads right; without one, `fields` gives the order.
    """
    if not text or not text.strip():
        return []
    rows = [r for r in csv.reader(io.StringIO(text.strip()), skipinitialspace=True) if r]
    if not rows:
        return []
    first = [c.strip() for c in rows[0]]
    if "name" in first or "driver_version" in first or "compute_cap" in first:
        names = [header.group(1) if (header := _HEADER_NAME.match(c)) else "x" for c in first]
        body = rows[1:]
    else:
        names = list(fields)
        body = rows
    parsed = []
    for row in body:
        if len(row) != len(names):
            return []  # an error message, not CSV (e.g. 'Field "compute_cap" is not a valid field')
        values = dict(zip(names, (_cell(c) for c in row)))
        parsed.append({
            "index": int(index) if (index := values.get("index") or "").isdigit() else None,
            "name": values.get("name"),
            "driver_version": values.get("driver_version"),
            "memory_total_mib": _mib(values.get("memory.total")),
            "compute_capability": values.get("compute_cap"),
        })
    return parsed



# nvidia-smi's own messages (fixtures nvidia-smi-driver-not-loaded, -version-mismatch), matched on their stable part.
_SMI_FAILURES = (
    ("driver_not_loaded", re.compile(r"couldn't communicate with the NVIDIA driver", re.I)),
    ("version_mismatch", re.compile(r"Driver/library version mismatch", re.I)),
    ("no_devices", re.compile(r"No devices were found", re.I)),
    ("nvml_missing", re.compile(r"NVML Shared Library Not Found|couldn't find libnvidia-ml", re.I)),
    ("field_unsupported", re.compile(r"is not a valid field to query", re.I)),
)
# nvidia-smi(1) return codes, quoted in Ricks-Lab/gpu-utils#88.
_SMI_EXIT_CODES = {9: "driver_not_loaded", 12: "nvml_missing", 4: "no_permission"}


def command_output(result: Mapping[str, Any] | None) -> str:
    if not isinstance(result, Mapping):  # absent, or a hand-written report's odd value
        return ""
    return "\n".join(part for part in (result.get("stdout"), result.get("stderr")) if part)


def classify_smi(result: Mapping[str, Any] | None) -> str:
    """ok | not_recorded | not_found | timed_out | driver_not_loaded | version_mismatch |
    no_devices | nvml_missing | no_permission | field_unsupported | failed | error."""
    if not result:
        return "not_recorded"
    status = result.get("status")
    if status in ("not_found", "timed_out", "error"):
        return str(status)
    text = command_output(result)
    for kind, pattern in _SMI_FAILURES:
        if pattern.search(text):
            return kind
    if status == "ok":
        return "ok"
    code = result.get("exit_code")
    return _SMI_EXIT_CODES.get(code, "failed") if isinstance(code, int) else "failed"



def detected_gpus(facts: Facts) -> list[dict[str, Any]]:
    """Every NVIDIA GPU nvidia-smi listed: name, driver_version, cuda_version (the driver's newest
    CUDA), compute_capability (None on drivers that cannot report it), memory_mib, index.

    Empty when no NVIDIA GPU was found (or nvidia-smi could not tell: see driver_summary for why).
    The query's rows are preferred (full names, compute capability); the table supplies the CUDA
    version and stands in when the query failed.
    """
    nvidia = section(facts, "nvidia")
    smi = nvidia.get("smi")
    table = parse_smi_table(command_output(smi)) if smi and smi.get("status") == "ok" else None
    query_result = nvidia.get("smi_query") or {}
    query = parse_smi_query(query_result.get("stdout")) if query_result.get("status") == "ok" else []
    table_gpus = (table or {}).get("gpus") or []
    cuda = (table or {}).get("cuda_version")
    table_driver = (table or {}).get("driver_version")
    gpus = []
    if query:
        for position, row in enumerate(query):
            twin = table_gpus[position] if len(table_gpus) == len(query) else {}
            gpus.append({
                "index": row["index"] if row["index"] is not None else twin.get("index", position),
                "name": row["name"] or twin.get("name"),
                "driver_version": row["driver_version"] or table_driver,
                "cuda_version": cuda,
                "compute_capability": row["compute_capability"],
                "memory_mib": row["memory_total_mib"] or twin.get("memory_total_mib"),
            })
        return gpus
    for row in table_gpus:
        gpus.append({
            "index": row["index"],
            "name": row["name"],
            "driver_version": table_driver,
            "cuda_version": cuda,
            "compute_capability": None,
            "memory_mib": row["memory_total_mib"],
        })
    return gpus
