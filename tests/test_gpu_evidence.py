"""The NVIDIA GPU that TensorFlow's own log proves (tfdoctor.facts.gpu_evidence.gpu_evidence), and what each GPU
check makes of it when nvidia-smi is missing or says nothing.

Every log line is quoted from a real log, with the public report it comes from.
"""

from __future__ import annotations

import copy

import pytest

from tfdoctor.facts.gpu_evidence import gpu_evidence, tensorflow_gpu_lines
from tfdoctor.model import Status
from tfdoctor.registry import all_checks
from tfdoctor.runner import run_checks

LINUX = {"system": "Linux", "machine": "x86_64"}
NO_SMI = {"smi": {"argv": ["nvidia-smi"], "status": "not_found", "exit_code": None, "stdout": "", "stderr": ""},
          "smi_query": None, "proc_driver_version": None, "pci_devices": []}
SMI_CANNOT_REACH_DRIVER = {
    "smi": {"argv": ["nvidia-smi"], "status": "failed", "exit_code": 9, "stdout": "",
            "stderr": "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that "
                      "the latest NVIDIA driver is installed and running."},
    "smi_query": None, "proc_driver_version": None, "pci_devices": []}

# Printed only once CUDA has shown TensorFlow a device (or while kernels run on one).
PROOF = {
    # tensorflow/tensorflow#65035 (2.16); gpu_device.cc logs it only after VisibleDeviceCount() > 0
    "gpu-libraries-not-loaded": "W tensorflow/core/common_runtime/gpu/gpu_device.cc:2251] Cannot dlopen some GPU "
                                "libraries. Please make sure the missing libraries mentioned above are installed "
                                "properly if you would like to use GPU.",
    # a 2025 Quadro RTX 6000 log (absl prefix), as the other device-created lines below
    "device-created": "I0000 00:00:1746176023.107064  322561 gpu_device.cc:2019] Created device "
                      "/job:localhost/replica:0/task:0/device:GPU:0 with 22807 MB memory:  -> device: 0, name: "
                      "Quadro RTX 6000, pci bus id: 0000:01:00.0, compute capability: 7.5",
    # tensorflow/tensorflow#62170 (TF <= 2.4 wording)
    "device-created-old": "Created TensorFlow device (/job:localhost/replica:0/task:0/device:GPU:0 with 10175 MB "
                          "memory) -> physical GPU (device: 0, name: Tesla T4, pci bus id: 0000:00:07.0, compute "
                          "capability: 7.5)",
    # tensorflow/tensorflow#36853
    "gpu-ignored": "I tensorflow/core/common_runtime/gpu/gpu_device.cc:1717] Ignoring visible gpu device (device: 0, "
                   "name: GeForce GTX TITAN X, pci bus id: 0000:02:00.0, compute capability: 5.2) with Cuda compute "
                   "capability 5.2. The minimum required Cuda capability is 6.0.",
    # tensorflow/tensorflow#97387
    "ptx-jit": "W0000 00:00:1753232013.685876   24341 gpu_device.cc:2431] TensorFlow was not built with CUDA kernel "
               "binaries compatible with compute capability 12.0. CUDA kernels will be jit-compiled from PTX, which "
               "could take 30 minutes or longer.",
    # tensorflow/tensorflow#99592
    "kernel-load-failed": "W tensorflow/compiler/mlir/tools/kernel_gen/tf_gpu_runtime_wrappers.cc:40] "
                          "'cuModuleLoadData(&module, data)' failed with 'CUDA_ERROR_INVALID_PTX'",
    # tensorflow/tensorflow#48722
    "kernel-module-mismatch": "E tensorflow/stream_executor/cuda/cuda_diagnostics.cc:313] kernel version 455.32.0 "
                              "does not match DSO version 460.73.1 -- cannot find working devices in this "
                              "configuration",
}
# Printed with or without a GPU: never evidence.
NOISE = [
    # tensorflow/tensorflow#62328
    "I tensorflow/tsl/cuda/cudart_stub.cc:28] Could not find cuda drivers on your machine, GPU will not be used.",
    # tensorflow/tensorflow#74459
    "W tensorflow/stream_executor/platform/default/dso_loader.cc:64] Could not load dynamic library "
    "'libcudart.so.11.0'; dlerror: libcudart.so.11.0: cannot open shared object file: No such file or directory",
    "I tensorflow/stream_executor/cuda/cudart_stub.cc:29] Ignore above cudart dlerror if you do not have a GPU set up "
    "on your machine.",
    # tensorflow/tensorflow#64881
    "E external/local_xla/xla/stream_executor/cuda/cuda_driver.cc:282] failed call to cuInit: CUDA_ERROR_NO_DEVICE: "
    "no CUDA-capable device is detected",
    # microsoft/DirectML#18
    "I tensorflow/stream_executor/cuda/cuda_diagnostics.cc:156] kernel driver does not appear to be running on this "
    "host (MAKERPC): /proc/driver/nvidia/version does not exist",
    # serengil/deepface#739
    "W tensorflow/compiler/tf2tensorrt/utils/py_utils.cc:38] TF-TRT Warning: Could not find TensorRT",
]


def facts(stderr: str, *, nvidia=NO_SMI, gpu_listed: bool = False, version: str = "2.16.1") -> dict:
    devices = [{"name": "/physical_device:CPU:0", "device_type": "CPU"}]
    if gpu_listed:
        devices.append({"name": "/physical_device:GPU:0", "device_type": "GPU"})
    return {
        "host": dict(LINUX), "os": {"wsl": None}, "environment": {},
        "python": {"version": "3.10.12", "machine": "x86_64"},
        "distributions": [{"name": "tensorflow", "version": version, "requires": [], "top_level": ["tensorflow"]}],
        "nvidia": copy.deepcopy(nvidia) if nvidia is not None else None,
        "tensorflow": {"status": "ok", "imported": True, "version": version, "stderr_tail": stderr,
                       "devices": devices, "build_info": None},
    }


def run(check_id: str, machine: dict):
    [check] = [c for c in all_checks() if c.id == check_id]
    return run_checks([check], machine)[0]


@pytest.mark.parametrize("kind", sorted(PROOF))
def test_each_line_logged_only_with_a_gpu_is_evidence(kind):
    [found] = tensorflow_gpu_lines({"stderr_tail": PROOF[kind]})
    assert found["id"] == kind.replace("-old", "")
    assert not found["line"].startswith(("W ", "I ", "E ", "W0000", "I0000"))  # the log prefix is stripped


def test_names_and_compute_capabilities_are_read_from_the_lines():
    found = tensorflow_gpu_lines({"stderr_tail": "\n".join((PROOF["device-created"], PROOF["gpu-ignored"]))})
    assert [(f["name"], f["cc"]) for f in found] == [("Quadro RTX 6000", "7.5"), ("GeForce GTX TITAN X", "5.2")]


def test_lines_printed_without_a_gpu_prove_nothing():
    assert tensorflow_gpu_lines({"stderr_tail": "\n".join(NOISE)}) == []
    evidence = gpu_evidence(facts("\n".join(NOISE)))
    assert evidence["present"] is False and evidence["source"] is None


def test_evidence_is_read_from_every_recorded_text():
    tf = {"stderr_head": PROOF["device-created"], "notable_lines": [PROOF["ptx-jit"]],
          "errors": {"probe": {"type": "InternalError", "message": PROOF["kernel-load-failed"]}}}
    assert {f["id"] for f in tensorflow_gpu_lines(tf)} == {"device-created", "ptx-jit", "kernel-load-failed"}


def test_nvidia_smi_comes_first_then_pci_then_the_log():
    machine = facts(PROOF["gpu-libraries-not-loaded"])
    assert gpu_evidence(machine)["source"] == "tensorflow-log"
    assert "Cannot dlopen some GPU libraries" in gpu_evidence(machine)["why"]
    machine["nvidia"]["pci_devices"] = [{"slot": "0000:01:00.0", "device": "1eb8"}]
    assert gpu_evidence(machine)["source"] == "pci"


def test_gpu_visible_expects_the_gpu_the_log_proves():
    result = run("gpu-visible", facts(PROOF["gpu-libraries-not-loaded"]))
    assert result.status is Status.FAIL
    assert result.summary.startswith("TensorFlow's log shows an NVIDIA GPU") and "lists no GPU" in result.summary
    # also where nvidia-smi answered but could not reach the driver, and where NVIDIA facts were not recorded
    for nvidia in (SMI_CANNOT_REACH_DRIVER, None):
        assert run("gpu-visible", facts(PROOF["gpu-libraries-not-loaded"], nvidia=nvidia)).status is Status.FAIL


def test_gpu_visible_passes_when_the_proven_gpu_is_listed_or_only_noise_was_logged():
    assert run("gpu-visible", facts(PROOF["device-created"], gpu_listed=True)).status is Status.PASS
    result = run("gpu-visible", facts("\n".join(NOISE)))
    assert result.status is Status.PASS and result.summary.startswith("No GPU expected")


def test_nvidia_driver_without_nvidia_smi():
    skipped = run("nvidia-driver", facts("\n".join(NOISE)))
    assert skipped.status is Status.SKIP and "no NVIDIA GPU" in skipped.summary
    serving = run("nvidia-driver", facts(PROOF["device-created"], gpu_listed=True))
    assert serving.status is Status.PASS and "Quadro RTX 6000" in serving.summary
    unused = run("nvidia-driver", facts(PROOF["gpu-libraries-not-loaded"]))
    assert unused.status is Status.WARN and "nvidia-smi is not found" in unused.summary
    assert "NVIDIA_DRIVER_CAPABILITIES" in unused.remediation.advice
    wsl = facts(PROOF["gpu-libraries-not-loaded"])
    wsl["os"]["wsl"] = {"version": 2}
    assert "/usr/lib/wsl/lib" in run("nvidia-driver", wsl).remediation.advice


def test_cuda_build_judges_the_gpu_only_the_log_shows():
    # No nvidia-smi, a CUDA build whose libraries cannot be loaded: a GPU machine, so a failure, not noise.
    machine = facts("\n".join((NOISE[1], PROOF["gpu-libraries-not-loaded"])), version="2.9.1")
    result = run("cuda-build", machine)
    assert result.status is Status.FAIL and "libcudart.so.11.0" in result.summary
    # The same libraries missing on a machine that shows no GPU: expected for a CUDA build, no verdict against it.
    quiet = facts("\n".join(NOISE), version="2.9.1")
    assert run("cuda-build", quiet).status is Status.PASS
    # The compute capability in the log is checked against the build's kernels.
    blackwell = run("cuda-build", facts(PROOF["ptx-jit"], gpu_listed=True, version="2.20.0"))
    assert blackwell.status is Status.FAIL and "12.0" in blackwell.summary
