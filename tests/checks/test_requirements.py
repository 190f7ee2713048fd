"""The requirements check on constructed and recorded facts: skip without requirements, each kind of
unmet requirement a failure naming what is missing and (where a command can) how to get it."""

from __future__ import annotations

import copy

import pytest

from tfdoctor.checks.requirements import requirements as requirements_check
from tfdoctor.diagnosis.config import Requirements
from tfdoctor.results.model import Status
from tfdoctor.checking.runner import run_check

from tests.builders import fixture_facts
from tests.plan_support import plan_commands, plan_of

def facts_of(name: str, **wanted) -> dict:
    facts = fixture_facts(name)
    if wanted:
        facts["requirements"] = Requirements(**wanted).to_facts("pyproject.toml")
    return facts


# What the TensorFlow child records on a healthy M1 with tensorflow-metal (shape as in tf_child.py).
METAL_TF = {"status": "ok", "imported": True, "stage": "done", "version": "2.19.0",
            "devices": [{"name": "/physical_device:CPU:0", "device_type": "CPU"},
                        {"name": "/physical_device:GPU:0", "device_type": "GPU"}],
            "probe": {"status": "ok", "speedup": 4.8,
                      "sides": {"gpu": {"kind": "GPU", "gflops_best": 1900.0}, "cpu": {"kind": "CPU", "gflops_best": 396.0}}}}


def healthy_m1(**wanted) -> dict:
    facts = facts_of("macos/m1-tf219-metal120-healthy.json", **wanted)
    facts["tensorflow"] = copy.deepcopy(METAL_TF)
    return facts


def judge(facts: dict):
    return run_check(requirements_check, facts)


def test_without_requirements_it_skips():
    result = judge(facts_of("macos/m1-tf219-metal120-healthy.json"))
    assert (result.status, result.summary) == (Status.SKIP, "no requirements set")


def test_met_requirements_pass_and_name_what_was_found():
    result = judge(healthy_m1(gpu="metal", tensorflow=">=2.16", python=">=3.9"))
    assert result.status is Status.PASS, result.summary
    assert "TensorFlow 2.19" in result.summary and "GPU" in result.summary


def test_apple_silicon_without_metal_names_the_metal_release_that_fits():
    facts = facts_of("macos/m1-tf215-no-metal-plugin.json", gpu="any")
    result = judge(facts)
    assert result.status is Status.FAIL
    assert "tensorflow-metal is not installed" in result.summary
    assert result.remediation.commands == ()
    assert plan_commands(facts, result) == ["python3 -m pip install -- 'tensorflow-metal==1.1.0' 'tensorflow==2.15.0'"]


def test_linux_nvidia_gpu_unused_by_a_cpu_build_names_the_cuda_build():
    facts = facts_of("linux/two-k80-driver-470-tensorflow-2.11.json", gpu="cuda")
    facts["tensorflow"]["devices"] = [{"name": "/physical_device:CPU:0", "device_type": "CPU"}]
    result = judge(facts)
    assert result.status is Status.FAIL and "nvidia-smi lists" in result.summary
    assert plan_commands(facts, result) == ["python3 -m pip install -- 'tensorflow[and-cuda]==2.11.0'"]


def test_cpu_only_linux_fails_without_a_command_no_command_adds_a_gpu():
    facts = facts_of("linux/two-k80-driver-470-tensorflow-2.11.json", gpu="any")
    facts["nvidia"] = {}  # recorded: nvidia-smi not found, no driver, no PCI device
    facts["tensorflow"]["devices"] = [{"name": "/physical_device:CPU:0", "device_type": "CPU"}]
    result = judge(facts)
    assert result.status is Status.FAIL and "lists no GPU" in result.summary
    assert result.remediation.commands == () and plan_commands(facts, result) == []


def test_an_unprobed_machine_is_not_called_cpu_only():
    # a saved report without NVIDIA facts: whether the machine has a GPU is unknown; gpu-visible says why none is
    # listed (the requirement stands in for the probe there), so this check claims no CPU-only machine
    facts = facts_of("linux/two-k80-driver-470-tensorflow-2.11.json", gpu="cuda")
    del facts["nvidia"]
    facts["tensorflow"]["devices"] = [{"name": "/physical_device:CPU:0", "device_type": "CPU"}]
    result = judge(facts)
    assert result.status is Status.FAIL and "NVIDIA facts not recorded; see gpu-visible" in result.summary
    assert "CPU-only" not in result.summary and result.remediation is None


def test_a_tensorflow_specifier_names_the_installed_version():
    facts = facts_of("macos/m1-tf219-metal120-healthy.json", tensorflow=">=2.99")
    result = judge(facts)
    assert result.status is Status.FAIL
    assert result.summary == "TensorFlow >=2.99 required: 2.19.0 is installed"
    assert plan_commands(facts, result) == []  # no release satisfies it: pip would find nothing


def test_an_installable_tensorflow_specifier_gets_the_install_command():
    facts = facts_of("macos/m1-tf215-no-metal-plugin.json", tensorflow=">=2.16,<2.18")
    result = judge(facts)
    assert result.status is Status.FAIL and "2.15.0 is installed" in result.summary
    plan = plan_of(facts, result)  # the requirement moves TensorFlow, and the plan says why
    assert [s.command for s in plan.steps] == ["python3 -m pip install -- 'tensorflow>=2.16,<2.18'"]
    assert plan.moves_tensorflow.why == "the team requires TensorFlow >=2.16,<2.18 (pyproject.toml)"


def test_python_specifier():
    result = judge(facts_of("macos/m1-tf219-metal120-healthy.json", python=">=3.12"))
    assert result.status is Status.FAIL and "this interpreter is Python" in result.summary


def test_throughput_and_speedup_against_the_probe():
    facts = healthy_m1()
    probe = facts["tensorflow"]["probe"]
    best = max(side["gflops_best"] for side in probe["sides"].values())
    facts["requirements"] = Requirements(min_gflops=best * 0.9, min_gpu_speedup=probe["speedup"] * 0.9).to_facts(None)
    assert judge(facts).status is Status.PASS
    facts["requirements"] = Requirements(min_gflops=best * 2).to_facts(None)
    assert "GFLOPS required: the fastest device" in judge(facts).summary
    facts["requirements"] = Requirements(min_gpu_speedup=probe["speedup"] * 2).to_facts(None)
    assert "the GPU is" in judge(facts).summary


def test_an_unmeasured_requirement_fails_rather_than_passes():
    facts = healthy_m1(min_gflops=1.0)
    facts["tensorflow"]["probe"] = {"status": "skipped", "reason": "--no-probe"}
    result = judge(facts)
    assert result.status is Status.FAIL and "not measured" in result.summary and "--no-probe" in result.summary


@pytest.mark.parametrize("bad", ["not a mapping", 3, None])
def test_odd_requirement_facts_do_not_crash(bad):
    facts = facts_of("macos/m1-tf219-metal120-healthy.json")
    facts["requirements"] = bad
    assert judge(facts).status is Status.SKIP


def test_a_gpu_of_the_wrong_kind_does_not_count():
    result = judge(healthy_m1(gpu="cuda"))
    assert result.status is Status.FAIL and "which is not one" in result.summary


def test_tensorflow_that_did_not_import_gives_no_gpu():
    facts = healthy_m1(gpu="any")
    facts["tensorflow"].update(status="import_error", imported=False, devices=None)
    result = judge(facts)
    assert result.status is Status.FAIL and "did not import" in result.summary
