"""Does the target Python run natively on Apple silicon, or as x86_64 under Rosetta 2?

An x86_64 interpreter on an M-series Mac (the Intel Anaconda/Miniconda installer, Intel Homebrew in
/usr/local, a venv made from one, a universal2 Python launched from a Rosetta terminal) gets
x86_64 TensorFlow wheels -- which end at 2.16.2, use AVX that Rosetta did not execute, and have no
Metal plugin after 1.0.0. The only way out is a new native arm64 environment.
"""

from __future__ import annotations

from typing import Optional

from tfdoctor.checking.registry import Facts, check
from tfdoctor.facts import apple_silicon, installable_wheels, mach_o, metal_pairing, section
from tfdoctor.knowledge.versions import release
from tfdoctor.remedies.arm64 import APPLE_PLUGIN_URL, combo_words, native_environment
from tfdoctor.results.model import Outcome, Remediation


def _x86_64_dead_ends() -> str:
    newest_tf = installable_wheels.wheel_rows("macos-x86_64", "tensorflow")
    last = max(newest_tf, key=lambda row: release(row["newest"])) if newest_tf else None
    metal = metal_pairing.newest_x86_64_metal()
    parts = []
    if last:
        parts.append(f"TensorFlow's x86_64 macOS wheels end at {last['newest']} (Python {last['python_min']}-{last['python_max']})")
    if metal:
        parts.append(f"tensorflow-metal's x86_64 wheels end at {metal}")
    return "No longer possible as x86_64: " + "; ".join(parts) + "." if parts else ""


def _origin_detail(origin: dict, archs: list[str] | None) -> list[str]:
    details = []
    if origin["kind"] in ("anaconda", "miniconda"):
        details.append(f"This {origin['label']} install is x86_64: it came from the Intel (x86_64) installer.")
    elif origin["kind"] == "homebrew-intel":
        details.append("/usr/local is Intel Homebrew's prefix; native arm64 Homebrew lives in /opt/homebrew.")
    elif origin["kind"] == "pyenv":
        details.append("This pyenv Python was built for x86_64 (built from a Rosetta shell or with an x86_64 toolchain).")
    if archs:
        if any(mach_o.is_arm64(a) for a in archs):
            details.append(
                f"The executable is universal ({', '.join(archs)}), so something launches it under Rosetta: a Terminal "
                "set to 'Open using Rosetta', an 'arch -x86_64' wrapper, or a translated parent process. "
                "'arch -arm64' runs it natively, but packages installed while it ran as x86_64 are x86_64 builds: "
                "start a fresh environment.")
        else:
            details.append(f"The executable is {', '.join(archs)} only: it can never run natively on Apple silicon.")
    return details


def executable_architectures(facts: Facts) -> Optional[list[str]]:
    record = section(facts, "python").get("executable_macho") or {}
    return mach_o.architectures_from_hex(record.get("header_hex")) if isinstance(record, dict) else None


@check("architecture", "Python runs natively (not under Rosetta)", needs=("host", "python", "sysctl"),
       uses=("os", "cpu", "installers"), platforms=("Darwin",))
def architecture(facts: Facts) -> Outcome:
    """Python runs natively on Apple silicon, not as x86_64 under Rosetta

    the target Python runs natively on Apple silicon, not as x86_64 under Rosetta (asked of that Python itself:
    `sysctl.proc_translated`, `platform.machine()`, its Mach-O header)
    """
    python = section(facts, "python")
    sysctl = section(facts, "sysctl")
    silicon = apple_silicon.apple_silicon(facts)
    machine = apple_silicon.interpreter_machine(facts)
    archs = executable_architectures(facts)
    origin = apple_silicon.python_origin(facts)
    brand = sysctl.get("machdep.cpu.brand_string") or ("this Intel Mac" if silicon is False else "this Apple silicon Mac")
    evidence = {
        "apple_silicon": silicon,
        "hw.optional.arm64": sysctl.get("hw.optional.arm64"),
        "cpu_brand": sysctl.get("machdep.cpu.brand_string"),
        "python_machine": machine or None,
        "proc_translated": python.get("proc_translated"),
        "executable_architectures": archs,
        "python_origin": origin["kind"],
    }
    if silicon is None:
        return Outcome.skip("cannot tell Apple silicon from Intel: hw.optional.arm64, the CPU brand and the "
                            "interpreter's architecture were not recorded", **evidence)
    if silicon is False:
        details = ["Intel Macs run x86_64 natively; there is no Rosetta here."]
        dead_ends = _x86_64_dead_ends()
        if dead_ends:
            details.append(dead_ends)
        label = f"Intel Mac ({brand})" if sysctl.get("machdep.cpu.brand_string") else "Intel Mac"
        return Outcome.ok(f"{label}: x86_64 Python runs natively", *details, **evidence)
    if not machine:
        return Outcome.skip("the target interpreter's architecture (platform.machine()) was not recorded", **evidence)
    if apple_silicon.translated(facts) or machine == "x86_64":
        how = []
        if str(python.get("proc_translated") or "") == "1":
            how.append("sysctl.proc_translated = 1")
        how.append(f"platform.machine() = '{machine}'")
        if sysctl.get("hw.optional.arm64"):
            how.append(f"hw.optional.arm64 = {sysctl.get('hw.optional.arm64')}")
        cpu = sysctl.get("machdep.cpu.brand_string") or "This Mac"
        details = [f"{cpu} is Apple silicon, but {python.get('executable') or 'the target Python'} runs as x86_64 "
                   f"under Rosetta 2 ({'; '.join(how)})."]
        details += _origin_detail(origin, archs)
        details.append("x86_64 TensorFlow builds need AVX, which Rosetta 2 does not advertise: 'import tensorflow' "
                       "typically dies with 'illegal hardware instruction' (on macOS 15 and later it may run, "
                       "or abort in TensorFlow's own CPU check).")
        dead_ends = _x86_64_dead_ends()
        if dead_ends:
            details.append(dead_ends)
        python_version = metal_pairing.newest_metal_python()
        name, commands = native_environment(facts, python_version)
        combo = metal_pairing.gpu_combo(python_version)
        fix = Remediation(
            advice=(f"Create a new environment from a native arm64 Python ({name}) instead of repairing this one: "
                    "pip in an x86_64 interpreter only ever installs x86_64 wheels. In it, install TensorFlow with "
                    "the Metal plugin" + (f": {combo_words(combo)}" if combo else "") + ". If the interpreter is "
                    "universal2, 'arch -arm64 <python>' runs it natively."),
            commands=commands,
            url=APPLE_PLUGIN_URL,
        )
        return Outcome.fail(f"Python runs as x86_64 under Rosetta 2 on {brand}", *details, fix=fix, **evidence)
    details = []
    if archs and len(archs) > 1:
        details.append(f"The executable is universal ({', '.join(archs)}): launched from a Rosetta terminal it would "
                       "run as x86_64.")
    host_machine = section(facts, "host").get("machine")
    if host_machine == "x86_64":
        details.append("tfdoctor itself runs under Rosetta; the target Python does not.")
    label = brand if sysctl.get("machdep.cpu.brand_string") else "Apple silicon"
    return Outcome.ok(f"{label}: Python {python.get('version') or ''} runs natively as {machine}".replace("  ", " "),
                      *details, **evidence)
