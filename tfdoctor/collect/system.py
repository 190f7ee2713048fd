"""Facts about the machine that need neither the target interpreter nor TensorFlow."""

from __future__ import annotations

import os
import platform
import re
from typing import Any, Optional

from tfdoctor.collect.options import CollectOptions
from tfdoctor.facts.platform import detect_wsl
from tfdoctor.processes.commands import run_command
from tfdoctor.report.redact import never_recorded, scrub_secrets


def collect_host(options: CollectOptions) -> dict[str, Any]:
    return {
        "host": {
            "system": platform.system(),
            "release": platform.release(),
            "version": platform.version(),
            "machine": platform.machine(),
        }
    }


def _read(path: str, limit: int = 16384) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read(limit)
    except OSError:
        return None


def parse_os_release(text: str) -> dict[str, str]:
    values = {}
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if sep and key.strip() and not key.startswith("#"):
            values[key.strip()] = value.strip().strip('"').strip("'")
    return values


# WSL signals (none is reliable alone): the kernel release ("4.4.0-20150-Microsoft" on WSL1,
# https://github.com/microsoft/DirectML/issues/18; "…-microsoft-standard[-WSL2]" on WSL2,
# https://github.com/microsoft/WSL/issues/5955 and https://github.com/microsoft/WSL/issues/423; custom
# kernels can say anything, https://github.com/sindresorhus/is-wsl/issues/13), environment variables set by
# WSL's init (WSL_INTEROP only on WSL2, https://github.com/ccdmb/predector/issues/29; both can be missing
# under sudo/cron), and files WSL creates (WSLInterop, https://github.com/microsoft/WSL/issues/423, is
# "-late" with systemd, https://github.com/antonbabenko/pre-commit-terraform/issues/871; /dev/dxg is the
# WSL2 GPU device, https://github.com/NVIDIA/nvidia-docker/issues/1410).
WSL_PATHS = (
    "/proc/sys/fs/binfmt_misc/WSLInterop",
    "/proc/sys/fs/binfmt_misc/WSLInterop-late",
    "/run/WSL",
    "/dev/dxg",
    "/usr/lib/wsl/lib/libcuda.so.1",
)


def long_paths_enabled() -> Optional[bool]:
    """Windows: whether paths longer than 260 characters are allowed (the LongPathsEnabled value that
    https://docs.python.org/3/using/windows.html#removing-the-max-path-limitation documents); None when the
    value cannot be read. A missing value means off."""
    try:
        import winreg
    except ImportError:
        return None
    registry: Any = winreg  # typeshed declares winreg's names on Windows only; tests fake the module elsewhere
    try:
        with registry.OpenKey(registry.HKEY_LOCAL_MACHINE, r"SYSTEM\CurrentControlSet\Control\FileSystem") as key:
            value, _ = registry.QueryValueEx(key, "LongPathsEnabled")
    except FileNotFoundError:
        return False
    except OSError:
        return None
    return bool(value)


def collect_os(options: CollectOptions) -> dict[str, Any]:
    system = platform.system()
    facts: dict[str, Any] = {"sw_vers": None, "os_release": None, "proc_version": None, "glibc": None,
                             "windows": None, "wsl": None}
    if system == "Darwin":
        sw_vers = run_command(["sw_vers"], options.command_timeout)
        facts["sw_vers"] = sw_vers["stdout"] if sw_vers["status"] == "ok" else None
    elif system == "Linux":
        text = _read("/etc/os-release") or _read("/usr/lib/os-release")
        if text:
            keep = ("NAME", "ID", "VERSION_ID", "PRETTY_NAME", "ID_LIKE")
            facts["os_release"] = {k: v for k, v in parse_os_release(text).items() if k in keep}
        facts["proc_version"] = (_read("/proc/version") or "").strip() or None
        libc, version = platform.libc_ver()
        facts["glibc"] = version if libc == "glibc" else None
        facts["wsl"] = detect_wsl(platform.release(), facts["proc_version"], options.variables,
                                  [path for path in WSL_PATHS if os.path.exists(path)])
    elif system == "Windows":
        facts["windows"] = {"release": platform.release(), "version": platform.version(),
                            "edition": getattr(platform, "win32_edition", lambda: None)(),
                            "long_paths_enabled": long_paths_enabled()}
    return {"os": facts}


_FLAGS_LINE = re.compile(r"^(flags|Features)\s*:\s*(.*)$", re.MULTILINE)
_MODEL_LINE = re.compile(r"^model name\s*:\s*(.*)$", re.MULTILINE)


def collect_cpu(options: CollectOptions) -> dict[str, Any]:
    """CPU brand and ISA flags. /proc/cpuinfo is read directly on Linux (under a millisecond);
    py-cpuinfo (about a second, it spawns helpers) only where nothing faster exists."""
    import psutil

    cpu: dict[str, Any] = {
        "brand": None,
        "flags": None,
        "source": None,
        "logical_cores": psutil.cpu_count(logical=True),
        "physical_cores": psutil.cpu_count(logical=False),
    }
    system = platform.system()
    if system == "Linux":
        text = _read("/proc/cpuinfo", limit=1 << 20)
        if text:
            flags = _FLAGS_LINE.search(text)
            model = _MODEL_LINE.search(text)
            cpu.update(
                brand=model.group(1).strip() if model else None,
                flags=sorted(set(flags.group(2).split())) if flags else None,
                source="/proc/cpuinfo",
            )
    elif system == "Darwin":
        cpu["source"] = "sysctl"  # brand and features come from the sysctl section
    if cpu["source"] is None:
        try:
            import cpuinfo

            info = cpuinfo.get_cpu_info()
            cpu.update(brand=info.get("brand_raw"), flags=sorted(info.get("flags") or []) or None,
                       source="py-cpuinfo")
        except Exception as exc:  # noqa: BLE001 - py-cpuinfo can fail on exotic hosts
            cpu["source"] = f"unavailable: {type(exc).__name__}"
    return {"cpu": cpu}


def collect_memory(options: CollectOptions) -> dict[str, Any]:
    import psutil

    virtual = psutil.virtual_memory()
    swap_total: Optional[int]
    swap_used: Optional[int]
    try:
        swap = psutil.swap_memory()
        swap_total, swap_used = swap.total, swap.used
    except Exception:  # noqa: BLE001 - swap stats are unavailable in some containers
        swap_total = swap_used = None
    return {
        "memory": {
            "total_bytes": virtual.total,
            "available_bytes": virtual.available,
            "swap_total_bytes": swap_total,
            "swap_used_bytes": swap_used,
        }
    }


# Variables that change how TensorFlow, CUDA, Metal, Python and the installers behave.
ENVIRONMENT_PREFIXES = (
    "TF_", "TENSORFLOW_", "CUDA_", "CUDNN_", "NVIDIA_", "XLA_", "MTL_", "METAL_", "PYTHON",
    "CONDA_", "PIP_", "UV_", "VIRTUAL_ENV", "KERAS_", "OMP_", "MKL_", "OPENBLAS_", "DYLD_",
)
ENVIRONMENT_NAMES = ("LD_LIBRARY_PATH", "LD_PRELOAD", "PATH", "SYSTEM_VERSION_COMPAT", "ARCHPREFERENCE",
                     "NO_COLOR", "WSL_DISTRO_NAME", "WSL_INTEROP", "LC_ALL", "LANG")


def select_environment(environ: dict[str, str]) -> dict[str, str]:
    """The allowlisted variables, less those no report may carry (a secret-looking name whatever its
    prefix, Terraform's TF_VAR_*: redact.never_recorded); credentials or token-shaped values inside the
    others (a PIP_INDEX_URL with a password) are never recorded either."""
    return {name: scrub_secrets(environ[name]) for name in sorted(environ)
            if (name in ENVIRONMENT_NAMES or name.startswith(ENVIRONMENT_PREFIXES)) and not never_recorded(name)}


def collect_environment(options: CollectOptions) -> dict[str, Any]:
    return {"environment": select_environment(dict(options.variables))}
