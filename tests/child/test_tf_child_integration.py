"""The real TensorFlow, imported by the child of a real doctor run (`python -m tfdoctor --json`).

Skipped only where the test setup installs no TensorFlow (it installs tensorflow-cpu on Linux x86-64,
so there a missing TensorFlow fails these tests instead of silently skipping them)."""

from __future__ import annotations

import pytest

from tests.integration_support import MARKS, doctor_json

pytestmark = MARKS


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> dict:
    return doctor_json([], tmp_path_factory.mktemp("run"))


def _result(report: dict, check_id: str) -> dict:
    return next(r for r in report["results"] if r["id"] == check_id)


def test_the_child_imports_tensorflow_and_lists_the_cpu(report):
    tf = report["facts"]["tensorflow"]
    assert tf["status"] == "ok" and tf["imported"] and tf["stage"] == "done"
    assert tf["exit_code"] == 0 and tf["signal"] is None and tf["timed_out"] is False
    assert tf["version"] and tf["version"][0].isdigit()
    assert {"name": "/physical_device:CPU:0", "device_type": "CPU"} in tf["devices"]
    assert isinstance(tf["build_info"], dict) and "is_cuda_build" in tf["build_info"]
    result = _result(report, "tensorflow-import")
    assert result["status"] == "pass" and tf["version"] in result["summary"]


def test_the_probe_measures_the_cpu(report):
    probe = report["facts"]["tensorflow"]["probe"]
    cpu = probe["sides"]["cpu"]
    assert probe["status"] == "ok"
    assert cpu["blocks"] >= 3 and cpu["gflops_median"] > 0 and cpu["gflops_best"] >= cpu["gflops_median"]
    assert cpu["placement_ok"] is True and cpu["output_device"].endswith("CPU:0")
    assert cpu["finite"] is True and cpu["rel_error"] < 1e-4
    assert 128 <= cpu["n"] <= 2048


def test_no_gpu_here_and_the_checks_say_so(report):
    tf = report["facts"]["tensorflow"]
    if any(d["device_type"] == "GPU" for d in tf["devices"]):
        pytest.skip("this machine has a GPU")
    assert "gpu" not in tf["probe"]["sides"] and tf["probe"].get("speedup") is None
    # with no GPU to compare, the short CPU run: its budget, not the GPU comparison's
    from tfdoctor.collect.tensorflow import CPU_ONLY_PROBE_BUDGET_S, PROBE_BUDGET_S

    assert tf["probe"]["budget_s"] == CPU_ONLY_PROBE_BUDGET_S < PROBE_BUDGET_S
    visible = _result(report, "gpu-visible")
    assert visible["status"] == "pass"
    assert "No GPU expected" in visible["summary"] and "runs on the CPU" in visible["summary"]
    probe = _result(report, "probe")
    assert probe["status"] in ("pass", "warn")  # warn only when this CPU is starved at the time
    assert "no GPU to compare" in probe["summary"] or "of its peak" in probe["summary"]
    assert any(line.startswith("CPU: N=") for line in probe["details"])


def test_the_startup_lines_are_kept_and_noise_is_not_a_problem(report):
    tf = report["facts"]["tensorflow"]
    assert tf["log_level"]["TF_CPP_MIN_LOG_LEVEL"] == "0"
    for check_id in ("tensorflow-import", "gpu-visible"):
        assert _result(report, check_id)["status"] == "pass"


def test_tf_keras_is_keras_3_and_builds_a_layer(report):
    keras = report["facts"]["tensorflow"]["keras"]
    version = report["facts"]["tensorflow"]["version"]
    if tuple(int(p) for p in version.split(".")[:2]) < (2, 16):
        pytest.skip("Keras 3 is tf.keras from TensorFlow 2.16")
    assert keras["flavor"] == "keras3" and keras["version"].startswith("3.")
    assert keras["module"].startswith("keras.") and keras["layer_ok"] is True and keras["error"] is None
    assert keras["legacy_env"] is None or keras["legacy_requested"] is False
    result = _result(report, "keras")
    assert result["status"] == "pass" and "Keras 3" in result["summary"]


def test_autograph_converts_python_control_flow_and_nothing_is_suspected(report):
    """Issue 29: the healthy setup converts the control-flow function; no finding, no suspect."""
    assert report["facts"]["tensorflow"]["autograph"] == {"status": "converted"}
    dependencies = _result(report, "dependencies")
    assert dependencies["status"] == "pass" and "suspects" not in dependencies["evidence"]
