"""The nvidia-driver check: the driver against the CUDA a TensorFlow build needs, from nvidia-smi and /proc
readings (real outputs from the fixtures, with sources)."""

from __future__ import annotations

import pytest

from tfdoctor.checks.nvidia_driver import driver_summary, max_cuda_for_driver, parse_proc_driver_version
from tfdoctor.results.model import Status

from tests.builders import LINUX_HOST, check_result, fixture_facts, tensorflow_distribution
from tests.nvidia_support import NOISE as LOGGED_NOISE, PROOF, and_cuda_packages, logged_machine, query_only
from tests.plan_support import plan_of


def test_driver_too_old_for_tensorflow_cuda_12():
    facts = fixture_facts("linux/two-k80-driver-470-tensorflow-2.11.json")
    lines, packages = and_cuda_packages("2.21.0")
    facts["distributions"] = [tensorflow_distribution("2.21.0", requires=lines), *packages]
    facts.pop("tensorflow")
    result = check_result("nvidia-driver", facts)
    assert result.status is Status.FAIL and "525.60.13" in result.summary
    plan = plan_of(facts, result)
    assert [s.command for s in plan.steps] == ["python3 -m pip install -- 'tensorflow[and-cuda]==2.14.*'"]
    assert plan.moves_tensorflow.source == "tensorflow==2.21.0" and "driver 470" in plan.moves_tensorflow.why


def test_wsl2_uses_the_windows_driver_minimum():
    facts = {"host": {"system": "Linux", "machine": "x86_64", "release": "5.15.167.4-microsoft-standard-WSL2"},
             "distributions": [tensorflow_distribution("2.21.0")],
             "nvidia": query_only("name, driver_version, memory.total [MiB], compute_cap\n"
                                  "NVIDIA GeForce RTX 3060, 527.56, 12288 MiB, 8.6\n")}
    result = check_result("nvidia-driver", facts)
    assert result.status is Status.FAIL and "528.33" in result.summary


def test_gpu_on_the_bus_without_a_driver_and_module_without_nvidia_smi():
    missing = {"argv": ["nvidia-smi"], "status": "not_found", "exit_code": None, "stdout": "", "stderr": ""}
    facts = {"host": LINUX_HOST, "nvidia": {"smi": missing, "smi_query": None, "proc_driver_version": None,
                                       "pci_devices": [{"slot": "0000:01:00.0", "device": "0x2204", "class": "0x030000"}]}}
    assert check_result("nvidia-driver", facts).status is Status.FAIL
    facts["nvidia"]["proc_driver_version"] = ("NVRM version: NVIDIA UNIX x86_64 Kernel Module  384.130  Wed Mar 21 "
                                              "03:37:26 PDT 2018\n")
    result = check_result("nvidia-driver", facts)
    assert result.status is Status.WARN and "384.130" in result.summary


def test_consumer_gpu_without_forward_compat_is_fine_and_datacenter_compat_only_warns():
    facts = fixture_facts("linux/geforce-forward-compat-libcuda.json")
    text = facts["nvidia"]["smi"]["stdout"]
    facts["nvidia"]["smi"]["stdout"] = text.replace("CUDA Version: 11.8", "CUDA Version: 11.4")
    assert check_result("nvidia-driver", facts).status is Status.PASS
    facts["nvidia"]["smi"]["stdout"] = text.replace("NVIDIA GeForce ...", "Tesla T4          ")
    assert check_result("nvidia-driver", facts).status is Status.WARN


@pytest.mark.parametrize("driver, column, cuda", [
    ("470.161.03", "linux", "11.4"), ("550.54.15", "linux", "12.4"), ("580.105.08", "linux", "13.0"),
    ("555.99", "windows", "12.5"), ("573.76", "windows", "12.8"),
    ("580.88", "windows", None),  # newer than any Windows driver the table lists: cannot tell
    ("375.66", "linux", None),
])
def test_max_cuda_for_driver(driver, column, cuda):
    assert max_cuda_for_driver(driver, column) == cuda


def test_nvidia_driver_without_nvidia_smi():
    skipped = check_result("nvidia-driver", logged_machine("\n".join(LOGGED_NOISE)))
    assert skipped.status is Status.SKIP and "no NVIDIA GPU" in skipped.summary
    serving = check_result("nvidia-driver", logged_machine(PROOF["device-created"], gpu_listed=True))
    assert serving.status is Status.PASS and "Quadro RTX 6000" in serving.summary
    unused = check_result("nvidia-driver", logged_machine(PROOF["gpu-libraries-not-loaded"]))
    assert unused.status is Status.WARN and "nvidia-smi is not found" in unused.summary
    assert "NVIDIA_DRIVER_CAPABILITIES" in unused.remediation.advice
    wsl = logged_machine(PROOF["gpu-libraries-not-loaded"])
    wsl["os"]["wsl"] = {"version": 2}
    assert "/usr/lib/wsl/lib" in check_result("nvidia-driver", wsl).remediation.advice


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


def test_driver_summary_of_wsl2_names_both_versions():
    info = driver_summary(fixture_facts("linux/wsl2-rtx-pro-blackwell-tensorflow-2.20.json"))
    assert (info["state"], info["smi_version"], info["driver_version"], info["cuda_version"]) == (
        "ok", "570.194", "573.76", "12.8")
