"""GPU visible to TensorFlow: is a GPU expected here, and does TensorFlow list one?

A GPU is expected when tensorflow-metal is installed (macOS) or an NVIDIA GPU is evidenced
(tfdoctor.facts.gpu_evidence.gpu_evidence: nvidia-smi's list, the PCI bus, or the lines TensorFlow logs only
after CUDA showed it a device), or, in a report without NVIDIA facts, the run required one (--require-gpu, the
user's own word for the probe the report lacks). No GPU expected and none listed is a pass: a CPU-only machine is never
blamed. When an expected GPU is missing, the child's log is matched against the "gpu" failure
signatures (harmless noise left out) to say why.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any, Mapping

from tfdoctor.checking.registry import Facts, check
from tfdoctor.environment.pip import installer_for
from tfdoctor.facts import host_system, is_recorded, section, signatures, tensorflow_child
from tfdoctor.remedies.signatures import remediation_for
from tfdoctor.results.model import Outcome, Remediation
from tfdoctor.results.repairs import Repair


@check("gpu-visible", "GPU visible to TensorFlow", needs=("tensorflow",),
       uses=("host", "python", "distributions", "installers", "nvidia", "environment", "requirements"))
def gpu_visible(facts: Facts) -> Outcome:
    """TensorFlow lists the GPU that is expected; a CPU-only machine is never blamed

    TensorFlow lists the GPU that is expected (Metal plugin installed, or an NVIDIA GPU present); a CPU-only machine
    is never blamed; a build the platform's wheels make CPU-only (native Windows after 2.10) is named so, with WSL2;
    the advice names the libraries TensorFlow's log could not load; a Linux CUDA build whose release declares
    `[and-cuda]` but has none of those libraries (and no CUDA on `LD_LIBRARY_PATH`) gets
    `tensorflow[and-cuda]==<installed>` even when its log is silent; no GPU listed in a report without NVIDIA facts
    is a skip (nobody checked), unless the report requires a GPU (`--require-gpu`: the user's word stands in for the
    probe)
    """
    tf = facts["tensorflow"]
    if tf.get("status") == "not_installed":
        return Outcome.skip("TensorFlow is not installed (see tensorflow-install)")
    if not tf.get("imported"):
        return Outcome.skip("TensorFlow did not import (see tensorflow-import)")
    expectation = gpu_expectation(facts)
    if tf.get("devices") is None:
        return _listing_failed(facts, tf, expectation)
    gpus = tensorflow_child.devices(tf, "GPU")
    evidence = {"expected": expectation["expected"], "why": expectation["why"],
                "gpus": [g.get("name") for g in gpus]}
    if gpus:
        names = tensorflow_child.gpu_names(tf)
        what = ", ".join(names) if names else ", ".join(str(g.get("name")) for g in gpus)
        return Outcome.ok(f"{len(gpus)} GPU{'s' if len(gpus) > 1 else ''} visible to TensorFlow: {what}",
                          *[f"device: {g.get('name')}" for g in gpus], **evidence)
    if expectation["expected"] is False:
        return Outcome.ok(f"No GPU expected ({expectation['why']}) and none listed: TensorFlow runs on the CPU",
                          **evidence)
    if expectation["expected"] is None:
        # a pass would claim a health nobody checked (a partial report; a live run always records NVIDIA facts)
        return Outcome.skip(f"No GPU listed: TensorFlow runs on the CPU ({expectation['why']})", **evidence)
    return _expected_but_missing(facts, tf, expectation, evidence)


def gpu_expectation(facts: Facts) -> dict[str, Any]:
    """{'expected': True | False | None (cannot tell), 'why': reason, 'kind': 'metal' | 'nvidia' | None}."""
    from tfdoctor.facts.tensorflow_distributions import first_version

    if host_system(facts) == "Darwin":
        metal = first_version(facts, "tensorflow-metal")
        if metal:
            return {"expected": True, "why": f"tensorflow-metal {metal} is installed", "kind": "metal"}
        return {"expected": False, "why": "tensorflow-metal is not installed", "kind": None}
    from tfdoctor.facts.gpu_evidence import gpu_evidence

    found = gpu_evidence(facts)
    if found["present"]:
        count = len(found["gpus"]) or len(found["pci"]) or len({e.get("name") for e in found["log"]})
        return {"expected": True, "why": found["why"], "kind": "nvidia", "count": count, "source": found["source"]}
    if not is_recorded(facts, "nvidia"):
        required = _required_gpu(facts)
        if required:  # the user's own word stands in for the probe a saved or partial report lacks
            return {"expected": True, "why": required, "kind": "nvidia", "source": "requirements"}
        return {"expected": None, "why": "NVIDIA facts not recorded, so whether a GPU is expected is unknown",
                "kind": None}
    return {"expected": False, "why": "no NVIDIA GPU detected", "kind": None}


def _required_gpu(facts: Facts) -> str | None:
    """Why a GPU is expected where the report required one (--require-gpu, [tool.tfdoctor] require-gpu) and holds
    no NVIDIA facts to say otherwise: a live run's probe outranks it, so a CPU-only machine is never blamed here
    (the requirements check says the machine misses the requirement)."""
    wanted = section(facts, "requirements")
    if wanted.get("gpu") not in ("any", "cuda"):
        return None
    source = wanted.get("source")
    return (f"a {'CUDA ' if wanted['gpu'] == 'cuda' else ''}GPU is required"
            + (f" ({source})" if source else "") + " and no NVIDIA facts were recorded to say there is none")


def _listing_failed(facts: Facts, tf: Mapping[str, Any], expectation: Mapping[str, Any]) -> Outcome:
    if tf.get("status") == "ok" or tensorflow_child.phase_of(tf.get("stage")) != "devices":
        error = (tf.get("errors") or {}).get("devices") or (tf.get("errors") or {}).get("imported")
        if error:
            return Outcome.fail(f"Listing TensorFlow's devices raised {tensorflow_child.short_type(error.get('type'))}: "
                                f"{tensorflow_child.first_line(error.get('message'))}", error=error)
        return Outcome.skip("TensorFlow's devices were not recorded")
    matches = signatures.find(tf, tensorflow_child.installed_names(facts), phases=("import", "gpu"))
    what = f"While listing its devices, TensorFlow {tensorflow_child.fate(tf)}"
    details = [f"stderr: {line}" for line in tensorflow_child.stderr_excerpt(tf)]
    stack = tensorflow_child.stack_line(tf)
    if stack:
        details.insert(0, stack)
    if matches:
        return Outcome.fail(f"{what}: {matches[0].signature.summary}", *details,
                            fix=remediation_for(matches[0], facts), signature=matches[0].signature.id)
    return Outcome.fail(what, *details, fix=_plugin_fix(facts, expectation), stage=tf.get("stage"))


AND_CUDA_ADVICE = ("TensorFlow's Linux CUDA build loads the CUDA libraries of its [and-cuda] extra (nvidia-*-cu12 "
                   "wheels at the versions it pins); install them with TensorFlow kept at its version.")
PIP_GUIDE = "https://www.tensorflow.org/install/pip#linux"


def _and_cuda_missing(facts: Facts) -> tuple[Repair, ...]:
    """`tensorflow[and-cuda]==<installed>` when a Linux CUDA build whose release declares an [and-cuda] extra
    (releases.toml, from its METADATA) has none of those pip libraries installed and no CUDA library
    directory on LD_LIBRARY_PATH: the install that gives TensorFlow the libraries it looks for. () otherwise."""
    from tfdoctor.facts import releases
    from tfdoctor.facts.tensorflow_build import is_cuda_build, tensorflow_distribution, tensorflow_version
    from tfdoctor.remedies.cuda import cuda_tensorflow

    if host_system(facts) != "Linux" or is_cuda_build(facts) is not True:
        return ()
    version = tensorflow_version(facts)
    name = str((tensorflow_distribution(facts) or {}).get("name") or "")
    declares = any(row["distribution"] == name and row["version"] == version and row["platform"] == "linux-x86_64"
                   and row.get("and_cuda") for row in releases.wheels())
    if not declares:
        return ()
    installed = [str(d.get("name", "")) for d in facts.get("distributions") or () if isinstance(d, Mapping)]
    if any(n.startswith("nvidia-") and n.endswith(("-cu11", "-cu12", "-cu13")) for n in installed):
        return ()  # some are there: cuda-build judges which are missing or at the wrong version
    if "cuda" in str((facts.get("environment") or {}).get("LD_LIBRARY_PATH") or "").lower():
        return ()  # a system CUDA on the loader's path: its log, not a missing extra, says what fails
    from tfdoctor.remedies.cuda import pip_cuda_trap

    trap = pip_cuda_trap(version)  # a release that does not find its own pip CUDA libraries gets the one that does
    target = trap["fixed_in"] if trap else version
    return cuda_tensorflow(facts, f"=={target}", f"{name} {version} is a CUDA build with none of its pip CUDA "
                                                 "libraries installed, on a machine with an NVIDIA GPU"
                                                 + (f"; {target} finds them once installed ({trap['source']})"
                                                    if trap else ""))


# TensorFlow's loader says which library it could not open: "Could not load dynamic library 'libcublas.so.12'"
# (dso_loader), and dlerror's "libX.so.N: cannot open shared object file"
_UNLOADED = (re.compile(r"Could not load dynamic library '([^']+)'"),
             re.compile(r"dlerror: ([\w.+-]+\.so[\w.]*): cannot open shared object file"))


def unloaded_libraries(tf: Mapping[str, Any]) -> list[str]:
    """The shared libraries TensorFlow's log says it could not load, in order, once each."""
    text = f"{tf.get('stderr_head') or ''}\n{tf.get('stderr_tail') or ''}"
    return list(dict.fromkeys(m.group(1) for pattern in _UNLOADED for m in pattern.finditer(text)))


WINDOWS_NATIVE_URL = "https://www.tensorflow.org/install/pip#windows-native"


def _windows_cuda_fix(facts: Facts, fix: Remediation) -> Remediation:
    """The signature's advice is Linux's ([and-cuda], LD_LIBRARY_PATH); native Windows finds CUDA and cuDNN through
    PATH, and only up to TensorFlow 2.10 (TensorFlow's Windows guide)."""
    from tfdoctor.facts.tensorflow_build import tensorflow_build

    build = tensorflow_build(facts)
    wanted = (f"CUDA {build['cuda']} and cuDNN {build['cudnn']}" if build.get("cuda") and build.get("cudnn")
              else "the CUDA and cuDNN it was built with")
    return replace(fix, url=WINDOWS_NATIVE_URL, advice=(
        f"On native Windows TensorFlow loads {wanted} from the directories on PATH: install them (TensorFlow's "
        "Windows guide does it with `conda install -c conda-forge cudatoolkit=11.2 cudnn=8.1.0` for 2.10, the last "
        "release with GPU support on native Windows) and open a new terminal. TensorFlow 2.11 and later use the "
        "GPU only under WSL2."))


def _naming_unloaded(fix: Remediation, tf: Mapping[str, Any]) -> Remediation:
    """The advice names what the log says is missing, so the user knows which library (and whose package) to
    look for whatever the installer (issue 29 round 2: a conda-forge build missing libcublas.so.12)."""
    libraries = unloaded_libraries(tf)
    if not libraries:
        return fix
    return replace(fix, advice=f"{fix.advice} TensorFlow's log names what it could not load: "
                               f"{', '.join(libraries)}.".strip())


def _plugin_fix(facts: Facts, expectation: Mapping[str, Any]) -> Remediation | None:
    if expectation.get("kind") != "metal":
        return None
    from tfdoctor.facts.tensorflow_distributions import first_version

    version = first_version(facts, "tensorflow-metal")
    return Remediation("The crash came from a device plugin. Check the metal-plugin verdict; uninstalling the "
                       "plugin confirms it (TensorFlow then runs on the CPU).",
                       repairs=(Repair.uninstall("tensorflow-metal", reason="TensorFlow crashed while listing its "
                                                 "devices with the plugin loaded; without it TensorFlow runs on the CPU"),)
                       if version else ())


def _expected_but_missing(facts: Facts, tf: Mapping[str, Any], expectation: Mapping[str, Any],
                          evidence: dict[str, Any]) -> Outcome:
    base = f"{expectation['why']}, but TensorFlow lists no GPU"  # starts with a tool's name: no capital
    if expectation["kind"] == "nvidia":
        from tfdoctor.facts.gpu_evidence import cuda_visible_devices

        hidden = cuda_visible_devices(facts, int(expectation.get("count") or 0))
        if hidden and hidden["hides_all"]:
            return Outcome.warn(f"{base}: CUDA_VISIBLE_DEVICES={hidden['value']!r} hides every GPU", fix=Remediation(
                "CUDA only shows the GPUs CUDA_VISIBLE_DEVICES lists (by index from 0, or UUID); -1, an empty "
                "value or an index that does not exist hides them all. Unset it or list an existing GPU.",
                repairs=(Repair.unset_env("CUDA_VISIBLE_DEVICES",
                                          reason=f"CUDA_VISIBLE_DEVICES={hidden['value']!r} hides every GPU"),)),
                **evidence)
        from tfdoctor.facts.tensorflow_build import is_cuda_build

        # build_info when the child recorded it, else what the platform's wheels are (issue 29 round 2: a saved
        # report of native Windows >= 2.11, CPU-only, beside an NVIDIA GPU)
        if is_cuda_build(facts) is False:
            from tfdoctor.facts.platform import machine_platform

            where = ("TensorFlow 2.11 and later have no GPU support on native Windows; the platform-support "
                     "check gives the way to the GPU (WSL2)." if host_system(facts) == "Windows" else
                     "PyPI's Linux aarch64 wheels are built without CUDA: NVIDIA's NGC TensorFlow container, or a "
                     "source build with CUDA, uses this GPU." if machine_platform(facts) == "linux-aarch64" else
                     "The cuda-build check names the build to install for this platform.")
            return Outcome.fail(f"{base}: this TensorFlow is a CPU-only build",
                                fix=Remediation(f"This TensorFlow build has no CUDA support at all. {where}"),
                                **evidence)
    and_cuda = _and_cuda_missing(facts) if expectation["kind"] == "nvidia" else ()
    matches = signatures.find(tf, tensorflow_child.installed_names(facts), phases=("gpu",), gpu_expected=True)
    if matches:
        primary = matches[0]
        lines = [f"matched ({primary.where}): {tensorflow_child.first_line(primary.evidence, 300)}"]
        lines += [f"also: {m.signature.summary}" for m in matches[1:]]
        fix = remediation_for(primary, facts)
        if host_system(facts) == "Windows" and primary.signature.diagnosis == "cuda-libs-missing":
            fix = _windows_cuda_fix(facts, fix)
        if and_cuda and not fix.repairs:
            fix = replace(fix, advice=f"{fix.advice} {AND_CUDA_ADVICE}".strip(), repairs=and_cuda)
        fix = _naming_unloaded(fix, tf)
        return Outcome.fail(f"{base}: {primary.signature.summary}", *lines, fix=fix,
                            signature=primary.signature.id, diagnosis=primary.signature.diagnosis, **evidence)
    if and_cuda:
        details = [f"stderr: {line}" for line in tensorflow_child.stderr_excerpt(tf)]
        return Outcome.fail(f"{base}: this CUDA build has none of its pip CUDA libraries (the [and-cuda] extra)",
                            *details, fix=_naming_unloaded(Remediation(AND_CUDA_ADVICE, (), PIP_GUIDE, and_cuda), tf),
                            **evidence)
    details = [f"stderr: {line}" for line in tensorflow_child.stderr_excerpt(tf)]
    if expectation["kind"] == "metal":
        plugins = tf.get("plugins") or []
        loaded = [p for p in plugins if p.get("loaded")]
        details.insert(0, "plugin libraries: " + (", ".join(f"{p.get('path')} (loaded: {p.get('loaded')})"
                                                             for p in plugins) or "none found on sys.path"))
        from tfdoctor.facts.tensorflow_distributions import first_version

        version = first_version(facts, "tensorflow-metal")
        why = ("the plugin library is loaded but registered no device" if loaded
               else "TensorFlow did not load the plugin library")
        return Outcome.fail(f"{base}: {why}", *details, fix=Remediation(
            "The metal-plugin check tells whether this tensorflow-metal fits this TensorFlow, Python and macOS. "
            "If it does, reinstalling the plugin restores a damaged install.",
            repairs=(Repair.reinstall(f"tensorflow-metal=={version}", reason=f"{why[:1].upper()}{why[1:]}: a "
                                      "reinstall restores a damaged plugin"),) if version else ()), **evidence)
    return Outcome.fail(f"{base}, and its log names no reason", *details, fix=Remediation(
        "The nvidia-driver and cuda-build checks cover the driver and the CUDA libraries; TensorFlow's own "
        "log of the GPU search is printed by:",
        (f'{installer_for(facts).python} -c "import tensorflow as tf; print(tf.config.list_physical_devices())"',)),
        **evidence)
