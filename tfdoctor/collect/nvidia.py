"""NVIDIA facts: nvidia-smi (table and CSV query, in parallel, each under a timeout), the kernel
module's /proc/driver/nvidia/version, NVIDIA display devices on the PCI bus, the CUDA libraries that
LD_LIBRARY_PATH puts ahead of the pip-installed ones, and those in the loader cache (ldconfig -p).

nvidia-smi is known to hang when the driver is wedged (Xid 79, no persistence daemon): run_command
kills it (and its process group) at the timeout and records status "timed_out"; the doctor goes on.
Outputs are kept raw; tfdoctor/facts/nvidia_smi.py parses them.
"""

from __future__ import annotations

import os
import platform
import re
import shutil
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from tfdoctor.collect.options import CollectOptions
from tfdoctor.facts.nvidia_smi import QUERY_FIELDS, QUERY_FIELDS_OLD_DRIVER, classify_smi, smi_query_argv
from tfdoctor.processes.commands import run_command

# Inside WSL2 the Linux-side nvidia-smi is provided here and was not on PATH on early builds
# (https://github.com/microsoft/WSL/issues/6617).
WSL_SMI = "/usr/lib/wsl/lib/nvidia-smi"
PROC_DRIVER_VERSION = "/proc/driver/nvidia/version"
PCI_DEVICES = "/sys/bus/pci/devices"
NVIDIA_PCI_VENDOR = "0x10de"
# Libraries whose copies on LD_LIBRARY_PATH shadow the pip nvidia-* ones (the loader searches
# LD_LIBRARY_PATH before the wheel's RUNPATH).
CUDA_LIBRARY = re.compile(r"^lib(cuda|cudart|cudnn\w*|cublas\w*|cufft\w*|curand|cusolver\w*|cusparse\w*|"
                          r"nccl|nvrtc\w*|nvJitLink|cupti)\.so(\.[0-9.]+)?$")
MAX_LIBRARIES_PER_DIR = 64


def _smi_executable() -> str:
    if shutil.which("nvidia-smi") is None and os.path.isfile(WSL_SMI):
        return WSL_SMI
    return "nvidia-smi"


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read(4096)
    except OSError:
        return None


LDCONFIG_CANDIDATES = ("/sbin/ldconfig", "/usr/sbin/ldconfig")
_LDCONFIG_LINE = re.compile(r"^\s*(\S+)\s+\(([^)]*)\)\s+=>\s+(\S+)")


def cuda_libraries_in_cache(ldconfig_output: str) -> list[str]:
    """'libcudnn.so.9 (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/libcudnn.so.9' lines of CUDA libraries."""
    found = []
    for line in ldconfig_output.splitlines():
        match = _LDCONFIG_LINE.match(line)
        if match and CUDA_LIBRARY.match(match.group(1)):
            found.append(f"{match.group(1)} => {match.group(3)}")
    return found


def run_ldconfig(timeout: float) -> dict[str, Any]:
    """The loader cache's CUDA libraries: system-wide CUDA (Colab, NGC and tensorflow:*-gpu images) is
    found through it, not through LD_LIBRARY_PATH."""
    executable = shutil.which("ldconfig") or next((p for p in LDCONFIG_CANDIDATES if os.path.isfile(p)), "ldconfig")
    result = run_command([executable, "-p"], timeout)
    return {"status": result["status"], "libraries": cuda_libraries_in_cache(result["stdout"])}


def run_smi(executable: str, timeout: float) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """The plain table and the CSV query, started together so a hang costs one timeout, not two."""
    query_argv = smi_query_argv(QUERY_FIELDS)
    with ThreadPoolExecutor(max_workers=2, thread_name_prefix="nvidia-smi") as pool:
        table_future = pool.submit(run_command, [executable], timeout)
        query_future = pool.submit(run_command, [executable, *query_argv[1:]], timeout)
        table, query = table_future.result(), query_future.result()
    if table["status"] == "not_found":
        return table, None
    if classify_smi(query) == "field_unsupported":
        # Drivers before ~R510 reject compute_cap (exit 2): ask again without it.
        query = run_command([executable, *smi_query_argv(QUERY_FIELDS_OLD_DRIVER)[1:]], timeout)
    return table, query


def nvidia_pci_devices(root: str = PCI_DEVICES) -> list[dict[str, str]] | None:
    """NVIDIA display/3D controllers on the PCI bus (class 0x03xxxx), whether a driver runs or not."""
    try:
        slots = sorted(os.listdir(root))
    except OSError:
        return None
    found = []
    for slot in slots:
        vendor = (_read(os.path.join(root, slot, "vendor")) or "").strip().lower()
        device_class = (_read(os.path.join(root, slot, "class")) or "").strip().lower()
        if vendor == NVIDIA_PCI_VENDOR and device_class.startswith("0x03"):
            device = (_read(os.path.join(root, slot, "device")) or "").strip().lower()
            found.append({"slot": slot, "device": device, "class": device_class})
    return found


def library_dirs(ld_library_path: str | None) -> dict[str, list[str]] | None:
    """CUDA/cuDNN library files in each LD_LIBRARY_PATH directory, in search order."""
    if not ld_library_path:
        return None
    found: dict[str, list[str]] = {}
    for directory in ld_library_path.split(os.pathsep):
        if not directory or directory in found:
            continue
        try:
            names = sorted(n for n in os.listdir(directory) if CUDA_LIBRARY.match(n))
        except OSError:
            names = []
        found[directory] = names[:MAX_LIBRARIES_PER_DIR]
    return found


def collect_nvidia(options: CollectOptions) -> dict[str, Any]:
    system = platform.system()
    if system not in ("Linux", "Windows"):
        return {"nvidia": None}  # no NVIDIA driver for current macOS; nothing to ask
    linux = system == "Linux"
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="ldconfig") as pool:
        ldconfig = pool.submit(run_ldconfig, options.command_timeout) if linux else None
        smi, query = run_smi(_smi_executable(), options.command_timeout)
        cache = ldconfig.result() if ldconfig else None
    return {
        "nvidia": {
            "smi": smi,
            "smi_query": query,
            "proc_driver_version": _read(PROC_DRIVER_VERSION) if linux else None,
            "pci_devices": nvidia_pci_devices() if linux else None,
            "library_dirs": library_dirs(options.variables.get("LD_LIBRARY_PATH")) if linux else None,
            "ldconfig": cache,
        }
    }
