"""Kernels that cannot run on this GPU, proven by what TensorFlow said (CUDA_ERROR_INVALID_PTX, "no kernel image
is available for execution on the device", "device kernel image is invalid") or by the error the probe's GPU side
raised: cuda-build fails even where its kernel table says nothing or says they should run, and asks for the
release with kernels for that compute capability, or the CPU build."""

from __future__ import annotations

import pytest

from tests.plan_support import plan_commands
from tests.builders import LINUX, run, tensorflow_distribution
from tests.nvidia_support import and_cuda_packages, query_only
from tfdoctor.facts.nvidia import tensorflow_gpu_lines
from tfdoctor.model import Status
from tfdoctor.repairs import Action

# Real lines, from the reports cited in knowledge/linux.toml and the fixtures.
INVALID_PTX = ("W tensorflow/compiler/mlir/tools/kernel_gen/tf_gpu_runtime_wrappers.cc:40] "
               "'cuModuleLoadData(&module, data)' failed with 'CUDA_ERROR_INVALID_PTX'")  # tensorflow#99592
NO_KERNEL_IMAGE = (r"F .\tensorflow/core/kernels/random_op_gpu.h:232] Non-OK-status: GpuLaunchKernel("
                   "FillPhiloxRandomKernelLaunch<Distribution>, num_blocks, block_size, 0, d.stream(), gen, data, size, "
                   "dist) status: Internal: no kernel image is available for execution on the device")  # #42052
KERNEL_IMAGE_INVALID = "CUDA runtime implicit initialization on GPU:0 failed. Status: device kernel image is invalid"


def gpu_facts(cc: str, version: str, name: str = "GPU", stderr: str = "", probe_error: str | None = None,
              distribution: str = "tensorflow") -> dict:
    lines, packages = and_cuda_packages(version) if distribution == "tensorflow" else ([], [])
    probe = {"status": "incomplete", "sides": {"gpu": {"device": "/GPU:0", "kind": "GPU",
                                                       "error": {"type": "InternalError", "message": probe_error}}}} \
        if probe_error else None
    return {"host": LINUX, "python": {"version": "3.11.7", "machine": "x86_64"},
            "distributions": [tensorflow_distribution(version, name=distribution, requires=lines), *packages],
            "nvidia": query_only(f"name, driver_version, memory.total [MiB], compute_cap\n{name}, 580.95.05, 16303 MiB, {cc}\n"),
            "tensorflow": {"status": "ok", "imported": True, "version": version, "stderr_tail": stderr,
                           "devices": [{"name": "/physical_device:GPU:0", "device_type": "GPU"}], "probe": probe}}


def test_kernels_the_table_says_run_but_the_log_proves_cannot_move_to_the_cpu_build():
    facts = gpu_facts("8.6", "2.18.0", "NVIDIA GeForce RTX 3090", stderr=NO_KERNEL_IMAGE)
    assert run("cuda-build", gpu_facts("8.6", "2.18.0")).status is Status.PASS  # the table alone: native kernels
    result = run("cuda-build", facts)
    assert result.status is Status.FAIL
    assert result.summary == ("TensorFlow 2.18.0's GPU kernels cannot run on NVIDIA GeForce RTX 3090 "
                              "(compute capability 8.6)")
    assert any("no kernel image is available" in d for d in result.details)
    assert plan_commands(facts, result) == ["python3 -m pip uninstall -y tensorflow",
                                            "python3 -m pip install 'tensorflow-cpu==2.18.0'"]


def test_a_jit_warning_becomes_a_failure_when_the_jit_fails_and_names_the_release_with_native_kernels():
    assert run("cuda-build", gpu_facts("9.0", "2.15.0", "NVIDIA H100")).status is Status.WARN
    facts = gpu_facts("9.0", "2.15.0", "NVIDIA H100", stderr=INVALID_PTX)
    result = run("cuda-build", facts)
    assert result.status is Status.FAIL and "cannot run on NVIDIA H100 (compute capability 9.0)" in result.summary
    install = [r for r in result.remediation.repairs if r.action is Action.INSTALL]
    assert [r.packages for r in install] == [("tensorflow[and-cuda]==2.21.*",)]  # 2.22 is only a release candidate
    assert "newest release with kernels" in install[0].reason


def test_the_probes_gpu_error_is_proof_too():
    facts = gpu_facts("8.6", "2.18.0", "NVIDIA GeForce RTX 3090", probe_error=KERNEL_IMAGE_INVALID)
    result = run("cuda-build", facts)
    assert result.status is Status.FAIL and any(KERNEL_IMAGE_INVALID in d for d in result.details)


def test_a_gpu_too_old_keeps_the_tables_failure_and_adds_no_second_one():
    facts = gpu_facts("5.2", "2.18.0", "Tesla M60", stderr=NO_KERNEL_IMAGE)
    result = run("cuda-build", facts)
    assert result.status is Status.FAIL and "older than every GPU" in result.summary
    assert not any("cannot run on" in p["summary"] for p in result.evidence["problems"])


def test_blackwell_with_proof_offers_the_cpu_build_without_proof_only_advice():
    reported = run("cuda-build", gpu_facts("12.0", "2.21.0", "NVIDIA GeForce RTX 5080"))
    assert reported.status is Status.FAIL and reported.remediation.repairs == ()
    facts = gpu_facts("12.0", "2.21.0", "NVIDIA GeForce RTX 5080", stderr=INVALID_PTX)
    proven = run("cuda-build", facts)
    assert proven.status is Status.FAIL and "which fails here" in proven.summary
    assert plan_commands(facts, proven) == ["python3 -m pip uninstall -y tensorflow",
                                            "python3 -m pip install 'tensorflow-cpu==2.21.0'"]


def test_the_cpu_build_on_a_gpu_no_release_runs_passes_and_on_a_supported_gpu_still_warns():
    blackwell = gpu_facts("12.0", "2.21.0", "NVIDIA GeForce RTX 5080", distribution="tensorflow-cpu")
    result = run("cuda-build", blackwell)
    assert result.status is Status.PASS and "no TensorFlow release ships kernels for" in result.summary
    turing = gpu_facts("7.5", "2.21.0", "Tesla T4", distribution="tensorflow-cpu")
    assert run("cuda-build", turing).status is Status.WARN


def test_a_nightly_has_no_cpu_build_to_offer():
    facts = gpu_facts("8.6", "2.22.0.dev20250722", "NVIDIA GeForce RTX 3090", stderr=NO_KERNEL_IMAGE,
                      distribution="tf-nightly")
    result = run("cuda-build", facts)
    assert result.status is Status.FAIL and result.remediation.repairs == ()
    assert "the CPU build of TensorFlow" in result.remediation.advice


@pytest.mark.parametrize("line, name, cc", [
    ("pciBusID: 0000:01:00.0 name: GeForce GTX 960M computeCapability: 5.0", "GeForce GTX 960M", "5.0"),
    ("pciBusID: 0000:01:00.0 name: NVIDIA GeForce GTX 1660 Ti computeCapability: 7.5", "NVIDIA GeForce GTX 1660 Ti",
     "7.5"),
])
def test_the_device_properties_line_of_tensorflow_2_1_to_2_4_names_the_gpu_and_its_capability(line, name, cc):
    (found,) = tensorflow_gpu_lines({"stderr_tail": line})
    assert (found["id"], found["name"], found["cc"]) == ("device-properties", name, cc)
