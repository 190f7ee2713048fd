"""NVIDIA driver: is it there and answering, which GPUs it drives, and is it new enough for the CUDA the
installed TensorFlow was built with.

- No nvidia-smi, no kernel module and no NVIDIA device on the PCI bus: skip, "no NVIDIA GPU" (the check
  does not apply; the other GPU checks then expect no GPU either), unless TensorFlow's log shows a GPU
  (tfdoctor.facts.gpu_evidence.gpu_evidence): then pass when TensorFlow lists it, else warn that the driver
  cannot be checked without nvidia-smi.
- nvidia-smi timed out (a wedged driver hangs it), cannot reach the driver (module not loaded), or the
  driver and its library differ (upgrade without reboot): fail, with what each means.
- The driver is older than the minimum for TensorFlow's CUDA major (minor-version compatibility,
  knowledge [[cuda_major_driver]]): fail. Older than the CUDA release TensorFlow was built with: warn,
  PTX JIT and XLA need a driver that knows that PTX (googlecolab/colabtools#5667).
- nvidia-smi's "CUDA Version" above what the driver itself serves means a forward-compatibility
  libcuda is loaded; GeForce cards refuse it (CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE).
- CUDA_VISIBLE_DEVICES that hides every GPU: warn.
On WSL2 the "Driver Version" is the Windows driver's, so NVIDIA's Windows column applies.
"""

from __future__ import annotations

import re
from typing import Any, Mapping

from tfdoctor.checking.registry import check
from tfdoctor.facts import Facts, host_system, section
from tfdoctor.facts.gpu_evidence import cuda_visible_devices, tensorflow_gpu_lines
from tfdoctor.facts.nvidia_smi import classify_smi, command_output, detected_gpus, parse_smi_query, parse_smi_table
from tfdoctor.facts.tensorflow_build import (
    compare,
    is_cuda_build,
    minor_string,
    platform_fact,
    tensorflow_build,
    tensorflow_version,
    wsl_version,
)
from tfdoctor.knowledge import rows as knowledge_rows
from tfdoctor.knowledge.versions import key as version_key, release
from tfdoctor.remedies.cuda import cuda_tensorflow
from tfdoctor.results.findings import Findings
from tfdoctor.results.model import Outcome, Remediation, Status
from tfdoctor.results.repairs import Repair

DRIVER_DOWNLOAD = "https://www.nvidia.com/Download/index.aspx"
COMPAT_GUIDE = "https://docs.nvidia.com/deploy/cuda-compatibility/forward-compatibility.html"


def _forward_compat_names() -> tuple[list[str], str]:
    row = knowledge_rows("linux", "forward_compat")[0]
    return list(row["refused_name_words"]), str(row["error"])


def newest_tensorflow_for_driver(driver: str, column: str) -> str | None:
    """The newest TensorFlow minor whose CUDA major this driver can run."""
    best = None
    for row in knowledge_rows("linux", "tf_cuda"):
        needed = min_driver_for_cuda_major(row["cuda"], column)
        if needed and compare(driver, needed) >= 0 and (best is None or compare(row["tf"], best) > 0):
            best = row["tf"]
    return best


def _no_smi(facts: Facts, info: dict[str, Any]) -> Outcome:
    nvidia = section(facts, "nvidia")
    module = info["kernel_module_version"]
    pci = nvidia.get("pci_devices") or []
    if module:
        return Outcome.warn(
            f"the NVIDIA kernel driver {module} is loaded, but nvidia-smi is not installed or not on PATH",
            "Without nvidia-smi the GPUs and the driver's CUDA version cannot be read.",
            fix=Remediation("Install the NVIDIA driver's utilities package for your distribution (it provides "
                            "nvidia-smi) at the same version as the driver.", (), DRIVER_DOWNLOAD),
            kernel_module=module,
        )
    if pci:
        return Outcome.fail(
            f"{len(pci)} NVIDIA GPU(s) on the PCI bus, but no NVIDIA driver is loaded",
            *(f"PCI {d.get('slot')}: device {d.get('device')}" for d in pci),
            fix=Remediation("Install the NVIDIA driver (the distribution's packaged driver or NVIDIA's) and "
                            "reboot. Inside a container, start it with the NVIDIA runtime (docker run --gpus all).",
                            (), DRIVER_DOWNLOAD),
            pci_devices=pci,
        )
    proof = tensorflow_gpu_lines(section(facts, "tensorflow"))
    if proof:
        return _gpu_without_smi(facts, proof)
    where = " (WSL2: the Windows NVIDIA driver provides it)" if wsl_version(facts) == 2 else ""
    return Outcome.skip(f"no NVIDIA GPU: nvidia-smi not found and no NVIDIA driver loaded{where}",
                        smi_state=info["state"])


def _gpu_without_smi(facts: Facts, proof: list[dict[str, Any]]) -> Outcome:
    """nvidia-smi is missing, yet TensorFlow's log shows the GPU CUDA gave it: the driver loads, but its
    version cannot be read, so it is not judged against TensorFlow's CUDA."""
    names = sorted({str(p["name"]) for p in proof if p.get("name")})
    what = ", ".join(names) if names else "an NVIDIA GPU"
    said = f"TensorFlow said: {proof[0]['line']}"
    devices = section(facts, "tensorflow").get("devices") or ()
    if any(isinstance(d, dict) and d.get("device_type") == "GPU" for d in devices):
        return Outcome.ok(f"the NVIDIA driver serves {what} to TensorFlow (nvidia-smi not found: driver version "
                          "not read)", said, gpus=names, smi_state="not_found", gpu_evidence="tensorflow-log")
    if wsl_version(facts):
        where = ("On WSL2 the Windows driver provides nvidia-smi as /usr/lib/wsl/lib/nvidia-smi; put that "
                 "directory on PATH.")
    else:
        where = ("Inside a container, nvidia-smi comes with the 'utility' driver capability "
                 "(NVIDIA_DRIVER_CAPABILITIES=compute,utility); on a host, install the driver's utilities "
                 "package at the driver's version.")
    return Outcome.warn(
        f"TensorFlow's log shows {what}, but nvidia-smi is not found: the driver cannot be checked against "
        "TensorFlow's CUDA",
        said, "The gpu-visible and cuda-build checks say why TensorFlow does not use the GPU.",
        fix=Remediation(f"Make nvidia-smi available, then run the doctor again. {where}", (), DRIVER_DOWNLOAD),
        gpus=names, smi_state="not_found", gpu_evidence="tensorflow-log",
    )


def _smi_failed(facts: Facts, info: dict[str, Any]) -> Outcome:
    nvidia = section(facts, "nvidia")
    smi = nvidia.get("smi") or nvidia.get("smi_query") or {}
    state = info["state"]
    said = first_line(smi)
    evidence = {"smi_state": state, "exit_code": smi.get("exit_code"), "output": said,
                "kernel_module": info["kernel_module_version"]}
    if state == "timed_out":
        return Outcome.fail(
            f"nvidia-smi did not answer within {smi.get('timeout_s', '?')} s: the NVIDIA driver is unresponsive",
            "A GPU that fell off the bus (Xid 79) or a hung driver makes nvidia-smi, and CUDA, hang.",
            fix=Remediation("Look for Xid errors in the kernel log; enable the NVIDIA persistence daemon "
                            "(nvidia-persistenced) so the driver stays initialised; reboot if the GPU is wedged.",
                            ("sudo dmesg | grep -i -e xid -e nvrm",) if host_system(facts) == "Linux" else (),
                            "https://github.com/NVIDIA/open-gpu-kernel-modules/issues/507"),
            **evidence,
        )
    if state == "driver_not_loaded":
        return Outcome.fail(
            "nvidia-smi cannot communicate with the NVIDIA driver: its kernel module is not loaded",
            f"nvidia-smi said: {said}",
            fix=Remediation("Typical causes: a kernel update without the driver module rebuilt (reinstall the "
                            "driver or its DKMS package, then reboot), nouveau holding the GPU, or a container "
                            "started without the NVIDIA runtime (docker run --gpus all).", (), DRIVER_DOWNLOAD),
            **evidence,
        )
    if state == "version_mismatch":
        return Outcome.fail(
            "NVIDIA driver/library version mismatch: the driver was upgraded but the old kernel module still runs",
            f"nvidia-smi said: {said}",
            fix=Remediation("Reboot so the new kernel module is loaded.",
                            ("sudo reboot",) if host_system(facts) == "Linux" else (), None),
            **evidence,
        )
    if state == "no_devices":
        return Outcome.fail("nvidia-smi found no NVIDIA GPU although the driver is installed",
                            f"nvidia-smi said: {said}",
                            fix=Remediation("Check that the GPU is seated and powered, and visible to this "
                                            "machine or container.", (), DRIVER_DOWNLOAD),
                            **evidence)
    return Outcome.fail(f"nvidia-smi failed ({state}): {said or 'no output'}",
                        fix=Remediation("Reinstall the NVIDIA driver matching your kernel.", (), DRIVER_DOWNLOAD),
                        **evidence)


def _judge_driver(facts: Facts, info: dict[str, Any], gpus: list[dict[str, Any]], findings: Findings) -> None:
    driver = info["driver_version"]
    column = driver_column(facts)
    names = ", ".join(sorted({str(g["name"]) for g in gpus}))
    reported = info["cuda_version"]
    # Forward compatibility: the CUDA nvidia-smi reports is that of the libcuda it loaded.
    if host_system(facts) == "Linux" and not wsl_version(facts) and driver and reported:
        native = max_cuda_for_driver(driver, "linux")
        if native and compare(reported, native) > 0:
            refused, error = _forward_compat_names()
            consumer = any(word in names for word in refused)
            findings.add(
                Status.FAIL if consumer else Status.WARN,
                f"nvidia-smi reports CUDA {reported} on driver {driver}, which serves CUDA {native}: a CUDA "
                "forward-compatibility libcuda (cuda-compat) is in use"
                + (f"; {names} refuses it ({error})" if consumer else ""),
                "Forward compatibility works only on data-center GPUs, select RTX server SKUs and Jetson.",
                fix=Remediation(
                    "Take the cuda-compat libcuda off the library path (remove the cuda-compat package or its "
                    "directory from LD_LIBRARY_PATH) so the driver's own libcuda is used, or upgrade the host "
                    f"driver to {driver_for_cuda(reported, 'linux') or 'a newer release'} or later.",
                    (), COMPAT_GUIDE),
                forward_compat=True, native_cuda=native,
            )
    # The driver against the CUDA TensorFlow was built with.
    tf_version = tensorflow_version(facts)
    if driver and is_cuda_build(facts):
        build = tensorflow_build(facts)
        build_cuda = build.get("cuda")
        minimum = min_driver_for_cuda_major(build_cuda, column)
        if wsl_version(facts) and minimum and compare(platform_fact("wsl-min-driver"), minimum) > 0:
            minimum = platform_fact("wsl-min-driver")
        serves = reported or max_cuda_for_driver(driver, column)
        if minimum and compare(driver, minimum) < 0:
            older = newest_tensorflow_for_driver(driver, column)
            repairs: tuple[Repair, ...] = ()
            if older and compare(older, "2.14") >= 0:
                # the alternative to a driver update: TensorFlow must move back to a release built for this driver
                repairs = cuda_tensorflow(facts, f"=={older}.*",
                                          f"driver {driver} is too old for the CUDA {build_cuda} TensorFlow "
                                          f"{tf_version} was built with; {older} is the newest TensorFlow built for a "
                                          "CUDA it serves")
            findings.fail(
                f"driver {driver} is too old for TensorFlow {tf_version} (built with CUDA {build_cuda}): "
                f"it needs {minimum} or later",
                *((f"The newest TensorFlow built for this driver's CUDA is {older}.",) if older else ()),
                fix=Remediation(f"Upgrade the NVIDIA driver to {minimum} or later"
                                + (f", or pin TensorFlow {older}." if older else "."), (), DRIVER_DOWNLOAD, repairs),
                build_cuda=build_cuda, minimum_driver=minimum,
            )
        elif serves and build_cuda and compare(minor_string(serves), minor_string(build_cuda)) < 0:
            wanted = driver_for_cuda(build_cuda, column)
            findings.warn(
                f"driver {driver} serves CUDA {serves}, older than the CUDA {build_cuda} TensorFlow {tf_version} "
                "was built with: PTX JIT and XLA compilation can fail (CUDA_ERROR_UNSUPPORTED_PTX_VERSION)",
                "Minor-version compatibility lets the CUDA libraries start on this driver, but not JIT-compile "
                "PTX of a newer CUDA; XLA also falls back to serial compilation.",
                fix=Remediation(f"Upgrade the NVIDIA driver to {wanted or 'one serving CUDA ' + str(build_cuda)} "
                                "or later.", (), DRIVER_DOWNLOAD),
                build_cuda=build_cuda, driver_cuda=serves, recommended_driver=wanted,
            )
    visible = cuda_visible_devices(facts, len(gpus))
    if visible and visible["hides_all"]:
        findings.warn(
            f"CUDA_VISIBLE_DEVICES={visible['value']!r} hides every GPU ({len(gpus)} present, "
            f"index 0{'-' + str(len(gpus) - 1) if len(gpus) > 1 else ''})",
            "CUDA then reports CUDA_ERROR_NO_DEVICE and TensorFlow lists no GPU.",
            fix=Remediation("Unset CUDA_VISIBLE_DEVICES, or set it to existing GPU indices (nvidia-smi lists them).",
                            repairs=(Repair.unset_env("CUDA_VISIBLE_DEVICES",
                                                      reason=f"CUDA_VISIBLE_DEVICES={visible['value']!r} hides every "
                                                             "GPU"),)),
            cuda_visible_devices=visible["value"],
        )


def driver_column(facts: Facts) -> str:
    """Which column of NVIDIA's tables applies: WSL2 reports the Windows driver's version."""
    return "windows" if host_system(facts) == "Windows" or wsl_version(facts) else "linux"


def max_cuda_for_driver(driver: str | None, column: str = "linux") -> str | None:
    """The newest CUDA toolkit whose bundled driver this driver meets (None when unknown, also when
    newer toolkits list no driver for this platform, so the answer could be higher)."""
    if not driver:
        return None
    best = None
    last_listed = None
    for row in knowledge_rows("linux", "cuda_driver"):
        needed = row.get(column) or ""
        if not needed:
            if last_listed is not None and compare(driver, last_listed) >= 0:
                return None  # newer than every driver the table lists for this platform
            continue
        last_listed = needed
        if compare(driver, needed) >= 0:
            best = row["cuda"]
    return minor_string(best) if best else None


def min_driver_for_cuda_major(cuda: str | None, column: str = "linux") -> str | None:
    major = str(release(cuda)[0]) if release(cuda) else None
    for row in knowledge_rows("linux", "cuda_major_driver"):
        if row["cuda_major"] == major:
            return str(row.get(column) or "") or None
    return None


def driver_for_cuda(cuda: str | None, column: str = "linux") -> str | None:
    """The driver NVIDIA shipped with this CUDA release (the first one serving it natively)."""
    if not cuda:
        return None
    wanted = version_key(cuda)
    rows = [r for r in knowledge_rows("linux", "cuda_driver") if r.get(column)]
    at_least = [r for r in rows if version_key(r["cuda"]) >= wanted]
    exact = [r for r in rows if version_key(r["cuda"])[:len(release(cuda))] == wanted[:len(release(cuda))]]
    chosen = (exact or at_least)
    return str(min(chosen, key=lambda r: version_key(r["cuda"]))[column]) if chosen else None


def first_line(result: Mapping[str, Any] | None) -> str | None:
    text = command_output(result).strip()
    return text.splitlines()[0].strip() if text else None


def driver_summary(facts: Facts) -> dict[str, Any]:
    """What the driver says about itself: versions from nvidia-smi (table, then query), or the
    kernel module's version when nvidia-smi could not answer; and the fate of each source."""
    nvidia = section(facts, "nvidia")
    table = parse_smi_table(command_output(nvidia.get("smi")) if nvidia.get("smi") else None)
    query = parse_smi_query((nvidia.get("smi_query") or {}).get("stdout"))
    module = parse_proc_driver_version(nvidia.get("proc_driver_version"))
    driver = (table or {}).get("driver_version") or next(
        (r["driver_version"] for r in query if r.get("driver_version")), None) or module
    smi_state = classify_smi(nvidia.get("smi"))
    query_state = classify_smi(nvidia.get("smi_query"))
    return {
        # the table's fate, or the query's when only the query was recorded (a saved partial report)
        "state": smi_state if smi_state != "not_recorded" else query_state,
        "smi_state": smi_state,
        "query_state": query_state,
        "driver_version": driver,
        "cuda_version": (table or {}).get("cuda_version"),
        "smi_version": (table or {}).get("smi_version"),
        "kernel_module_version": module,
        "table_gpu_count": len((table or {}).get("gpus") or ()),
        "query_gpu_count": len(query),
    }


_PROC_MODULE = re.compile(r"Kernel Module(?:\s+for\s+\S+)?\s+(\d+\.\d+(?:\.\d+)?)")


def parse_proc_driver_version(text: str | None) -> str | None:
    """'NVRM version: NVIDIA UNIX x86_64 Kernel Module  384.130  Wed Mar ...' -> '384.130'."""
    if not text:
        return None
    match = _PROC_MODULE.search(text)
    return match.group(1) if match else None


@check("nvidia-driver", "NVIDIA driver", needs=("nvidia",), uses=("tensorflow", "os", "python", "distributions", "environment"),
       platforms=("Linux", "Windows"))
def nvidia_driver(facts: Facts) -> Outcome:
    """the NVIDIA driver is loaded and new enough for TensorFlow's CUDA

    `nvidia-smi` (with a timeout) and `/proc/driver/nvidia/version`: driver loaded, its CUDA version against
    TensorFlow's build, hangs, version mismatches
    """
    info = driver_summary(facts)
    if info["state"] == "not_recorded":
        return Outcome.skip("not recorded: nvidia-smi", missing=["nvidia.smi"])
    if info["state"] == "not_found":
        return _no_smi(facts, info)
    gpus = detected_gpus(facts)
    if info["state"] != "ok":
        return _smi_failed(facts, info)
    if not gpus:
        return Outcome.warn("nvidia-smi answered but listed no GPU",
                            f"nvidia-smi said: {first_line(section(facts, 'nvidia').get('smi'))}",
                            smi_state=info["state"])
    driver = info["driver_version"]
    serves = info["cuda_version"] or max_cuda_for_driver(driver, driver_column(facts))
    names = [f"{g['name']}" + (f" (compute capability {g['compute_capability']})" if g.get("compute_capability") else "")
             for g in gpus]
    details = [f"GPU {g.get('index', i)}: {name}" for i, (g, name) in enumerate(zip(gpus, names))]
    if wsl_version(facts):
        details.append(f"WSL2: the Windows driver {driver} serves the GPU (Linux-side library {info['smi_version']}).")
    cuda_build = is_cuda_build(facts)
    if cuda_build is False:
        details.append("The installed TensorFlow is CPU-only, so it does not use this driver (see "
                       + ("platform-support)." if host_system(facts) == "Windows" else "cuda-build)."))
    elif cuda_build is None and host_system(facts) == "Linux":
        details.append("TensorFlow is not installed (or not recorded): judged the driver alone.")
    evidence = {"driver": driver, "cuda": serves, "gpus": [g.get("name") for g in gpus],
                "smi_version": info["smi_version"], "query_state": info["query_state"]}
    findings = Findings()
    _judge_driver(facts, info, gpus, findings)
    for line in details:
        findings.note(line)
    return findings.outcome(f"driver {driver}" + (f" (CUDA {serves})" if serves else "") + f", {len(gpus)} GPU(s): "
                            + ", ".join(sorted({str(g['name']) for g in gpus})), **evidence)
