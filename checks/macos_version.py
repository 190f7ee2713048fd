"""Is this macOS new enough for the installed tensorflow-metal and TensorFlow wheels?

tensorflow-metal needs macOS 12 (0.3.0 and later import a macOS 12 class, so on Big Sur the plugin
fails inside `import tensorflow`), although pip installs its macosx_11_0 wheels there. TensorFlow's
arm64 wheels need macOS 11 (<= 2.9) or 12 (2.10 on). A Python built against a pre-11 SDK sees
macOS 11+ as 10.16 and pip then refuses those wheels.
"""

from __future__ import annotations

from typing import Optional

from tfdoctor.checking.registry import Facts, check
from tfdoctor.facts import apple_silicon, installable_wheels, metal_pairing, section, tensorflow_distributions
from tfdoctor.facts.platform import wheel_platform
from tfdoctor.facts.sw_vers_sysctl import product_version
from tfdoctor.knowledge.versions import release
from tfdoctor.results.findings import Findings
from tfdoctor.results.model import Outcome, Remediation
from tfdoctor.results.repairs import Repair

MACOS_TOO_OLD_URL = "https://github.com/tensorflow/tensorflow/issues/53309"
X86_64_WHEELS_URL = "https://pypi.org/project/tensorflow/2.16.2/#files"
SYSTEM_VERSION_COMPAT_URL = "https://github.com/pypa/pip/issues/11789"


def macos_version(facts: Facts) -> Optional[str]:
    """sw_vers' ProductVersion; else the interpreter's platform.mac_ver() unless it is the 10.16 mask."""
    version = product_version(section(facts, "os").get("sw_vers"))
    if version:
        return version
    mac_ver = section(facts, "python").get("mac_ver")
    return mac_ver if mac_ver and not is_compat_version(mac_ver) else None


def _upgrade_fix(needed: str, metal: Optional[str], url: str = MACOS_TOO_OLD_URL, cannot_load: bool = False) -> Remediation:
    """The OS update is a manual step outside the environment. Inside it, the plan removes a plugin this
    macOS cannot load (`cannot_load`), so TensorFlow works on the CPU until then; a plugin merely below
    Apple's listed minimum may work, so removing it stays a choice in words."""
    return Remediation(
        advice=(f"Upgrade macOS to {needed} or later (System Settings > General > Software Update)"
                + (", or uninstall tensorflow-metal and let TensorFlow use the CPU." if metal else ".")),
        commands=("softwareupdate --list",),
        url=url,
        repairs=(Repair.uninstall("tensorflow-metal", reason=f"tensorflow-metal {metal} needs macOS {needed}: "
                                                             "without it TensorFlow runs on the CPU"),)
        if metal and cannot_load else (),
    )


def is_compat_version(version: Optional[str]) -> bool:
    """10.16 is what Pythons built against a pre-11 SDK see on macOS 11 and later."""
    return release(version)[:2] == (10, 16)


@check("macos-version", "macOS version", needs=("os",), uses=("sysctl", "cpu", "python", "distributions"),
       platforms=("Darwin",))
def macos_version_check(facts: Facts) -> Outcome:
    """macOS is new enough for the installed tensorflow-metal

    macOS is new enough for the installed tensorflow-metal
    """
    version = macos_version(facts)
    if not version:
        return Outcome.skip("the macOS version was not recorded (no sw_vers output)")
    findings = Findings()
    evidence = {"macos": version, "python_mac_ver": section(facts, "python").get("mac_ver")}
    silicon = apple_silicon.apple_silicon(facts)
    platform = wheel_platform(facts)

    metal = tensorflow_distributions.first_version(facts, tensorflow_distributions.METAL)
    if metal:
        row = metal_pairing.metal_release(metal)
        evidence["tensorflow_metal"] = metal
        if row and row["macos_min_hard"] and not installable_wheels.within(version, row["macos_min_hard"], None):
            findings.fail(
                f"tensorflow-metal {metal} cannot load on macOS {version}: it needs macOS {row['macos_min_hard']}",
                "From 0.3.0 the plugin uses MPSGraph classes that macOS 11 lacks, so 'import tensorflow' fails with "
                "'Symbol not found: _OBJC_CLASS_$_MPSGraphCompilationDescriptor'. pip installs it anyway (the "
                "wheels up to 0.5.0 are tagged macosx_11_0).",
                fix=_upgrade_fix(row["macos_min_hard"], metal, cannot_load=True))
        elif row and not installable_wheels.within(version, row["macos_min"], None):
            findings.warn(f"Apple lists macOS {row['macos_min']}+ for tensorflow-metal {metal}; this is macOS {version}",
                          fix=_upgrade_fix(row["macos_min"], metal))
        elif row:
            findings.note(f"tensorflow-metal {metal} needs macOS {row['macos_min']}+ (Apple's table)")
    elif silicon and not installable_wheels.within(version, "12.0", None):
        newest = installable_wheels.newest_installable("macos-arm64", section(facts, "python").get("version"), version)
        findings.warn(
            f"macOS {version} is too old for GPU training: tensorflow-metal needs macOS 12",
            "TensorFlow's own arm64 wheels need macOS 12 from 2.10 on"
            + (f"; the newest this Mac can install is {newest[0]} {newest[1]}." if newest else "."),
            fix=_upgrade_fix("12", None))

    for copy in tensorflow_distributions.tensorflow_copies(facts):
        row = installable_wheels.wheel_for(copy.name, copy.version, platform) if platform else None
        if row and row["macos_min"] and not installable_wheels.within(version, row["macos_min"], None):
            findings.warn(f"{copy.name} {copy.version} wheels are built for macOS {row['macos_min']}+; this is macOS {version}",
                          fix=_upgrade_fix(row["macos_min"], None, row["source"].split()[0]))

    if platform == "macos-x86_64" and silicon is False:
        newest = installable_wheels.newest_installable("macos-x86_64", section(facts, "python").get("version"), version)
        last = max((row["macos_min"] for row in installable_wheels.wheel_rows("macos-x86_64", "tensorflow")), key=release)
        if not installable_wheels.within(version, last, None):
            findings.warn(f"macOS {version} is older than the {last} that TensorFlow's newest x86_64 wheels need",
                          (f"The newest TensorFlow pip offers this Mac is {newest[0]} {newest[1]}." if newest else
                           "pip offers no TensorFlow wheel for this Python on this macOS."),
                          fix=_upgrade_fix(last, None, X86_64_WHEELS_URL))

    mac_ver = section(facts, "python").get("mac_ver")
    if is_compat_version(mac_ver) and release(version)[:1] >= (11,):
        findings.warn(
            f"This Python sees macOS {version} as 10.16 (built against a pre-11 SDK): pip refuses macosx_11_0+ wheels",
            "TensorFlow and tensorflow-metal for Apple silicon are macosx_11_0/12_0 wheels.",
            fix=Remediation(advice="Tell the interpreter the real macOS version (SYSTEM_VERSION_COMPAT=0) while "
                                   "installing, or use a newer Python build.",
                            url=SYSTEM_VERSION_COMPAT_URL,
                            repairs=(Repair.set_env("SYSTEM_VERSION_COMPAT", "0",
                                                    reason="the interpreter then reports the real macOS version, so "
                                                           "pip accepts macosx_11_0+ wheels; set it before installing"),)))

    return findings.outcome(f"macOS {version}", **evidence)
