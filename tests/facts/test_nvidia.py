"""nvidia-smi's table and CSV, /proc/driver/nvidia/version, detected GPUs and CUDA_VISIBLE_DEVICES, and
TensorFlow's GPU lines: real outputs of every driver generation (fixtures with sources)."""

from __future__ import annotations

import pytest

from tfdoctor.facts.nvidia_smi import classify_smi, detected_gpus, parse_smi_query, parse_smi_table
from tfdoctor.facts.gpu_evidence import cuda_visible_devices, tensorflow_gpu_lines

from tests.builders import fixture_facts


@pytest.mark.parametrize("line, name, cc", [
    ("pciBusID: 0000:01:00.0 name: GeForce GTX 960M computeCapability: 5.0", "GeForce GTX 960M", "5.0"),
    ("pciBusID: 0000:01:00.0 name: NVIDIA GeForce GTX 1660 Ti computeCapability: 7.5", "NVIDIA GeForce GTX 1660 Ti",
     "7.5"),
])
def test_the_device_properties_line_of_tensorflow_2_1_to_2_4_names_the_gpu_and_its_capability(line, name, cc):
    (found,) = tensorflow_gpu_lines({"stderr_tail": line})
    assert (found["id"], found["name"], found["cc"]) == ("device-properties", name, cc)


def smi_stdout(name: str) -> str:
    return fixture_facts(name)["nvidia"]["smi"]["stdout"]


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
