"""The gpu-visible check: is a GPU expected (NVIDIA facts, TensorFlow's log, Apple Silicon with Metal), is it
listed, and why not."""

from __future__ import annotations

import pytest

from tfdoctor.checks.gpu_visible import gpu_visible
from tfdoctor.results.model import CheckResult, Status

from tests.builders import CPU, GPU, check_result, fixture_facts, tensorflow_result
from tests.nvidia_support import NOISE as LOGGED_NOISE, PROOF, SMI_CANNOT_REACH_DRIVER, logged_machine
from tests.plan_support import as_result, intents, plan_commands, plan_of


def test_gpu_visible_expects_the_gpu_the_log_proves():
    result = check_result("gpu-visible", logged_machine(PROOF["gpu-libraries-not-loaded"]))
    assert result.status is Status.FAIL
    assert result.summary.startswith("TensorFlow's log shows an NVIDIA GPU") and "lists no GPU" in result.summary
    # also where nvidia-smi answered but could not reach the driver, and where NVIDIA facts were not recorded
    for nvidia in (SMI_CANNOT_REACH_DRIVER, None):
        assert check_result("gpu-visible", logged_machine(PROOF["gpu-libraries-not-loaded"], nvidia=nvidia)).status is Status.FAIL


def test_gpu_visible_passes_when_the_proven_gpu_is_listed_or_only_noise_was_logged():
    assert check_result("gpu-visible", logged_machine(PROOF["device-created"], gpu_listed=True)).status is Status.PASS
    result = check_result("gpu-visible", logged_machine("\n".join(LOGGED_NOISE)))
    assert result.status is Status.PASS and result.summary.startswith("No GPU expected")


def nvidia_machine(**tf_changes) -> dict:
    facts = fixture_facts("linux/cuda-visible-devices-hides-the-only-gpu.json")
    facts["environment"] = {}
    facts["python"] = {"executable": "/venv/bin/python", "in_venv": True}
    facts["distributions"] = [{"name": "tensorflow", "version": "2.16.1"}]
    facts["tensorflow"] = tensorflow_result(**tf_changes)
    return facts


def test_nvidia_gpu_listed_passes():
    facts = nvidia_machine(devices=[CPU, GPU], gpu_details=[{"device_name": "NVIDIA GeForce GTX 1080 Ti",
                                                              "compute_capability": [6, 1]}])
    outcome = gpu_visible.run(facts)
    assert outcome.status is Status.PASS and "NVIDIA GeForce GTX 1080 Ti" in outcome.summary


def test_nvidia_gpu_missing_with_libraries_missing_names_the_extra():
    # tensorflow/tensorflow#63362 (TF 2.16.1 + and-cuda): "Cannot dlopen some GPU libraries", no GPU
    line = ("W tensorflow/core/common_runtime/gpu/gpu_device.cc:2251] Cannot dlopen some GPU libraries. Please make "
            "sure the missing libraries mentioned above are installed properly if you would like to use GPU. Follow "
            "the guide at https://www.tensorflow.org/install/gpu for how to download and setup the required "
            "libraries for your platform.\nSkipping registering GPU devices...")
    facts = nvidia_machine(stderr_tail=line)
    outcome = gpu_visible.run(facts)
    assert outcome.status is Status.FAIL and "nvidia-smi lists" in outcome.summary
    assert outcome.evidence["signature"] == "cuda-libraries-missing"
    # the signature's install, as a repair the plan carries out: 2.16.1 (the installed version, from its
    # metadata) cannot find its pip CUDA libraries whatever is installed, so the release that does (2.16.2)
    assert intents(outcome) == [("install", ("tensorflow[and-cuda]==2.16.2",))]
    assert [s.command for s in plan_of(facts, [as_result("gpu-visible", outcome)]).steps] == [
        "/venv/bin/python -m pip install -- 'tensorflow[and-cuda]==2.16.2'"]


def test_nvidia_gpu_hidden_by_cuda_visible_devices_warns():
    facts = fixture_facts("linux/cuda-visible-devices-hides-the-only-gpu.json")  # CUDA_VISIBLE_DEVICES=1, 1 GPU
    facts["tensorflow"] = tensorflow_result()
    outcome = gpu_visible.run(facts)
    assert outcome.status is Status.WARN and "CUDA_VISIBLE_DEVICES='1'" in outcome.summary
    # nvidia-driver says the same of this machine: one manual step, both checks point to it (a TensorFlow
    # built with CUDA 12.3, which the recorded driver serves, so the variable is each check's worst finding)
    from tfdoctor.checking.registry import all_checks
    from tfdoctor.checking.runner import run_checks

    facts["tensorflow"] = tensorflow_result(build_info={"is_cuda_build": True, "cuda_version": "12.3"})
    results = run_checks([c for c in all_checks() if c.id in ("nvidia-driver", "gpu-visible")], facts)
    assert [r.status for r in results] == [Status.WARN, Status.WARN]
    plan = plan_of(facts, *results)
    assert [(s.command, s.manual) for s in plan.steps] == [("unset CUDA_VISIBLE_DEVICES", True)]
    assert plan.steps_for("nvidia-driver") == plan.steps_for("gpu-visible") == [1]


def test_nvidia_gpu_with_a_cpu_only_build():
    outcome = gpu_visible.run(nvidia_machine(build_info={"is_cuda_build": False}))
    assert outcome.status is Status.FAIL and "CPU-only build" in outcome.summary
    assert "cuda-build" in outcome.remediation.advice


def test_cpu_only_machine_with_noise_passes():
    facts = fixture_facts("linux/cpu-only-tensorflow-cpu-no-gpu.json")
    noise = ("I tensorflow/tsl/cuda/cudart_stub.cc:28] Could not find cuda drivers on your machine, GPU will not be "
             "used.")  # harmless without an NVIDIA GPU (tensorflow/tensorflow#62328)
    facts["tensorflow"] = tensorflow_result(stderr_tail=noise)
    outcome = gpu_visible.run(facts)
    assert outcome.status is Status.PASS and "No GPU expected" in outcome.summary


def test_unknown_expectation_without_nvidia_facts_is_neither_blamed_nor_passed():
    # a partial report (round 5's tensorflow#62412 container): no GPU listed, no NVIDIA facts: nobody checked
    outcome = gpu_visible.run({"host": {"system": "Linux"}, "tensorflow": tensorflow_result()})
    assert outcome.status is Status.SKIP and "unknown" in outcome.summary


def _required_gpu_report(system: str, tensorflow: str, gpu: str = "cuda", nvidia=None) -> dict:
    """A saved report from `tfdoctor --require-gpu-kind cuda` (or --require-gpu): no GPU listed, and NVIDIA facts
    only where given."""
    machine = "AMD64" if system == "Windows" else "x86_64"
    facts = {"host": {"system": system, "machine": machine}, "python": {"machine": machine, "version": "3.11.8"},
             "distributions": [{"name": "tensorflow", "version": tensorflow}],
             "tensorflow": tensorflow_result(version=tensorflow, build_info={}),
             "requirements": {"gpu": gpu, "source": "command line"}}
    if nvidia is not None:
        facts["nvidia"] = nvidia
    return facts


def test_a_required_gpu_stands_in_for_nvidia_facts_a_report_lacks():
    # tensorflow#65269's machine, as `tfdoctor --require-gpu-kind cuda` would save it without its probe:
    # Linux TensorFlow 2.16.1 with none of its pip CUDA libraries
    linux = gpu_visible.run(_required_gpu_report("Linux", "2.16.1"))
    assert linux.status is Status.FAIL, linux.summary
    assert linux.summary.startswith("a CUDA GPU is required (command line)")
    assert any("and-cuda" in " ".join(r.packages) for r in linux.remediation.repairs)
    # native Windows after 2.10 has no CUDA build at all: the way to the GPU is WSL2, said, not a made-up install
    windows = gpu_visible.run(_required_gpu_report("Windows", "2.16.1", gpu="any"))
    assert windows.status is Status.FAIL and "CPU-only build" in windows.summary
    assert "WSL2" in windows.remediation.advice
    # Linux aarch64 (a Jetson, a Grace host): PyPI's wheels there have no CUDA, and cuda-build skips them, so the
    # way to the GPU is said here rather than pointed at a check that says nothing
    arm = _required_gpu_report("Linux", "2.16.1")
    arm["host"]["machine"] = arm["python"]["machine"] = "aarch64"
    arm_result = gpu_visible.run(arm)
    assert arm_result.status is Status.FAIL and "NGC" in arm_result.remediation.advice


def test_native_windows_missing_cuda_dlls_get_windows_advice_not_linux_s():
    # TensorFlow 2.10 on native Windows: cudart64_110.dll not found. The signature's advice is Linux's ([and-cuda],
    # LD_LIBRARY_PATH); Windows finds CUDA 11.2 and cuDNN 8.1 on PATH (https://www.tensorflow.org/install/pip)
    facts = _required_gpu_report("Windows", "2.10.1")
    facts["tensorflow"]["stderr_tail"] = (
        "W tensorflow/stream_executor/platform/default/dso_loader.cc:64] Could not load dynamic library "
        "'cudart64_110.dll'; dlerror: cudart64_110.dll not found")
    result = gpu_visible.run(facts)
    assert result.status is Status.FAIL
    assert "CUDA 11.2 and cuDNN 8.1 from the directories on PATH" in result.remediation.advice
    assert "LD_LIBRARY_PATH" not in result.remediation.advice and "and-cuda" not in result.remediation.advice
    assert "cudart64_110.dll" in result.remediation.advice


def test_a_required_gpu_never_outranks_the_probe_nor_asks_for_metal_off_a_mac():
    # a live run's NVIDIA facts found no GPU: a CPU-only machine is not blamed (the requirements check says so)
    probed = _required_gpu_report("Linux", "2.16.1", nvidia={"smi": None, "smi_query": None,
                                                             "proc_driver_version": None, "pci_devices": []})
    assert gpu_visible.run(probed).status is Status.PASS
    # a Metal requirement says nothing of NVIDIA GPUs: still unknown
    assert gpu_visible.run(_required_gpu_report("Linux", "2.16.1", gpu="metal")).status is Status.SKIP


def _mac(metal: str | None, **tf_changes) -> dict:
    distributions = [{"name": "tensorflow", "version": "2.19.0"}]
    if metal:
        distributions.append({"name": "tensorflow-metal", "version": metal})
    return {"host": {"system": "Darwin"}, "python": {"executable": "/venv/bin/python", "in_venv": True},
            "distributions": distributions, "tensorflow": tensorflow_result(build_info={"is_cuda_build": False}, **tf_changes)}


def test_metal_gpu_listed_is_named_from_the_plugin_line():
    line = ("2024-01-11 11:39:24.910238: I metal_plugin/src/device/metal_device.cc:1154] Metal device set to: "
            "Apple M3 Pro")  # https://github.com/msusol/jupyter-notebook-on-macos/blob/main/tensorflow.md
    outcome = gpu_visible.run(_mac("1.2.0", devices=[CPU, GPU], metal_lines=[line]))
    assert outcome.status is Status.PASS and outcome.summary.endswith("Apple M3 Pro")


def test_metal_installed_but_no_gpu_fails_with_a_reinstall():
    plugin = {"path": "/venv/lib/python3.11/site-packages/tensorflow-plugins/libmetal_plugin.dylib", "loaded": False}
    facts = _mac("1.2.0", plugins=[plugin])
    outcome = gpu_visible.run(facts)
    assert outcome.status is Status.FAIL and "did not load the plugin" in outcome.summary
    result = CheckResult("gpu-visible", "GPU", outcome.status, outcome.summary, remediation=outcome.remediation)
    assert outcome.remediation.commands == () and plan_commands(facts, result) == [
        "/venv/bin/python -m pip install --force-reinstall --no-deps -- 'tensorflow-metal==1.2.0'"]


def test_apple_silicon_without_metal_expects_no_gpu():
    outcome = gpu_visible.run(_mac(None))  # sun1638650145/...#20: [] without the plugin, by design
    assert outcome.status is Status.PASS and "tensorflow-metal is not installed" in outcome.summary


def test_crash_while_listing_devices_with_metal_names_the_plugin():
    facts = _mac("0.6.0", status="crashed", stage="devices", devices=None, signal="SIGSEGV", exit_code=-11)
    outcome = gpu_visible.run(facts)
    assert outcome.status is Status.FAIL and "While listing its devices" in outcome.summary
    assert outcome.evidence["signature"] == "crash-with-metal-plugin"


@pytest.mark.parametrize("tf, status", [
    ({"status": "not_installed", "imported": False}, Status.SKIP),
    ({"status": "import_error", "imported": False}, Status.SKIP),
])
def test_gpu_visible_skips_without_an_import(tf, status):
    assert gpu_visible.run({"host": {"system": "Linux"}, "tensorflow": tf}).status is status


# --- a GPU host whose CUDA build has none of its [and-cuda] libraries (issue 29) --------------------------

WITHOUT_AND_CUDA = "linux/t4-tensorflow-2.21-without-and-cuda-libraries.json"


def test_a_cuda_build_without_its_pip_cuda_libraries_gets_the_and_cuda_install_even_when_the_log_is_silent():
    """TF_CPP_MIN_LOG_LEVEL=3 hides 'Cannot dlopen some GPU libraries': the step comes from the facts (before
    this, gpu-visible failed with no step at all), and TensorFlow stays at 2.21.0."""
    from tfdoctor.plan.planner import build_plan

    facts = fixture_facts(WITHOUT_AND_CUDA)
    result = check_result("gpu-visible", facts)
    assert result.status is Status.FAIL and "[and-cuda]" in result.summary
    plan = build_plan([result], facts)
    assert [s.packages for s in plan.steps] == [("tensorflow[and-cuda]==2.21.0",)] and plan.moves_tensorflow is None


@pytest.mark.parametrize("change, wanted", [
    (lambda f: f["distributions"].append({"name": "nvidia-cudnn-cu12", "version": "9.3.0.75"}), None),
    (lambda f: f.__setitem__("environment", {"LD_LIBRARY_PATH": "/usr/local/cuda-12.5/lib64"}), None),
    (lambda f: next(d for d in f["distributions"] if d["name"] == "tensorflow").__setitem__("version", "2.16.1"),
     "tensorflow[and-cuda]==2.16.2"),  # 2.16.1 would not find them: the trap's fixed release
    (lambda f: next(d for d in f["distributions"] if d["name"] == "tensorflow").__setitem__("name", "tensorflow-cpu"),
     None),  # a CPU build: cuda-build's replacement, not this step
], ids=["some-libraries-installed", "system-cuda-on-the-loader-path", "tensorflow-2.16.1", "cpu-build"])
def test_the_and_cuda_step_only_where_it_repairs(change, wanted):
    facts = fixture_facts(WITHOUT_AND_CUDA)
    change(facts)
    result = check_result("gpu-visible", facts)
    packages = [r.packages for r in (result.remediation.repairs if result.remediation else ()) if r.action.value == "install"]
    assert packages == ([(wanted,)] if wanted else [])


def test_the_advice_names_the_libraries_tensorflows_log_could_not_load():
    # fixtures/fresh/conda-forge-tensorflow-gpu-2.17-libcublas-missing (conda-forge/tensorflow-feedstock#410): the
    # GPU is found, libcublas.so.12 is not; whatever the installer, the user is told which library is missing
    from tests.fixtures_support import FRESH, load_fixture

    facts = load_fixture(FRESH / "conda-forge-tensorflow-gpu-2.17-libcublas-missing.json")["facts"]
    result = check_result(gpu_visible, facts)
    assert result.status is Status.FAIL
    assert "TensorFlow's log names what it could not load: libcublas.so.12." in result.remediation.advice
    # dlerror's own wording names the library too, once (the line as NVIDIA/tensorflow#110 shows it)
    facts["tensorflow"]["stderr_tail"] += (
        "2024-06-19 16:06:44.996032: W tensorflow/stream_executor/platform/default/dso_loader.cc:60] Could not load "
        "dynamic library 'libcusolver.so.11'; dlerror: libnvJitLink.so.12: cannot open shared object file: No such "
        "file or directory\n")
    advice = check_result(gpu_visible, facts).remediation.advice
    assert advice.count("libcublas.so.12") == 1
    assert "libcublas.so.12, libcusolver.so.11, libnvJitLink.so.12." in advice


def test_native_windows_after_2_10_beside_an_nvidia_gpu_is_a_cpu_only_build_even_without_build_info():
    # the platform's wheels say it (native Windows has no CUDA build after 2.10): a saved report without the
    # child's build_info gets the same verdict and the way to the GPU (WSL2), not "its log names no reason"
    facts = fixture_facts("other/windows-tensorflow-2.11-nvidia-gpu.json")
    facts["tensorflow"] = {"status": "ok", "imported": True, "version": "2.11.0", "devices": [CPU], "stderr_tail": ""}
    result = check_result(gpu_visible, facts)
    assert result.status is Status.FAIL
    assert result.summary.endswith("this TensorFlow is a CPU-only build")
    assert "WSL2" in result.remediation.advice
