"""The Linux helper's checks on facts built around real outputs: one rule per test.

nvidia-smi outputs are the fixtures' (real, with sources); the facts around them vary one thing at a time.
"""

from __future__ import annotations


import pytest

from tfdoctor import knowledge
from tfdoctor.checks.cuda_build import and_cuda_requirements, kernel_support
from tfdoctor.checks.nvidia_driver import driver_for_cuda, max_cuda_for_driver
from tfdoctor.facts.cuda import tensorflow_build
from tfdoctor.model import Status
from tfdoctor.specifiers import satisfies

from tests.plan_support import plan_commands, plan_of
from tests.builders import LINUX, fix_text, fixture_facts, run, tensorflow_distribution
from tests.nvidia_support import T4, and_cuda_packages, nvidia_wheel, query_only



















# ---------------------------------------------------------------- platform-support

@pytest.mark.parametrize("python, glibc, status, needle", [
    ("3.11.7", "2.36", Status.PASS, "up to 2.21"),
    ("3.14.0", "2.36", Status.WARN, "pre-release"),
    ("3.15.0", "2.36", Status.FAIL, "no TensorFlow release has wheels for Python 3.15"),
    ("3.11.2", "2.17", Status.WARN, "glibc 2.27"),  # CentOS 7: pip quietly installs 2.20
    ("3.11.2", "2.12", Status.FAIL, "glibc 2.12 is older"),
    ("3.8.10", "2.31", Status.WARN, "up to 2.13"),
])
def test_platform_support_python_and_glibc(python, glibc, status, needle):
    result = run("platform-support", {"host": LINUX, "python": {"version": python, "machine": "x86_64"},
                                      "os": {"glibc": glibc}})
    assert result.status is status and needle in result.summary, result.summary


def test_prerelease_hint_installs_the_pre_release_where_no_tensorflow_is_installed():
    facts = {"host": LINUX, "python": {"version": "3.14.0", "machine": "x86_64"}, "distributions": []}
    result = run("platform-support", facts)
    assert result.status is Status.WARN
    assert [r.to_dict() for r in result.remediation.repairs] == [
        {"action": "install", "reason": result.remediation.repairs[0].reason, "packages": ["tensorflow"], "pre": True}]
    assert plan_commands(facts, result) == ["python3 -m pip install --pre tensorflow"]
    # an installed TensorFlow stays: the pre-release is then advice, not a plan step
    facts["distributions"] = [tensorflow_distribution("2.22.0rc0")]
    kept = run("platform-support", facts)
    assert kept.status is Status.WARN and "pre-release" in kept.remediation.advice
    assert kept.remediation.repairs == () and plan_commands(facts, kept) == []


def test_32_bit_python_and_unknown_architectures_fail():
    assert run("platform-support", {"host": {"system": "Windows", "machine": "AMD64"},
                                    "python": {"version": "3.11.0", "machine": "x86", "pointer_bits": 32}}).status is Status.FAIL
    result = run("platform-support", {"host": {"system": "Linux", "machine": "ppc64le"},
                                      "python": {"version": "3.11.0", "machine": "ppc64le"}})
    assert result.status is Status.FAIL and "ppc64le" in result.summary


def test_linux_aarch64_with_an_nvidia_gpu_warns_cpu_only():
    facts = fixture_facts(T4)
    facts.update(host={"system": "Linux", "machine": "aarch64"}, python={"version": "3.12.3", "machine": "aarch64"})
    result = run("platform-support", facts)
    assert result.status is Status.WARN and "CPU-only" in result.summary and "ngc" in fix_text(result).lower()
    assert run("cuda-build", facts).status is Status.SKIP  # not reported twice


def test_native_windows_gpu_points_to_wsl2_without_a_plan_step():
    facts = fixture_facts("other/windows-tensorflow-2.11-nvidia-gpu.json")
    result = run("platform-support", facts)
    assert result.status is Status.WARN
    assert result.remediation.commands == ("wsl --install",)  # inside WSL2 is another environment: words
    assert "tensorflow[and-cuda]" in result.remediation.advice and plan_commands(facts, result) == []


@pytest.mark.parametrize("installed, plan", [
    ([], ["python3 -m pip install 'tensorflow==2.16.2'"]),  # nothing installed: the last Intel Mac release
    ([tensorflow_distribution("2.15.1")], []),  # an installed TensorFlow stays where it is
])
def test_intel_mac_pins_the_last_release_only_where_none_is_installed(installed, plan):
    facts = {"host": {"system": "Darwin", "machine": "x86_64"}, "python": {"version": "3.11.9", "machine": "x86_64"},
             "sysctl": {"hw.optional.arm64": "0"}, "distributions": installed}
    result = run("platform-support", facts)
    assert result.status is Status.WARN and "2.16.2" in result.remediation.advice
    assert plan_commands(facts, result) == plan


def test_windows_tensorflow_2_10_with_gpu_is_fine():
    facts = fixture_facts("other/windows-tensorflow-2.11-nvidia-gpu.json")
    facts["python"]["version"] = "3.10.11"
    facts["distributions"] = [tensorflow_distribution("2.10.1"), {"name": "numpy", "version": "1.24.3", "requires": []}]
    result = run("platform-support", facts)
    assert result.status is Status.PASS and "CUDA build" in " ".join(result.details)


def test_windows_without_gpu_passes():
    result = run("platform-support", {"host": {"system": "Windows", "machine": "AMD64"},
                                      "python": {"version": "3.12.1", "machine": "AMD64"}})
    assert result.status is Status.PASS and "WSL2" in " ".join(result.details)


def test_rosetta_python_is_judged_as_apple_silicon():
    facts = {"host": {"system": "Darwin", "machine": "arm64"},
             "python": {"version": "3.12.4", "machine": "x86_64", "proc_translated": "1"},
             "sysctl": {"hw.optional.arm64": "1"}}
    result = run("platform-support", facts)
    assert result.status is Status.PASS and "arm64" in result.summary and "Rosetta" in " ".join(result.details)
    cpu = run("cpu-instructions", facts)
    assert cpu.status is Status.FAIL and "Rosetta" in cpu.summary


def test_wsl1_is_named_and_has_no_gpu():
    facts = {"host": {"system": "Linux", "machine": "x86_64", "release": "4.4.0-20150-Microsoft"},
             "python": {"version": "3.10.12", "machine": "x86_64"}}
    result = run("platform-support", facts)
    assert "WSL1" in result.summary and "WSL1" in " ".join(result.details)


# ---------------------------------------------------------------- cpu-instructions

def test_intel_mac_flags_come_from_sysctl():
    facts = {"host": {"system": "Darwin", "machine": "x86_64"}, "python": {"version": "3.11.9", "machine": "x86_64"},
             "cpu": {"brand": None, "flags": None, "source": "sysctl"},
             "sysctl": {"machdep.cpu.features": "FPU VME DE PSE TSC MSR PAE MCE CX8 APIC SEP AVX1.0 FMA",
                        # leaf7 of an older Intel Mac (yaroslavvb/tensorflow-community-wheels#95)
                        "machdep.cpu.leaf7_features": "SMEP ERMS RDWRFSGS TSC_THREAD_OFFSET BMI1 AVX2 BMI2 INVPCID FPU_CSDS"}}
    result = run("cpu-instructions", facts)
    assert result.status is Status.PASS and "AVX2" in result.summary
    facts["sysctl"]["machdep.cpu.features"] = "FPU VME DE PSE TSC MSR PAE MCE CX8 APIC SEP"
    facts["sysctl"]["machdep.cpu.leaf7_features"] = None
    assert run("cpu-instructions", facts).status is Status.FAIL


def test_core2_without_avx_fails_with_the_hardware_advice():
    # Intel Q9650 flags (tensorflow/tensorflow#46496): no avx, no hypervisor
    flags = ("fpu vme de pse tsc msr pae mce cx8 apic sep mtrr pge mca cmov pat pse36 clflush dts acpi mmx fxsr sse sse2 "
             "ht tm pbe syscall nx lm constant_tsc arch_perfmon pebs bts rep_good nopl cpuid aperfmperf pni dtes64 monitor "
             "ds_cpl vmx smx est tm2 ssse3 cx16 xtpr pdcm sse4_1 lahf_lm pti tpr_shadow vnmi flexpriority dtherm").split()
    result = run("cpu-instructions", {"host": LINUX, "cpu": {"brand": "Intel(R) Core(TM)2 Quad CPU Q9650", "flags": flags}})
    assert result.status is Status.FAIL and "Sandy" in fix_text(result) and "VM" not in fix_text(result)


def test_arm_cpus_and_missing_flags():
    assert run("cpu-instructions", {"host": {"system": "Darwin", "machine": "arm64"},
                                    "python": {"machine": "arm64"}}).status is Status.PASS
    assert run("cpu-instructions", {"host": LINUX, "cpu": {"flags": None, "source": "unavailable: OSError"}}).status is Status.SKIP


def test_tensorflow_2_4_0_without_avx2_moves_to_2_4_1_and_says_why():
    facts = fixture_facts("linux/tensorflow-2.4.0-ivy-bridge-no-avx2.json")
    result = run("cpu-instructions", facts)
    plan = plan_of(facts, result)
    assert [s.command for s in plan.steps] == ["python3 -m pip install 'tensorflow==2.4.1'"]
    assert plan.moves_tensorflow.source == "tensorflow==2.4.0" and "AVX2" in plan.moves_tensorflow.why


def test_tensorflow_2_4_1_needs_only_avx():
    facts = fixture_facts("linux/tensorflow-2.4.0-ivy-bridge-no-avx2.json")
    facts["distributions"][0]["version"] = "2.4.1"
    facts.pop("tensorflow")
    assert run("cpu-instructions", facts).status is Status.PASS


# ---------------------------------------------------------------- nvidia-driver

def test_driver_too_old_for_tensorflow_cuda_12():
    facts = fixture_facts("linux/two-k80-driver-470-tensorflow-2.11.json")
    lines, packages = and_cuda_packages("2.21.0")
    facts["distributions"] = [tensorflow_distribution("2.21.0", requires=lines), *packages]
    facts.pop("tensorflow")
    result = run("nvidia-driver", facts)
    assert result.status is Status.FAIL and "525.60.13" in result.summary
    plan = plan_of(facts, result)
    assert [s.command for s in plan.steps] == ["python3 -m pip install 'tensorflow[and-cuda]==2.14.*'"]
    assert plan.moves_tensorflow.source == "tensorflow==2.21.0" and "driver 470" in plan.moves_tensorflow.why


def test_wsl2_uses_the_windows_driver_minimum():
    facts = {"host": {"system": "Linux", "machine": "x86_64", "release": "5.15.167.4-microsoft-standard-WSL2"},
             "distributions": [tensorflow_distribution("2.21.0")],
             "nvidia": query_only("name, driver_version, memory.total [MiB], compute_cap\n"
                                  "NVIDIA GeForce RTX 3060, 527.56, 12288 MiB, 8.6\n")}
    result = run("nvidia-driver", facts)
    assert result.status is Status.FAIL and "528.33" in result.summary


def test_gpu_on_the_bus_without_a_driver_and_module_without_nvidia_smi():
    missing = {"argv": ["nvidia-smi"], "status": "not_found", "exit_code": None, "stdout": "", "stderr": ""}
    facts = {"host": LINUX, "nvidia": {"smi": missing, "smi_query": None, "proc_driver_version": None,
                                       "pci_devices": [{"slot": "0000:01:00.0", "device": "0x2204", "class": "0x030000"}]}}
    assert run("nvidia-driver", facts).status is Status.FAIL
    facts["nvidia"]["proc_driver_version"] = ("NVRM version: NVIDIA UNIX x86_64 Kernel Module  384.130  Wed Mar 21 "
                                              "03:37:26 PDT 2018\n")
    result = run("nvidia-driver", facts)
    assert result.status is Status.WARN and "384.130" in result.summary


def test_consumer_gpu_without_forward_compat_is_fine_and_datacenter_compat_only_warns():
    facts = fixture_facts("linux/geforce-forward-compat-libcuda.json")
    text = facts["nvidia"]["smi"]["stdout"]
    facts["nvidia"]["smi"]["stdout"] = text.replace("CUDA Version: 11.8", "CUDA Version: 11.4")
    assert run("nvidia-driver", facts).status is Status.PASS
    facts["nvidia"]["smi"]["stdout"] = text.replace("NVIDIA GeForce ...", "Tesla T4          ")
    assert run("nvidia-driver", facts).status is Status.WARN


# ---------------------------------------------------------------- cuda-build

def test_cpu_only_tensorflow_with_an_nvidia_gpu_warns_with_the_fix():
    facts = fixture_facts(T4)
    facts["distributions"] = [tensorflow_distribution("2.21.0", name="tensorflow-cpu")]
    result = run("cuda-build", facts)
    assert result.status is Status.WARN and "CPU-only" in result.summary
    assert result.remediation.commands == ()
    plan = plan_of(facts, result)  # the build switch: the CPU build out, the CUDA build of the same version in
    assert [s.command for s in plan.steps] == ["python3 -m pip uninstall -y tensorflow-cpu",
                                               "python3 -m pip install 'tensorflow[and-cuda]==2.21.0'"]
    assert not plan.conflicts and plan.moves_tensorflow.target == "tensorflow[and-cuda]==2.21.0"
    assert "CPU-only build" in plan.moves_tensorflow.why


def test_build_info_is_believed_over_the_distribution_name():
    facts = fixture_facts(T4)
    facts["tensorflow"] = {"status": "ok", "version": "2.21.0",
                           "build_info": {"is_cuda_build": False, "is_rocm_build": False, "is_tensorrt_build": False}}
    assert run("cuda-build", facts).status is Status.WARN


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
    facts = {"host": LINUX, "distributions": [tensorflow_distribution(version, requires=lines), *packages],
             "nvidia": query_only(f"name, driver_version, memory.total [MiB], compute_cap\nGPU, 580.95.05, 16303 MiB, {cc}\n")}
    result = run("cuda-build", facts)
    assert result.status is status, result.summary


def test_maxwell_hint_pins_the_last_release_with_its_kernels():
    lines, packages = and_cuda_packages("2.18.0")
    facts = {"host": LINUX, "distributions": [tensorflow_distribution("2.18.0", requires=lines), *packages],
             "nvidia": query_only("name, driver_version, memory.total [MiB], compute_cap\nTesla M60, 535.1, 7618 MiB, 5.2\n")}
    result = run("cuda-build", facts)
    assert plan_commands(facts, result) == ["python3 -m pip install 'tensorflow[and-cuda]==2.16.*'"]
    assert "no kernels for Tesla M60" in plan_of(facts, result).moves_tensorflow.why


def test_wrong_cudnn_next_to_pytorch_names_the_trap():
    facts = fixture_facts(T4)
    lines, packages = and_cuda_packages("2.19.0")
    packages = [nvidia_wheel(p["name"], "9.1.0.70") if p["name"] == "nvidia-cudnn-cu12" else p for p in packages]
    facts["distributions"] = [tensorflow_distribution("2.19.0", requires=lines), *packages, {"name": "torch", "version": "2.5.1", "requires": []}]
    result = run("cuda-build", facts)
    assert result.status is Status.FAIL and "wrong version" in result.summary
    assert any("PyTorch 2.5.1" in d for d in result.details) and "separate" in fix_text(result)


def test_missing_cuda_libraries_fail_only_when_the_loader_was_inspected():
    facts = fixture_facts(T4)
    facts["distributions"] = [tensorflow_distribution("2.21.0")]
    assert run("cuda-build", facts).status is Status.PASS  # nothing recorded: no verdict on libraries
    facts["nvidia"]["ldconfig"] = {"status": "ok", "libraries": []}
    result = run("cuda-build", facts)
    assert result.status is Status.FAIL
    plan = plan_of(facts, result)  # TensorFlow stays: the same version with its libraries
    assert [s.command for s in plan.steps] == ["python3 -m pip install 'tensorflow[and-cuda]==2.21.0'"]
    assert plan.moves_tensorflow is None
    facts["nvidia"]["ldconfig"]["libraries"] = ["libcudnn.so.9 => /usr/lib/x86_64-linux-gnu/libcudnn.so.9",
                                                "libcudart.so.12 => /usr/local/cuda/lib64/libcudart.so.12"]
    assert run("cuda-build", facts).status is Status.PASS  # a system CUDA (Colab, NGC images)


def test_ld_library_path_shadowing_the_pip_libraries():
    facts = fixture_facts(T4)
    facts["nvidia"]["library_dirs"] = {"/usr/local/cuda-11.2/lib64": ["libcudart.so.11.0", "libcudnn.so.8"],
                                       "/usr/local/nvidia/lib64": ["libcuda.so.1"]}
    result = run("cuda-build", facts)
    assert result.status is Status.WARN and "LD_LIBRARY_PATH" in result.summary
    assert any("/usr/local/cuda-11.2/lib64" in d for d in result.details)
    assert not any("/usr/local/nvidia" in d for d in result.details)  # libcuda is the driver's own


def test_loaded_cudnn_differs_from_the_pip_one():
    # tensorflow/tensorflow#60750: TF 2.12 with nvidia-cudnn-cu11 8.6.0.163, a system cuDNN 8.1.1 came first
    facts = {"host": LINUX,
             "distributions": [tensorflow_distribution("2.12.0"), nvidia_wheel("nvidia-cudnn-cu11", "8.6.0.163")],
             "tensorflow": {"status": "ok", "version": "2.12.0", "stderr_tail":
                            "E tensorflow/compiler/xla/stream_executor/cuda/cuda_dnn.cc:417] Loaded runtime CuDNN "
                            "library: 8.1.1 but source was compiled wit\n"}}
    result = run("cuda-build", facts)
    assert result.status is Status.FAIL and "shadows" in result.summary and "LD_LIBRARY_PATH" in fix_text(result)


def test_missing_libraries_in_the_log_fail_only_on_a_gpu_machine():
    stderr = ("W tensorflow/stream_executor/platform/default/dso_loader.cc:64] Could not load dynamic library "
              "'libcusolver.so.11'; dlerror: libcusolver.so.11: cannot open shared object file: No such file or directory\n"
              "W tensorflow/core/common_runtime/gpu/gpu_device.cc:1850] Cannot dlopen some GPU libraries. Please make sure "
              "the missing libraries mentioned above are installed properly if you would like to use GPU.\n")
    facts = fixture_facts(T4)
    facts["distributions"] = [tensorflow_distribution("2.9.1")]
    facts["tensorflow"] = {"status": "ok", "version": "2.9.1", "stderr_tail": stderr}
    result = run("cuda-build", facts)
    assert result.status is Status.FAIL and "libcusolver.so.11" in result.summary and "CUDA 11.2" in fix_text(result)
    # Without nvidia-smi, a missing library alone is what a CUDA build prints on any CPU-only machine...
    cpu_only = fixture_facts("linux/cpu-only-tensorflow-cpu-no-gpu.json")
    cpu_only["distributions"] = [tensorflow_distribution("2.9.1")]
    cpu_only["tensorflow"] = {"status": "ok", "version": "2.9.1", "stderr_tail": stderr.splitlines()[0]}
    result = run("cuda-build", cpu_only)
    assert result.status is Status.PASS and "no NVIDIA GPU" in result.summary
    # ...but "Cannot dlopen some GPU libraries" is logged only after CUDA listed a device (gpu_device.cc
    # CacheDeviceIds returns before GetValidDeviceIds when VisibleDeviceCount() <= 0): a GPU TensorFlow cannot use.
    cpu_only["tensorflow"]["stderr_tail"] = stderr
    result = run("cuda-build", cpu_only)
    assert result.status is Status.FAIL and "libcusolver.so.11" in result.summary
    assert result.evidence["gpu_evidence"] and "Cannot dlopen" in result.evidence["gpu_evidence"][0]


def test_no_tensorflow_no_verdict():
    assert run("cuda-build", {"host": LINUX, "distributions": []}).status is Status.SKIP


# ---------------------------------------------------------------- knowledge lookups

def test_build_info_variants():
    windows = {"host": {"system": "Windows"}, "distributions": [tensorflow_distribution("2.10.0")],
               "tensorflow": {"version": "2.10.0", "build_info": {
                   "cuda_compute_capabilities": ["sm_35", "sm_50", "sm_60", "sm_70", "sm_75", "compute_80"],
                   "cuda_version": "64_112", "cudnn_version": "64_8", "is_cuda_build": True}}}
    build = tensorflow_build(windows)
    assert (build["cuda"], build["cudnn"], build["sass"], build["ptx"]) == (
        "11.2", "8", ["3.5", "5.0", "6.0", "7.0", "7.5", "8.0"], "8.0")
    rc = {"host": LINUX, "distributions": [tensorflow_distribution("2.22.0rc0")],
          "tensorflow": {"version": "2.22.0rc0",
                         "build_info": {"is_cuda_build": True, "is_rocm_build": False, "is_tensorrt_build": False}}}
    build = tensorflow_build(rc)
    assert build["from_build_info"] is False and build["ptx"] == "9.0" and build["sass"][0] == "6.0"


@pytest.mark.parametrize("driver, column, cuda", [
    ("470.161.03", "linux", "11.4"), ("550.54.15", "linux", "12.4"), ("580.105.08", "linux", "13.0"),
    ("555.99", "windows", "12.5"), ("573.76", "windows", "12.8"),
    ("580.88", "windows", None),  # newer than any Windows driver the table lists: cannot tell
    ("375.66", "linux", None),
])
def test_max_cuda_for_driver(driver, column, cuda):
    assert max_cuda_for_driver(driver, column) == cuda


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


@pytest.mark.parametrize("version, spec, expected", [
    ("9.1.0.70", "==9.3.0.75", False), ("9.3.0.75", "<10.0,>=9.3.0.75", True), ("10.0.1", "<10.0,>=9.3.0.75", False),
    ("2.16.2", "==2.16.*", True), ("2.17.0", "~=2.16.0", False), (None, ">=1", None),
])
def test_satisfies(version, spec, expected):
    assert satisfies(version, spec) is expected


def test_knowledge_tables_are_consistent():
    from tfdoctor.facts.releases import minor_rows

    releases = minor_rows()  # the generated release table (tfdoctor/facts/releases.py)
    assert [r["tf"] for r in releases] == sorted((r["tf"] for r in releases), key=lambda v: tuple(map(int, v.split("."))))
    assert {r["tf"] for r in knowledge.rows("linux", "tf_cuda")} == {r["tf"] for r in releases}
    for row in knowledge.rows("linux", "tf_cuda"):
        keys = [tuple(map(int, s.split("."))) for s in row["sass"]]
        assert keys == sorted(keys) and row["ptx"] in row["sass"]
    for row in knowledge.rows("linux", "and_cuda"):
        for requirement in row["requires"]:
            assert and_cuda_requirements({"distributions": [tensorflow_distribution(row["tf_versions"][0],
                                                               requires=[f'{requirement}; extra == "and-cuda"'])]})
    for table, rows in knowledge.load("linux").items():
        for row in rows:
            assert row.get("source") and isinstance(row.get("verified"), bool), (table, row)
