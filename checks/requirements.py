"""Requirements: what a team asked of this machine (`[tool.tfdoctor]` in pyproject.toml, `--config`,
`--require-gpu`, `--require-tensorflow`...), judged against the facts.

The requirements are facts themselves (`facts.requirements`, see tfdoctor/diagnosis/config.py), so a saved
report is judged again by `tfdoctor explain`. Without requirements the check skips. Every unmet
requirement is a failure naming what is missing and how to get it: on Apple silicon the
tensorflow-metal that loads into the installed TensorFlow (tfdoctor.facts.metal_pairing), on Linux
with an NVIDIA GPU the CUDA build (`tensorflow[and-cuda]`); what no command can give (a GPU on a
machine without one) is said plainly, with no command.
"""

from __future__ import annotations

from typing import Any, Mapping, Optional

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from tfdoctor.checking.registry import Facts, check
from tfdoctor.facts import host_system, is_recorded, section, tensorflow_child, tensorflow_distributions
from tfdoctor.remedies.arm64 import APPLE_PLUGIN_URL
from tfdoctor.remedies.cuda import cuda_tensorflow
from tfdoctor.results.findings import Findings
from tfdoctor.results.model import Outcome, Remediation
from tfdoctor.results.repairs import Repair

PIP_GUIDE = "https://www.tensorflow.org/install/pip"
GPU_WORDS = {"any": "a GPU", "metal": "a Metal GPU (tensorflow-metal)", "cuda": "an NVIDIA GPU with CUDA"}


@check("requirements", "Team requirements (pre-flight)",
       uses=("requirements", "host", "os", "sysctl", "python", "distributions", "nvidia", "tensorflow"),
       tags=("preflight",))
def requirements(facts: Facts) -> Outcome:
    """what your team asked of this machine (see [requirements](#pre-flight-for-a-team-requirements))

    what the team asked of this machine (`[tool.tfdoctor]` in pyproject.toml, `--config`, `--require-*`): a GPU
    (any, Metal, CUDA), TensorFlow and Python versions, the probe's GFLOPS and GPU speed-up; each unmet one fails
    naming what is missing and how to get it; skipped when nothing is required
    """
    wanted = section(facts, "requirements")
    asked = {k: v for k, v in wanted.items() if k != "source" and v is not None}
    if not asked:
        return Outcome.skip("no requirements set")
    findings = Findings()
    met: list[str] = []
    if wanted.get("tensorflow") is not None:
        _tensorflow(findings, met, facts, str(wanted["tensorflow"]))
    if wanted.get("python") is not None:
        _python(findings, met, facts, str(wanted["python"]))
    if wanted.get("gpu") is not None:
        _gpu(findings, met, facts, str(wanted["gpu"]))
    if wanted.get("min_gflops") is not None:
        _gflops(findings, met, facts, float(wanted["min_gflops"]))
    if wanted.get("min_gpu_speedup") is not None:
        _speedup(findings, met, facts, float(wanted["min_gpu_speedup"]))
    source = wanted.get("source")
    details = [f"requirements from {source}"] if source else []
    return findings.outcome(f"every requirement met: {'; '.join(met)}", *details,
                            required=asked, source=source)


def _specifier(text: str) -> Optional[SpecifierSet]:
    try:
        return SpecifierSet(text)
    except InvalidSpecifier:
        return None


def _matches(specifiers: SpecifierSet, version: str) -> Optional[bool]:
    try:
        return specifiers.contains(Version(version), prereleases=True)
    except InvalidVersion:
        return None


def _tensorflow(findings: Findings, met: list[str], facts: Facts, wanted: str) -> None:
    specifiers = _specifier(wanted)
    if specifiers is None:
        findings.fail(f"TensorFlow{wanted}: not a PEP 440 specifier")
        return
    version = tensorflow_distributions.tensorflow_version(facts) if is_recorded(facts, "distributions") else None
    version = version or section(facts, "tensorflow").get("version")
    fix = _tensorflow_fix(facts, wanted, specifiers)
    if not version:
        findings.fail(f"TensorFlow {wanted} required: TensorFlow is not installed", fix=fix)
        return
    if _matches(specifiers, str(version)) is False:
        findings.fail(f"TensorFlow {wanted} required: {version} is installed", fix=fix)
        return
    met.append(f"TensorFlow {version} ({wanted})")


def _tensorflow_fix(facts: Facts, wanted: str, specifiers: SpecifierSet) -> Remediation:
    """Install 'tensorflow<wanted>' (the installed build's name) when a release known to tfdoctor for this
    Python satisfies it; otherwise no repair (pip would find nothing) and the newest release there is."""
    from tfdoctor.facts import releases

    python = str(section(facts, "python").get("version") or "")
    fitting = [row for row in releases.minor_rows()
               if not row["prerelease"] and _python_in(python, row["python_min"], row["python_max"])]
    satisfiable = any(_matches(specifiers, f"{row['tf']}.{patch}") for row in fitting for patch in range(10))
    if not satisfiable:
        newest = fitting[-1]["tf"] if fitting else None
        return Remediation(f"No TensorFlow release tfdoctor knows of satisfies {wanted}"
                           + (f" on Python {python} (the newest there is {newest})" if newest else "")
                           + ": check the requirement.", (), "https://pypi.org/project/tensorflow/#history")
    distribution = _tf_distribution(facts)
    source = section(facts, "requirements").get("source")
    return Remediation(f"Install a TensorFlow that satisfies {wanted} (pip picks the newest one with a wheel for "
                       "this Python and platform; tensorflow-install then says whether it fits the rest).", (),
                       PIP_GUIDE, (Repair.install(f"{distribution}{wanted}",
                                                  reason=f"the team requires TensorFlow {wanted}"
                                                         + (f" ({source})" if source else "")),))


def _python_in(python: str, low: str, high: str) -> bool:
    """Is Python X.Y.Z within the minor range [low, high] ('3.9' to '3.12')? Unknown: yes."""
    try:
        minor = Version(python).release[:2]
        return Version(low).release[:2] <= minor <= Version(high).release[:2]
    except InvalidVersion:
        return True


def _tf_distribution(facts: Facts) -> str:
    """The installed real build (tensorflow-cpu stays tensorflow-cpu), else plain tensorflow."""
    builds = tensorflow_distributions.real_builds(facts) if is_recorded(facts, "distributions") else []
    return builds[0].name if builds else "tensorflow"


def _python(findings: Findings, met: list[str], facts: Facts, wanted: str) -> None:
    specifiers = _specifier(wanted)
    version = section(facts, "python").get("version")
    if specifiers is None:
        findings.fail(f"Python{wanted}: not a PEP 440 specifier")
    elif not version:
        findings.fail(f"Python {wanted} required: the target interpreter's version was not recorded")
    elif _matches(specifiers, str(version)) is False:
        findings.fail(f"Python {wanted} required: this interpreter is Python {version}",
                      fix=Remediation(f"Create an environment with a Python that satisfies {wanted} and install "
                                      "TensorFlow there (a Python cannot be changed in place).", (), PIP_GUIDE))
    else:
        met.append(f"Python {version} ({wanted})")


def _gpu(findings: Findings, met: list[str], facts: Facts, kind: str) -> None:
    what = GPU_WORDS.get(kind, "a GPU")
    tf = section(facts, "tensorflow")
    if not tf:
        findings.fail(f"{what} required: whether TensorFlow sees one was not recorded (the TensorFlow child did "
                      "not run)")
        return
    if tf.get("status") == "not_installed":
        findings.fail(f"{what} required: TensorFlow is not installed (see tensorflow-install)")
        return
    if not tf.get("imported"):
        findings.fail(f"{what} required: TensorFlow did not import, so it uses no GPU (see tensorflow-import)")
        return
    gpus = tensorflow_child.devices(tf, "GPU")
    system = host_system(facts)
    if gpus and (kind == "any" or (kind == "metal") == (system == "Darwin")):
        names = tensorflow_child.gpu_names(tf) or [str(g.get("name")) for g in gpus]
        met.append(f"GPU: {', '.join(names)}")
        return
    if gpus:
        listed = ", ".join(tensorflow_child.gpu_names(tf) or [str(g.get("name")) for g in gpus])
        findings.fail(f"{what} required: TensorFlow lists {listed}, which is not one",
                      fix=Remediation("Metal GPUs exist only on macOS and CUDA GPUs only on Linux and Windows "
                                      "(WSL2): run the job where that kind of GPU is.", ()))
        return
    summary, fix = _missing_gpu(facts, kind, what)
    findings.fail(summary, fix=fix)


def _missing_gpu(facts: Facts, kind: str, what: str) -> tuple[str, Optional[Remediation]]:
    """TensorFlow lists no GPU: say what would give it one here, or that nothing here can."""
    from tfdoctor.facts.apple_silicon import apple_silicon

    system = host_system(facts)
    if system == "Darwin":
        if kind == "cuda":
            return (f"{what} required: TensorFlow has no CUDA build for macOS",
                    Remediation("Run CUDA jobs on Linux or Windows (WSL2) with an NVIDIA GPU.", ()))
        if apple_silicon(facts) is False:  # an Intel Mac: metal-plugin judges what its GPU can do
            return f"{what} required: TensorFlow lists no GPU (an Intel Mac; see metal-plugin)", None
        return _metal_fix(facts, what)
    from tfdoctor.facts.nvidia_smi import detected_gpus

    nvidia = detected_gpus(facts) if is_recorded(facts, "nvidia") else []
    if kind == "metal":
        return (f"{what} required: Metal GPUs exist only on macOS; this is {system or 'an unknown system'}",
                Remediation("Run the job on a Mac with Apple silicon.", ()))
    if not nvidia and not is_recorded(facts, "nvidia"):  # unprobed: gpu-visible says why none is listed
        return (f"{what} required: TensorFlow lists no GPU (NVIDIA facts not recorded; see gpu-visible)", None)
    if not nvidia:
        return (f"{what} required: TensorFlow lists no GPU (no NVIDIA GPU detected; this machine is CPU-only)",
                Remediation("No command adds a GPU: run this job on a machine with an NVIDIA GPU (Linux, or "
                            "Windows with WSL2).", ()))
    names = ", ".join(str(g.get("name")) for g in nvidia)
    version = tensorflow_distributions.tensorflow_version(facts) if is_recorded(facts, "distributions") else None
    build = _tf_distribution(facts)
    advice = (f"TensorFlow lists no GPU although nvidia-smi lists {names}: install the CUDA build with its "
              "CUDA libraries (the [and-cuda] extra)"
              + (f", replacing {build}, which is CPU-only or another build" if build != "tensorflow" else "")
              + ". nvidia-driver and cuda-build say whether the driver fits it.")
    return (f"{what} required: TensorFlow lists no GPU although nvidia-smi lists {names}",
            Remediation(advice, (), PIP_GUIDE,
                        cuda_tensorflow(facts, f"=={version}" if version else "",
                                        f"the team requires {what}; TensorFlow lists none although nvidia-smi lists "
                                        f"{names}")))


def _metal_fix(facts: Facts, what: str) -> tuple[str, Optional[Remediation]]:
    from tfdoctor.facts import metal_pairing
    from tfdoctor.facts.sw_vers_sysctl import product_version
    from tfdoctor.remedies.arm64 import combo_repairs

    tf_version = tensorflow_distributions.tensorflow_version(facts) if is_recorded(facts, "distributions") else None
    python = section(facts, "python").get("version")
    macos = product_version(section(facts, "os").get("sw_vers"))
    metal = tensorflow_distributions.first_version(facts, "tensorflow-metal") if is_recorded(facts, "distributions") else None
    summary = f"{what} required: TensorFlow lists no GPU" + (
        f" although tensorflow-metal {metal} is installed (see metal-plugin)" if metal else
        ": tensorflow-metal is not installed")
    if metal:
        return summary, None  # metal-plugin and gpu-visible give the fix for a plugin that does not load
    fitting = metal_pairing.metal_for(tf_version, python, macos) if tf_version else None
    if fitting:
        return summary, Remediation(f"Install tensorflow-metal {fitting}, the release that loads into TensorFlow "
                                    f"{tf_version} on this Python.", (), APPLE_PLUGIN_URL,
                                    (Repair.install(f"tensorflow-metal=={fitting}",
                                                    reason=f"the team requires {what}; tensorflow-metal {fitting} is "
                                                           f"the release that loads into TensorFlow {tf_version}"),))
    combo = metal_pairing.gpu_combo(python, macos)
    if combo:
        return summary, Remediation(
            f"No tensorflow-metal loads into TensorFlow {tf_version or '(none installed)'} on this Python: install "
            f"TensorFlow {combo['tf']} with tensorflow-metal {combo['metal']}, the newest pair that loads.", (),
            APPLE_PLUGIN_URL,
            combo_repairs(facts, combo, f"the team requires {what}: no tensorflow-metal loads into TensorFlow "
                                        f"{tf_version or '(none installed)'}, so TensorFlow must move to {combo['tf']}, "
                                        f"the newest release tensorflow-metal {combo['metal']} loads into"))
    return summary, Remediation(f"No tensorflow-metal release has a wheel for Python {python} with a TensorFlow that "
                                "it loads into: create an environment with Python 3.9 to 3.12 for the GPU.", (),
                                APPLE_PLUGIN_URL)


def _probe_sides(facts: Facts) -> tuple[Mapping[str, Any], Optional[str]]:
    """(the probe's sides, why they are missing or None)."""
    tf = section(facts, "tensorflow")
    probe = tf.get("probe") if tf else None
    if not tf:
        return {}, "the TensorFlow child did not run"
    if not tf.get("imported"):
        return {}, "TensorFlow did not import (see tensorflow-import)"
    if not isinstance(probe, Mapping) or probe.get("status") == "skipped":
        reason = (probe or {}).get("reason") if isinstance(probe, Mapping) else None
        return {}, f"the probe did not run ({reason or 'not recorded'}); run without --no-probe"
    return probe.get("sides") or {}, None


def _gflops(findings: Findings, met: list[str], facts: Facts, minimum: float) -> None:
    sides, missing = _probe_sides(facts)
    if missing:
        findings.fail(f"at least {minimum:g} GFLOPS required: not measured: {missing}")
        return
    measured = [(kind, gflops) for kind, side in sides.items()
                if isinstance(gflops := (side or {}).get("gflops_best"), (int, float))]
    best = max(measured, key=lambda item: item[1], default=None)
    if best is None:
        findings.fail(f"at least {minimum:g} GFLOPS required: the probe measured no throughput (see probe)")
    elif best[1] < minimum:
        findings.fail(f"at least {minimum:g} GFLOPS required: the fastest device ({best[0].upper()}) reached "
                      f"{best[1]:.0f} GFLOPS on the probe's float32 matmul")
    else:
        met.append(f"{best[1]:.0f} GFLOPS on the {best[0].upper()} (at least {minimum:g})")


def _speedup(findings: Findings, met: list[str], facts: Facts, minimum: float) -> None:
    sides, missing = _probe_sides(facts)
    if missing:
        findings.fail(f"a GPU speed-up of at least {minimum:g}x required: not measured: {missing}")
        return
    speedup = section(facts, "tensorflow").get("probe", {}).get("speedup")
    if not sides.get("gpu"):
        findings.fail(f"a GPU speed-up of at least {minimum:g}x required: no GPU was timed (TensorFlow lists none; "
                      "see gpu-visible)")
    elif not isinstance(speedup, (int, float)):
        findings.fail(f"a GPU speed-up of at least {minimum:g}x required: the probe recorded no speed-up (see probe)")
    elif speedup < minimum:
        findings.fail(f"a GPU speed-up of at least {minimum:g}x required: the GPU is {speedup:.2f}x the CPU")
    else:
        met.append(f"GPU {speedup:.1f}x the CPU (at least {minimum:g}x)")
