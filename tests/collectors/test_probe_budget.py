"""Which probe a run asks the TensorFlow child for: the short CPU run when there is no GPU to compare,
the long one for --deep and for a --min-gflops requirement (its GFLOPS must be the long run's)."""

from __future__ import annotations

import json
import sys

import pytest

import tfdoctor.collect
import tfdoctor.collect.tensorflow as tensorflow_collector
from tfdoctor.collect.options import CollectOptions
from tfdoctor.diagnosis.doctor import DoctorOptions, diagnose


@pytest.mark.parametrize("deep, requirements, careful", [
    (False, None, False),
    (False, {"min_gflops": 100.0, "source": "flags"}, True),
    (False, {"min_gflops": None, "tensorflow": ">=2.15", "source": "flags"}, False),
    (True, None, True),
])
def test_the_long_probe_is_asked_for_by_deep_and_min_gflops(monkeypatch, deep, requirements, careful):
    seen: list[CollectOptions] = []

    def gather(options: CollectOptions, alongside=None) -> dict:
        seen.append(options)
        return {}

    monkeypatch.setattr(tfdoctor.collect, "gather", gather)
    diagnose(DoctorOptions(only=("probe",), deep=deep, requirements=requirements))
    assert [options.careful_probe for options in seen] == [careful]


@pytest.mark.parametrize("careful, budget", [
    (False, tensorflow_collector.CPU_ONLY_PROBE_BUDGET_S),
    (True, tensorflow_collector.PROBE_BUDGET_S),
])
def test_the_child_is_given_the_cpu_only_budget_the_options_ask_for(monkeypatch, careful, budget):
    configs: list[dict] = []

    def run_child(argv, env, timeout, notable=None, watch=None):
        configs.append(json.loads(argv[-1]))
        return tensorflow_collector.ChildFate(None, True, timeout, {}, {})  # timed out: nothing more is read

    monkeypatch.setattr(tensorflow_collector, "run_child", run_child)
    tensorflow_collector.collect_tensorflow(CollectOptions(python=sys.executable, careful_probe=careful))
    assert configs[0]["cpu_only_budget_s"] == budget
    assert configs[0]["budget_s"] == tensorflow_collector.PROBE_BUDGET_S  # a GPU is always compared at length
    assert tensorflow_collector.CPU_ONLY_PROBE_BUDGET_S < tensorflow_collector.PROBE_BUDGET_S


def test_what_runs_alongside_the_collectors_is_done_when_gather_returns():
    """The doctor's preparation (knowledge.preload) runs on the collectors' pool and is finished by
    the time the checks run."""
    import threading
    import time

    finished = threading.Event()

    def prepare() -> None:
        time.sleep(0.3)  # longer than the host collector: gather must wait for it
        finished.set()

    facts = tfdoctor.collect.gather(CollectOptions(python=sys.executable, sections=frozenset({"host"})),
                                    alongside=prepare)
    assert finished.is_set() and "host" in facts
