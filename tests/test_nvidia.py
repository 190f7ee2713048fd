"""tfdoctor.facts.nvidia: parsers of real nvidia-smi / /proc outputs, detected_gpus, and TensorFlow's GPU log lines.

The long outputs are read from the fixtures (verbatim copies with their sources); short ones are quoted
here, each with the public report it comes from.
"""

from __future__ import annotations


import pytest

from tfdoctor import knowledge
from tfdoctor.checks.cuda_build import log_findings
from tfdoctor.checks.nvidia_driver import driver_summary, parse_proc_driver_version
from tfdoctor.facts.nvidia import (
    classify_smi,
    cuda_visible_devices,
    detected_gpus,
    noise_kind,
    parse_smi_query,
    parse_smi_table,
    strip_log_prefix,
)
from tests.builders import fixture_facts





def smi_stdout(name: str) -> str:
    return fixture_facts(name)["nvidia"]["smi"]["stdout"]


# ---------------------------------------------------------------- the table, across driver generations

@pytest.mark.parametrize("fixture, smi_version, driver, cuda, names, memory", [
    ("linux/t4-driver-580-tensorflow-2.21-and-cuda.json", "580.105.08", "580.105.08", "13.0", ["Tesla T4"], 15360),
    ("linux/colab-t4-driver-550-tensorflow-2.19.json", "550.54.15", "550.54.15", "12.4", ["Tesla T4"], 15360),
    ("linux/two-k80-driver-470-tensorflow-2.11.json", "470.161.03", "470.161.03", "11.4", ["Tesla K80", "Tesla K80"], 11441),
    ("linux/geforce-forward-compat-libcuda.json", "470.161.03", "470.161.03", "11.8", ["NVIDIA GeForce ..."], 11178),
    ("linux/wsl2-rtx-pro-blackwell-tensorflow-2.20.json", "570.194", "573.76", "12.8", ["NVIDIA RTX PRO 1000 Blac..."], None),
    ("other/windows-tensorflow-2.11-nvidia-gpu.json", "555.99", "555.99", "12.5", ["NVIDIA GeForce RTX 3060"], 12288),
])
def test_table_layouts(fixture, smi_version, driver, cuda, names, memory):
    parsed = parse_smi_table(smi_stdout(fixture))
    assert (parsed["smi_version"], parsed["driver_version"], parsed["cuda_version"]) == (smi_version, driver, cuda)
    assert [g["name"] for g in parsed["gpus"]] == names
    assert parsed["gpus"][0]["memory_total_mib"] == memory
    assert [g["index"] for g in parsed["gpus"]] == list(range(len(names)))


def test_truncated_names_are_marked():
    parsed = parse_smi_table(smi_stdout("linux/geforce-forward-compat-libcuda.json"))
    assert parsed["gpus"][0]["name_truncated"] is True


@pytest.mark.parametrize("header, driver, cuda", [
    # pre-410 drivers print no CUDA Version (NVIDIA/nvidia-docker#497)
    ("| NVIDIA-SMI 375.66                 Driver Version: 375.66                    |", "375.66", None),
    # a driver without libcuda's CUDA reports N/A (fs:24196938122)
    ("| NVIDIA-SMI 550.54.15              Driver Version: 550.54.15      CUDA Version: N/A      |", "550.54.15", None),
    # cut after the label in the stored issue (tensorflow/tensorflow#65269, WSL2)
    ("| NVIDIA-SMI 550.73.01              Driver Version: 552.12         CUDA Version:", "552.12", None),
    # an old nvidia-smi from a snap talking to a 580 driver (canonical/inference-snaps#89)
    ("| NVIDIA-SMI 470.256.02   Driver Version: 580.95.05    CUDA Version: 13.0     |", "580.95.05", "13.0"),
])
def test_header_variants(header, driver, cuda):
    parsed = parse_smi_table(header)
    assert (parsed["driver_version"], parsed["cuda_version"], parsed["gpus"]) == (driver, cuda, [])


def test_windows_narrow_layout_row():
    text = ("| NVIDIA-SMI 451.48       Driver Version: 451.48       CUDA Version: 11.0     |\n"
            "| GPU  Name            TCC/WDDM | Bus-Id        Disp.A | Volatile Uncorr. ECC |\n"
            "|   0  GeForce GTX 108... WDDM  | 00000000:01:00.0 Off |                  N/A |\n")  # tensorflow/tensorflow#44391
    assert parse_smi_table(text)["gpus"][0]["name"] == "GeForce GTX 108..."


def test_failure_text_is_not_a_table():
    assert parse_smi_table("Failed to initialize NVML: Driver/library version mismatch\n") is None
    assert parse_smi_table("") is None


# ---------------------------------------------------------------- --query-gpu CSV

def test_query_with_header():
    rows = parse_smi_query(fixture_facts("linux/h100-tensorflow-2.15-ptx-jit.json")["nvidia"]["smi_query"]["stdout"])
    assert rows == [{"index": None, "name": "NVIDIA H100 80GB HBM3", "driver_version": "580.82.07",
                     "memory_total_mib": 81559, "compute_capability": "9.0"}]


def test_query_columns_follow_the_header_not_an_assumed_order():
    text = ("compute_cap, compute_mode, driver_version, name, index\n"
            "7.0, Default, 570.86.15, NVIDIA TITAN V, 0\n"
            "8.9, Default, 570.86.15, NVIDIA RTX 5880 Ada Generation, 1\n")  # triton-inference-server/server#8070
    rows = parse_smi_query(text)
    assert [(r["index"], r["name"], r["compute_capability"]) for r in rows] == [
        (0, "NVIDIA TITAN V", "7.0"), (1, "NVIDIA RTX 5880 Ada Generation", "8.9")]


def test_query_nounits_and_noheader():
    rows = parse_smi_query("GeForce RTX 3090, 535.129.03, 24576, 24451\n",
                           ("name", "driver_version", "memory.total", "memory.free"))  # fs:31384027323
    assert rows[0]["memory_total_mib"] == 24576 and rows[0]["name"] == "GeForce RTX 3090"


def test_query_missing_values_and_error_text():
    assert parse_smi_query("name, driver_version, memory.total [MiB], compute_cap\nX, 1.0, [N/A], [Not Supported]\n")[0][
        "compute_capability"] is None
    assert parse_smi_query('Field "compute_cap" is not a valid field to query.\n') == []


# ---------------------------------------------------------------- /proc/driver/nvidia/version

@pytest.mark.parametrize("text, version", [
    ("NVRM version: NVIDIA UNIX x86_64 Kernel Module  384.130  Wed Mar 21 03:37:26 PDT 2018\n"
     "GCC version:  gcc version 5.4.0 20160609 (Ubuntu 5.4.0-6ubuntu1~16.04.10) \n", "384.130"),  # tensorflow#22525
    ("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.95.05  Release Build  "
     "(dvs-builder@U22-I3-B17-02-5)  Tue Sep 23 09:55:41 UTC 2025\n", "580.95.05"),  # fs:43554159245
    (None, None),
    ("garbage", None),
])
def test_proc_driver_version(text, version):
    assert parse_proc_driver_version(text) == version


# ---------------------------------------------------------------- what a failed nvidia-smi means

@pytest.mark.parametrize("fixture, state", [
    ("linux/nvidia-smi-driver-not-loaded.json", "driver_not_loaded"),
    ("linux/nvidia-smi-version-mismatch.json", "version_mismatch"),
    ("linux/nvidia-smi-hangs.json", "timed_out"),
    ("linux/cpu-only-tensorflow-cpu-no-gpu.json", "not_found"),
    ("linux/t4-driver-580-tensorflow-2.21-and-cuda.json", "ok"),
])
def test_classify_recorded_results(fixture, state):
    assert classify_smi(fixture_facts(fixture)["nvidia"]["smi"]) == state


def test_classify_exit_code_and_unknown():
    assert classify_smi({"status": "failed", "exit_code": 9, "stdout": "", "stderr": ""}) == "driver_not_loaded"
    assert classify_smi({"status": "failed", "exit_code": 3, "stdout": "", "stderr": ""}) == "failed"
    assert classify_smi(None) == "not_recorded"


# ---------------------------------------------------------------- detected_gpus

def test_detected_gpus_merges_query_and_table():
    gpus = detected_gpus(fixture_facts("linux/blackwell-rtx-5070-ti-tf-nightly.json"))
    assert gpus == [{"index": 0, "name": "NVIDIA GeForce RTX 5070 Ti", "driver_version": "580.95.05",
                     "cuda_version": "13.0", "compute_capability": "12.0", "memory_mib": 16303}]


def test_detected_gpus_from_table_only_and_query_only():
    k80 = detected_gpus(fixture_facts("linux/two-k80-driver-470-tensorflow-2.11.json"))
    assert [(g["index"], g["name"], g["compute_capability"], g["cuda_version"]) for g in k80] == [
        (0, "Tesla K80", None, "11.4"), (1, "Tesla K80", None, "11.4")]
    h100 = detected_gpus(fixture_facts("linux/h100-tensorflow-2.15-ptx-jit.json"))
    assert [(g["name"], g["compute_capability"], g["cuda_version"]) for g in h100] == [
        ("NVIDIA H100 80GB HBM3", "9.0", None)]


@pytest.mark.parametrize("fixture", [
    "linux/cpu-only-tensorflow-cpu-no-gpu.json", "linux/nvidia-smi-hangs.json",
    "linux/nvidia-smi-driver-not-loaded.json", "linux/proxmox-kvm64-no-avx.json",
])
def test_no_gpu_detected(fixture):
    assert detected_gpus(fixture_facts(fixture)) == []


def test_driver_summary_of_wsl2_names_both_versions():
    info = driver_summary(fixture_facts("linux/wsl2-rtx-pro-blackwell-tensorflow-2.20.json"))
    assert (info["state"], info["smi_version"], info["driver_version"], info["cuda_version"]) == (
        "ok", "570.194", "573.76", "12.8")


@pytest.mark.parametrize("value, count, visible, hides_all", [
    ("1", 1, [], True),  # Mobilenet-ssd-keras#10: index 1 on a one-GPU machine
    ("-1", 2, [], True),
    ("", 1, [], True),
    ("0", 1, ["0"], False),
    ("1,0", 2, ["1", "0"], False),
    ("0,5,1", 2, ["0"], False),  # CUDA stops at the first invalid entry
    ("GPU-e1924eea-b9bb-d537-39f2-b345087fa145", 1, ["GPU-e1924eea-b9bb-d537-39f2-b345087fa145"], False),
])
def test_cuda_visible_devices(value, count, visible, hides_all):
    got = cuda_visible_devices({"environment": {"CUDA_VISIBLE_DEVICES": value}}, count)
    assert (got["visible"], got["hides_all"]) == (visible, hides_all)
    assert cuda_visible_devices({"environment": {}}, count) is None


# ---------------------------------------------------------------- TensorFlow's log lines

@pytest.mark.parametrize("line, message", [
    ("2023-10-09 13:36:23.355516: E tensorflow/compiler/xla/stream_executor/cuda/cuda_dnn.cc:9342] Unable to register",
     "Unable to register"),
    ("E0000 00:00:1751448150.986970   10148 cuda_dnn.cc:8579] Unable to register", "Unable to register"),
    ("W0000 00:00:1753232013.685876   24341 gpu_device.cc:2431] TensorFlow was not built", "TensorFlow was not built"),
    ("I tensorflow/core/util/port.cc:113] oneDNN custom operations are on.", "oneDNN custom operations are on."),
    ("LLVM ERROR: PTX version 8.5 does not support target", "LLVM ERROR: PTX version 8.5 does not support target"),
])
def test_both_log_prefix_styles_are_stripped(line, message):
    assert strip_log_prefix(line) == message


# Harmless lines from real logs: tensorflow/tensorflow#62075, #62170, #63362, bmaltais/kohya_ss#3320,
# serengil/deepface#739 (the two noise fixtures hold more).
NOISE = [
    ("E tensorflow/compiler/xla/stream_executor/cuda/cuda_fft.cc:609] Unable to register cuFFT factory: Attempting to "
     "register factory for plugin cuFFT when one has already been registered", "duplicate-factory-registration"),
    ("E tensorflow/compiler/xla/stream_executor/cuda/cuda_blas.cc:1518] Unable to register cuBLAS factory: Attempting to "
     "register factory for plugin cuBLAS when one has already been registered", "duplicate-factory-registration"),
    ("W0000 00:00:1751448150.986970   10148 computation_placer.cc:177] computation placer already registered. Please "
     "check linkage and avoid linking the same target more than once.", "computation-placer-registered"),
    ("W tensorflow/compiler/tf2tensorrt/utils/py_utils.cc:38] TF-TRT Warning: Could not find TensorRT", "tensorrt-missing"),
    ("I tensorflow/stream_executor/cuda/cuda_gpu_executor.cc:941] successful NUMA node read from SysFS had negative value "
     "(-1), but there must be at least one NUMA node, so returning NUMA node zero", "numa-negative"),
    ("I external/local_xla/xla/stream_executor/cuda/cuda_executor.cc:984] could not open file to read NUMA node: "
     "/sys/bus/pci/devices/0000:2d:00.0/numa_node", "numa-unreadable"),
    ("Your kernel may have been built without NUMA support.", "numa-unreadable"),
    ("WARNING: All log messages before absl::InitializeLog() is called are written to STDERR", "absl-initlog"),
    ("I tensorflow/core/platform/cpu_feature_guard.cc:210] This TensorFlow binary is optimized to use available CPU "
     "instructions in performance-critical operations.", "cpu-feature-notice"),
    ("To enable the following instructions: AVX2 AVX512F AVX512_VNNI FMA, in other operations, rebuild TensorFlow with "
     "the appropriate compiler flags.", "cpu-feature-notice"),
]


@pytest.mark.parametrize("line, kind", NOISE)
def test_known_noise_is_recognised_and_never_a_signal(line, kind):
    assert noise_kind(line) == kind
    found = log_findings(line)
    assert found["signals"] == [] and [n["id"] for n in found["noise"]] == [kind]


def test_noise_fixtures_contain_nothing_but_noise():
    for name in ("linux/log-noise-only-relernn.json", "linux/log-noise-tensorflow-2.17-factory-registration.json"):
        found = log_findings(fixture_facts(name)["tensorflow"]["stderr_tail"])
        assert found["signals"] == [] and len(found["noise"]) == 3


def test_cpu_only_lines_are_noise_only_without_a_gpu():
    line = "I tensorflow/tsl/cuda/cudart_stub.cc:28] Could not find cuda drivers on your machine, GPU will not be used."
    assert noise_kind(line, gpu_expected=False) == "no-cuda-drivers"
    assert noise_kind(line, gpu_expected=True) is None
    assert [s["id"] for s in log_findings(line, gpu_expected=True)["signals"]] == ["cuda-drivers-not-found"]


@pytest.mark.parametrize("line, signal, values", [
    ("E0000 00:00:1738697930.202924    7665 cuda_dnn.cc:522] Loaded runtime CuDNN library: 9.1.0 but source was compiled "
     "with: 9.3.0.  CuDNN library needs to have matching major version and equal or higher minor version.",
     "cudnn-version-mismatch", {"loaded": "9.1.0", "compiled": "9.3.0"}),
    # cut in the corpus (tensorflow/tensorflow#60750): the loaded version still reads
    ("E tensorflow/compiler/xla/stream_executor/cuda/cuda_dnn.cc:417] Loaded runtime CuDNN library: 8.1.1 but source was "
     "compiled wit", "cudnn-version-mismatch", {"loaded": "8.1.1"}),
    ("W tensorflow/stream_executor/platform/default/dso_loader.cc:64] Could not load dynamic library 'libcusolver.so.11'; "
     "dlerror: libcusolver.so.11: cannot open shared object file: No such file or directory",
     "cuda-library-missing", {"library": "libcusolver.so.11"}),
    ("E tensorflow/stream_executor/cuda/cuda_driver.cc:271] failed call to cuInit: CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE:"
     " forward compatibility was attempted on non supported HW", "cuinit-failed",
     {"error": "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE"}),
    ("I tensorflow/core/common_runtime/gpu/gpu_device.cc:1717] Ignoring visible gpu device (device: 0, name: GeForce GTX "
     "TITAN X, pci bus id: 0000:02:00.0, compute capability: 5.2) with Cuda compute capability 5.2. The minimum required "
     "Cuda capability is 6.0.", "gpu-below-minimum", {"cc": "5.2", "minimum": "6.0"}),
    ("W tensorflow/core/common_runtime/gpu/gpu_device.cc:2052] TensorFlow was not built with CUDA kernel binaries "
     "compatible with compute capability 9.0. CUDA kernels will be jit-compiled from PTX, which could take 30 minutes or "
     "longer.", "ptx-jit", {"cc": "9.0"}),
    ("LLVM ERROR: PTX version 8.5 does not support target 'sm_120' (or 'sm_120a'). Minimum required PTX version is 8.7",
     "ptx-target-unsupported", {"ptx": "8.5", "target": "sm_120"}),
    ("ptxas application ptx input, line 9; fatal : Unsupported .version 8.5; current version is '8.4'",
     "unsupported-ptx-version", {"ptx": "8.5", "supported": "8.4"}),
    ("E tensorflow/stream_executor/cuda/cuda_diagnostics.cc:313] kernel version 455.32.0 does not match DSO version "
     "460.73.1 -- cannot find working devices in this configuration", "driver-dso-mismatch",
     {"kernel": "455.32.0", "dso": "460.73.1"}),
    ("F tensorflow/core/platform/cpu_feature_guard.cc:37] The TensorFlow library was compiled to use AVX instructions, "
     "but these aren't available on your machine.", "cpu-lacks-instructions", {"isa": "AVX"}),
])
def test_problem_signals(line, signal, values):
    found = log_findings(line)
    assert found["noise"] == []
    assert found["signals"][0]["id"] == signal
    assert {k: found["signals"][0].get(k) for k in values} == values


def test_every_log_table_row_has_a_working_pattern():
    for table in ("noise", "log_signals"):
        rows = knowledge.rows("linux", table)
        assert rows and len({r["id"] for r in rows}) == len(rows)
        for row in rows:
            assert row["source"] and isinstance(row["verified"], bool)
