"""The NVIDIA GPU that TensorFlow's own log proves (tfdoctor.facts.gpu_evidence.gpu_evidence): which recorded text
proves a GPU, nvidia-smi first, then the PCI bus, then the log."""

from __future__ import annotations

import pytest

from tfdoctor.facts.gpu_evidence import gpu_evidence, tensorflow_gpu_lines

from tests.nvidia_support import NOISE as LOGGED_NOISE, PROOF, logged_machine


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
