"""Is an NVIDIA GPU here, and which of them does CUDA show: pure functions of the facts.

`gpu_evidence(facts)` is the single answer to "is there an NVIDIA GPU here", used by nvidia-driver,
cuda-build and gpu-visible alike: nvidia-smi's list (facts/nvidia_smi.py `detected_gpus`), then the PCI
bus, then the lines TensorFlow logs only after CUDA showed it a device. `cuda_visible_devices` says how
CUDA_VISIBLE_DEVICES narrows them (gpu-visible, nvidia-driver). Readers that one check alone needs live in
it (log_findings in cuda-build).
"""

from __future__ import annotations

import re
from typing import Any, Mapping

from tfdoctor.facts import Facts, section
from tfdoctor.facts.nvidia_smi import detected_gpus
from tfdoctor.facts.tensorflow_log import strip_log_prefix


def cuda_visible_devices(facts: Facts, gpu_count: int) -> dict[str, Any] | None:
    """How CUDA_VISIBLE_DEVICES (from the recorded environment) narrows `gpu_count` GPUs.

    None when unset. CUDA reads the list up to the first invalid entry: '-1', '' or an index that
    does not exist hide every GPU from there on (a '1' on a one-GPU machine gives
    CUDA_ERROR_NO_DEVICE, https://github.com/manishsoni1908/Mobilenet-ssd-keras/issues/10). UUID/MIG entries are taken as valid.
    """
    environment = section(facts, "environment")
    if "CUDA_VISIBLE_DEVICES" not in environment:
        return None
    value = str(environment["CUDA_VISIBLE_DEVICES"])
    visible: list[str] = []
    for entry in (e.strip() for e in value.split(",")):
        if not entry:
            break
        if entry.lstrip("-").isdigit():
            if int(entry) < 0 or int(entry) >= gpu_count:
                break
        elif not entry.upper().startswith(("GPU-", "MIG-")):
            break
        visible.append(entry)
    return {"value": value, "visible": visible, "hides_all": gpu_count > 0 and not visible}


# Lines TensorFlow prints only once CUDA has shown it a device, or while it runs kernels on one: proof of
# an NVIDIA GPU where nvidia-smi is missing or says nothing (containers, WSL2, a broken driver install).
# "Cannot dlopen some GPU libraries" is logged by BaseGPUDeviceFactory::GetValidDeviceIds, which
# CacheDeviceIds calls only after VisibleDeviceCount() > 0 (tensorflow/core/common_runtime/gpu/gpu_device.cc).
# Lines printed with or without a GPU ("Could not find cuda drivers", "failed call to cuInit:
# CUDA_ERROR_NO_DEVICE", "Could not load dynamic library ...") prove nothing and are not here.
_GPU_PROOF_LINES = (
    # (id, what the line says, pattern searched in the message, public source of the real line)
    ("device-created", "it created a GPU device",
     r"Created (?:TensorFlow )?device \(?/job:\S+/device:GPU:\d+ .*?name: (?P<name>[^,]+), "
     r"pci bus id: \S+, compute capability: (?P<cc>\d+\.\d+)",
     "https://github.com/tensorflow/tensorflow/issues/62170"),
    ("device-found", "it found a GPU device", r"Found device \d+ with properties:",
     "https://github.com/tensorflow/tensorflow/issues/45200"),
    # TensorFlow 2.1-2.4 print the device's properties on the line after "Found device ... with properties:"
    ("device-properties", "it found a GPU device",
     r"pciBusID: \S+ name: (?P<name>.+?) computeCapability: (?P<cc>\d+\.\d+)",
     "https://github.com/tensorflow/tensorflow/issues/41132"),
    ("gpu-libraries-not-loaded", "it logged 'Cannot dlopen some GPU libraries'", r"Cannot dlopen some GPU libraries",
     "https://github.com/tensorflow/tensorflow/blob/master/tensorflow/core/common_runtime/gpu/gpu_device.cc"),
    ("gpu-ignored", "it ignored a visible GPU",
     r"Ignoring visible gpu device \(device: \d+, name: (?P<name>[^,]+), pci bus id: \S+, "
     r"compute capability: (?P<cc>\d+\.\d+)\)",
     "https://github.com/tensorflow/tensorflow/issues/36853"),
    ("ptx-jit", "it has no kernels for the GPU's compute capability",
     r"TensorFlow was not built with CUDA kernel binaries compatible with compute capability (?P<cc>\d+\.\d+)",
     "https://github.com/tensorflow/tensorflow/issues/97387"),
    ("kernel-load-failed", "CUDA kernels failed to load on it",
     r"CUDA_ERROR_INVALID_PTX|CUDA_ERROR_UNSUPPORTED_PTX_VERSION|device kernel image is invalid"
     r"|no kernel image is available for execution on the device"
     r"|PTX version [\d.]+ does not support target '(?P<target>sm_\d+a?)'",
     "https://github.com/tensorflow/tensorflow/issues/99592"),
    # cuInit fails with CUDA_ERROR_NO_DEVICE where the driver library is present and no GPU is; any other
    # CUDA_ERROR_ means libcuda loaded and failed on a device it has (WSL2 Docker with a driver the container
    # toolkit does not map: CUDA_ERROR_NOT_FOUND). Where no driver library exists TensorFlow says "Could not
    # find cuda drivers" or an UNKNOWN ERROR, not a CUDA_ERROR_ name.
    ("driver-failed", "the NVIDIA driver library loaded and failed",
     r"failed call to cuInit: (?P<error>CUDA_ERROR_(?!NO_DEVICE\b)[A-Z_]+)",
     "https://github.com/tensorflow/tensorflow/issues/68711"),
    # ptxas compiles PTX for the architecture of a device TensorFlow has: the sm_NN it cannot target is the GPU's
    ("ptxas-lacks-architecture", "its ptxas cannot compile for the GPU's architecture",
     r"ptxas fatal\s*: Value 'sm_(?P<sm>\d+)a?' is not defined for option 'gpu-name'",
     "https://github.com/MBoemo/DNAscent/issues/87"),
    # XLA's GPU backend looks for libdevice only when it compiles for a GPU TensorFlow has
    ("xla-gpu-compile", "XLA compiled for it", r"Can't find libdevice directory|libdevice not found at "
     r"|libdevice is required by this HLO module", "https://github.com/conda-forge/tensorflow-feedstock/issues/420"),
    # cuDNN loads its libraries at a GPU convolution: only a GPU host gets this far
    ("cudnn-load-failed", "cuDNN ran on it and could not load a library",
     r"Could not load library [\w.+-]{1,200}\. Error: ", "https://github.com/talmolab/sleap/issues/1806"),
    ("cudnn-loaded", "cuDNN was loaded for it", r"Loaded runtime CuDNN library: [\d.]+ but source was compiled",
     "https://github.com/Kaggle/docker-python/issues/1435"),
    # cuda_diagnostics reports the kernel module's version: the NVIDIA kernel module is loaded, which it
    # only does with an NVIDIA GPU present.
    ("kernel-module-mismatch", "the NVIDIA kernel module is loaded", r"kernel version \S+ does not match DSO version \S+",
     "https://github.com/tensorflow/tensorflow/issues/48722"),
)
_GPU_PROOF = tuple((proof_id, said, re.compile(pattern)) for proof_id, said, pattern, _ in _GPU_PROOF_LINES)


def _tensorflow_texts(tf: Mapping[str, Any]) -> list[str]:
    texts = [tf.get("stderr_head"), tf.get("stderr_tail"), "\n".join(tf.get("notable_lines") or ())]
    exception = found if isinstance(found := tf.get("exception"), Mapping) else {}
    texts.append(str(exception.get("message") or ""))
    errors = found if isinstance(found := tf.get("errors"), Mapping) else {}
    texts += [str(e.get("message") or "") for e in errors.values() if isinstance(e, Mapping)]
    return [t for t in texts if isinstance(t, str) and t]


def tensorflow_gpu_lines(tf: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The lines of the TensorFlow child's record that prove an NVIDIA GPU: [{"id", "said", "line", "name"?,
    "cc"?}], each distinct line once."""
    found: list[dict[str, Any]] = []
    seen: set[str] = set()
    for text in _tensorflow_texts(tf):
        for raw in text.splitlines():
            message = strip_log_prefix(raw)
            if not message or message in seen:
                continue
            for proof_id, said, pattern in _GPU_PROOF:
                match = pattern.search(message)
                if match:
                    seen.add(message)
                    found.append({"id": proof_id, "said": said, "line": message,
                                  **{k: v.strip() for k, v in match.groupdict().items() if v}})
                    break
    return found


def gpu_evidence(facts: Facts) -> dict[str, Any]:
    """The single answer to "is an NVIDIA GPU here", for every GPU check.

    {"present": bool, "source": "nvidia-smi" | "pci" | "tensorflow-log" | None, "gpus": detected_gpus(facts),
    "pci": PCI devices, "log": tensorflow_gpu_lines, "why": one phrase}. nvidia-smi's list comes first; then
    NVIDIA devices on the PCI bus; then TensorFlow's own log, which proves a GPU that TensorFlow found even
    where nvidia-smi is missing (containers without the utility capability, WSL2 without /usr/lib/wsl/lib on
    PATH) or cannot answer.
    """
    gpus = detected_gpus(facts)
    pci = list(section(facts, "nvidia").get("pci_devices") or ())
    log = tensorflow_gpu_lines(section(facts, "tensorflow"))
    evidence: dict[str, Any] = {"present": True, "gpus": gpus, "pci": pci, "log": log}
    if gpus:
        names = ", ".join(str(g.get("name")) for g in gpus)
        return {**evidence, "source": "nvidia-smi", "why": f"nvidia-smi lists {names}"}
    if pci:
        return {**evidence, "source": "pci",
                "why": f"{len(pci)} NVIDIA GPU{'s' if len(pci) > 1 else ''} on the PCI bus"}
    if log:
        logged = sorted({entry["name"] for entry in log if entry.get("name")})
        what = f"an NVIDIA GPU ({', '.join(logged)})" if logged else "an NVIDIA GPU"
        return {**evidence, "source": "tensorflow-log",
                "why": f"TensorFlow's log shows {what} ({log[0]['said']})"}
    return {**evidence, "present": False, "source": None, "why": "no NVIDIA GPU detected"}
