"""The cpu-instructions check: the AVX/AVX2 a TensorFlow build needs against the CPU's flags (Linux
/proc/cpuinfo, Intel Macs' sysctl)."""

from __future__ import annotations

from tfdoctor.results.model import Status

from tests.builders import LINUX_HOST, check_result, fix_text, fixture_facts
from tests.plan_support import plan_of


def test_intel_mac_flags_come_from_sysctl():
    facts = {"host": {"system": "Darwin", "machine": "x86_64"}, "python": {"version": "3.11.9", "machine": "x86_64"},
             "cpu": {"brand": None, "flags": None, "source": "sysctl"},
             "sysctl": {"machdep.cpu.features": "FPU VME DE PSE TSC MSR PAE MCE CX8 APIC SEP AVX1.0 FMA",
                        # leaf7 of an older Intel Mac (yaroslavvb/tensorflow-community-wheels#95)
                        "machdep.cpu.leaf7_features": "SMEP ERMS RDWRFSGS TSC_THREAD_OFFSET BMI1 AVX2 BMI2 INVPCID FPU_CSDS"}}
    result = check_result("cpu-instructions", facts)
    assert result.status is Status.PASS and "AVX2" in result.summary
    facts["sysctl"]["machdep.cpu.features"] = "FPU VME DE PSE TSC MSR PAE MCE CX8 APIC SEP"
    facts["sysctl"]["machdep.cpu.leaf7_features"] = None
    assert check_result("cpu-instructions", facts).status is Status.FAIL


def test_core2_without_avx_fails_with_the_hardware_advice():
    # Intel Q9650 flags (tensorflow/tensorflow#46496): no avx, no hypervisor
    flags = ("fpu vme de pse tsc msr pae mce cx8 apic sep mtrr pge mca cmov pat pse36 clflush dts acpi mmx fxsr sse sse2 "
             "ht tm pbe syscall nx lm constant_tsc arch_perfmon pebs bts rep_good nopl cpuid aperfmperf pni dtes64 monitor "
             "ds_cpl vmx smx est tm2 ssse3 cx16 xtpr pdcm sse4_1 lahf_lm pti tpr_shadow vnmi flexpriority dtherm").split()
    result = check_result("cpu-instructions", {"host": LINUX_HOST, "cpu": {"brand": "Intel(R) Core(TM)2 Quad CPU Q9650", "flags": flags}})
    assert result.status is Status.FAIL and "Sandy" in fix_text(result) and "VM" not in fix_text(result)


def test_arm_cpus_and_missing_flags():
    assert check_result("cpu-instructions", {"host": {"system": "Darwin", "machine": "arm64"},
                                    "python": {"machine": "arm64"}}).status is Status.PASS
    assert check_result("cpu-instructions", {"host": LINUX_HOST, "cpu": {"flags": None, "source": "unavailable: OSError"}}).status is Status.SKIP


def test_tensorflow_2_4_0_without_avx2_moves_to_2_4_1_and_says_why():
    facts = fixture_facts("linux/tensorflow-2.4.0-ivy-bridge-no-avx2.json")
    result = check_result("cpu-instructions", facts)
    plan = plan_of(facts, result)
    assert [s.command for s in plan.steps] == ["python3 -m pip install -- 'tensorflow==2.4.1'"]
    assert plan.moves_tensorflow.source == "tensorflow==2.4.0" and "AVX2" in plan.moves_tensorflow.why


def test_tensorflow_2_4_1_needs_only_avx():
    facts = fixture_facts("linux/tensorflow-2.4.0-ivy-bridge-no-avx2.json")
    facts["distributions"][0]["version"] = "2.4.1"
    facts.pop("tensorflow")
    assert check_result("cpu-instructions", facts).status is Status.PASS
