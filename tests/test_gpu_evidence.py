"""The NVIDIA GPU that TensorFlow's own log proves (tfdoctor.facts.nvidia.gpu_evidence), and what each GPU
check makes of it when nvidia-smi is missing or says nothing.

Every log line is quoted from a real log, with the public report it comes from.
"""

from __future__ import annotations


import pytest

from tfdoctor.facts.nvidia import gpu_evidence, tensorflow_gpu_lines
from tfdoctor.model import Status
from tests.builders import run
from tests.nvidia_support import NOISE as LOGGED_NOISE, PROOF, SMI_CANNOT_REACH_DRIVER, logged_machine








@pytest.mark.parametrize("kind", sorted(PROOF))
def test_each_line_logged_only_with_a_gpu_is_evidence(kind):
    [found] = tensorflow_gpu_lines({"stderr_tail": PROOF[kind]})
    assert found["id"] == kind.replace("-old", "")
    assert not found["line"].startswith(("W ", "I ", "E ", "W0000", "I0000"))  # the log prefix is stripped


def test_names_and_compute_capabilities_are_read_from_the_lines():
    found = tensorflow_gpu_lines({"stderr_tail": "\n".join((PROOF["device-created"], PROOF["gpu-ignored"]))})
    assert [(f["name"], f["cc"]) for f in found] == [("Quadro RTX 6000", "7.5"), ("GeForce GTX TITAN X", "5.2")]


def test_lines_printed_without_a_gpu_prove_nothing():
    assert tensorflow_gpu_lines({"stderr_tail": "\n".join(LOGGED_NOISE)}) == []
    evidence = gpu_evidence(logged_machine("\n".join(LOGGED_NOISE)))
    assert evidence["present"] is False and evidence["source"] is None


def test_evidence_is_read_from_every_recorded_text():
    tf = {"stderr_head": PROOF["device-created"], "notable_lines": [PROOF["ptx-jit"]],
          "errors": {"probe": {"type": "InternalError", "message": PROOF["kernel-load-failed"]}}}
    assert {f["id"] for f in tensorflow_gpu_lines(tf)} == {"device-created", "ptx-jit", "kernel-load-failed"}


def test_nvidia_smi_comes_first_then_pci_then_the_log():
    machine = logged_machine(PROOF["gpu-libraries-not-loaded"])
    assert gpu_evidence(machine)["source"] == "tensorflow-log"
    assert "Cannot dlopen some GPU libraries" in gpu_evidence(machine)["why"]
    machine["nvidia"]["pci_devices"] = [{"slot": "0000:01:00.0", "device": "1eb8"}]
    assert gpu_evidence(machine)["source"] == "pci"


def test_gpu_visible_expects_the_gpu_the_log_proves():
    result = run("gpu-visible", logged_machine(PROOF["gpu-libraries-not-loaded"]))
    assert result.status is Status.FAIL
    assert result.summary.startswith("TensorFlow's log shows an NVIDIA GPU") and "lists no GPU" in result.summary
    # also where nvidia-smi answered but could not reach the driver, and where NVIDIA facts were not recorded
    for nvidia in (SMI_CANNOT_REACH_DRIVER, None):
        assert run("gpu-visible", logged_machine(PROOF["gpu-libraries-not-loaded"], nvidia=nvidia)).status is Status.FAIL


def test_gpu_visible_passes_when_the_proven_gpu_is_listed_or_only_noise_was_logged():
    assert run("gpu-visible", logged_machine(PROOF["device-created"], gpu_listed=True)).status is Status.PASS
    result = run("gpu-visible", logged_machine("\n".join(LOGGED_NOISE)))
    assert result.status is Status.PASS and result.summary.startswith("No GPU expected")


def test_nvidia_driver_without_nvidia_smi():
    skipped = run("nvidia-driver", logged_machine("\n".join(LOGGED_NOISE)))
    assert skipped.status is Status.SKIP and "no NVIDIA GPU" in skipped.summary
    serving = run("nvidia-driver", logged_machine(PROOF["device-created"], gpu_listed=True))
    assert serving.status is Status.PASS and "Quadro RTX 6000" in serving.summary
    unused = run("nvidia-driver", logged_machine(PROOF["gpu-libraries-not-loaded"]))
    assert unused.status is Status.WARN and "nvidia-smi is not found" in unused.summary
    assert "NVIDIA_DRIVER_CAPABILITIES" in unused.remediation.advice
    wsl = logged_machine(PROOF["gpu-libraries-not-loaded"])
    wsl["os"]["wsl"] = {"version": 2}
    assert "/usr/lib/wsl/lib" in run("nvidia-driver", wsl).remediation.advice


def test_cuda_build_judges_the_gpu_only_the_log_shows():
    # No nvidia-smi, a CUDA build whose libraries cannot be loaded: a GPU machine, so a failure, not noise.
    machine = logged_machine("\n".join((LOGGED_NOISE[1], PROOF["gpu-libraries-not-loaded"])), version="2.9.1")
    result = run("cuda-build", machine)
    assert result.status is Status.FAIL and "libcudart.so.11.0" in result.summary
    # The same libraries missing on a machine that shows no GPU: expected for a CUDA build, no verdict against it.
    quiet = logged_machine("\n".join(LOGGED_NOISE), version="2.9.1")
    assert run("cuda-build", quiet).status is Status.PASS
    # The compute capability in the log is checked against the build's kernels.
    blackwell = run("cuda-build", logged_machine(PROOF["ptx-jit"], gpu_listed=True, version="2.20.0"))
    assert blackwell.status is Status.FAIL and "12.0" in blackwell.summary
