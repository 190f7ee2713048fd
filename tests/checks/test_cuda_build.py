"""The cuda-build check: a CUDA build for an NVIDIA GPU, its kernels for the GPU's compute capability, its CUDA
libraries, and TensorFlow's log as proof (log lines quoted from public reports)."""

from __future__ import annotations

import pytest

from tfdoctor import knowledge
from tfdoctor.checks.cuda_build import and_cuda_requirements, kernel_support, log_findings
from tfdoctor.checks.nvidia_driver import driver_for_cuda
from tfdoctor.facts.tensorflow_build import tensorflow_build
from tfdoctor.facts.tensorflow_log import noise_kind, strip_log_prefix
from tfdoctor.results.model import Status
from tfdoctor.results.repairs import Action

from tests.builders import LINUX_HOST, check_result, fix_text, fixture_facts, tensorflow_distribution
from tests.nvidia_support import (
    NOISE as LOGGED_NOISE,
    PROOF,
    T4,
    and_cuda_packages,
    logged_machine,
    nvidia_wheel,
    query_only,
)
from tests.plan_support import plan_commands, plan_of


def test_cpu_only_tensorflow_with_an_nvidia_gpu_warns_with_the_fix():
    facts = fixture_facts(T4)
    facts["distributions"] = [tensorflow_distribution("2.21.0", name="tensorflow-cpu")]
    result = check_result("cuda-build", facts)
    assert result.status is Status.WARN and "CPU-only" in result.summary
    assert result.remediation.commands == ()
    plan = plan_of(facts, result)  # the build switch: the CPU build out, the CUDA build of the same version in
    assert [s.command for s in plan.steps] == ["python3 -m pip uninstall -y -- tensorflow-cpu",
                                               "python3 -m pip install -- 'tensorflow[and-cuda]==2.21.0'"]
    assert not plan.conflicts and plan.moves_tensorflow.target == "tensorflow[and-cuda]==2.21.0"
    assert "CPU-only build" in plan.moves_tensorflow.why


def test_build_info_is_believed_over_the_distribution_name():
    facts = fixture_facts(T4)
    facts["tensorflow"] = {"status": "ok", "version": "2.21.0",
                           "build_info": {"is_cuda_build": False, "is_rocm_build": False, "is_tensorrt_build": False}}
    assert check_result("cuda-build", facts).status is Status.WARN


@pytest.mark.parametrize("cc, version, status", [
    ("3.7", "2.21.0", Status.FAIL),   # Kepler: no kernels since 2.15
    ("5.2", "2.18.0", Status.FAIL),   # Maxwell dropped in 2.17
    ("5.2", "2.16.1", Status.FAIL),   # ... but 2.16.1 fails for its own RUNPATH trap
    ("7.5", "2.21.0", Status.PASS),   # Turing runs sm_70 code
    ("8.6", "2.18.0", Status.PASS),
    ("9.0", "2.21.0", Status.PASS),
    ("9.0", "2.15.0", Status.WARN),   # Hopper: PTX JIT
    ("12.0", "2.21.0", Status.FAIL),  # Blackwell: no kernels in any release
])
def test_compute_capability_against_the_kernels_shipped(cc, version, status):
    lines, packages = and_cuda_packages(version)
    facts = {"host": LINUX_HOST, "distributions": [tensorflow_distribution(version, requires=lines), *packages],
             "nvidia": query_only(f"name, driver_version, memory.total [MiB], compute_cap\nGPU, 580.95.05, 16303 MiB, {cc}\n")}
    result = check_result("cuda-build", facts)
    assert result.status is status, result.summary


def test_maxwell_hint_pins_the_last_release_with_its_kernels():
    lines, packages = and_cuda_packages("2.18.0")
    facts = {"host": LINUX_HOST, "distributions": [tensorflow_distribution("2.18.0", requires=lines), *packages],
             "nvidia": query_only("name, driver_version, memory.total [MiB], compute_cap\nTesla M60, 535.1, 7618 MiB, 5.2\n")}
    result = check_result("cuda-build", facts)
    assert plan_commands(facts, result) == ["python3 -m pip install -- 'tensorflow[and-cuda]==2.16.*'"]
    assert "no kernels for Tesla M60" in plan_of(facts, result).moves_tensorflow.why


def test_wrong_cudnn_next_to_pytorch_names_the_trap():
    facts = fixture_facts(T4)
    lines, packages = and_cuda_packages("2.19.0")
    packages = [nvidia_wheel(p["name"], "9.1.0.70") if p["name"] == "nvidia-cudnn-cu12" else p for p in packages]
    facts["distributions"] = [tensorflow_distribution("2.19.0", requires=lines), *packages, {"name": "torch", "version": "2.5.1", "requires": []}]
    result = check_result("cuda-build", facts)
    assert result.status is Status.FAIL and "wrong version" in result.summary
    assert any("PyTorch 2.5.1" in d for d in result.details) and "separate" in fix_text(result)


def test_missing_cuda_libraries_fail_only_when_the_loader_was_inspected():
    facts = fixture_facts(T4)
    facts["distributions"] = [tensorflow_distribution("2.21.0")]
    assert check_result("cuda-build", facts).status is Status.PASS  # nothing recorded: no verdict on libraries
    facts["nvidia"]["ldconfig"] = {"status": "ok", "libraries": []}
    result = check_result("cuda-build", facts)
    assert result.status is Status.FAIL
    plan = plan_of(facts, result)  # TensorFlow stays: the same version with its libraries
    assert [s.command for s in plan.steps] == ["python3 -m pip install -- 'tensorflow[and-cuda]==2.21.0'"]
    assert plan.moves_tensorflow is None
    facts["nvidia"]["ldconfig"]["libraries"] = ["libcudnn.so.9 => /usr/lib/x86_64-linux-gnu/libcudnn.so.9",
                                                "libcudart.so.12 => /usr/local/cuda/lib64/libcudart.so.12"]
    assert check_result("cuda-build", facts).status is Status.PASS  # a system CUDA (Colab, NGC images)


def test_ld_library_path_shadowing_the_pip_libraries():
    facts = fixture_facts(T4)
    facts["nvidia"]["library_dirs"] = {"/usr/local/cuda-11.2/lib64": ["libcudart.so.11.0", "libcudnn.so.8"],
                                       "/usr/local/nvidia/lib64": ["libcuda.so.1"]}
    result = check_result("cuda-build", facts)
    assert result.status is Status.WARN and "LD_LIBRARY_PATH" in result.summary
    assert any("/usr/local/cuda-11.2/lib64" in d for d in result.details)
    assert not any("/usr/local/nvidia" in d for d in result.details)  # libcuda is the driver's own


def test_loaded_cudnn_differs_from_the_pip_one():
    # tensorflow/tensorflow#60750: TF 2.12 with nvidia-cudnn-cu11 8.6.0.163, a system cuDNN 8.1.1 came first
    facts = {"host": LINUX_HOST,
             "distributions": [tensorflow_distribution("2.12.0"), nvidia_wheel("nvidia-cudnn-cu11", "8.6.0.163")],
             "tensorflow": {"status": "ok", "version": "2.12.0", "stderr_tail":
                            "E tensorflow/compiler/xla/stream_executor/cuda/cuda_dnn.cc:417] Loaded runtime CuDNN "
                            "library: 8.1.1 but source was compiled wit\n"}}
    result = check_result("cuda-build", facts)
    assert result.status is Status.FAIL and "shadows" in result.summary and "LD_LIBRARY_PATH" in fix_text(result)


def test_missing_libraries_in_the_log_fail_only_on_a_gpu_machine():
    stderr = ("W tensorflow/stream_executor/platform/default/dso_loader.cc:64] Could not load dynamic library "
              "'libcusolver.so.11'; dlerror: libcusolver.so.11: cannot open shared object file: No such file or directory\n"
              "W tensorflow/core/common_runtime/gpu/gpu_device.cc:1850] Cannot dlopen some GPU libraries. Please make sure "
              "the missing libraries mentioned above are installed properly if you would like to use GPU.\n")
    facts = fixture_facts(T4)
    facts["distributions"] = [tensorflow_distribution("2.9.1")]
    facts["tensorflow"] = {"status": "ok", "version": "2.9.1", "stderr_tail": stderr}
    result = check_result("cuda-build", facts)
    assert result.status is Status.FAIL and "libcusolver.so.11" in result.summary and "CUDA 11.2" in fix_text(result)
    # Without nvidia-smi, a missing library alone is what a CUDA build prints on any CPU-only machine...
    cpu_only = fixture_facts("linux/cpu-only-tensorflow-cpu-no-gpu.json")
    cpu_only["distributions"] = [tensorflow_distribution("2.9.1")]
    cpu_only["tensorflow"] = {"status": "ok", "version": "2.9.1", "stderr_tail": stderr.splitlines()[0]}
    result = check_result("cuda-build", cpu_only)
    assert result.status is Status.PASS and "no NVIDIA GPU" in result.summary
    # ...but "Cannot dlopen some GPU libraries" is logged only after CUDA listed a device (gpu_device.cc
    # CacheDeviceIds returns before GetValidDeviceIds when VisibleDeviceCount() <= 0): a GPU TensorFlow cannot use.
    cpu_only["tensorflow"]["stderr_tail"] = stderr
    result = check_result("cuda-build", cpu_only)
    assert result.status is Status.FAIL and "libcusolver.so.11" in result.summary
    assert result.evidence["gpu_evidence"] and "Cannot dlopen" in result.evidence["gpu_evidence"][0]


def test_no_tensorflow_no_verdict():
    assert check_result("cuda-build", {"host": LINUX_HOST, "distributions": []}).status is Status.SKIP


def test_build_info_variants():
    windows = {"host": {"system": "Windows"}, "distributions": [tensorflow_distribution("2.10.0")],
               "tensorflow": {"version": "2.10.0", "build_info": {
                   "cuda_compute_capabilities": ["sm_35", "sm_50", "sm_60", "sm_70", "sm_75", "compute_80"],
                   "cuda_version": "64_112", "cudnn_version": "64_8", "is_cuda_build": True}}}
    build = tensorflow_build(windows)
    assert (build["cuda"], build["cudnn"], build["sass"], build["ptx"]) == (
        "11.2", "8", ["3.5", "5.0", "6.0", "7.0", "7.5", "8.0"], "8.0")
    rc = {"host": LINUX_HOST, "distributions": [tensorflow_distribution("2.22.0rc0")],
          "tensorflow": {"version": "2.22.0rc0",
                         "build_info": {"is_cuda_build": True, "is_rocm_build": False, "is_tensorrt_build": False}}}
    build = tensorflow_build(rc)
    assert build["from_build_info"] is False and build["ptx"] == "9.0" and build["sass"][0] == "6.0"


def test_driver_for_cuda_and_kernel_support():
    assert driver_for_cuda("12.5.1") == "555.42.06" and driver_for_cuda("11.8") == "520.61.05"
    assert kernel_support("8.9", ["6.0", "7.0", "8.0", "8.9", "9.0"], "9.0") == "native"
    assert kernel_support("12.0", ["6.0", "9.0"], "9.0") == "ptx"
    assert kernel_support("3.7", ["6.0", "9.0"], "9.0") == "none"


def test_and_cuda_requirements_from_metadata_then_knowledge():
    from_metadata = {"distributions": [tensorflow_distribution("2.21.0", requires=['nvidia-cudnn-cu12<10.0,>=9.3.0.75; extra == "and-cuda"',
                                                              "numpy>=1.26.0"])]}
    assert and_cuda_requirements(from_metadata) == [("nvidia-cudnn-cu12", "<10.0,>=9.3.0.75")]
    from_knowledge = and_cuda_requirements({"distributions": [tensorflow_distribution("2.18.0")]})
    assert ("nvidia-cudnn-cu12", "==9.3.0.75") in from_knowledge
    assert and_cuda_requirements({"distributions": [tensorflow_distribution("2.13.1")]}) == []


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
    return {"host": LINUX_HOST, "python": {"version": "3.11.7", "machine": "x86_64"},
            "distributions": [tensorflow_distribution(version, name=distribution, requires=lines), *packages],
            "nvidia": query_only(f"name, driver_version, memory.total [MiB], compute_cap\n{name}, 580.95.05, 16303 MiB, {cc}\n"),
            "tensorflow": {"status": "ok", "imported": True, "version": version, "stderr_tail": stderr,
                           "devices": [{"name": "/physical_device:GPU:0", "device_type": "GPU"}], "probe": probe}}


def test_kernels_the_table_says_run_but_the_log_proves_cannot_move_to_the_cpu_build():
    facts = gpu_facts("8.6", "2.18.0", "NVIDIA GeForce RTX 3090", stderr=NO_KERNEL_IMAGE)
    assert check_result("cuda-build", gpu_facts("8.6", "2.18.0")).status is Status.PASS  # the table alone: native kernels
    result = check_result("cuda-build", facts)
    assert result.status is Status.FAIL
    assert result.summary == ("TensorFlow 2.18.0's GPU kernels cannot run on NVIDIA GeForce RTX 3090 "
                              "(compute capability 8.6)")
    assert any("no kernel image is available" in d for d in result.details)
    assert plan_commands(facts, result) == ["python3 -m pip uninstall -y -- tensorflow",
                                            "python3 -m pip install -- 'tensorflow-cpu==2.18.0'"]


def test_a_jit_warning_becomes_a_failure_when_the_jit_fails_and_names_the_release_with_native_kernels():
    assert check_result("cuda-build", gpu_facts("9.0", "2.15.0", "NVIDIA H100")).status is Status.WARN
    facts = gpu_facts("9.0", "2.15.0", "NVIDIA H100", stderr=INVALID_PTX)
    result = check_result("cuda-build", facts)
    assert result.status is Status.FAIL and "cannot run on NVIDIA H100 (compute capability 9.0)" in result.summary
    install = [r for r in result.remediation.repairs if r.action is Action.INSTALL]
    assert [r.packages for r in install] == [("tensorflow[and-cuda]==2.21.*",)]  # 2.22 is only a release candidate
    assert "newest release with kernels" in install[0].reason


def test_the_probes_gpu_error_is_proof_too():
    facts = gpu_facts("8.6", "2.18.0", "NVIDIA GeForce RTX 3090", probe_error=KERNEL_IMAGE_INVALID)
    result = check_result("cuda-build", facts)
    assert result.status is Status.FAIL and any(KERNEL_IMAGE_INVALID in d for d in result.details)


def test_a_gpu_too_old_keeps_the_tables_failure_and_adds_no_second_one():
    facts = gpu_facts("5.2", "2.18.0", "Tesla M60", stderr=NO_KERNEL_IMAGE)
    result = check_result("cuda-build", facts)
    assert result.status is Status.FAIL and "older than every GPU" in result.summary
    assert not any("cannot run on" in p["summary"] for p in result.evidence["problems"])


def test_blackwell_with_proof_offers_the_cpu_build_without_proof_only_advice():
    reported = check_result("cuda-build", gpu_facts("12.0", "2.21.0", "NVIDIA GeForce RTX 5080"))
    assert reported.status is Status.FAIL and reported.remediation.repairs == ()
    facts = gpu_facts("12.0", "2.21.0", "NVIDIA GeForce RTX 5080", stderr=INVALID_PTX)
    proven = check_result("cuda-build", facts)
    assert proven.status is Status.FAIL and "which fails here" in proven.summary
    assert plan_commands(facts, proven) == ["python3 -m pip uninstall -y -- tensorflow",
                                            "python3 -m pip install -- 'tensorflow-cpu==2.21.0'"]


def test_the_cpu_build_on_a_gpu_no_release_runs_passes_and_on_a_supported_gpu_still_warns():
    blackwell = gpu_facts("12.0", "2.21.0", "NVIDIA GeForce RTX 5080", distribution="tensorflow-cpu")
    result = check_result("cuda-build", blackwell)
    assert result.status is Status.PASS and "no TensorFlow release ships kernels for" in result.summary
    turing = gpu_facts("7.5", "2.21.0", "Tesla T4", distribution="tensorflow-cpu")
    assert check_result("cuda-build", turing).status is Status.WARN


def test_a_nightly_has_no_cpu_build_to_offer():
    facts = gpu_facts("8.6", "2.22.0.dev20250722", "NVIDIA GeForce RTX 3090", stderr=NO_KERNEL_IMAGE,
                      distribution="tf-nightly")
    result = check_result("cuda-build", facts)
    assert result.status is Status.FAIL and result.remediation.repairs == ()
    assert "the CPU build of TensorFlow" in result.remediation.advice


def test_cuda_build_judges_the_gpu_only_the_log_shows():
    # No nvidia-smi, a CUDA build whose libraries cannot be loaded: a GPU machine, so a failure, not noise.
    machine = logged_machine("\n".join((LOGGED_NOISE[1], PROOF["gpu-libraries-not-loaded"])), version="2.9.1")
    result = check_result("cuda-build", machine)
    assert result.status is Status.FAIL and "libcudart.so.11.0" in result.summary
    # The same libraries missing on a machine that shows no GPU: expected for a CUDA build, no verdict against it.
    quiet = logged_machine("\n".join(LOGGED_NOISE), version="2.9.1")
    assert check_result("cuda-build", quiet).status is Status.PASS
    # The compute capability in the log is checked against the build's kernels.
    blackwell = check_result("cuda-build", logged_machine(PROOF["ptx-jit"], gpu_listed=True, version="2.20.0"))
    assert blackwell.status is Status.FAIL and "12.0" in blackwell.summary


# MBoemo/DNAscent#87 (2025): a container's CUDA 11.0 on a compute capability 8.9 GPU
PTXAS_FATAL = ("W tensorflow/stream_executor/gpu/asm_compiler.cc:235] Your CUDA software stack is old. We fallback to the "
               "NVIDIA driver for some compilation. Update your CUDA version to get the best performance. The ptxas error "
               "was: ptxas fatal   : Value 'sm_89' is not defined for option 'gpu-name'")


def test_a_ptxas_that_predates_the_gpu_fails_from_the_log_even_without_a_distribution_list():
    # A partial report: TensorFlow's log only. The ptxas line is printed only where a GPU exists, so it is judged.
    partial = {"host": LINUX_HOST, "tensorflow": {"status": "ok", "imported": True, "stderr_tail": PTXAS_FATAL}}
    result = check_result("cuda-build", partial)
    assert result.status is Status.FAIL and "cannot compile for sm_89" in result.summary
    assert "PATH" in result.remediation.advice and result.remediation.repairs == ()
    # the same partial report with harmless lines only: nothing to judge, the old skip
    quiet = {"host": LINUX_HOST, "tensorflow": {"status": "ok", "imported": True, "stderr_tail": LOGGED_NOISE[0]}}
    skipped = check_result("cuda-build", quiet)
    assert skipped.status is Status.SKIP and skipped.summary == "not recorded: distributions"
    # a full report of a GPU machine: the ptxas finding beside the table's verdict (native kernels for 8.9)
    assert check_result("cuda-build", gpu_facts("8.9", "2.18.0", "NVIDIA L4")).status is Status.PASS
    full = check_result("cuda-build", gpu_facts("8.9", "2.18.0", "NVIDIA L4", stderr=PTXAS_FATAL))
    assert full.status is Status.FAIL and "cannot compile for sm_89" in full.summary


# conda-forge/tensorflow-feedstock#420 (2025) and tensorflow#60790: XLA without CUDA's libdevice
LIBDEVICE = ("W0000 00:00:1739677334.593337    3089 gpu_backend_lib.cc:579] Can't find libdevice directory "
             "${CUDA_DIR}/nvvm/libdevice. This may result in compilation or runtime failures, if the program we try to "
             "run uses routines from libdevice.\n"
             "W tensorflow/core/framework/op_kernel.cc:1830] OP_REQUIRES failed at xla_ops.cc:362 : INTERNAL: libdevice "
             "not found at ./libdevice.10.bc")


def test_xla_without_libdevice_fails_and_a_pip_build_without_its_compiler_package_gets_it():
    facts = gpu_facts("8.6", "2.16.2", "NVIDIA GeForce RTX 3060", stderr=LIBDEVICE)
    facts["distributions"] = [d for d in facts["distributions"] if not d["name"].startswith("nvidia-cuda-nvcc")]
    result = check_result("cuda-build", facts)
    assert result.status is Status.FAIL and any("libdevice" in p["summary"] for p in result.evidence["problems"])
    assert "'tensorflow[and-cuda]==2.16.2'" in " ".join(plan_commands(facts, result))
    # nvidia-cuda-nvcc installed and still not found: no install step can help, the directory is named instead
    with_nvcc = check_result("cuda-build", gpu_facts("8.6", "2.16.2", "NVIDIA GeForce RTX 3060", stderr=LIBDEVICE))
    assert with_nvcc.status is Status.FAIL and "libdevice" in with_nvcc.summary
    assert "XLA_FLAGS=--xla_gpu_cuda_data_dir" in with_nvcc.remediation.advice
    assert with_nvcc.remediation.repairs == ()
    assert check_result("cuda-build", gpu_facts("8.6", "2.16.2", "NVIDIA GeForce RTX 3060")).status is Status.PASS
    # a partial report with only the log: the lines prove a GPU (XLA compiled for one), so it is judged
    partial = {"host": LINUX_HOST, "tensorflow": {"status": "ok", "imported": True, "stderr_tail": LIBDEVICE}}
    assert check_result("cuda-build", partial).status is Status.FAIL


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
    (PTXAS_FATAL, "ptxas-too-old", {"sm": "89"}),
    ("W tensorflow/stream_executor/gpu/redzone_allocator.cc:314] Unimplemented: /usr/local/cuda-11.0/bin/ptxas ptxas too "
     "old. Falling back to the driver to compile.", "ptxas-too-old", {}),
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


# talmolab/sleap#1806 and #2023 (2024-25): cuDNN's own words when it cannot load a library at the first convolution
CUDNN_LIBCUDA = ("Could not load library libcudnn_cnn_infer.so.8. Error: libcuda.so: cannot open shared object file: "
                 "No such file or directory\nPlease make sure libcudnn_cnn_infer.so.8 is in your library path!")
CUDNN_CUBLAS_12 = ("Could not load library libcublasLt.so.12. Error: libcublasLt.so.12: cannot open shared object file: "
                   "No such file or directory")


def test_cudnn_that_cannot_load_a_library_fails_with_what_the_missing_name_says():
    partial = {"host": LINUX_HOST, "tensorflow": {"status": "ok", "imported": True, "stderr_tail": CUDNN_LIBCUDA}}
    libcuda = check_result("cuda-build", partial)  # no distribution list: the log proves a GPU, and says enough
    assert libcuda.status is Status.FAIL and "as libcuda.so" in libcuda.summary
    assert "/usr/lib/wsl/lib" in libcuda.remediation.advice
    old = logged_machine(CUDNN_CUBLAS_12, version="2.8.4")  # TensorFlow 2.8 is built for CUDA 11.2
    result = check_result("cuda-build", old)
    problem = next(p for p in result.evidence["problems"] if "libcublasLt.so.12" in p["summary"])
    assert result.status is Status.FAIL and "a CUDA 12 library" in problem["summary"] and "CUDA 11.2" in problem["summary"]
    other = logged_machine(CUDNN_CUBLAS_12.replace("libcublasLt.so.12", "libcudnn_ops_infer.so.8"), version="2.8.4")
    assert any("libcudnn_ops_infer.so.8 was not found" in p["summary"]
               for p in check_result("cuda-build", other).evidence["problems"])


def test_tensorflow_2_16_1_that_could_not_load_its_cuda_libraries_gets_2_16_2_from_every_check():
    # tensorflow#63362: 2.16.1's wheel does not find its own pip CUDA libraries. cuda-build asked for
    # tensorflow[and-cuda]==2.16.1 while gpu-visible asked for 2.16.2, and the plan gave up on the pair.
    from tfdoctor.checking.registry import all_checks
    from tfdoctor.checking.runner import run_checks
    from tests.plan_support import plan_of

    dlopen = ("W tensorflow/core/common_runtime/gpu/gpu_device.cc:2251] Cannot dlopen some GPU libraries. Please make "
              "sure the missing libraries mentioned above are installed properly if you would like to use GPU. Follow "
              "the guide at https://www.tensorflow.org/install/gpu for how to download and setup the required "
              "libraries for your platform.\nSkipping registering GPU devices...\n")
    facts = {"host": {"system": "Linux", "machine": "x86_64"}, "python": {"machine": "x86_64"},
             "distributions": [{"name": "tensorflow", "version": "2.16.1"}],
             "tensorflow": {"status": "ok", "imported": True, "version": "2.16.1", "stderr_tail": dlopen,
                            "devices": [{"name": "/physical_device:CPU:0", "device_type": "CPU"}]}}
    results = run_checks([c for c in all_checks() if c.id in ("cuda-build", "gpu-visible")], facts)
    assert [r.status for r in results] == [Status.FAIL, Status.FAIL]
    asked = {p for r in results for repair in r.remediation.repairs for p in repair.packages}
    assert asked == {"tensorflow[and-cuda]==2.16.2"}
    plan = plan_of(facts, results)
    assert not plan.conflicts
    assert [step.command for step in plan.steps] == ["python3 -m pip install -- 'tensorflow[and-cuda]==2.16.2'"]
