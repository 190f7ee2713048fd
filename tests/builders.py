"""The builders the tests share (re-exported by tests/conftest.py): a machine's facts in parts (a host, a
Python, distributions, a TensorFlow child result), a fixture's facts, and running one check on them.

Each returns a fresh dict, so a test may change what it gets; module-specific situations are composed from
these in the test modules (tests/test_layout.py keeps any module from declaring these names again)."""

from __future__ import annotations

import copy
from typing import Any, Mapping

from tfdoctor.model import CheckResult
from tfdoctor.registry import Check, all_checks
from tfdoctor.runner import run_check

from tests.fixtures_support import FIXTURES, load_fixture

Facts = dict[str, Any]

__all__ = [
    "CPU", "GPU", "LINUX_HOST", "MAC_SITE", "MAC_USER_SITE", "MAC_VENV", "METAL_100_X86_64_HEX",
    "METAL_120_ARM64_HEX", "UNIVERSAL2_HEX", "check_result", "distribution", "fix_text",
    "fixture_facts", "host", "linux", "mac", "site_distribution", "tensorflow_distribution",
    "tensorflow_result",
]


# ------------------------------------------------------------------------------------- fixtures and checks

def fixture_facts(name: str) -> Facts:
    """The facts of fixtures/<name> (e.g. 'linux/nvidia-smi-hangs.json'), a copy of its own."""
    return copy.deepcopy(load_fixture(FIXTURES / name)["facts"])


def check_result(check: str | Check, facts: Mapping[str, Any]) -> CheckResult:
    """One check (a Check or its id) on these facts, as the runner records it."""
    if isinstance(check, str):
        [check] = [c for c in all_checks() if c.id == check]
    return run_check(check, facts)


def fix_text(result: CheckResult) -> str:
    """A result's remediation as one text: advice, commands and link."""
    fix = result.remediation
    return " ".join([fix.advice, *fix.commands, fix.url or ""]) if fix else ""


# --------------------------------------------------------------------------------------- host and Python

def host(system: str = "Linux", machine: str = "x86_64") -> Facts:
    return {"system": system, "machine": machine}


LINUX_HOST = host()

# A virtual environment on a Mac, with the user site of the same Python next to it.
MAC_VENV = "/Users/me/.venvs/tf"
MAC_SITE = f"{MAC_VENV}/lib/python3.11/site-packages"
MAC_USER_SITE = "/Users/me/Library/Python/3.11/lib/python/site-packages"


def mac(machine: str = "arm64", translated: str = "0", version: str = "3.11.7", **python: Any) -> Facts:
    """An Apple M1 on macOS 14.2 running a venv's Python (`python` overrides its fields)."""
    return {
        "host": host("Darwin", machine),
        "os": {"sw_vers": "ProductName:\tmacOS\nProductVersion:\t14.2\n"},
        "sysctl": {"hw.optional.arm64": "1", "machdep.cpu.brand_string": "Apple M1"},
        "python": {"executable": f"{MAC_VENV}/bin/python", "version": version, "machine": machine,
                   "proc_translated": translated, "in_venv": True, "conda": False, "uv_version": None,
                   "prefix": MAC_VENV,
                   "base_prefix": "/opt/homebrew/opt/python@3.11/Frameworks/Python.framework/Versions/3.11",
                   "user_site": MAC_USER_SITE, **python},
        "distributions": [],
        "environment": {},
    }


# The first bytes of real Mach-O files: the Metal plugin built for arm64 (1.2.0) and for x86-64 (1.0.0), and a
# universal2 Python (layouts: Apple's mach-o/loader.h and fat.h).
METAL_120_ARM64_HEX = "cffaedfe0c0000010000000006000000"
METAL_100_X86_64_HEX = "cffaedfe070000010300000006000000"
UNIVERSAL2_HEX = ("cafebabe00000002" "0100000700000003000040000000" "89d00000000e"
                  "0100000c00000000000100000000caec0000000e")


def linux(version: str = "3.11.7") -> Facts:
    """A Linux x86-64 machine running a venv's Python, nothing installed."""
    return {
        "host": host(),
        "python": {"executable": "/srv/venv/bin/python", "version": version, "machine": "x86_64",
                   "proc_translated": None, "in_venv": True, "conda": False, "uv_version": None},
        "distributions": [],
    }


# ------------------------------------------------------------------------------------------ distributions

def distribution(name: str, version: str, **more: Any) -> Facts:
    return {"name": name, "version": version, **more}


def site_distribution(name: str, version: str, location: str = MAC_SITE, **more: Any) -> Facts:
    """A distribution installed in a site-packages folder (the Mac venv's unless told)."""
    return distribution(name, version, location=location, **more)


def tensorflow_distribution(version: str, name: str = "tensorflow", requires=()) -> Facts:
    return distribution(name, version, requires=list(requires), top_level=["tensorflow"])


# ----------------------------------------------------------------------------- the TensorFlow child's record

CPU = {"name": "/physical_device:CPU:0", "device_type": "CPU"}
GPU = {"name": "/physical_device:GPU:0", "device_type": "GPU"}


def tensorflow_result(devices=(CPU,), **changes: Any) -> Facts:
    """The child's record of an import of TensorFlow 2.21.0 (a CUDA build) that worked."""
    tf = {"status": "ok", "imported": True, "stage": "done", "version": "2.21.0", "import_s": 2.0,
          "devices": None if devices is None else list(devices), "gpu_details": [], "metal_lines": [],
          "plugins": [], "stderr_tail": "", "build_info": {"is_cuda_build": True}, "timed_out": False,
          "signal": None}
    tf.update(changes)
    return tf
