"""The probe end to end with a NumPy-backed fake TensorFlow whose "GPU" misbehaves in chosen ways: a
silent CPU fallback, NaN results, no GPU kernel, a GPU slower than the CPU, a crash or a hang in the
GPU's matmul, a crash while listing devices. The doctor runs as a real subprocess each time."""

from __future__ import annotations

from concurrent.futures import Future

import pytest

from tests import background_support, fakes

MINE = ("--only", "tensorflow-import,gpu-visible,probe")


def only_efficiency_problems(result: dict) -> bool:
    """The fake CPU (NumPy, or a sleep at FAKE_TF_CPU_GFLOPS) is far below this machine's real peak, so
    the CPU-efficiency warning may rightly appear; nothing else may."""
    return all("of its peak" in p["summary"] for p in result["evidence"].get("problems") or ())


def _run(tmp_path, mode: str, *args: str, **env: str) -> fakes.DoctorRun:
    run = fakes.run_doctor(fakes.functional(tmp_path), *MINE, *args, extra_env={"FAKE_TF_MODE": mode, **env})
    assert run.report is not None, run.stderr
    assert fakes.survivors(run.pids) == []
    return run


@pytest.fixture(scope="module", autouse=True)
def waiting(tmp_path_factory) -> dict[str, Future]:
    """The two runs that mostly sleep (a slow fake GPU, a hung one), read by the module's last two tests
    (tests/background_support.py): the other tests run meanwhile."""
    slower, hung = tmp_path_factory.mktemp("gpu-slower"), tmp_path_factory.mktemp("gpu-hang")
    # 10x slower by construction: a busy machine adds the same per-call overhead to both sides, which
    # pulls the ratio toward 1; at 10x it stays far below the fail threshold (it once read a warn at 5x)
    with background_support.started(
            slower=lambda: _run(slower, "gpu", FAKE_TF_CPU_GFLOPS="100", FAKE_TF_GPU_GFLOPS="10"),
            hang=lambda: _run(hung, "gpu-hang", "--timeout", "6")) as runs:
        yield runs


def test_cpu_only_machine_passes_with_the_cpu_measured(tmp_path):
    run = _run(tmp_path, "cpu")
    probe = run.result("probe")
    assert run.returncode == 0
    assert probe["status"] in ("pass", "warn") and only_efficiency_problems(probe)
    assert any(line.startswith("CPU: N=") for line in probe["details"])
    cpu = run.tensorflow["probe"]["sides"]["cpu"]
    assert cpu["blocks"] >= 3 and cpu["gflops_median"] > 0 and cpu["placement_ok"] and cpu["finite"]
    assert cpu["rel_error"] < 1e-5
    assert "gpu" not in run.tensorflow["probe"]["sides"]
    assert run.result("gpu-visible")["status"] == "pass"


def test_gpu_faster_than_cpu_passes(tmp_path):
    run = _run(tmp_path, "gpu", FAKE_TF_CPU_GFLOPS="20", FAKE_TF_GPU_GFLOPS="2000")
    probe = run.result("probe")
    assert probe["status"] in ("pass", "warn") and only_efficiency_problems(probe), probe
    # 100x by construction; sleeps only lengthen under load, so assert the verdict's side of the
    # 2x pass threshold rather than a tight band that a busy machine can miss
    assert 2 <= probe["evidence"]["speedup"] <= 100
    sides = run.tensorflow["probe"]["sides"]
    assert sides["gpu"]["placement_ok"] and sides["gpu"]["output_device"].endswith("GPU:0")
    assert run.result("gpu-visible")["status"] == "pass" and "Fake GPU 9000" in run.result("gpu-visible")["summary"]


def test_silent_cpu_fallback_fails(tmp_path):
    run = _run(tmp_path, "gpu-fallback")
    probe = run.result("probe")
    assert run.returncode == 1 and probe["status"] == "fail"
    assert probe["summary"].startswith("Silent CPU fallback") and "CPU:0" in probe["summary"]


def test_nan_results_fail(tmp_path):
    run = _run(tmp_path, "gpu-nan")
    probe = run.result("probe")
    assert probe["status"] == "fail" and "NaN" in probe["summary"]
    assert run.tensorflow["probe"]["sides"]["gpu"]["finite"] is False


def test_no_gpu_kernel_fails_instead_of_falling_back(tmp_path):
    run = _run(tmp_path, "gpu-no-kernel")
    probe = run.result("probe")
    assert probe["status"] == "fail" and "cannot run a float32 matmul" in probe["summary"]
    assert run.tensorflow["probe"]["sides"]["cpu"]["blocks"] >= 3  # the CPU half still ran


def test_gpu_matmul_crash_fails_the_probe_not_the_import(tmp_path):
    run = _run(tmp_path, "gpu-crash")
    assert run.tensorflow["signal"] == "SIGSEGV" and run.tensorflow["stage"] == "probe:GPU:warmup"
    assert run.result("tensorflow-import")["status"] == "pass"
    assert run.result("gpu-visible")["status"] == "pass"
    probe = run.result("probe")
    assert probe["status"] == "fail" and "on the GPU died of SIGSEGV" in probe["summary"]


def test_crash_while_listing_devices_fails_gpu_visible(tmp_path):
    run = _run(tmp_path, "devices-crash")
    assert run.result("tensorflow-import")["status"] == "pass"
    visible = run.result("gpu-visible")
    assert visible["status"] == "fail" and "While listing its devices" in visible["summary"]
    assert "SIGSEGV" in visible["summary"]
    assert run.result("probe")["status"] == "skip"


def test_no_probe_skips_the_timing(tmp_path):
    run = _run(tmp_path, "gpu", "--no-probe")
    assert run.result("probe")["status"] == "skip" and "--no-probe" in run.result("probe")["summary"]
    assert run.tensorflow["probe"] == {"status": "skipped", "reason": "--no-probe"}
    assert [s for s, _ in run.tensorflow["stages"]][-1] == "done"


def test_gpu_slower_than_cpu_fails(waiting):
    run = waiting["slower"].result(timeout=background_support.RESULT_TIMEOUT_S)
    probe = run.result("probe")
    assert probe["status"] == "fail" and "slower than the CPU" in probe["summary"]
    assert probe["evidence"]["speedup"] < 0.5


def test_gpu_matmul_hang_is_killed_at_the_timeout(waiting):
    run = waiting["hang"].result(timeout=background_support.RESULT_TIMEOUT_S)
    assert run.tensorflow["timed_out"] and run.tensorflow["stage"] == "probe:GPU:warmup"
    assert run.tensorflow["duration_s"] < 6 + 2.0  # killed at the timeout, not later
    probe = run.result("probe")
    assert probe["status"] == "fail" and "did not finish within 6 s" in probe["summary"]
