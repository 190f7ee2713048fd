"""CPU instruction set: official x86 TensorFlow wheels are compiled with AVX (TF 1.6 on), and the TF
2.4.0 Linux wheel alone also needs AVX2/BMI2/FMA (knowledge/linux.toml [[cpu_requirements]]). A CPU
without them dies at `import tensorflow` with SIGILL ("Illegal instruction (core dumped)") or TF's own
"compiled to use AVX instructions, but these aren't available" abort.

Flags come from /proc/cpuinfo (Linux), py-cpuinfo (Windows) or sysctl machdep.cpu.features /
leaf7_features (Intel Mac). ARM CPUs (Apple silicon, Linux aarch64) pass: those wheels target the
ARMv8-A baseline. An x86_64 Python under Rosetta fails: Rosetta does not advertise AVX (Apple:
"it doesn't support the execution of ... AVX, AVX2, and AVX512"; on macOS 15+ AVX may execute, but
CPUID still hides it, so TensorFlow's guard aborts) -- the same fix as the architecture check.
"""

from __future__ import annotations

import re
from typing import Any, Iterable

from tfdoctor.checking.registry import check
from tfdoctor.environment.spell import fresh_environment, spelling_for
from tfdoctor.facts import Facts, host_system, section
from tfdoctor.facts.platform import machine_platform, rosetta
from tfdoctor.facts.tensorflow_build import tensorflow_distribution, tensorflow_version
from tfdoctor.knowledge import rows as knowledge_rows
from tfdoctor.results.model import Outcome, Remediation
from tfdoctor.results.repairs import Repair

HARDWARE_GUIDE = "https://www.tensorflow.org/install/pip#hardware_requirements"
# Brands of virtual CPU models that hide host features (Proxmox/QEMU "Common KVM processor", "QEMU
# Virtual CPU"); with the kernel's `hypervisor` flag, a VM whose CPU model can be changed.
_VIRTUAL_BRAND = re.compile(r"\b(KVM|QEMU|Virtual CPU)\b", re.I)
# sysctl names (upper case, "AVX1.0") -> the kernel's flag names.
_SYSCTL_NAMES = {"AVX1.0": "avx", "AVX2": "avx2", "FMA": "fma", "BMI2": "bmi2", "BMI1": "bmi1",
                 "AVX512F": "avx512f"}


def sysctl_flags(features: str | None, leaf7: str | None) -> list[str] | None:
    """Intel Mac: 'FPU VME ... AVX1.0 ...' and 'SMEP ... AVX2 BMI2 ...' -> lower-case kernel names."""
    if not features and not leaf7:
        return None
    flags = set()
    for token in f"{features or ''} {leaf7 or ''}".split():
        flags.add(_SYSCTL_NAMES.get(token.upper(), token.lower()))
    return sorted(flags)


def cpu_flags(facts: Facts) -> tuple[list[str] | None, str | None]:
    cpu = section(facts, "cpu")
    if cpu.get("flags"):
        return [str(f).lower() for f in cpu["flags"]], cpu.get("source")
    sysctl = section(facts, "sysctl")
    flags = sysctl_flags(sysctl.get("machdep.cpu.features"), sysctl.get("machdep.cpu.leaf7_features"))
    return flags, ("sysctl" if flags else cpu.get("source"))


def required_flags(platform: str, tf_version: str | None) -> tuple[list[str], dict[str, Any]]:
    """Flags the installed TensorFlow needs here (AVX for any x86 wheel; more for exact versions)."""
    needed: list[str] = []
    special: dict[str, Any] = {}
    for row in knowledge_rows("linux", "cpu_requirements"):
        if platform not in row["platforms"]:
            continue
        if row["tf_versions"]:
            if tf_version in row["tf_versions"]:
                needed.extend(f for f in row["flags"] if f not in needed)
                special = row
        else:
            needed.extend(f for f in row["flags"] if f not in needed)
    return needed, special


def _virtual_machine(flags: Iterable[str], brand: str | None) -> bool:
    return "hypervisor" in flags or bool(brand and _VIRTUAL_BRAND.search(brand))


@check("cpu-instructions", "CPU instruction set", needs=("host",),
       uses=("sysctl", "cpu", "python", "distributions", "installers", "tensorflow"))
def cpu_instructions(facts: Facts) -> Outcome:
    """the CPU has the instructions the wheel needs (AVX on x86)

    the CPU has the instructions the wheel needs (AVX on x86; Rosetta hides it)
    """
    key = machine_platform(facts)
    brand = section(facts, "cpu").get("brand") or section(facts, "sysctl").get("machdep.cpu.brand_string")
    if rosetta(facts):
        return Outcome.fail(
            "x86_64 Python under Rosetta: Rosetta does not advertise AVX, which x86_64 TensorFlow requires",
            "x86_64 TensorFlow then dies with an illegal instruction or its own 'compiled to use AVX "
            "instructions' abort; a native arm64 Python runs the arm64 wheels.",
            fix=Remediation("Use a native arm64 Python (see the architecture check) and install TensorFlow there.",
                            fresh_environment(spelling_for(facts)), HARDWARE_GUIDE),
            rosetta=True,
        )
    if key in ("macos-arm64", "linux-aarch64"):
        return Outcome.ok(f"ARM CPU ({brand or key}): TensorFlow's {key} wheels need only the ARMv8-A baseline",
                          platform=key)
    if key is None:
        return Outcome.skip("no TensorFlow wheels for this architecture (see platform-support)")
    if not section(facts, "cpu") and not section(facts, "sysctl"):
        return Outcome.skip("not recorded: cpu", missing=["cpu"])
    flags, source = cpu_flags(facts)
    if not flags:
        return Outcome.skip(f"CPU flags unavailable ({source or 'no source'})", platform=key)
    dist = tensorflow_distribution(facts)
    version = tensorflow_version(facts)
    needed, special = required_flags(key, version if dist else None)
    missing = [f for f in needed if f not in flags]
    evidence = {"brand": brand, "source": source, "required": needed, "missing": missing,
                "hypervisor": "hypervisor" in flags, "tensorflow": version if dist else None}
    if not missing:
        extras = [f.upper() for f in ("avx2", "fma", "avx512f") if f in flags]
        return Outcome.ok(
            f"{brand or 'x86_64 CPU'}: AVX present" + (f" (also {', '.join(extras)})" if extras else ""),
            **evidence,
        )
    if special and "avx" in flags:
        return Outcome.fail(
            f"TensorFlow {version} needs {', '.join(m.upper() for m in missing)}, which this CPU lacks",
            f"The {version} Linux wheel contains unguarded Haswell (BMI2/FMA) instructions; "
            f"{special['fixed_in']} fixed it. Importing it crashes with 'Illegal instruction'.",
            fix=Remediation(f"Install TensorFlow {special['fixed_in']} (or any later release).", (), special["source"],
                            (Repair.install(f"{(dist or {}).get('name', 'tensorflow')}=={special['fixed_in']}",
                                            reason=f"TensorFlow {version}'s wheel uses {', '.join(m.upper() for m in missing)}, "
                                                   f"which this CPU lacks; {special['fixed_in']} does not"),)),
            **evidence,
        )
    if _virtual_machine(flags, brand):
        fix = Remediation(
            "This is a virtual machine whose CPU model hides AVX from the guest (e.g. Proxmox/QEMU 'kvm64'). "
            "Set the VM's CPU type to 'host' (or a model that exposes AVX), restart it, and check that 'avx' "
            "appears in the flags line of /proc/cpuinfo.",
            ("grep -o -w avx /proc/cpuinfo | head -1",) if host_system(facts) == "Linux" else (),
            "https://github.com/IBM/MAX-Object-Detector/issues/131",
        )
    else:
        fix = Remediation(
            "Official TensorFlow wheels need a CPU with AVX (most desktop and server CPUs since Intel Sandy "
            "Bridge and AMD Bulldozer, 2011; many Celeron, Pentium and Atom models lack it). Run on a CPU "
            "with AVX, or build TensorFlow from source without AVX.",
            (),
            HARDWARE_GUIDE,
        )
    return Outcome.fail(
        f"{brand or 'this CPU'} has no {', '.join(m.upper() for m in missing)}: official TensorFlow wheels "
        "crash on it ('Illegal instruction')",
        fix=fix,
        **evidence,
    )
