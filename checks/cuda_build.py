"""TensorFlow CUDA build (Linux, including WSL2): is the installed TensorFlow a CUDA build where an NVIDIA
GPU exists, are the CUDA libraries it needs present at the versions it pins, does something shadow
them, and does it ship kernels for this GPU?

Judged from the installed distributions (always), nvidia-smi's GPUs, LD_LIBRARY_PATH's libraries, and,
when the TensorFlow child ran, build_info and the GPU lines of its log (harmless noise is ignored and
only counted). The driver itself is the nvidia-driver check's; an unused GPU on native Windows or Linux
aarch64 is platform-support's.
"""

from __future__ import annotations

import os
import re
from typing import Any, Iterable, Mapping, Optional

from packaging.requirements import InvalidRequirement, Requirement

from tfdoctor.checking.registry import check
from tfdoctor.facts import Facts, canonical_name, installed_version, is_recorded, section
from tfdoctor.facts.build_names import ROCM_BUILDS
from tfdoctor.facts.gpu_evidence import gpu_evidence
from tfdoctor.facts.platform import machine_platform
from tfdoctor.facts.requires_dist import marker_environment
from tfdoctor.facts.tensorflow_build import (
    compare,
    is_cuda_build,
    minor_string,
    tensorflow_build,
    tensorflow_distribution,
    tensorflow_version,
)
from tfdoctor.facts.tensorflow_log import log_patterns, noise_kind, strip_log_prefix
from tfdoctor.knowledge import rows as knowledge_rows
from tfdoctor.knowledge.specifiers import satisfies
from tfdoctor.knowledge.versions import key as version_key, release
from tfdoctor.remedies.cuda import cuda_tensorflow, pip_cuda_trap
from tfdoctor.results.findings import Findings
from tfdoctor.results.model import Outcome, Remediation, Status
from tfdoctor.results.repairs import Repair

PIP_GUIDE = "https://www.tensorflow.org/install/pip#linux"
SOURCE_TABLE = "https://www.tensorflow.org/install/source#gpu"
# Libraries that must come from the pip nvidia-* packages when TensorFlow uses them (libcuda is the
# driver's own and rightly comes from the system).
_SHADOWING = ("libcudnn", "libcublas", "libcudart", "libcufft", "libcusolver", "libcusparse", "libnccl")


def _trap(trap_id: str) -> Mapping[str, Any]:
    return next(r for r in knowledge_rows("linux", "traps") if r["id"] == trap_id)


def _names(gpus: list[dict[str, Any]]) -> str:
    return ", ".join(sorted({str(g.get("name")) for g in gpus}))


def _pip_cuda(facts: Facts) -> list[Mapping[str, Any]]:
    return [d for d in facts.get("distributions") or () if str(d.get("name", "")).startswith("nvidia-")
            and str(d.get("name", "")).endswith(("-cu11", "-cu12", "-cu13"))]


def _and_cuda(facts: Facts, version: str | None, reason: str) -> Repair:
    """The installed CUDA build with its [and-cuda] libraries at the versions it pins (TensorFlow stays, unless
    its wheel cannot find those libraries: then the release that does, said in the reason)."""
    name = canonical_name(str((tensorflow_distribution(facts) or {}).get("name") or "tensorflow"))
    trap = pip_cuda_trap(version)
    if trap:
        version = trap["fixed_in"]
        reason += f"; {version} finds its pip CUDA libraries once installed ({trap['source']})"
    return Repair.install(f"{name}[and-cuda]=={version}" if version else f"{name}[and-cuda]", reason=reason)


def _judge_requirements(facts: Facts, version: str | None, gpu_present: bool, findings: Findings) -> None:
    """The [and-cuda] libraries: present, at the pinned versions; PyTorch's cuDNN pin; 2.16.1's RUNPATH."""
    requirements = [(n, s) for n, s in and_cuda_requirements(facts) if n.startswith("nvidia-")]
    pip_libraries = _pip_cuda(facts)
    trap = pip_cuda_trap(version)
    if trap and pip_libraries:
        findings.fail(
            f"TensorFlow {version} does not find its own pip-installed CUDA libraries: no GPU",
            trap["note"],
            fix=Remediation(f"Install TensorFlow {trap['fixed_in']}, which finds them.", (), trap["source"],
                            cuda_tensorflow(facts, f"=={trap['fixed_in']}",
                                            f"TensorFlow {version} does not find its own pip-installed CUDA "
                                            f"libraries; {trap['fixed_in']} does")),
            trap=trap["id"],
        )
    if not requirements:
        return
    missing, wrong = [], []
    for name, spec in requirements:
        have = installed_version(facts, name)
        if have is None:
            missing.append(name)
        elif spec and satisfies(have, spec) is False:
            wrong.append((name, have, spec))
    if len(missing) == len(requirements):
        if _system_cuda_dirs(facts) or _system_cuda_cache(facts):
            return  # a system/conda CUDA instead: judged by TensorFlow's log, when there is one
        if not _libraries_recorded(facts):
            return  # nothing recorded about the loader's libraries: no verdict (see the summary)
        status = Status.FAIL if gpu_present else Status.WARN
        findings.add(
            status,
            f"TensorFlow {version}'s CUDA libraries (the [and-cuda] extra) are not installed: "
            + ("the GPU will not be used" if gpu_present else "no GPU use is possible"),
            f"Missing: {', '.join(missing)}.",
            fix=Remediation("Install TensorFlow with its CUDA libraries.", (), PIP_GUIDE,
                            (_and_cuda(facts, version, f"TensorFlow {version}'s CUDA libraries are not installed"),)),
            missing=missing,
        )
        return
    if missing or wrong:
        details = [f"{n} {h} installed; TensorFlow {version} wants {s}" for n, h, s in wrong]
        if missing:
            details.append(f"Missing: {', '.join(missing)}.")
        torch = installed_version(facts, "torch")
        trap = _trap("torch-tf-cudnn-pin")
        cudnn_wrong = any(n.startswith("nvidia-cudnn") for n, _, _ in wrong)
        if torch and cudnn_wrong:
            details.append(f"PyTorch {torch} is installed in the same environment: {trap['note']}")
        advice = "Reinstall TensorFlow's pinned CUDA libraries."
        if torch and cudnn_wrong:
            advice += (" PyTorch will then complain about its own cuDNN pin: give TensorFlow and PyTorch separate "
                       "environments.")
        findings.fail(
            f"{len(wrong) + len(missing)} of TensorFlow {version}'s CUDA libraries are missing or at the wrong version",
            *details,
            fix=Remediation(advice, (), PIP_GUIDE,
                            (_and_cuda(facts, version, f"TensorFlow {version}'s pinned CUDA libraries are missing or at "
                                                "the wrong version"),)),
            wrong=[n for n, _, _ in wrong], missing=missing,
        )


def _system_cuda_dirs(facts: Facts) -> dict[str, list[str]]:
    """LD_LIBRARY_PATH directories outside any pip nvidia-* package that hold CUDA user-space libraries."""
    dirs = section(facts, "nvidia").get("library_dirs") or {}
    found = {}
    for directory, names in dirs.items():
        if f"{os.sep}nvidia{os.sep}" in directory and "site-packages" in directory:
            continue
        shadow = [n for n in names if n.startswith(_SHADOWING)]
        if shadow:
            found[directory] = shadow
    return found


def _system_cuda_cache(facts: Facts) -> list[str]:
    """CUDA runtime/cuDNN libraries the loader cache (ldconfig -p) knows, outside pip packages."""
    cache = section(facts, "nvidia").get("ldconfig") or {}
    return [line for line in cache.get("libraries") or ()
            if line.startswith(("libcudnn", "libcudart")) and "site-packages" not in line]


def _libraries_recorded(facts: Facts) -> bool:
    cache = section(facts, "nvidia").get("ldconfig") or {}
    return cache.get("status") == "ok"


def _judge_shadowing(facts: Facts, log: dict[str, list[dict[str, Any]]], build: dict[str, Any],
                     findings: Findings) -> None:
    pip_cudnn = next((d for d in _pip_cuda(facts) if d["name"].startswith("nvidia-cudnn")), None)
    system_dirs = _system_cuda_dirs(facts)
    fix = Remediation(
        "Remove those directories from LD_LIBRARY_PATH (for TensorFlow 2.14+ with the [and-cuda] libraries it "
        "needs none), or put the environment's own library directories first.",
        (), _trap("ld-library-path-shadowing")["source"])
    if pip_cudnn and system_dirs:
        findings.warn(
            "LD_LIBRARY_PATH puts other CUDA libraries ahead of the pip-installed ones TensorFlow pins",
            *(f"{d}: {', '.join(names[:6])}" for d, names in system_dirs.items()),
            _trap("ld-library-path-shadowing")["note"],
            fix=fix, shadowing_dirs=list(system_dirs),
        )
    for signal in (s for s in log["signals"] if s["id"] == "cudnn-version-mismatch"):
        loaded = signal.get("loaded")
        compiled = signal.get("compiled") or build.get("cudnn")
        if pip_cudnn and minor_string(loaded) != minor_string(pip_cudnn["version"]):
            findings.fail(
                f"cuDNN {loaded} was loaded although {pip_cudnn['name']} {pip_cudnn['version']} is installed: "
                "another cuDNN earlier on the loader path shadows it",
                f"TensorFlow said: {signal['line']}",
                _trap("ld-library-path-shadowing")["note"],
                fix=fix, loaded_cudnn=loaded, pip_cudnn=pip_cudnn["version"],
            )
        else:
            version = tensorflow_version(facts)
            findings.fail(
                f"cuDNN {loaded} is older than the cuDNN {compiled} TensorFlow {version} was built with",
                f"TensorFlow said: {signal['line']}",
                "cuDNN needs the same major version and an equal or higher minor version at run time.",
                fix=Remediation(f"Install cuDNN {compiled} or later for TensorFlow (its pinned [and-cuda] "
                                "libraries), and make sure no older cuDNN comes first on LD_LIBRARY_PATH.", (),
                                SOURCE_TABLE, (_and_cuda(facts, version, f"cuDNN {loaded} is older than the cuDNN {compiled} "
                                                                  f"TensorFlow {version} was built with"),)),
                loaded_cudnn=loaded, compiled_cudnn=compiled,
            )


def _judge_missing_libraries(facts: Facts, log: dict[str, list[dict[str, Any]]], build: dict[str, Any],
                             version: str | None, findings: Findings) -> None:
    missing = [s for s in log["signals"] if s["id"] in ("cuda-library-missing", "gpu-libraries-not-loaded",
                                                          "cuda-drivers-not-found")]
    if not missing:
        return
    libraries = sorted({s["library"] for s in missing if s.get("library")})
    if version and compare(version, "2.14") >= 0:
        fix = Remediation("Install TensorFlow's CUDA libraries with its [and-cuda] extra.", (), PIP_GUIDE,
                          (_and_cuda(facts, version, "TensorFlow could not load its CUDA libraries"),))
    else:
        fix = Remediation(
            f"TensorFlow {version or ''} uses a system CUDA: install CUDA {build.get('cuda') or '(see the table)'} "
            f"and cuDNN {build.get('cudnn') or ''} (or use the tensorflow/tensorflow:<version>-gpu container) and "
            "put their library directory on LD_LIBRARY_PATH.", (), SOURCE_TABLE)
    findings.fail(
        "TensorFlow could not load its CUDA libraries, so it registers no GPU"
        + (f": {', '.join(libraries)}" if libraries else ""),
        *(f"TensorFlow said: {s['line']}" for s in missing[:4]),
        fix=fix, libraries=libraries,
    )


def gpu_targets(gpus: list[dict[str, Any]], log: dict[str, list[dict[str, Any]]],
                proof: list[dict[str, Any]]) -> tuple[list[tuple[str, str]], list[str]]:
    """([(GPU name, compute capability)], notes): from nvidia-smi (or a GPU's name), else from the GPUs
    TensorFlow's own log names."""
    notes: list[str] = []
    from_log: set[str] = {s["cc"] for s in log["signals"] if s["id"] in ("ptx-jit", "gpu-below-minimum") and s.get("cc")}
    targets = []
    for gpu in gpus:
        cc, origin = compute_capability(gpu)
        if cc:
            targets.append((str(gpu.get("name")), cc))
            if origin == "name":
                notes.append(f"Compute capability of {gpu.get('name')} taken from its name: {cc}.")
    if not targets:  # no nvidia-smi: the GPUs TensorFlow's own log names
        targets = sorted({(str(line.get("name") or "the GPU"), line["cc"]) for line in proof if line.get("cc")})
        named = {cc for _, cc in targets}
        targets += [("the GPU", cc) for cc in sorted(from_log - named)]
    return targets, notes


# Lines that prove TensorFlow's kernels cannot run on the GPU (not that they might be slow): the driver
# could not JIT its PTX, the kernel image does not fit the device, XLA's PTX cannot target it.
KERNEL_PROOF = ("invalid-ptx", "kernel-image-invalid", "no-kernel-image", "ptx-target-unsupported")


def kernel_proof(tf: Mapping[str, Any], log: dict[str, list[dict[str, Any]]]) -> list[str]:
    """The proof lines of TensorFlow's log, of the error the probe's GPU side raised, and of errors the
    child recorded (the first GPU operation is where a missing kernel shows)."""
    lines = [s["line"] for s in log["signals"] if s["id"] in KERNEL_PROOF]
    gpu_side = ((tf.get("probe") or {}).get("sides") or {}).get("gpu") or {}
    raised = [gpu_side.get("error")] + list((tf.get("errors") or {}).values()) + [tf.get("exception")]
    texts = [f"{e.get('type')}: {e.get('message')}" for e in raised if isinstance(e, Mapping) and e.get("message")]
    for signal in log_findings("\n".join(texts))["signals"]:
        if signal["id"] in KERNEL_PROOF and signal["line"] not in lines:
            lines.append(signal["line"])
    return lines


def cpu_build(facts: Facts, reason: str) -> tuple[str | None, tuple[Repair, ...]]:
    """(name, repairs) that replace the installed CUDA build by the CPU build of the same version, when PyPI
    has one (tensorflow-cpu; a nightly has none now)."""
    from tfdoctor.facts.releases import wheels

    installed = canonical_name(str((tensorflow_distribution(facts) or {}).get("name") or "tensorflow"))
    version = tensorflow_version(facts)
    if not version or not any(r["distribution"] == "tensorflow-cpu" and r["version"] == version
                              and r["platform"] == "linux-x86_64" for r in wheels()):
        return None, ()
    return (f"tensorflow-cpu {version}",
            (Repair.uninstall(installed, reason=f"the CPU build replaces it: {reason}"),
             Repair.install(f"tensorflow-cpu=={version}", reason=reason)))


def _judge_ptxas(log: dict[str, list[dict[str, Any]]], findings: Findings) -> None:
    """The CUDA toolkit's ptxas cannot target the GPU (TensorFlow's log says so): every PTX compile falls back
    to the driver. No command repairs it from here: which toolkit TensorFlow finds is the machine's (PATH, or
    the container's CUDA), so the advice names what must change."""
    lines = [s for s in log["signals"] if s["id"] == "ptxas-too-old"]
    if not lines:
        return
    sm = next((s["sm"] for s in lines if s.get("sm")), None)
    # "/usr/local/cuda-11.0/bin/ptxas ptxas too old": the word before is the ptxas TensorFlow ran (split, not a
    # pattern: an open run before a literal is not linear on hostile text)
    ptxas = next((word for s in lines if " ptxas too old" in s["line"]
                  for word in [s["line"].split(" ptxas too old", 1)[0].rsplit(" ", 1)[-1]] if word.endswith("ptxas")), None)
    target = f"sm_{sm}" if sm else "this GPU's architecture"
    findings.fail(
        f"The CUDA toolkit's ptxas{' (' + ptxas + ')' if ptxas else ''} cannot compile for {target}: TensorFlow "
        "falls back to the driver's compiler for every PTX kernel (slow, and XLA may fail)",
        *(f"TensorFlow said: {s['line']}" for s in lines[:2]),
        fix=Remediation(f"Use a CUDA toolkit whose ptxas knows {target}: put its bin directory first on PATH "
                        "(TensorFlow's own words: 'Modify $PATH to customize ptxas location'), or run a container or "
                        "TensorFlow build with a CUDA newer than this GPU.", (), SOURCE_TABLE),
        ptxas_target=target, ptxas=ptxas,
    )


def _judge_libdevice(facts: Facts, log: dict[str, list[dict[str, Any]]], version: str | None,
                     findings: Findings) -> None:
    """XLA cannot find CUDA's libdevice. A pip TensorFlow 2.14+ searches site-packages/nvidia/cuda_nvcc, which
    its [and-cuda] extra fills (nvidia-cuda-nvcc-cu12); any other build is pointed at a CUDA directory."""
    lines = [s for s in log["signals"] if s["id"] == "libdevice-missing"]
    if not lines:
        return
    nvcc = any(str(d.get("name", "")).startswith("nvidia-cuda-nvcc") for d in facts.get("distributions") or ())
    pip_cuda = bool(version) and compare(version, "2.14") >= 0 and not nvcc
    repairs = (_and_cuda(facts, version, "XLA cannot find CUDA's libdevice; the [and-cuda] extra installs it "
                                         "(nvidia-cuda-nvcc) where TensorFlow looks"),) if pip_cuda else ()
    findings.fail(
        "XLA cannot find CUDA's libdevice, so every XLA-compiled GPU op fails (Keras compiles with XLA on a GPU)",
        *(f"TensorFlow said: {s['line']}" for s in lines[:2]),
        fix=Remediation(("Install TensorFlow's CUDA compiler package with its [and-cuda] extra, or s" if pip_cuda
                         else "S") + "et XLA_FLAGS=--xla_gpu_cuda_data_dir=<a CUDA directory holding "
                        "nvvm/libdevice> before TensorFlow starts (TensorFlow's install guide).", (), PIP_GUIDE,
                        repairs),
    )


# CUDA toolkit libraries whose soname's major is the CUDA major (libcublasLt.so.12 is CUDA 12's); cuDNN's own
# libraries carry cuDNN's major instead
_CUDA_SONAMES = re.compile(r"^lib(?:cublas|cublasLt|cudart|cufft|curand|cusolver|cusparse|nvrtc|nvJitLink)\.so\.(\d+)")


def _judge_cudnn_loads(facts: Facts, log: dict[str, list[dict[str, Any]]], build: Mapping[str, Any],
                       version: str | None, findings: Findings) -> None:
    """cuDNN could not load a library at the first convolution: the driver library by its unversioned name
    (libcuda.so), a CUDA library of another CUDA major than the build's (a CUDA 12 cuBLAS under a CUDA 11
    TensorFlow), or another missing library."""
    lines = [s for s in log["signals"] if s["id"] == "cudnn-could-not-load"]
    if not lines:
        return
    said = [f"TensorFlow said: {s['line']}" for s in lines[:2]]
    first = lines[0]
    missing, library = str(first.get("missing") or ""), str(first.get("library") or "")
    major = _CUDA_SONAMES.match(missing)
    built_for = str(build.get("cuda") or "")
    if missing == "libcuda.so":
        findings.fail(
            f"cuDNN cannot load {library}: it asks for the NVIDIA driver library as libcuda.so, which the loader "
            "does not find",
            *said,
            "The driver installs libcuda.so.1; cuDNN opens the unversioned name, which only a link provides.",
            fix=Remediation("Make the driver library findable under that name: on WSL2 put /usr/lib/wsl/lib first on "
                            "LD_LIBRARY_PATH; elsewhere link libcuda.so to libcuda.so.1 in the driver's library "
                            "directory (for example /usr/lib/x86_64-linux-gnu).", (), SOURCE_TABLE),
            missing=missing, library=library)
    elif major and built_for and major.group(1) != built_for.split(".")[0]:
        findings.fail(
            f"cuDNN asks for {missing}, a CUDA {major.group(1)} library, but TensorFlow {version or ''} is built for "
            f"CUDA {built_for}: the cuDNN (or CUDA) here is another CUDA major's".replace("  ", " "),
            *said,
            fix=Remediation(f"Install the cuDNN {build.get('cudnn') or ''} build for CUDA {built_for.split('.')[0]} that "
                            f"TensorFlow {version or ''} was built with (the tested configurations), and keep other "
                            "CUDA majors' libraries off its loader path.".replace("  ", " "), (), SOURCE_TABLE),
            missing=missing, library=library, build_cuda=built_for)
    else:
        findings.fail(f"cuDNN could not load {library}: {missing} was not found", *said,
                      fix=Remediation("Install the CUDA and cuDNN libraries TensorFlow was built with (the tested "
                                      "configurations) where the loader finds them.", (), SOURCE_TABLE),
                      missing=missing, library=library)


def _from_the_log_alone(facts: Facts) -> Outcome:
    """No distribution list (a partial report): what TensorFlow's own log proves on a GPU host, else a skip."""
    missing = Outcome.skip("not recorded: distributions", missing=["distributions"])
    tf = section(facts, "tensorflow")
    found = gpu_evidence(facts)
    if not tf or not found["present"]:
        return missing
    findings = Findings()
    log = log_findings(tf.get("stderr_tail"), gpu_expected=True)
    _judge_ptxas(log, findings)
    _judge_libdevice(facts, log, None, findings)
    _judge_cudnn_loads(facts, log, {}, None, findings)
    if not findings.problems():
        return missing
    findings.note("The installed distributions were not recorded: judged from TensorFlow's log alone.")
    return findings.outcome("", gpus=[g.get("name") for g in found["gpus"]],
                            gpu_evidence=[entry["line"] for entry in found["log"][:3]])


def _judge_kernel_proof(facts: Facts, tf: Mapping[str, Any], gpus: list[dict[str, Any]],
                        log: dict[str, list[dict[str, Any]]], version: str | None, proof: list[dict[str, Any]],
                        findings: Findings) -> None:
    """What TensorFlow said (or the probe met) proves its kernels cannot run on the GPU: a failure even where
    the kernel table says nothing (a release it does not list, an unknown compute capability) or says they
    should run; the fix is the release with kernels for that compute capability, else the CPU build."""
    lines = kernel_proof(tf, log)
    if not lines or any(f.status is Status.FAIL and f.evidence.get("compute_capability") for f in findings.items):
        return  # nothing proven, or the kernel table already failed this GPU (its lines are shown there)
    targets, _ = gpu_targets(gpus, log, proof)
    label = ", ".join(f"{name} (compute capability {cc})" for name, cc in sorted(set(targets))) or "the GPU"
    said = tuple(f"TensorFlow said: {line}" for line in lines[:2])
    minor = minor_string(version)
    python = str(marker_environment(facts).get("python_version") or "") or None
    build = tensorflow_build(facts)
    # where the table says the installed release has native kernels for the GPU, no other release is known to
    # do better: the CPU build; else the newest release with native kernels for it
    native = [cc for _, cc in targets if build.get("sass") and kernel_support(cc, build["sass"], build.get("ptx")) == "native"]
    releases = {cc: None if native else newest_release_with_kernels(cc, python) for _, cc in targets}
    wanted = [r for r in releases.values() if r and r != minor]
    reason = f"TensorFlow {version} cannot run its kernels on {label}"
    if len(set(wanted)) == 1 and len(wanted) == len(releases) and compare(wanted[0], "2.14") >= 0:
        target: Optional[str] = wanted[0]
        fix = Remediation(f"Move TensorFlow to {target}, the newest release with kernels for {label}.", (),
                          SOURCE_TABLE, cuda_tensorflow(facts, f"=={target}.*",
                                                        f"{reason}; {target} is the newest release with kernels for it"))
    else:
        target = wanted[0] if len(set(wanted)) == 1 else None
        why = (f"TensorFlow {target} has kernels for it, but needs a system CUDA (it predates the [and-cuda] extra)"
               if target else "no TensorFlow release on PyPI is known to have kernels for it")
        name, repairs = cpu_build(facts, f"{reason}; {why}")
        fix = Remediation(f"{why[:1].upper()}{why[1:]}. Run on the CPU with {name or 'the CPU build of TensorFlow'}, "
                          "or use a TensorFlow built for this GPU (NVIDIA's NGC container, or built from source).",
                          (), SOURCE_TABLE, repairs)
    findings.fail(f"TensorFlow {version}'s GPU kernels cannot run on {label}", *said, fix=fix,
                  proof=lines[:4], kernel_release=target)


def _no_release_runs(gpus: list[dict[str, Any]]) -> str | None:
    """The GPUs (all of them, compute capability known) that no TensorFlow release has kernels for, in
    words; None when one of them can run some release."""
    labels = []
    for gpu in gpus:
        cc, _ = compute_capability(gpu)
        if not cc:
            return None
        generation = gpu_generation(cc) or {}
        jit = any(kernel_support(cc, r["sass"], r["ptx"]) == "ptx" for r in knowledge_rows("linux", "tf_cuda"))
        if not generation.get("no_release_kernels") and (newest_release_with_kernels(cc) or jit):
            return None
        labels.append(f"{gpu.get('name')} (compute capability {cc})")
    return ", ".join(sorted(set(labels))) or None


def _judge_architecture(facts: Facts, gpus: list[dict[str, Any]], build: dict[str, Any],
                        log: dict[str, list[dict[str, Any]]], version: str | None,
                        proof: list[dict[str, Any]], findings: Findings) -> list[str]:
    """Kernels for each GPU's compute capability; returns notes on what could not be checked."""
    targets, notes = gpu_targets(gpus, log, proof)
    if not targets and gpus:
        notes.append("Compute capability not reported (the nvidia-smi query was unavailable): kernels not checked.")
    if not build.get("sass"):
        if targets:
            notes.append(f"No kernel list known for TensorFlow {version}: architecture not checked.")
        return notes
    evidence_lines = [s["line"] for s in log["signals"]
                      if s["id"] in ("ptx-jit", "invalid-ptx", "ptx-target-unsupported", "kernel-image-invalid",
                                     "gpu-below-minimum")]
    for name, cc in sorted(set(targets)):
        support = kernel_support(cc, build["sass"], build.get("ptx"))
        generation = gpu_generation(cc) or {}
        label = f"{name} (compute capability {cc}" + (f", {generation['name']}" if generation else "") + ")"
        said = tuple(f"TensorFlow said: {line}" for line in evidence_lines[:2])
        if support == "none":
            older = newest_release_with_kernels(cc)
            repairs: tuple[Repair, ...] = ()
            if older and compare(older, "2.14") >= 0:
                # no TensorFlow from this one on runs the GPU: TensorFlow must move back to get it
                repairs = cuda_tensorflow(facts, f"=={older}.*", f"TensorFlow {version} has no kernels for {label}; "
                                                                 f"{older} is the newest release with kernels for it")
            findings.fail(
                f"{label} is older than every GPU TensorFlow {version} has kernels for (oldest: {build['sass'][0]})",
                *said,
                f"TensorFlow ignores it ('The minimum required Cuda capability is {build['sass'][0]}').",
                fix=Remediation(f"Use a newer GPU, or pin TensorFlow {older}, the newest with kernels for it."
                                if older else "Use a newer GPU.", (), SOURCE_TABLE, repairs),
                compute_capability=cc, kernels=build["sass"],
            )
        elif support == "ptx" and generation.get("no_release_kernels"):
            proven = kernel_proof(section(facts, "tensorflow"), log)
            cpu, repairs = cpu_build(facts, f"TensorFlow {version} cannot run its kernels on {label} (its log says "
                                     f"so) and no TensorFlow release ships kernels for it") if proven else (None, ())
            findings.fail(
                f"{label}: no TensorFlow release ships kernels for this GPU; it would run only by JIT from "
                f"compute_{build['ptx'].replace('.', '')} PTX, which "
                + ("fails here" if proven else "is reported to fail"),
                *(said + tuple(f"TensorFlow said: {line}" for line in proven[:2] if line not in evidence_lines[:2])),
                f"Reported: {generation.get('reported_failures')}.",
                fix=Remediation("Treat this GPU as unsupported by PyPI TensorFlow: users report NVIDIA's NGC "
                                "TensorFlow container or a TensorFlow built from source with this architecture "
                                "working; avoid XLA (jit_compile) otherwise."
                                + (f" To run your code now, on the CPU: {cpu} (the plan's steps)." if cpu else ""),
                                (), generation.get("source"), repairs),
                compute_capability=cc, kernels=build["sass"],
            )
        elif support == "ptx":
            newer = first_release_with_native(cc, after=minor_string(version))
            findings.warn(
                f"{label}: TensorFlow {version} has no native kernels for it; they are JIT-compiled from PTX "
                "at first use (can take 30 minutes; cached afterwards)",
                *said,
                "Keep the CUDA JIT cache enabled and large enough (CUDA_CACHE_MAXSIZE) so the cost is paid once.",
                fix=Remediation(f"Upgrade to TensorFlow {newer} or later, which has native kernels for it."
                                if newer else "Build TensorFlow from source for this GPU.", (), SOURCE_TABLE,
                                cuda_tensorflow(facts, f">={newer}", f"TensorFlow {version} has no native kernels for "
                                                f"{label} (PTX JIT at first use); {newer} is the first release with them")
                                if newer else ()),
                compute_capability=cc, kernels=build["sass"],
            )
    return notes


def kernel_support(cc: str, sass: Iterable[str], ptx: str | None) -> str:
    """'native' (SASS of the same major, at or below the GPU's minor), 'ptx' (JIT from older PTX),
    or 'none' (the GPU is older than every kernel TensorFlow ships)."""
    have = release(cc)
    if len(have) < 2:
        return "unknown"
    for arch in sass:
        a = release(arch)
        if a[:1] == have[:1] and a <= have:
            return "native"
    if ptx and release(ptx) <= have:
        return "ptx"
    return "none"


def compute_capability(gpu: Mapping[str, Any]) -> tuple[str | None, str]:
    """(compute capability, 'nvidia-smi' | 'name') of one detected GPU; (None, '') when unknown."""
    if gpu.get("compute_capability"):
        return str(gpu["compute_capability"]), "nvidia-smi"
    name = str(gpu.get("name") or "")
    for row in knowledge_rows("linux", "gpu_names"):
        if re.search(row["pattern"], name):
            return str(row["compute_capability"]), "name"
    return None, ""


def gpu_generation(cc: str | None) -> Mapping[str, Any] | None:
    have = version_key(cc)
    for row in knowledge_rows("linux", "gpu_generations"):
        if version_key(row["cc_min"]) <= have <= version_key(row["cc_max"]):
            return row
    return None


def newest_release_with_kernels(cc: str, python: str | None = None) -> str | None:
    """The newest TensorFlow minor whose kernels run this GPU natively (for 'pin tensorflow<=X'); with
    `python` ('3.6'), only minors with wheels for that Python (knowledge/releases.toml)."""
    best = None
    for row in knowledge_rows("linux", "tf_cuda"):
        if kernel_support(cc, row["sass"], row["ptx"]) == "native" and (best is None or compare(row["tf"], best) > 0) \
                and (python is None or _has_wheels(row["tf"], python)):
            best = row["tf"]
    return best


def _has_wheels(minor: str, python: str) -> bool:
    from tfdoctor.facts.releases import minor_rows

    row = next((r for r in minor_rows() if r["tf"] == minor), None)
    return row is not None and not row["prerelease"] \
        and version_key(row["python_min"]) <= version_key(python) <= version_key(row["python_max"])


def first_release_with_native(cc: str, after: str | None = None) -> str | None:
    """The oldest TensorFlow minor (newer than `after`) with native kernels for this GPU."""
    candidates = [r["tf"] for r in knowledge_rows("linux", "tf_cuda")
                  if kernel_support(cc, r["sass"], r["ptx"]) == "native" and (after is None or compare(r["tf"], after) > 0)]
    return min(candidates, key=version_key) if candidates else None


_AND_CUDA = re.compile(r"extra\s*==\s*['\"]and-cuda['\"]")


def _requirement(text: str) -> tuple[str, str, str]:
    """(canonical name, specifier, marker) of one Requires-Dist line; empty strings when it does not parse."""
    try:
        parsed = Requirement(text)
    except InvalidRequirement:
        return "", "", ""
    return canonical_name(parsed.name), str(parsed.specifier), str(parsed.marker or "")


def and_cuda_requirements(facts: Facts) -> list[tuple[str, str]]:
    """(package, specifier) pairs of the installed TensorFlow's `and-cuda` extra: from its own
    Requires-Dist when recorded, else from the knowledge rows for its version; [] before 2.14."""
    dist = tensorflow_distribution(facts)
    requirements = [_requirement(str(text)) for text in (dist or {}).get("requires") or ()]
    from_metadata = [(name, spec) for name, spec, marker in requirements if name and _AND_CUDA.search(marker)]
    if from_metadata:
        return from_metadata
    version = tensorflow_version(facts)
    for row in knowledge_rows("linux", "and_cuda"):
        if version in row["tf_versions"]:
            return [_requirement(r)[:2] for r in row["requires"]]
    return []


def log_findings(text: str | None, gpu_expected: bool = True) -> dict[str, list[dict[str, Any]]]:
    """Sort TensorFlow's stderr into problem signs (knowledge [[log_signals]]) and known noise.

    Returns {"signals": [{"id", "line", **named groups}], "noise": [{"id", "line"}]}; noise is
    checked first, so a line is never both. Each signal id appears once per distinct line.
    """
    signals: list[dict[str, Any]] = []
    noise: list[dict[str, Any]] = []
    seen: set[tuple[str, str]] = set()
    signal_patterns = log_patterns("log_signals")
    for raw in (text or "").splitlines():
        message = strip_log_prefix(raw)
        if not message:
            continue
        kind = noise_kind(message, gpu_expected)
        if kind:
            noise.append({"id": kind, "line": message})
            continue
        for row, pattern in signal_patterns:
            match = pattern.search(message)
            if match and (row["id"], message) not in seen:
                seen.add((row["id"], message))
                signals.append({"id": row["id"], "line": message,
                                **{k: v for k, v in match.groupdict().items() if v is not None}})
    return {"signals": signals, "noise": noise}


@check("cuda-build", "TensorFlow CUDA build", uses=("sysctl", "python", "distributions", "nvidia", "tensorflow"),
       platforms=("Linux",))
def cuda_build(facts: Facts) -> Outcome:
    """a CUDA build on a GPU box, its `nvidia-*` libraries, `LD_LIBRARY_PATH`, kernels for the GPU

    a CUDA build on a GPU box (not `tensorflow-cpu`), the `[and-cuda]` libraries at TensorFlow's pins,
    `LD_LIBRARY_PATH` shadowing, kernels for the GPU's compute capability; log lines (or the probe's GPU error) that
    prove the kernels cannot run on it (`CUDA_ERROR_INVALID_PTX`, "no kernel image is available for execution on the
    device", "device kernel image is invalid") fail it, with the release that has kernels for that compute
    capability or else the CPU build; a ptxas that cannot target the GPU ("ptxas fatal: Value 'sm_89' is not
    defined", "ptxas too old") and XLA without CUDA's libdevice fail it (a report without a distribution list is
    judged from the log alone when the log proves a GPU)
    """
    if not is_recorded(facts, "distributions"):
        return _from_the_log_alone(facts)
    tf = section(facts, "tensorflow")
    dist = tensorflow_distribution(facts)
    if dist is None and tf.get("status") in (None, "not_installed"):
        return Outcome.skip("TensorFlow is not installed (see tensorflow-install)")
    version = tensorflow_version(facts)
    found = gpu_evidence(facts)
    gpus, gpu_present = found["gpus"], found["present"]
    log = log_findings(tf.get("stderr_tail"), gpu_expected=gpu_present)
    noise = sorted({n["id"] for n in log["noise"]})
    noise_note = ([f"{len(log['noise'])} harmless TensorFlow log line(s) ignored ({', '.join(noise)})."]
                  if noise else [])
    evidence: dict[str, Any] = {"tensorflow": version, "distribution": (dist or {}).get("name"),
                                "gpus": [g.get("name") for g in gpus], "log_noise": noise}
    if found["source"] == "tensorflow-log":
        evidence["gpu_evidence"] = [entry["line"] for entry in found["log"][:3]]
    cuda = is_cuda_build(facts)
    key = machine_platform(facts)
    if cuda is False:
        name = (dist or {}).get("name", "tensorflow")
        if canonical_name(str(name)) in ROCM_BUILDS:
            return Outcome.skip(f"{name} {version} is AMD's ROCm build: CUDA does not apply", **evidence)
        if key == "linux-aarch64":
            return Outcome.skip("Linux aarch64 TensorFlow wheels are CPU-only builds (see platform-support)",
                                **evidence)
        unsupported = _no_release_runs(gpus)
        if unsupported:  # the CPU build is what runs here (cuda-build's own fix when the CUDA build cannot)
            return Outcome.ok(f"CPU-only TensorFlow ({name} {version}): no TensorFlow release ships kernels for "
                              f"{unsupported}, so the CPU build is the one that runs here", *noise_note, **evidence)
        if gpus:
            repairs = cuda_tensorflow(facts, f"=={version}" if version else "",
                                      f"{name} {version} is a CPU-only build and the machine has an NVIDIA GPU "
                                      f"({_names(gpus)})")
            return Outcome.warn(
                f"CPU-only TensorFlow ({name} {version}) on a machine with an NVIDIA GPU ({_names(gpus)}): "
                "the GPU is not used",
                *noise_note,
                fix=Remediation(f"Replace {name} with the CUDA build and its libraries.", (), PIP_GUIDE, repairs),
                **evidence,
            )
        return Outcome.ok(f"CPU-only TensorFlow ({name} {version}) and no NVIDIA GPU: no CUDA needed",
                          *noise_note, **evidence)
    build = tensorflow_build(facts)
    evidence.update(build_cuda=build.get("cuda"), build_cudnn=build.get("cudnn"), kernels=build.get("sass"))
    if not gpu_present and is_recorded(facts, "nvidia"):
        return Outcome.ok(f"CUDA build of TensorFlow {version}, but no NVIDIA GPU: it runs on the CPU",
                          "Its 'Could not find cuda drivers' / 'Could not load dynamic library' lines are "
                          "expected here.", *noise_note, **evidence)
    findings = Findings()
    _judge_requirements(facts, version, gpu_present, findings)
    _judge_shadowing(facts, log, build, findings)
    if gpu_present and not any(f.evidence.get("trap") for f in findings.items):
        _judge_missing_libraries(facts, log, build, version, findings)
    notes = _judge_architecture(facts, gpus, build, log, version, found["log"], findings)
    if gpu_present:
        _judge_kernel_proof(facts, tf, gpus, log, version, found["log"], findings)
        _judge_ptxas(log, findings)
        _judge_libdevice(facts, log, version, findings)
        _judge_cudnn_loads(facts, log, build, version, findings)
    details = [*notes, *noise_note]
    if not is_recorded(facts, "nvidia"):
        details.append("NVIDIA facts not recorded: judged the installed packages only.")
    for line in details:
        findings.note(line)
    if findings.problems():
        return findings.outcome("", **evidence)
    if _pip_cuda(facts):
        libraries = "its pinned pip CUDA libraries are installed"
    elif any(d.get("device_type") == "GPU" for d in tf.get("devices") or ()):
        libraries = "TensorFlow lists the GPU"
    elif _system_cuda_dirs(facts):
        libraries = "CUDA libraries from LD_LIBRARY_PATH"
    elif _system_cuda_cache(facts):
        libraries = "system CUDA libraries (ldconfig)"
    elif version and compare(version, "2.14") >= 0:
        libraries = "its CUDA libraries were not verified (no pip nvidia-* packages or loader facts recorded)"
    elif build.get("cuda"):
        libraries = f"it expects a system CUDA {build.get('cuda')} and cuDNN {build.get('cudnn')} (not verified here)"
    else:
        libraries = "which CUDA it was built for is not recorded"
    kernels = f"; {_names(gpus)} {'has' if len(gpus) == 1 else 'have'} native kernels" if gpus and not notes else ""
    made_with = f" (CUDA {build.get('cuda')}, cuDNN {build.get('cudnn')})" if build.get("cuda") else ""
    if build.get("beyond_knowledge") and not build.get("cuda"):
        made_with = " (its CUDA and cuDNN: not in the tables, and not recorded)"
    return findings.outcome(
        f"CUDA build of TensorFlow {version or '(version not recorded)'}{made_with}; {libraries}{kernels}", **evidence)
