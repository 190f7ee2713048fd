"""What the facts say about a Mac and its target interpreter: Apple silicon or Intel, native or
translated by Rosetta 2, which Python distribution. Pure functions of the facts.

Signals and their traps:
* hw.optional.arm64 is 1 on Apple silicon even inside Rosetta; unknown/0 on Intel.
* sysctl.proc_translated is per process: only the target interpreter's own answer counts
  (facts["python"]["proc_translated"]); "1" translated, "0" native, None unknown (Intel: ENOENT).
* platform.machine() of the target: 'x86_64' under Rosetta, 'arm64' native.
* The executable's Mach-O slices say what *can* run (universal2 can run either way).
"""

from __future__ import annotations

from typing import Any, Optional

from tfdoctor.facts import Facts, host_system, section
from tfdoctor.facts.sw_vers_sysctl import product_version, sysctl_flag
from tfdoctor.knowledge.versions import release

ARM64_MACHINES = ("arm64", "aarch64", "arm64e")


def is_mac(facts: Facts) -> bool:
    return host_system(facts) == "Darwin"


def apple_silicon(facts: Facts) -> Optional[bool]:
    """True on Apple silicon, False on an Intel Mac, None when the facts cannot tell."""
    sysctl = section(facts, "sysctl")
    flag = sysctl_flag(sysctl.get("hw.optional.arm64"))
    if flag:
        return True
    brand = str(sysctl.get("machdep.cpu.brand_string") or section(facts, "cpu").get("brand") or "")
    if brand.startswith("Apple"):
        return True
    if "RELEASE_ARM64" in str(section(facts, "host").get("version") or ""):
        return True  # the kernel's build string keeps ARM64 even when asked from a translated shell
    if str(section(facts, "python").get("machine") or "") in ARM64_MACHINES:
        return True  # an arm64 process cannot run on an Intel Mac
    if flag is False or "Intel" in brand:
        return False
    macos = product_version(section(facts, "os").get("sw_vers"))
    if macos and release(macos) < (11,):
        return False  # Apple silicon Macs start with macOS 11
    python = section(facts, "python")
    if "proc_translated" in python and python.get("proc_translated") is None \
            and str(python.get("machine") or "") == "x86_64" and "hw.optional.arm64" in sysctl:
        return False  # sysctl.proc_translated is unknown (ENOENT) only on Intel; under Rosetta it says 1
    return None


def interpreter_machine(facts: Facts) -> str:
    return str(section(facts, "python").get("machine") or "")


def translated(facts: Facts) -> Optional[bool]:
    """Is the target interpreter running under Rosetta 2?"""
    value = section(facts, "python").get("proc_translated")
    if value is not None and str(value).strip() in ("0", "1"):
        return str(value).strip() == "1"
    if apple_silicon(facts) and interpreter_machine(facts) == "x86_64":
        return True  # an x86_64 process on Apple silicon is translated by definition
    if apple_silicon(facts) is False:
        return False
    return None


def _python_paths(facts: Facts) -> str:
    python = section(facts, "python")
    keys = ("executable", "real_executable", "prefix", "base_prefix")
    return " ".join(str(python.get(key) or "") for key in keys)


# (kind, label): substrings of the interpreter's paths, checked in order.
PATH_ORIGINS = (
    ("anaconda", "Anaconda", ("anaconda",)),
    ("miniconda", "Miniconda", ("miniconda",)),
    ("miniforge", "Miniforge/Mambaforge", ("miniforge", "mambaforge")),
    ("homebrew-intel", "Intel Homebrew (/usr/local)", ("/usr/local/Cellar/", "/usr/local/opt/")),
    ("homebrew", "Homebrew (/opt/homebrew)", ("/opt/homebrew/",)),
    ("pyenv", "pyenv", ("/.pyenv/",)),
    ("uv", "uv-managed Python", ("/uv/python/",)),
    ("python.org", "python.org framework build", ("/Library/Frameworks/Python.framework/",)),
    ("xcode", "Xcode / Command Line Tools Python", ("/Library/Developer/CommandLineTools/", "/Applications/Xcode")),
    ("system", "macOS system Python", ("/usr/bin/python",)),
)


def python_origin(facts: Facts) -> dict[str, Any]:
    """Where the target interpreter comes from: {'kind', 'label'} (kind 'unknown' when unclear)."""
    paths = _python_paths(facts)
    banner = str(section(facts, "python").get("sys_version") or "")
    for kind, label, needles in PATH_ORIGINS:
        if any(needle.lower() in paths.lower() for needle in needles):
            return {"kind": kind, "label": label}
    if "Anaconda, Inc." in banner:
        return {"kind": "anaconda", "label": "Anaconda"}
    if "conda-forge" in banner:
        return {"kind": "miniforge", "label": "conda-forge Python"}
    if section(facts, "python").get("conda"):
        return {"kind": "conda", "label": "conda environment"}
    return {"kind": "unknown", "label": "Python"}


CONDA_ORIGINS = ("anaconda", "miniconda", "miniforge", "conda")
