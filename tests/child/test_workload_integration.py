"""`tfdoctor --deep` with the real TensorFlow of the test setup (tensorflow-cpu on Linux x86-64): every
section recorded with figures and a verdict. Timing goals live in bench/bench_workload.py, not here."""

from __future__ import annotations

import json

import pytest

from tests.integration_support import MARKS
from tests.shared_run_support import DEEP_RUN, shared_doctor_run

pytestmark = MARKS


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> dict:
    return json.loads(shared_doctor_run(DEEP_RUN, tmp_path_factory).stdout)  # the charts' test reads it too


def test_every_section_is_recorded_with_figures(report):
    workload = report["facts"]["tensorflow"]["workload"]
    assert workload["devices"] == ["cpu"]
    for name in ("crossover", "dispatch", "input_pipeline", "conv2d", "training_step"):
        assert workload[name]["status"] == "ok", (name, workload[name])
        assert workload["sections"][name]["status"] == "ok"
    crossover = workload["crossover"]
    assert crossover["outcome"] == "cpu_only" and len(crossover["sizes"]) >= 4
    assert all(row["cpu"]["gflops"] > 0 and row["cpu"]["placement_ok"] for row in crossover["sizes"])
    assert workload["dispatch"]["eager"]["per_op_us"] > workload["dispatch"]["function"]["per_op_us"] > 0
    for name in ("no_prefetch", "prefetch", "model_only"):
        assert workload["input_pipeline"][name]["steps_per_s"] > 0
    assert workload["conv2d"]["cpu_backward"]["best_s"] > workload["conv2d"]["cpu_forward"]["best_s"] > 0
    for name in ("dense_cpu", "cnn_cpu"):
        info = workload["training_step"][name]
        assert info["best_s"] > 0 and info["warmup_s"] > 0 and info["blocks"] >= 3
    assert workload["training_step"]["mixed_precision"] == {"tried": False, "reason": "no GPU"}
    assert workload["memory"]["peak_rss_mb"] > 100 and workload["memory"]["swap_growth_mb"] is not None


def test_the_workload_check_gives_a_verdict_and_the_table(report):
    result = next(r for r in report["results"] if r["id"] == "workload")
    assert result["status"] in ("pass", "warn"), result
    if result["status"] == "pass":  # a busy machine may rightly warn (slow eager ops, noisy timing)
        assert result["summary"].startswith("5 of 5 workloads measured in")
    else:
        assert result["evidence"]["problems"] and result["remediation"]["advice"]
    assert {row[0] for row in result["evidence"]["table"]} == {
        "crossover", "dispatch", "input_pipeline", "conv2d", "training_step", "memory"}


def test_the_workload_leaves_the_default_run_alone(report):
    """The probe still ran as without --deep; the workload came after it, in the same child."""
    stages = [name for name, _ in report["facts"]["tensorflow"]["stages"]]
    assert stages.index("workload") > stages.index("probe")
    assert stages[-1] == "done"
