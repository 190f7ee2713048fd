"""The builders the tests share (re-exported by tests/conftest.py): a machine's facts in parts (a host, a
Python, distributions, a TensorFlow child result, a TensorFlow 2.21 environment with its dependencies, the
installer's wheels, file integrity, the matmul probe), a fixture's facts, and running one check on them.

Each returns a fresh dict, so a test may change what it gets; module-specific situations are composed from
these in the test modules (tests/project/test_layout.py keeps any module from declaring these names again)."""

from __future__ import annotations

import copy
from typing import Any, Mapping

from tfdoctor.results.model import CheckResult
from tfdoctor.checking.registry import Check, all_checks
from tfdoctor.checking.runner import run_check

from tests.fixtures_support import FIXTURES, load_fixture

Facts = dict[str, Any]

__all__ = [
    "CPU", "ENV_PYTHON", "ENV_SITE", "GPU", "IMPORTED", "LINUX_HOST", "MAC_SITE", "MAC_USER_SITE", "MAC_VENV",
    "METAL_100_X86_64_HEX", "METAL_120_ARM64_HEX", "MISSING_LIB", "TF_221_DEPENDENCIES", "TF_221_REQUIRES",
    "TF_221_WHEEL", "UNIVERSAL2_HEX", "check_result", "distribution", "fix_text", "fixture_facts", "host",
    "installed_wheel", "integrity_facts", "linux", "mac", "marker_environment", "probe_facts", "probe_side",
    "site_distribution", "tensorflow_distribution", "tensorflow_environment", "tensorflow_result",
    "verified_distribution",
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


# ----------------------------------------------------------------------------- a TensorFlow 2.21 environment

ENV_PYTHON = "/env/bin/python"
ENV_SITE = "/env/lib/python3.11/site-packages"

# tensorflow-cpu 2.21.0's Requires-Dist, a part of it, as written in its METADATA (the real lines: `.venv`, and
# tests/checks/test_dependencies.py's test of the target collector).
TF_221_REQUIRES = [
    "absl-py>=1.0.0",
    "protobuf<8.0.0,>=6.31.1",
    "keras>=3.12.0",
    "numpy>=1.26.0",
    "h5py<3.15.0,>=3.11.0",
    "ml_dtypes<1.0.0,>=0.5.1",
    'nvidia-cublas-cu12<13.0,>=12.5.3.2; extra == "and-cuda"',
    'nvidia-cudnn-cu12<10.0,>=9.3.0.75; extra == "and-cuda"',
    'tensorflow-io-gcs-filesystem>=0.23.1; (sys_platform != "win32" and python_version < "3.13") and extra == "gcs-filesystem"',
]
# Releases inside those pins (what pip installed beside tensorflow-cpu 2.21.0 in `.venv`, absl-py aside).
TF_221_DEPENDENCIES = {"absl-py": "2.1.0", "protobuf": "6.31.1", "keras": "3.15.1", "numpy": "2.4.6",
                       "h5py": "3.14.0", "ml-dtypes": "0.6.0"}

# The TensorFlow child's record of an import that worked, no more (for the checks that only ask whether it did).
IMPORTED = {"status": "ok", "imported": True, "version": "2.21.0", "stage": "done"}


def marker_environment(python: str, system: str = "Linux", machine: str = "x86_64") -> Facts:
    """PEP 508's marker values of a CPython `python` on this system, as the target collector records them."""
    return {"python_version": ".".join(python.split(".")[:2]), "python_full_version": python,
            "sys_platform": {"Linux": "linux", "Darwin": "darwin", "Windows": "win32"}[system],
            "platform_machine": machine, "platform_system": system, "implementation_name": "cpython",
            "platform_python_implementation": "CPython", "os_name": "nt" if system == "Windows" else "posix",
            "platform_release": "", "platform_version": "", "implementation_version": python}


def tensorflow_environment(versions: Mapping[str, str | None] | None = None, *, extra=(), tf_name: str = "tensorflow-cpu",
                           tf_version: str = "2.21.0", requires=TF_221_REQUIRES, python: str = "3.11.7",
                           system: str = "Linux", machine: str = "x86_64", tensorflow: Facts | None = None,
                           integrity: Facts | None = None, with_marker_environment: bool = True) -> Facts:
    """A venv holding TensorFlow (tensorflow-cpu 2.21.0 unless told) and its dependencies at TF_221_DEPENDENCIES,
    `versions` changing them (None: not installed); `extra` distributions beside them."""
    top_level = {"protobuf": ["google"], "ml-dtypes": ["ml_dtypes"]}  # the others import as their own name
    distributions = [{"name": tf_name, "version": tf_version, "location": ENV_SITE, "top_level": ["tensorflow"],
                      "requires": list(requires)}]
    for name, version in {**TF_221_DEPENDENCIES, **(versions or {})}.items():
        if version is not None:
            distributions.append({"name": name, "version": version, "location": ENV_SITE,
                                  "top_level": top_level.get(name, [name.replace("-", "_")])})
    distributions.extend(extra)
    python_facts = {"version": python, "implementation": "CPython", "machine": machine, "executable": ENV_PYTHON,
                    "in_venv": True, "distribution_count": 40}
    if with_marker_environment:
        python_facts["marker_environment"] = marker_environment(python, system, machine)
    facts = {"host": host(system, machine), "python": python_facts, "distributions": distributions}
    if tensorflow is not None:
        facts["tensorflow"] = tensorflow
    if integrity is not None:
        facts["integrity"] = integrity
    return facts


# --------------------------------------------------------------------------- the installer and file integrity

def installed_wheel(name: str, version: str, *tags: str, requires_python: str | None = ">=3.9") -> Facts:
    """A wheel as the target collector records it from the distribution's WHEEL file."""
    return {"name": name, "version": version, "tags": list(tags), "requires_python": requires_python}


TF_221_WHEEL = installed_wheel("tensorflow-cpu", "2.21.0", "cp311-cp311-manylinux_2_27_x86_64")


def integrity_facts(*distributions: Facts, stopped: bool = False) -> Facts:
    """A Linux venv whose install-integrity collector verified these distributions (hashing stopped if told)."""
    return {"host": {"system": "Linux"},
            "python": {"executable": "/venv/bin/python", "in_venv": True, "machine": "x86_64"},
            "integrity": {"budget_s": 0.3, "hash_stopped": stopped, "elapsed_s": 0.2,
                          "distributions": list(distributions)}}


def verified_distribution(name: str, version: str, *problems: Facts, record: bool = True, **counts: Any) -> Facts:
    """One distribution's integrity record: RECORD read, two native libraries hashed, these problems found."""
    found = {"name": name, "version": version, "location": "/venv/lib/python3.11/site-packages",
             "metadata": "dist-info", "installer": "pip", "record": record, "listed": 10, "size_checked": 8,
             "exists_checked": 0, "unverifiable": 2, "outside": 0, "native_files": 2, "native_bytes": 2 << 20,
             "hashed_files": 2, "hashed_bytes": 2 << 20, "problems": list(problems), "problems_total": len(problems)}
    found.update(counts)
    return found


MISSING_LIB = {"path": "tensorflow/libtensorflow_framework.so.2", "problem": "missing", "expected_size": 65222328,
               "size": None}


# ------------------------------------------------------------------------------------------- the matmul probe

def probe_side(kind: str, gflops: float, n: int = 2048, **changes: Any) -> Facts:
    """One device's half of the probe as tfdoctor/child/tf_child.py records it: five blocks of an n x n matmul at
    `gflops`, placed and accurate."""
    seconds = 2.0 * n ** 3 / (gflops * 1e9)
    device = f"/job:localhost/replica:0/task:0/device:{kind}:0"
    values = {"device": f"/{kind}:0", "kind": kind, "n": n, "calls_per_block": 1 if kind == "CPU" else 8,
              "block_s": [seconds] * 5, "blocks": 5, "first_call_s": seconds, "init_call_s": seconds,
              "call_s_median": seconds, "call_s_min": seconds, "call_s_max": seconds,
              "gflops_median": gflops, "gflops_best": gflops, "spread": 0.02,
              "input_device": device, "output_device": device, "placement_ok": True,
              "finite": True, "rel_error": 3e-7, "max_abs_rel_error": 3e-6, "reference_block": 64}
    values.update(changes)
    return values


def probe_facts(gpu: Facts | None, cpu: Facts | None, system: str = "Linux", **tf_changes: Any) -> Facts:
    """A machine whose TensorFlow imported and probed these sides (None: that device is absent)."""
    sides = {k: v for k, v in (("gpu", gpu), ("cpu", cpu)) if v}
    speedup = gpu["gflops_best"] / cpu["gflops_best"] if gpu and cpu and "gflops_best" in gpu else None
    devices = [dict(CPU), dict(GPU)] if gpu else [dict(CPU)]
    tf = {"status": "ok", "imported": True, "stage": "done", "devices": devices, "gpu_details": [],
          "build_info": {"is_cuda_build": system == "Linux"}, "metal_lines": [], "tf32_enabled": False,
          "probe": {"status": "ok", "sides": sides, "speedup": speedup, "cpu": {}}}
    tf.update(tf_changes)
    return {"host": {"system": system}, "tensorflow": tf}
