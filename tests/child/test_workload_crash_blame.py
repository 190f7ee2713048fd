"""A child that dies during the --deep workload is the workload's finding: the probe and tf.keras ran
before it, and their records stand (a crash in conv2d is not 'the probe died' nor 'tf.keras failed')."""

from __future__ import annotations

import json
from pathlib import Path

from tfdoctor.facts.tensorflow_child import phase_of
from tfdoctor.checking.registry import all_checks
from tfdoctor.checking.runner import run_checks

ROOT = Path(__file__).resolve().parents[2]


def test_workload_stages_are_their_own_phase():
    assert phase_of("workload:conv2d") == "workload"
    assert phase_of("workload") == "workload"
    assert phase_of("probe:timing") == "probe"
    assert phase_of("keras") == "keras"


def _healthy_facts():
    """A recorded healthy run of this VM (the CPU-only fixture) with the child's records of a real run."""
    fixture = json.loads((ROOT / "fixtures/linux/cpu-only-tensorflow-cpu-no-gpu.json").read_text())
    facts = dict(fixture["facts"])
    facts["tensorflow"] = {
        "status": "ok", "stage": "done", "imported": True, "version": "2.21.0", "exit_code": 0,
        "devices": [{"device_type": "CPU", "name": "/physical_device:CPU:0"}],
        "keras": {"legacy_env": None, "legacy_requested": False, "flavor": "keras3",
                  "module": "keras.src.layers.core.dense", "version": "3.15.1", "layer_ok": True,
                  "step": "done", "error": None, "seconds": 0.043},
    }
    return facts


def test_a_crash_in_the_workload_blames_the_workload_only():
    facts = _healthy_facts()
    before = {r.check_id: r.status.value for r in run_checks(all_checks(), facts)}
    crashed = dict(facts)
    crashed["tensorflow"] = {**facts["tensorflow"], "status": "crashed", "stage": "workload:conv2d",
                             "signal": "SIGSEGV", "exit_code": -11, "workload": {}}
    after = {r.check_id: r for r in run_checks(all_checks(), crashed)}
    assert after["workload"].status.value == "fail"
    assert "conv2d" in after["workload"].summary
    assert after["keras"].status.value == before["keras"] == "pass", after["keras"].summary
    assert "died" not in after["probe"].summary, after["probe"].summary
