"""The platform, read one way for everyone: the wheel platform of the target interpreter (what pip picks
wheels for), the machine's platform (Apple silicon under Rosetta counts as arm64: the wheels a native
Python would get), whether the interpreter runs under Rosetta, and whether Linux is a WSL guest. Pure functions
of the facts."""

from __future__ import annotations

from typing import Any, Optional

from tfdoctor.facts import Facts, host_system, section

PLATFORMS = {
    ("Darwin", "arm64"): "macos-arm64",
    ("Darwin", "arm64e"): "macos-arm64",
    ("Darwin", "x86_64"): "macos-x86_64",
    ("Linux", "x86_64"): "linux-x86_64",
    ("Linux", "aarch64"): "linux-aarch64",
    ("Linux", "arm64"): "linux-aarch64",
    ("Windows", "AMD64"): "windows-x86_64",
    ("Windows", "x86_64"): "windows-x86_64",
}


def target_machine(facts: Facts) -> str:
    """The target interpreter's machine (platform.machine()), else the host's; '' when neither is recorded."""
    return str(section(facts, "python").get("machine") or section(facts, "host").get("machine") or "")


def wheel_platform(facts: Facts) -> Optional[str]:
    """'macos-arm64' etc.: the OS with the *interpreter's* architecture (what pip picks wheels for)."""
    machine = target_machine(facts)
    return PLATFORMS.get((host_system(facts), machine))


_X86 = ("x86_64", "amd64", "x64", "i686", "i386", "x86")
_ARM = ("aarch64", "arm64", "armv8l", "arm64e")


def rosetta(facts: Facts) -> bool:
    """An x86_64 Python translated by Rosetta on an Apple silicon Mac."""
    python = section(facts, "python")
    if host_system(facts) != "Darwin":
        return False
    if str(python.get("proc_translated")) == "1":
        return True
    machine = str(python.get("machine") or "").lower()
    return machine in _X86 and str(section(facts, "sysctl").get("hw.optional.arm64") or "") == "1"


def machine_platform(facts: Facts) -> str | None:
    """'linux-x86_64', 'linux-aarch64', 'windows-x86_64', 'macos-x86_64', 'macos-arm64', or None
    (an OS or architecture TensorFlow publishes no wheels for). Uses the interpreter's architecture."""
    system = host_system(facts)
    machine = target_machine(facts).lower()
    arch = "x86_64" if machine in _X86 else "arm64" if machine in _ARM else machine
    if system == "Darwin":
        if rosetta(facts):
            return "macos-arm64"
        return {"x86_64": "macos-x86_64", "arm64": "macos-arm64"}.get(arch)
    if system == "Linux":
        return {"x86_64": "linux-x86_64", "arm64": "linux-aarch64"}.get(arch)
    if system == "Windows":
        return "windows-x86_64" if arch == "x86_64" else None
    return None


def detect_wsl(kernel_release: str | None, proc_version: str | None, environ: Any,
               present_paths: Any) -> dict[str, Any] | None:
    """{"version": 1|2|None, "distro", "signals": [...]} for a WSL guest, None otherwise. Pure: the collector
    (collect/system.py, which says why each signal is read) passes what it saw, and wsl_version reads an older
    report's kernel strings with it."""
    kernel = f"{kernel_release or ''} {proc_version or ''}".lower()
    signals: list[str] = []
    version = None
    if "microsoft-standard" in kernel or "wsl2" in kernel:
        version = 2
        signals.append("kernel release names microsoft-standard/WSL2")
    elif "microsoft" in kernel:
        version = 1
        signals.append("kernel release names Microsoft (WSL1 kernel)")
    for name in ("WSL_DISTRO_NAME", "WSL_INTEROP"):
        if name in environ:
            signals.append(f"{name} is set")
    present = list(present_paths)
    signals.extend(f"{path} exists" for path in present)
    if not signals:
        return None
    if version is None and ("WSL_INTEROP" in environ or "/dev/dxg" in present):
        version = 2
    return {"version": version, "distro": environ.get("WSL_DISTRO_NAME"), "signals": signals}
