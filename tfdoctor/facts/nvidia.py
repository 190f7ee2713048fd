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

`gpu_evidence(facts)` is the single answer to "is there an NVIDIA GPU here", used by nvidia-driver,
cuda-build and gpu-visible alike: nvidia-smi's list (`detected_gpus`), then the PCI bus, then the lines
TensorFlow logs only after CUDA showed it a device. Readers that one check alone needs live in it
(driver_summary in nvidia-driver, log_findings in cuda-build).
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


# ---------------------------------------------------------------- nvidia-smi table

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


# ---------------------------------------------------------------- --query-gpu CSV

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
        names = [(_HEADER_NAME.match(c) or _HEADER_NAME.match("x")).group(1) for c in first]
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
            "index": int(values["index"]) if (values.get("index") or "").isdigit() else None,
            "name": values.get("name"),
            "driver_version": values.get("driver_version"),
            "memory_total_mib": _mib(values.get("memory.total")),
            "compute_capability": values.get("compute_cap"),
        })
    return parsed


# ---------------------------------------------------------------- what nvidia-smi's failure means

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
    return _SMI_EXIT_CODES.get(result.get("exit_code"), "failed")


# ---------------------------------------------------------------- combined view

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


# ---------------------------------------------------------------- CUDA_VISIBLE_DEVICES

def cuda_visible_devices(facts: Facts, gpu_count: int) -> dict[str, Any] | None:
    """How CUDA_VISIBLE_DEVICES (from the recorded environment) narrows `gpu_count` GPUs.

    None when unset. CUDA reads the list up to the first invalid entry: '-1', '' or an index that
    does not exist hide every GPU from there on (a '1' on a one-GPU machine gives
    CUDA_ERROR_NO_DEVICE, https://github.com/manishsoni1908/Mobilenet-ssd-keras/issues/10). UUID/MIG entries are taken as valid.
    """
    environment = section(facts, "environment")
    if "CUDA_VISIBLE_DEVICES" not in environment:
        return None
    value = str(environment["CUDA_VISIBLE_DEVICES"])
    visible: list[str] = []
    for entry in (e.strip() for e in value.split(",")):
        if not entry:
            break
        if entry.lstrip("-").isdigit():
            if int(entry) < 0 or int(entry) >= gpu_count:
                break
        elif not entry.upper().startswith(("GPU-", "MIG-")):
            break
        visible.append(entry)
    return {"value": value, "visible": visible, "hides_all": gpu_count > 0 and not visible}


# ---------------------------------------------------------------- TensorFlow's GPU log lines

# Both prefix styles of TensorFlow's log lines, mixed in one run in https://github.com/bmaltais/kohya_ss/issues/3320:
#   "2023-10-09 13:36:23.355516: E tensorflow/compiler/xla/stream_executor/cuda/cuda_dnn.cc:9342] "
#   "E0000 00:00:1751448150.986970   10148 cuda_dnn.cc:8579] "
_LOG_PREFIX = re.compile(
    r"^\s*(?:\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d+: [IWEF] \S+:\d+\] "
    r"|[IWEF]\d{4} \d{2}:\d{2}:\d+\.\d+\s+\d+ \S+:\d+\] "
    r"|[IWEF] \S+\.cc:\d+\] )"
)


def strip_log_prefix(line: str) -> str:
    """The message of one TensorFlow log line, without timestamp, level and file:line."""
    return _LOG_PREFIX.sub("", line.rstrip("\r\n"), count=1).strip()


def log_patterns(table: str) -> list[tuple[dict[str, Any], "re.Pattern[str]"]]:
    from tfdoctor.knowledge import rows as knowledge_rows

    return [(row, re.compile(row["pattern"])) for row in knowledge_rows("linux", table)]


def noise_kind(line: str, gpu_expected: bool = True) -> str | None:
    """The id of the harmless-noise pattern this log line matches (knowledge linux.toml [[noise]]),
    or None. Lines marked when = "no_gpu" are noise only when no NVIDIA GPU is expected."""
    message = strip_log_prefix(line)
    for row, pattern in log_patterns("noise"):
        if row.get("when", "always") == "no_gpu" and gpu_expected:
            continue
        if pattern.search(message):
            return str(row["id"])
    return None


# ---------------------------------------------------------------- is an NVIDIA GPU here?

# Lines TensorFlow prints only once CUDA has shown it a device, or while it runs kernels on one: proof of
# an NVIDIA GPU where nvidia-smi is missing or says nothing (containers, WSL2, a broken driver install).
# "Cannot dlopen some GPU libraries" is logged by BaseGPUDeviceFactory::GetValidDeviceIds, which
# CacheDeviceIds calls only after VisibleDeviceCount() > 0 (tensorflow/core/common_runtime/gpu/gpu_device.cc).
# Lines printed with or without a GPU ("Could not find cuda drivers", "failed call to cuInit:
# CUDA_ERROR_NO_DEVICE", "Could not load dynamic library ...") prove nothing and are not here.
_GPU_PROOF_LINES = (
    # (id, what the line says, pattern searched in the message, public source of the real line)
    ("device-created", "it created a GPU device",
     r"Created (?:TensorFlow )?device \(?/job:\S+/device:GPU:\d+ .*?name: (?P<name>[^,]+), "
     r"pci bus id: \S+, compute capability: (?P<cc>\d+\.\d+)",
     "https://github.com/tensorflow/tensorflow/issues/62170"),
    ("device-found", "it found a GPU device", r"Found device \d+ with properties:",
     "https://github.com/tensorflow/tensorflow/issues/45200"),
    # TensorFlow 2.1-2.4 print the device's properties on the line after "Found device ... with properties:"
    ("device-properties", "it found a GPU device",
     r"pciBusID: \S+ name: (?P<name>.+?) computeCapability: (?P<cc>\d+\.\d+)",
     "https://github.com/tensorflow/tensorflow/issues/41132"),
    ("gpu-libraries-not-loaded", "it logged 'Cannot dlopen some GPU libraries'", r"Cannot dlopen some GPU libraries",
     "https://github.com/tensorflow/tensorflow/blob/master/tensorflow/core/common_runtime/gpu/gpu_device.cc"),
    ("gpu-ignored", "it ignored a visible GPU",
     r"Ignoring visible gpu device \(device: \d+, name: (?P<name>[^,]+), pci bus id: \S+, "
     r"compute capability: (?P<cc>\d+\.\d+)\)",
     "https://github.com/tensorflow/tensorflow/issues/36853"),
    ("ptx-jit", "it has no kernels for the GPU's compute capability",
     r"TensorFlow was not built with CUDA kernel binaries compatible with compute capability (?P<cc>\d+\.\d+)",
     "https://github.com/tensorflow/tensorflow/issues/97387"),
    ("kernel-load-failed", "CUDA kernels failed to load on it",
     r"CUDA_ERROR_INVALID_PTX|CUDA_ERROR_UNSUPPORTED_PTX_VERSION|device kernel image is invalid"
     r"|no kernel image is available for execution on the device"
     r"|PTX version [\d.]+ does not support target '(?P<target>sm_\d+a?)'",
     "https://github.com/tensorflow/tensorflow/issues/99592"),
    ("cudnn-loaded", "cuDNN was loaded for it", r"Loaded runtime CuDNN library: [\d.]+ but source was compiled",
     "https://github.com/Kaggle/docker-python/issues/1435"),
    # cuda_diagnostics reports the kernel module's version: the NVIDIA kernel module is loaded, which it
    # only does with an NVIDIA GPU present.
    ("kernel-module-mismatch", "the NVIDIA kernel module is loaded", r"kernel version \S+ does not match DSO version \S+",
     "https://github.com/tensorflow/tensorflow/issues/48722"),
)
_GPU_PROOF = tuple((proof_id, said, re.compile(pattern)) for proof_id, said, pattern, _ in _GPU_PROOF_LINES)


def _tensorflow_texts(tf: Mapping[str, Any]) -> list[str]:
    texts = [tf.get("stderr_head"), tf.get("stderr_tail"), "\n".join(tf.get("notable_lines") or ())]
    exception = tf.get("exception") if isinstance(tf.get("exception"), Mapping) else {}
    texts.append(str(exception.get("message") or ""))
    errors = tf.get("errors") if isinstance(tf.get("errors"), Mapping) else {}
    texts += [str(e.get("message") or "") for e in errors.values() if isinstance(e, Mapping)]
    return [t for t in texts if isinstance(t, str) and t]


def tensorflow_gpu_lines(tf: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The lines of the TensorFlow child's record that prove an NVIDIA GPU: [{"id", "said", "line", "name"?,
    "cc"?}], each distinct line once."""
    found: list[dict[str, Any]] = []
    seen: set[str] = set()
    for text in _tensorflow_texts(tf):
        for raw in text.splitlines():
            message = strip_log_prefix(raw)
            if not message or message in seen:
                continue
            for proof_id, said, pattern in _GPU_PROOF:
                match = pattern.search(message)
                if match:
                    seen.add(message)
                    found.append({"id": proof_id, "said": said, "line": message,
                                  **{k: v.strip() for k, v in match.groupdict().items() if v}})
                    break
    return found


def gpu_evidence(facts: Facts) -> dict[str, Any]:
    """The single answer to "is an NVIDIA GPU here", for every GPU check.

    {"present": bool, "source": "nvidia-smi" | "pci" | "tensorflow-log" | None, "gpus": detected_gpus(facts),
    "pci": PCI devices, "log": tensorflow_gpu_lines, "why": one phrase}. nvidia-smi's list comes first; then
    NVIDIA devices on the PCI bus; then TensorFlow's own log, which proves a GPU that TensorFlow found even
    where nvidia-smi is missing (containers without the utility capability, WSL2 without /usr/lib/wsl/lib on
    PATH) or cannot answer.
    """
    gpus = detected_gpus(facts)
    pci = list(section(facts, "nvidia").get("pci_devices") or ())
    log = tensorflow_gpu_lines(section(facts, "tensorflow"))
    evidence: dict[str, Any] = {"present": True, "gpus": gpus, "pci": pci, "log": log}
    if gpus:
        names = ", ".join(str(g.get("name")) for g in gpus)
        return {**evidence, "source": "nvidia-smi", "why": f"nvidia-smi lists {names}"}
    if pci:
        return {**evidence, "source": "pci",
                "why": f"{len(pci)} NVIDIA GPU{'s' if len(pci) > 1 else ''} on the PCI bus"}
    if log:
        names = sorted({entry["name"] for entry in log if entry.get("name")})
        what = f"an NVIDIA GPU ({', '.join(names)})" if names else "an NVIDIA GPU"
        return {**evidence, "source": "tensorflow-log",
                "why": f"TensorFlow's log shows {what} ({log[0]['said']})"}
    return {**evidence, "present": False, "source": None, "why": "no NVIDIA GPU detected"}
