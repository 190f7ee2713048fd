"""Platform supported by TensorFlow: does a TensorFlow wheel exist for this OS, interpreter
architecture and Python version (and glibc), which is the newest, and is GPU TensorFlow possible here?

Judged from knowledge/linux.toml [[releases]] and [[platform_facts]] (PyPI file lists). It passes when
this setup gets the newest TensorFlow release; warns when it is held back (old Python or glibc, Intel
Mac frozen at 2.16.2, an NVIDIA GPU that native Windows or Linux aarch64 wheels cannot use); fails when
no wheel exists at all (Python too new, 32-bit Python, an architecture without wheels). WSL2 is named.
An x86_64 Python under Rosetta is judged as the Apple silicon Mac it runs on: the architecture check
owns that problem, so it is not reported twice. Without the python section it judges the platform alone.
"""

from __future__ import annotations

from typing import Any, Mapping, Optional

from tfdoctor.checking.registry import check
from tfdoctor.environment.spell import fresh_environment, spelling_for
from tfdoctor.facts import Facts, host_system, is_recorded, knowledge_age, metal_pairing, releases, section
from tfdoctor.facts.nvidia_smi import detected_gpus
from tfdoctor.facts.platform import machine_platform, rosetta
from tfdoctor.facts.tensorflow_build import compare, minor_string, platform_fact, tensorflow_version, wsl_version
from tfdoctor.results.model import Outcome, Remediation
from tfdoctor.results.repairs import Repair

WSL_GUIDE = "https://www.tensorflow.org/install/pip#windows-wsl2"
INSTALL_GUIDE = "https://www.tensorflow.org/install/pip"
LABELS = {
    "linux-x86_64": "Linux x86_64",
    "linux-aarch64": "Linux aarch64",
    "windows-x86_64": "Windows x86_64",
    "macos-x86_64": "macOS x86_64 (Intel)",
    "macos-arm64": "macOS arm64 (Apple silicon)",
}
def releases_for(key: str, python: str | None, glibc: str | None = None) -> list[Mapping[str, Any]]:
    """Per TensorFlow minor, the newest release with a wheel for this platform and Python (and glibc on
    Linux), oldest first (facts/releases.py: the installer check reads the same rows)."""
    return list(releases.tensorflow_minors(key, python, glibc))


def _python_range(rows: list[Mapping[str, Any]]) -> str:
    return f"{rows[-1]['python_min']}-{rows[-1]['python_max']}" if rows else "?"


def _gpu_note(facts: Facts, key: str) -> tuple[str, Outcome | None]:
    """What GPU TensorFlow means here; an outcome when an NVIDIA GPU cannot be used on this platform."""
    gpus = detected_gpus(facts)
    names = ", ".join(sorted({str(g.get("name")) for g in gpus})) or None
    if key == "windows-x86_64":
        last = platform_fact("windows-native-last-gpu")
        installed = tensorflow_version(facts)
        if gpus and installed and compare(minor_string(installed), last) <= 0:
            return f"GPU: TensorFlow {installed} is a CUDA build (native Windows GPU ended at {last})", None
        if gpus:
            return "", Outcome.warn(
                f"native Windows has no GPU TensorFlow after {last}: the {names} will not be used; use WSL2",
                f"TensorFlow {last} was the last release with GPU support on native Windows; 2.11 and later "
                "Windows wheels are CPU-only, and `pip install tensorflow[and-cuda]` does not resolve on Windows "
                f"({platform_fact('windows-and-cuda-unresolvable')} has no Windows wheel).",
                f"The DirectML plugin is paused ({platform_fact('windows-directml-last')}, Python <= 3.10, "
                "TensorFlow 2.10 only).",
                fix=Remediation(
                    "TensorFlow's [and-cuda] extra cannot install on native Windows (nvidia-nccl-cu12 has no "
                    "Windows wheel). Run TensorFlow inside WSL2 (Windows 10 build "
                    f"{platform_fact('wsl-min-windows-build')} or later, NVIDIA driver >= "
                    f"{platform_fact('wsl-min-driver')} on Windows) and install the CUDA build there "
                    "(tensorflow[and-cuda], with the Linux Python's pip inside WSL2); "
                    f"or stay on TensorFlow {last} with CUDA 11.2 and cuDNN 8.1 on Python 3.7-3.10.",
                    ("wsl --install",),
                    WSL_GUIDE,
                ),
                gpus=[g.get("name") for g in gpus],
            )
        return f"GPU: none on native Windows after {last} (WSL2 has CUDA)", None
    if key == "linux-aarch64":
        if gpus:
            return "", Outcome.warn(
                f"Linux aarch64 TensorFlow wheels are CPU-only: the {names} will not be used",
                "The aarch64 tensorflow wheels on PyPI (2.16 on) are built without CUDA even though they declare "
                "the and-cuda extra, which installs the NVIDIA libraries and still gives a CPU-only TensorFlow.",
                fix=Remediation(
                    "Use a TensorFlow build for this GPU: NVIDIA's NGC TensorFlow container, or build TensorFlow "
                    "from source with CUDA.",
                    (),
                    "https://catalog.ngc.nvidia.com/orgs/nvidia/containers/tensorflow",
                ),
                gpus=[g.get("name") for g in gpus],
            )
        return "GPU: the aarch64 wheels are CPU-only", None
    if key == "linux-x86_64":
        if wsl_version(facts) == 1:
            return "GPU: none under WSL1 (CUDA needs WSL2: `wsl --set-version <distro> 2` on Windows)", None
        return "GPU: NVIDIA CUDA through `tensorflow[and-cuda]`", None
    if key == "macos-x86_64":
        return (f"GPU: tensorflow-metal for AMD GPUs ended at {platform_fact('metal-x86_64-last')} "
                f"(Python <= {platform_fact('metal-x86_64-python-max')})"), None
    if key == "macos-arm64":
        return "GPU: Metal through tensorflow-metal", None
    return "", None


def _label(facts: Facts, key: str) -> str:
    label = LABELS[key]
    wsl = wsl_version(facts)
    if wsl:
        label = f"{label} on WSL{wsl}"
    return label


def _python_for_new_environment(key: str, python_max: object) -> str:
    """The Python to suggest for a fresh environment: on Apple silicon no newer than tensorflow-metal
    has wheels for (none for 3.13+), so the advice agrees with the metal-plugin check's."""
    chosen = str(python_max)
    if key == "macos-arm64":
        metal_python = metal_pairing.newest_metal_python()
        if compare(metal_python, chosen) < 0:
            chosen = metal_python
    return chosen


def _nearest_supported(system: Optional[str], machine: str) -> str:
    """Where TensorFlow's own wheels run, from this machine: the same CPU under another OS where one has them."""
    arm64 = machine.lower() in ("arm64", "aarch64")
    if system == "Windows" and arm64:
        return ("TensorFlow publishes no Windows on Arm wheel. WSL2 runs Linux on this ARM64 CPU, and PyPI has Linux "
                "aarch64 TensorFlow wheels: install TensorFlow there (or build it from source).")
    if system == "Linux" and machine.lower().startswith(("armv6", "armv7", "armhf", "arm")) and not arm64:
        return ("This is a 32-bit ARM system; PyPI's Linux ARM wheels of TensorFlow are aarch64 (64-bit): a 64-bit "
                "OS on a 64-bit board runs them (or build TensorFlow from source).")
    return "Use one of those platforms, or build TensorFlow from source."


@check("platform-support", "Platform supported by TensorFlow", needs=("host",),
       uses=("os", "sysctl", "python", "distributions", "installers", "nvidia", "tensorflow"))
def platform_support(facts: Facts) -> Outcome:
    """a TensorFlow wheel exists for this OS, CPU and Python (Intel Macs end at 2.16.2, no native Windows GPU after
    2.10)

    a TensorFlow exists for this OS, CPU architecture and Python (Intel Macs end at 2.16.2, native Windows has no
    GPU after 2.10, WSL2 named, Linux aarch64 CPU-only, glibc floors)
    """
    python = section(facts, "python")
    python_version = minor_string(python.get("version"))
    glibc = section(facts, "os").get("glibc") if host_system(facts) == "Linux" else None
    key = machine_platform(facts)
    # an install is a repair only where no TensorFlow is installed yet: one that is installed stays
    no_tensorflow = is_recorded(facts, "distributions") and tensorflow_version(facts) is None
    machine = python.get("machine") or section(facts, "host").get("machine")
    if python.get("pointer_bits") == 32:
        return Outcome.fail(
            f"32-bit Python {python_version}: TensorFlow publishes 64-bit wheels only",
            fix=Remediation("Install a 64-bit Python and create the environment with it.", (), INSTALL_GUIDE),
            python=python_version, machine=machine,
        )
    if key is None and (not machine or not host_system(facts)):  # a partial report: nothing to judge the wheels by
        return Outcome.skip(f"not recorded: {'the machine' if not machine else 'the operating system'}",
                            python=python_version, machine=machine)
    if key is None:
        return Outcome.fail(
            f"no TensorFlow wheels exist for {host_system(facts) or 'this OS'} on {machine}",
            "PyPI has TensorFlow for Linux x86_64/aarch64, Windows x86_64 and macOS (arm64; x86_64 up to "
            f"{platform_fact('macos-x86_64-last')}).",
            fix=Remediation(_nearest_supported(host_system(facts), str(machine)), (),
                            "https://www.tensorflow.org/install/source"),
            machine=machine,
        )
    label = _label(facts, key)
    everywhere = releases_for(key, None)  # this platform, any Python
    platform_newest = releases.newest_tensorflow(key, None)
    supported = releases_for(key, python_version, glibc)
    newest = releases.newest_tensorflow(key, python_version, glibc)
    gpu_detail, gpu_outcome = _gpu_note(facts, key)
    details = [d for d in (gpu_detail,) if d]
    if rosetta(facts):
        details.append("This interpreter is x86_64 running under Rosetta; judged for the Mac's native arm64 "
                       "(see the architecture check).")
    evidence = {"platform": key, "python": python_version, "glibc": glibc,
                "newest": newest["tf"] if newest else None,
                "newest_release": newest["newest"] if newest else None,
                "wsl": wsl_version(facts)}
    who = f"{label}, Python {python_version}" if python_version else f"{label} (Python not recorded)"
    beyond = knowledge_age.tensorflow_beyond(facts)
    if beyond is not None:
        # its wheels are not in the release table: which Python, glibc or macOS they take is unknown, so nothing
        # here is judged from the table (tensorflow-install gives the knowledge's age); the curated GPU facts of
        # the platform (native Windows, Linux aarch64) still stand
        evidence["beyond_knowledge"] = beyond.installed
        if gpu_outcome is not None:
            return Outcome(gpu_outcome.status, f"{label}: {gpu_outcome.summary}",
                           (*gpu_outcome.details, *details[1:]), gpu_outcome.remediation,
                           {**evidence, **gpu_outcome.evidence})
        return Outcome.ok(f"{who}: TensorFlow {beyond.installed} installed, newer than the release tables (they end "
                          f"at {knowledge_age.tensorflow_end()}): its wheels' Python and platform range are not in "
                          "them", *details, **evidence)
    if newest is None:
        prerelease = [r for r in supported if r["prerelease"]]
        if prerelease:
            return Outcome.warn(
                f"{label}, Python {python_version}: only the pre-release TensorFlow {prerelease[-1]['tf']} has "
                "wheels for this Python",
                *details,
                fix=Remediation(
                    f"Use Python {_python_range(everywhere[:-1] or everywhere)} for a stable TensorFlow, or "
                    "install the pre-release.",
                    (),
                    INSTALL_GUIDE,
                    (Repair.install("tensorflow", pre=True,
                                    reason=f"only the pre-release TensorFlow {prerelease[-1]['tf']} has wheels for "
                                           f"Python {python_version}"),) if no_tensorflow else (),
                ),
                **evidence,
            )
        if glibc and releases.newest_tensorflow(key, python_version):
            return Outcome.fail(
                f"{label}: glibc {glibc} is older than every TensorFlow wheel for Python {python_version} needs",
                *details,
                fix=Remediation("Use a newer Linux distribution (glibc 2.17 or later; 2.27 for TensorFlow 2.21+), "
                                "or a container.", (), INSTALL_GUIDE),
                **evidence,
            )
        stable = [r for r in everywhere if not r["prerelease"]]
        return Outcome.fail(
            f"{label}: no TensorFlow release has wheels for Python {python_version}",
            f"Newest TensorFlow for {label}: {platform_newest['tf'] if platform_newest else '?'} "
            f"(Python {_python_range(stable)}).",
            *details,
            fix=Remediation(
                f"Create an environment with a Python TensorFlow supports ({_python_range(stable)}) and "
                "install TensorFlow there.",
                fresh_environment(spelling_for(facts), _python_for_new_environment(key, stable[-1]["python_max"] if stable else "3.12")),
                INSTALL_GUIDE,
            ),
            **evidence,
        )
    if gpu_outcome is not None:
        return Outcome(gpu_outcome.status, f"{label}: {gpu_outcome.summary}",
                       (*gpu_outcome.details, *details[1:]), gpu_outcome.remediation,
                       {**evidence, **gpu_outcome.evidence})
    summary = f"{who}: TensorFlow up to {newest['tf']}"
    if key == "macos-x86_64":
        last = platform_fact("macos-x86_64-last")
        # the fact bounds the intent: this Python's own last wheel when it ends earlier (Python 3.8: 2.13.1)
        pin, for_python = last, ""
        if python_version and compare(newest["newest"], last) < 0:
            pin, for_python = newest["newest"], f" and for Python {python_version} at {newest['newest']}"
        return Outcome.warn(
            f"{label}: TensorFlow for Intel Macs ended at {last}; later versions fail with "
            "'No matching distribution found'",
            "Mac x86 builds are no longer released as pip packages from TensorFlow 2.17 on.",
            *details,
            fix=Remediation(
                f"Pin TensorFlow {pin} on this Mac (conda-forge builds later versions for osx-64), or use "
                "Linux or an Apple silicon Mac for newer TensorFlow.",
                (),
                INSTALL_GUIDE,
                (Repair.install(f"tensorflow=={pin}", reason=f"TensorFlow's wheels for Intel Macs end at {last}"
                                                            f"{for_python}; a later one is not found"),)
                if no_tensorflow else (),
            ),
            **evidence,
        )
    if platform_newest and compare(newest["tf"], platform_newest["tf"]) < 0:
        if glibc and compare(glibc, platform_newest["glibc_min"]) < 0 and releases_for(key, python_version) != supported:
            reason = (f"TensorFlow {platform_newest['tf']} needs glibc {platform_newest['glibc_min']}; "
                      f"`pip install tensorflow` here quietly installs {newest['tf']}")
            fix = Remediation(f"Use a distribution with glibc {platform_newest['glibc_min']} or later (or a "
                              "container) for newer TensorFlow.", (), INSTALL_GUIDE)
        else:
            reason = (f"TensorFlow {platform_newest['tf']} needs Python {platform_newest['python_min']}-"
                      f"{platform_newest['python_max']}")
            python_for_new = _python_for_new_environment(key, platform_newest["python_max"])
            fix = Remediation(f"Create an environment with Python {python_for_new} for the newest TensorFlow"
                              + (" that the Metal plugin supports." if key == "macos-arm64" else "."),
                              fresh_environment(spelling_for(facts), python_for_new), INSTALL_GUIDE)
        return Outcome.warn(f"{summary} (held back: {reason})", *details, fix=fix, **evidence)
    return Outcome.ok(summary, *details, **evidence)
