"""The probe check's judgement of constructed probe results: thresholds (kept in
knowledge/probe.toml), TF32 tolerance, per-platform speed-up limits, peaks and efficiency. These are
tests of thresholds, not fixtures of machines: the probe dicts are built here."""

from __future__ import annotations

import copy

import pytest
from tfdoctor.checks.probe import cpu_peak, gpu_peak, grade, probe

from tfdoctor import knowledge
from tfdoctor.results.model import CheckResult, Status

from tests.builders import probe_facts, probe_side
from tests.plan_support import plan_of

M1_MAX_DISPLAYS = """Graphics/Displays:

    Apple M1 Max:

      Chipset Model: Apple M1 Max
      Type: GPU
      Bus: Built-In
      Total Number of Cores: 32
      Vendor: Apple (0x106b)
"""


def verdict(facts: dict):
    return probe.run(facts)


def test_cpu_only_passes_and_says_there_is_no_gpu():
    outcome = verdict(probe_facts(None, probe_side("CPU", 400.0)))
    assert outcome.status is Status.PASS
    assert "no GPU to compare" in outcome.summary and "400 GFLOPS" in outcome.summary


def test_healthy_cuda_gpu_passes_with_the_speedup():
    outcome = verdict(probe_facts(probe_side("GPU", 20000.0, n=4096), probe_side("CPU", 400.0)))
    assert outcome.status is Status.PASS and "50.0x faster" in outcome.summary


@pytest.mark.parametrize("gpu_gflops, status", [(900.0, Status.PASS), (600.0, Status.WARN), (150.0, Status.FAIL)])
def test_speedup_limits_on_cuda(gpu_gflops, status):
    # 2x passes; 0.5x..2x warns (a small laptop GPU can tie a desktop CPU); below 0.5x fails
    assert verdict(probe_facts(probe_side("GPU", gpu_gflops), probe_side("CPU", 400.0))).status is status


@pytest.mark.parametrize("gpu_gflops, status", [(900.0, Status.PASS), (600.0, Status.WARN), (300.0, Status.FAIL)])
def test_speedup_limits_on_apple_silicon(gpu_gflops, status):
    facts = probe_facts(probe_side("GPU", gpu_gflops), probe_side("CPU", 400.0), system="Darwin")
    assert verdict(facts).status is status


def test_silent_cpu_fallback_fails():
    gpu = probe_side("GPU", 5000.0, placement_ok=False, output_device="/job:localhost/replica:0/task:0/device:CPU:0")
    outcome = verdict(probe_facts(gpu, probe_side("CPU", 400.0)))
    assert outcome.status is Status.FAIL and outcome.summary.startswith("Silent CPU fallback")


def test_nan_fails_even_when_fast():
    gpu = probe_side("GPU", 9000.0, finite=False, rel_error=None)
    outcome = verdict(probe_facts(gpu, probe_side("CPU", 400.0)))
    assert outcome.status is Status.FAIL and "NaN" in outcome.summary


@pytest.mark.parametrize("rel, status", [(1e-6, Status.PASS), (1e-3, Status.WARN), (5e-2, Status.FAIL)])
def test_fp32_error_limits(rel, status):
    assert verdict(probe_facts(probe_side("GPU", 9000.0, rel_error=rel), probe_side("CPU", 400.0))).status is status


def test_tf32_on_ampere_tolerates_its_rounding_and_says_so():
    ampere = {"gpu_details": [{"device_name": "NVIDIA A100", "compute_capability": [8, 0]}], "tf32_enabled": True}
    outcome = verdict(probe_facts(probe_side("GPU", 90000.0, rel_error=1.5e-3), probe_side("CPU", 400.0), **ampere))
    assert outcome.status is Status.PASS
    assert any("TensorFloat-32 is on" in d for d in outcome.details)
    worse = verdict(probe_facts(probe_side("GPU", 90000.0, rel_error=1e-2), probe_side("CPU", 400.0), **ampere))
    assert worse.status is Status.WARN
    # the same error without TF32 (a Turing GPU, compute capability 7.5) is a warning of its own
    turing = {"gpu_details": [{"compute_capability": [7, 5]}], "tf32_enabled": True}
    assert verdict(probe_facts(probe_side("GPU", 9000.0, rel_error=1.5e-3), probe_side("CPU", 400.0), **turing)).status is Status.WARN


def test_too_few_blocks_is_inconclusive_never_a_pass():
    cpu = probe_side("CPU", 400.0, blocks=2, block_s=[0.04, 0.04])
    outcome = verdict(probe_facts(None, cpu))
    assert outcome.status is Status.WARN and "inconclusive" in outcome.summary


def test_no_gpu_kernel_error_is_a_failure_naming_the_fallback():
    gpu = {"kind": "GPU", "device": "/GPU:0", "error": {"type": "InvalidArgumentError", "message":
           "Could not satisfy device specification of node MatMul: enable_soft_placement=0"}}
    outcome = verdict(probe_facts(gpu, probe_side("CPU", 400.0)))
    assert outcome.status is Status.FAIL and "cannot run a float32 matmul" in outcome.summary
    assert "silently run on the CPU" in outcome.remediation.advice


def test_slow_first_cuda_call_warns_with_the_ptx_reason():
    line = ("W tensorflow/core/common_runtime/gpu/gpu_device.cc:2052] TensorFlow was not built with CUDA kernel "
            "binaries compatible with compute capability 9.0. CUDA kernels will be jit-compiled from PTX, which "
            "could take 30 minutes or longer.")  # tensorflow/tensorflow#60739
    gpu = probe_side("GPU", 40000.0, n=4096, init_call_s=35.0)
    outcome = verdict(probe_facts(gpu, probe_side("CPU", 400.0), stderr_tail=line))
    assert outcome.status is Status.WARN and "35.0 s" in outcome.summary and "PTX" in outcome.summary


def test_probe_skipped_and_probe_died():
    facts = probe_facts(None, probe_side("CPU", 400.0))
    facts["tensorflow"]["probe"] = {"status": "skipped", "reason": "--no-probe"}
    assert verdict(facts).status is Status.SKIP
    died = probe_facts(None, None, status="crashed", stage="probe:GPU:warmup", signal="SIGSEGV", probe=None)
    outcome = verdict(died)
    assert outcome.status is Status.FAIL and "on the GPU died of SIGSEGV" in outcome.summary


@pytest.mark.parametrize("system, step, manual", [
    ("Linux", "export CUDA_VISIBLE_DEVICES=-1", True),  # the shell's part: hides the GPU from CUDA
    ("Darwin", "python3 -m pip uninstall -y -- tensorflow-metal", False),  # the plugin is the GPU path
])
def test_a_gpu_probe_that_died_keeps_tensorflow_off_the_gpu_in_the_plan(system, step, manual):
    died = probe_facts(None, None, system=system, status="crashed", stage="probe:GPU:warmup", signal="SIGSEGV",
                      probe=None)
    outcome = verdict(died)
    assert outcome.status is Status.FAIL and outcome.remediation.commands == ()
    result = CheckResult("probe", "probe", outcome.status, outcome.summary, remediation=outcome.remediation)
    plan = plan_of(died, result)
    assert [(s.command, s.manual) for s in plan.steps] == [(step, manual)]


# ------------------------------------------------------------------------------------------ peaks

def test_apple_gpu_peak_from_cores_and_clock_table():
    facts = {"host": {"system": "Darwin"}, "sysctl": {"machdep.cpu.brand_string": "Apple M1 Max"},
             "system_profiler": {"SPDisplaysDataType": M1_MAX_DISPLAYS}}
    peak = gpu_peak(facts, {})
    # 32 cores x 256 FLOP/cycle x 1.296 GHz = 10.6 TFLOPS (the knowledge row's own arithmetic)
    assert peak["gflops"] == pytest.approx(10617.2, rel=1e-3) and "32 GPU cores" in peak["basis"]


def test_m1_max_gpu_efficiency_low_warns_and_normal_passes():
    base = probe_facts(probe_side("GPU", 8000.0), probe_side("CPU", 400.0), system="Darwin")
    base.update({"sysctl": {"machdep.cpu.brand_string": "Apple M1 Max"},
                 "system_profiler": {"SPDisplaysDataType": M1_MAX_DISPLAYS}})
    assert verdict(base).status is Status.PASS  # 8 TFLOPS = 75 % (tlkh's measurement)
    low = copy.deepcopy(base)
    low["tensorflow"]["probe"]["sides"]["gpu"] = probe_side("GPU", 2500.0)
    low["tensorflow"]["probe"]["speedup"] = 2500.0 / 400.0
    outcome = verdict(low)
    assert outcome.status is Status.WARN and "of its peak" in outcome.summary


def test_x86_cpu_peak_uses_cores_clock_and_isa_flags():
    facts = {"host": {"system": "Linux"}, "cpu": {"physical_cores": 8, "flags": ["sse2", "avx", "avx2", "fma"]}}
    peak = cpu_peak(facts, {"cpu": {"mhz": 3000.0}})
    assert peak["gflops"] == pytest.approx(8 * 3.0 * 32)
    no_fma = {"host": {"system": "Linux"}, "cpu": {"physical_cores": 4, "flags": ["sse2", "avx"]}}
    assert cpu_peak(no_fma, {"cpu": {"mhz": 2000.0}})["gflops"] == pytest.approx(4 * 2.0 * 16)


def test_cpu_peak_from_the_probe_when_cpu_facts_are_not_recorded():
    result = {"cpu": {"mhz": 2500.0, "flags": ["avx", "avx2", "fma"], "physical_cores": 4, "usable_cores": 2}}
    peak = cpu_peak({"host": {"system": "Linux"}}, result)
    assert peak["gflops"] == pytest.approx(2 * 2.5 * 32)  # only the cores this process may use


def test_starved_cpu_warns():
    facts = probe_facts(None, probe_side("CPU", 10.0))
    facts["cpu"] = {"physical_cores": 8, "flags": ["avx", "avx2", "fma"]}
    facts["tensorflow"]["probe"]["cpu"] = {"mhz": 3000.0}
    outcome = verdict(facts)
    assert outcome.status is Status.WARN and "starved" in outcome.summary


def test_every_threshold_row_is_sourced_and_graded_both_ways():
    for row in knowledge.rows("probe", "threshold"):
        assert row["source"] and isinstance(row["verified"], bool)
        good = row["pass"] * (0.5 if row["better"] == "lower" else 2)
        assert grade(good, row["id"]) == "pass"
        if "fail" in row:
            bad = row["fail"] * (2 if row["better"] == "lower" else 0.5)
            assert grade(bad, row["id"]) == "fail"
