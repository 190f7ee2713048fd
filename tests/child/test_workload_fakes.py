"""`tfdoctor --deep` end to end with the probe's NumPy-backed fake TensorFlow (tests/fakes), whose "GPU"
is as fast, slow or broken as a test says: the crossover found, a GPU slower everywhere, a GPU faster
everywhere, a GPU whose products land on the CPU, a GPU without a MatMul kernel. The fake implements
matmul and device scopes only, so the other sections raise AttributeError there and say so: these tests
are about the GPU paths of the crossover, the one section the fake can run."""

from __future__ import annotations

from concurrent.futures import Future
from pathlib import Path

import pytest

from tests import background_support, fakes

# A GPU launch latency on top of the fake's speeds: what makes a small matmul lose on a real GPU.
LATENCY = """
_plain_matmul = _matmul


def _launched(a, b):
    if "GPU" in _scope[-1] and os.environ.get("FAKE_TF_GPU_LATENCY_S"):
        time.sleep(float(os.environ["FAKE_TF_GPU_LATENCY_S"]))
    return _plain_matmul(a, b)


linalg.matmul = staticmethod(_launched)


class _KeepAll(dict):
    def clear(self):
        pass  # both devices' A @ A stay cached: the crossover alternates sides and sizes, never recomputing


_products = _KeepAll()
"""


def _run(tmp_path: Path, mode: str, **env: str) -> fakes.DoctorRun:
    root = fakes.install(tmp_path, (fakes.HERE / "functional_tensorflow.py").read_text(encoding="utf-8") + LATENCY)
    run = fakes.run_doctor(root, "--deep", "--only", "probe,workload",
                           extra_env={"FAKE_TF_MODE": mode, "OPENBLAS_NUM_THREADS": "1", **env})
    assert run.report is not None, run.stderr
    assert fakes.survivors(run.pids) == []
    return run


def _crossover(run: fakes.DoctorRun) -> dict:
    section = run.tensorflow["workload"]["crossover"]
    assert section["status"] == "ok", section
    return section


@pytest.fixture(scope="module", autouse=True)
def waiting(tmp_path_factory) -> dict[str, Future]:
    """The two runs that mostly sleep (a GPU 40x slower than the CPU, a CPU 1000x slower than the GPU), read
    by the module's last two tests (tests/background_support.py): the other tests run meanwhile."""
    slower, faster = tmp_path_factory.mktemp("gpu-slower"), tmp_path_factory.mktemp("gpu-faster")
    with background_support.started(
            slower=lambda: _run(slower, "gpu", FAKE_TF_CPU_GFLOPS="2000", FAKE_TF_GPU_GFLOPS="50",
                                FAKE_TF_GPU_LATENCY_S="0.001"),
            faster=lambda: _run(faster, "gpu", FAKE_TF_CPU_GFLOPS="2", FAKE_TF_GPU_GFLOPS="2000")) as runs:
        yield runs


def test_crossover_found_with_a_gpu_that_pays_a_launch_latency(tmp_path):
    run = _run(tmp_path, "gpu", FAKE_TF_CPU_GFLOPS="50", FAKE_TF_GPU_GFLOPS="2000", FAKE_TF_GPU_LATENCY_S="0.002")
    section = _crossover(run)
    # by construction the CPU wins up to 256 (0.67 ms against 2.02 ms) and loses from 512 (5.4 against 2.1 ms):
    # margins of 2.5x and more, which sleeps lengthened by a busy machine do not overturn
    assert section["outcome"] == "crossover" and section["crossover_n"] == 512, section
    assert [row["n"] for row in section["sizes"]][:4] == [64, 128, 256, 512]
    for row in section["sizes"]:
        assert row["gpu"]["placement_ok"] and row["cpu"]["placement_ok"]
        assert row["gpu"]["blocks"] >= 3 and row["gpu"]["warmup_s"] is not None
    workload = run.result("workload")
    assert any(d.startswith("Below 512x512 the CPU wins") for d in workload["details"]), workload
    assert "CPU wins below 512x512" in workload["summary"] or workload["status"] == "warn"


def test_gpu_products_on_the_cpu_are_a_silent_fallback(tmp_path):
    run = _run(tmp_path, "gpu-fallback")
    section = _crossover(run)
    assert section["sizes"][0]["gpu"]["placement_ok"] is False
    assert section["sizes"][0]["gpu"]["output_device"].endswith("CPU:0")
    problems = [p["summary"] for p in run.result("workload")["evidence"]["problems"]]
    assert any("asked of the GPU ran on" in p and "silent CPU fallback" in p for p in problems), problems


def test_gpu_without_a_matmul_kernel_falls_back_to_the_cpu(tmp_path):
    run = _run(tmp_path, "gpu-no-kernel")
    section = run.tensorflow["workload"]["crossover"]
    assert "Could not satisfy device specification" in section["sizes"][0]["gpu"]["error"]["message"]
    assert section["sizes"][0]["cpu"]["blocks"] >= 3  # the CPU half still ran
    problems = [p["summary"] for p in run.result("workload")["evidence"]["problems"]]
    assert any("has no GPU kernel" in p for p in problems), problems


def test_sections_the_fake_cannot_run_are_reported_not_fatal(tmp_path):
    run = _run(tmp_path, "cpu")
    workload = run.tensorflow["workload"]
    assert workload["crossover"]["outcome"] == "cpu_only"
    assert workload["dispatch"]["status"] == "error" and workload["dispatch"]["error"]["type"] == "AttributeError"
    assert workload["training_step"]["status"] == "error"  # no Keras in the fake: no model could be built
    assert workload["status"] == "incomplete" and run.tensorflow["stage"] == "done"
    assert run.result("workload")["status"] == "warn"


def test_gpu_slower_everywhere_warns(waiting):
    run = waiting["slower"].result(timeout=background_support.RESULT_TIMEOUT_S)
    section = _crossover(run)
    assert section["outcome"] == "cpu_faster_everywhere"
    assert all(row["gpu_speedup"] < 1 for row in section["sizes"])
    workload = run.result("workload")
    assert workload["status"] == "warn"
    assert any("slower than the CPU at every matmul size" in p["summary"] for p in workload["evidence"]["problems"])


def test_gpu_faster_everywhere(waiting):
    run = waiting["faster"].result(timeout=background_support.RESULT_TIMEOUT_S)
    section = _crossover(run)
    assert section["outcome"] == "gpu_faster_everywhere" and section["crossover_n"] == 64
    assert section.get("stopped_at")  # a 2 GFLOPS CPU cannot do 2048x2048 within the budget: the ladder stops
    assert all(row["gpu_speedup"] > 1 for row in section["sizes"])
