"""Tests support: the NVIDIA side of Linux facts (nvidia-smi records, the and-cuda wheels) and TensorFlow log
lines that prove a GPU or prove nothing, each quoted from a public report."""

from __future__ import annotations

import copy

from tfdoctor import knowledge

from tests.builders import LINUX_HOST, distribution

QUERY = ["nvidia-smi", "--query-gpu=name,driver_version,memory.total,compute_cap", "--format=csv"]


def nvidia_wheel(name: str, version: str) -> dict:
    """One of the nvidia-* CUDA library wheels that `tensorflow[and-cuda]` installs."""
    return distribution(name, version, requires=[], top_level=["nvidia"])


def query_only(csv_text: str) -> dict:
    return {"smi": None, "smi_query": {"argv": QUERY, "status": "ok", "exit_code": 0, "stdout": csv_text, "stderr": ""}}


def and_cuda_packages(version: str) -> tuple[list[str], list[dict]]:
    row = next(r for r in knowledge.rows("linux", "and_cuda") if version in r["tf_versions"])
    lines = [f'{r}; extra == "and-cuda"' for r in row["requires"]]
    packages = []
    for requirement in row["requires"]:
        if requirement.startswith("nvidia-"):
            name = requirement.split("=")[0].split("<")[0].split(">")[0]
            bound = requirement.split("==")[1] if "==" in requirement else requirement.split(">=")[1].split(",")[0]
            packages.append(nvidia_wheel(name, bound))
    return lines, packages


T4 = "linux/t4-driver-580-tensorflow-2.21-and-cuda.json"


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
    # tensorflow/tensorflow#68711 (WSL2 Docker, driver 555.85: the container toolkit does not map a new library)
    "driver-failed": "E external/local_xla/xla/stream_executor/cuda/cuda_driver.cc:282] failed call to cuInit: "
                     "CUDA_ERROR_NOT_FOUND: named symbol not found",
    # MBoemo/DNAscent#87 (CUDA 11.0.3 in a container on a compute capability 8.9 GPU)
    "ptxas-lacks-architecture": "W tensorflow/stream_executor/gpu/asm_compiler.cc:235] Your CUDA software stack is old. We "
                     "fallback to the NVIDIA driver for some compilation. Update your CUDA version to get the best "
                     "performance. The ptxas error was: ptxas fatal   : Value 'sm_89' is not defined for option "
                     "'gpu-name'",
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


def logged_machine(stderr: str, *, nvidia=NO_SMI, gpu_listed: bool = False, version: str = "2.16.1") -> dict:
    devices = [{"name": "/physical_device:CPU:0", "device_type": "CPU"}]
    if gpu_listed:
        devices.append({"name": "/physical_device:GPU:0", "device_type": "GPU"})
    """A Linux machine whose TensorFlow logged `stderr` (nvidia-smi as `nvidia` says)."""
    return {
        "host": dict(LINUX_HOST), "os": {"wsl": None}, "environment": {},
        "python": {"version": "3.10.12", "machine": "x86_64"},
        "distributions": [{"name": "tensorflow", "version": version, "requires": [], "top_level": ["tensorflow"]}],
        "nvidia": copy.deepcopy(nvidia) if nvidia is not None else None,
        "tensorflow": {"status": "ok", "imported": True, "version": version, "stderr_tail": stderr,
                       "devices": devices, "build_info": None},
    }
