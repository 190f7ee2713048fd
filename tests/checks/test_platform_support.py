"""The platform-support check: Python, glibc, architecture and OS against the wheels TensorFlow publishes (and
the newest TensorFlow it names, as the installer check does)."""

from __future__ import annotations

import pytest

from tfdoctor.checks.installer import installer_capability
from tfdoctor.checks.platform_support import platform_support
from tfdoctor.facts import releases
from tfdoctor.environment.pip import TENSORFLOW_WHEEL_TAGS, newest_tensorflow_wheel
from tfdoctor.results.model import Status

from tests.builders import LINUX_HOST, check_result, fix_text, fixture_facts, tensorflow_distribution
from tests.nvidia_support import T4
from tests.plan_support import plan_commands


@pytest.mark.parametrize("python, glibc, status, needle", [
    ("3.11.7", "2.36", Status.PASS, "up to 2.21"),
    ("3.14.0", "2.36", Status.WARN, "pre-release"),
    ("3.15.0", "2.36", Status.FAIL, "no TensorFlow release has wheels for Python 3.15"),
    ("3.11.2", "2.17", Status.WARN, "glibc 2.27"),  # CentOS 7: pip quietly installs 2.20
    ("3.11.2", "2.12", Status.FAIL, "glibc 2.12 is older"),
    ("3.8.10", "2.31", Status.WARN, "up to 2.13"),
])
def test_platform_support_python_and_glibc(python, glibc, status, needle):
    result = check_result("platform-support", {"host": LINUX_HOST, "python": {"version": python, "machine": "x86_64"},
                                      "os": {"glibc": glibc}})
    assert result.status is status and needle in result.summary, result.summary


def test_prerelease_hint_installs_the_pre_release_where_no_tensorflow_is_installed():
    facts = {"host": LINUX_HOST, "python": {"version": "3.14.0", "machine": "x86_64"}, "distributions": []}
    result = check_result("platform-support", facts)
    assert result.status is Status.WARN
    assert [r.to_dict() for r in result.remediation.repairs] == [
        {"action": "install", "reason": result.remediation.repairs[0].reason, "packages": ["tensorflow"], "pre": True}]
    assert plan_commands(facts, result) == ["python3 -m pip install --pre -- tensorflow"]
    # an installed TensorFlow stays: the pre-release is then advice, not a plan step
    facts["distributions"] = [tensorflow_distribution("2.22.0rc0")]
    kept = check_result("platform-support", facts)
    assert kept.status is Status.WARN and "pre-release" in kept.remediation.advice
    assert kept.remediation.repairs == () and plan_commands(facts, kept) == []


def test_32_bit_python_and_unknown_architectures_fail():
    assert check_result("platform-support", {"host": {"system": "Windows", "machine": "AMD64"},
                                    "python": {"version": "3.11.0", "machine": "x86", "pointer_bits": 32}}).status is Status.FAIL
    result = check_result("platform-support", {"host": {"system": "Linux", "machine": "ppc64le"},
                                      "python": {"version": "3.11.0", "machine": "ppc64le"}})
    assert result.status is Status.FAIL and "ppc64le" in result.summary


def test_a_report_without_its_machine_is_not_called_an_unsupported_platform():
    # a partial report (fixtures/fresh/round6, a Colab thread): Linux, but no machine recorded
    result = check_result("platform-support", {"host": {"system": "Linux"},
                                               "distributions": [{"name": "tensorflow", "version": "2.15.0"}]})
    assert result.status is Status.SKIP and "machine" in result.summary
    assert check_result("platform-support", {"host": {"machine": "x86_64"}}).status is Status.SKIP


def test_linux_aarch64_with_an_nvidia_gpu_warns_cpu_only():
    facts = fixture_facts(T4)
    facts.update(host={"system": "Linux", "machine": "aarch64"}, python={"version": "3.12.3", "machine": "aarch64"})
    result = check_result("platform-support", facts)
    assert result.status is Status.WARN and "CPU-only" in result.summary and "ngc" in fix_text(result).lower()
    assert check_result("cuda-build", facts).status is Status.SKIP  # not reported twice


def test_native_windows_gpu_points_to_wsl2_without_a_plan_step():
    facts = fixture_facts("other/windows-tensorflow-2.11-nvidia-gpu.json")
    result = check_result("platform-support", facts)
    assert result.status is Status.WARN
    assert result.remediation.commands == ("wsl --install",)  # inside WSL2 is another environment: words
    assert "tensorflow[and-cuda]" in result.remediation.advice and plan_commands(facts, result) == []


@pytest.mark.parametrize("installed, plan", [
    ([], ["python3 -m pip install -- 'tensorflow==2.16.2'"]),  # nothing installed: the last Intel Mac release
    ([tensorflow_distribution("2.15.1")], []),  # an installed TensorFlow stays where it is
])
def test_intel_mac_pins_the_last_release_only_where_none_is_installed(installed, plan):
    facts = {"host": {"system": "Darwin", "machine": "x86_64"}, "python": {"version": "3.11.9", "machine": "x86_64"},
             "sysctl": {"hw.optional.arm64": "0"}, "distributions": installed}
    result = check_result("platform-support", facts)
    assert result.status is Status.WARN and "2.16.2" in result.remediation.advice
    assert plan_commands(facts, result) == plan


def test_intel_mac_pin_is_bounded_by_the_pythons_last_wheel():
    """Python 3.8's last macOS x86_64 wheel is tensorflow 2.13.1 (https://pypi.org/project/tensorflow/2.13.1/#files;
    2.14.0 has no cp38 wheel): the pin follows it, so tensorflow-install's pin agrees and the plan is one step, not
    the conflict 'no tensorflow release satisfies tensorflow==2.16.2 and tensorflow==2.13.1' (issue 29)."""
    facts = fixture_facts("macos/intel-mac-py311-tf217-not-available.json")
    facts["python"]["version"] = "3.8.18"
    facts["python"].pop("marker_environment", None)
    result = check_result("platform-support", facts)
    assert result.status is Status.WARN and "2.13.1" in result.remediation.advice
    from tfdoctor.checking.registry import all_checks
    from tfdoctor.report.run import RunReport
    from tfdoctor.checking.runner import run_checks

    plan = RunReport(facts, run_checks(all_checks(), facts)).plan
    assert not plan.conflicts and [s.command for s in plan.steps] == ["python3 -m pip install -- 'tensorflow==2.13.1'"]


def test_windows_tensorflow_2_10_with_gpu_is_fine():
    facts = fixture_facts("other/windows-tensorflow-2.11-nvidia-gpu.json")
    facts["python"]["version"] = "3.10.11"
    facts["distributions"] = [tensorflow_distribution("2.10.1"), {"name": "numpy", "version": "1.24.3", "requires": []}]
    result = check_result("platform-support", facts)
    assert result.status is Status.PASS and "CUDA build" in " ".join(result.details)


def test_windows_without_gpu_passes():
    result = check_result("platform-support", {"host": {"system": "Windows", "machine": "AMD64"},
                                      "python": {"version": "3.12.1", "machine": "AMD64"}})
    assert result.status is Status.PASS and "WSL2" in " ".join(result.details)


def test_rosetta_python_is_judged_as_apple_silicon():
    facts = {"host": {"system": "Darwin", "machine": "arm64"},
             "python": {"version": "3.12.4", "machine": "x86_64", "proc_translated": "1"},
             "sysctl": {"hw.optional.arm64": "1"}}
    result = check_result("platform-support", facts)
    assert result.status is Status.PASS and "arm64" in result.summary and "Rosetta" in " ".join(result.details)
    cpu = check_result("cpu-instructions", facts)
    assert cpu.status is Status.FAIL and "Rosetta" in cpu.summary


def test_wsl1_is_named_and_has_no_gpu():
    facts = {"host": {"system": "Linux", "machine": "x86_64", "release": "4.4.0-20150-Microsoft"},
             "python": {"version": "3.10.12", "machine": "x86_64"}}
    result = check_result("platform-support", facts)
    assert "WSL1" in result.summary and "WSL1" in " ".join(result.details)


PLATFORMS = {  # platform key -> (system, the interpreter's machine)
    "linux-x86_64": ("Linux", "x86_64"), "linux-aarch64": ("Linux", "aarch64"), "windows-x86_64": ("Windows", "AMD64"),
    "macos-x86_64": ("Darwin", "x86_64"), "macos-arm64": ("Darwin", "arm64"),
}


PYTHONS = ["3.6", "3.7", "3.8", "3.9", "3.10", "3.11", "3.12", "3.13"]


def facts(key: str, python: str, glibc: str = "2.39") -> dict:
    system, machine = PLATFORMS[key]
    found = {"host": {"system": system, "machine": machine},
             "python": {"executable": "/venv/bin/python", "in_venv": True, "version": f"{python}.1", "machine": machine},
             "distributions": [], "installers": {"pip": "8.0", "conda": None, "wheels": []}}
    if system == "Linux":
        found["os"] = {"glibc": glibc}
    if system == "Darwin":
        found["sysctl"] = {"hw.optional.arm64": "1" if machine == "arm64" else "0"}
    return found


@pytest.mark.parametrize("python", PYTHONS)
@pytest.mark.parametrize("key", PLATFORMS)
def test_platform_support_and_installer_name_the_same_newest_tensorflow(key, python):
    machine = facts(key, python)
    expected = releases.newest_tensorflow(key, python, machine.get("os", {}).get("glibc"))
    named = platform_support.run(machine).evidence.get("newest_release")
    assert named == (expected["newest"] if expected else None)
    wheel = newest_tensorflow_wheel(machine)
    if key in TENSORFLOW_WHEEL_TAGS and expected:
        assert wheel is not None and wheel[0] == named
        outcome = installer_capability.run(machine)  # pip 8.0 is too old for every wheel tag in the table
        assert f"the newest tensorflow ({named})" in " ".join((outcome.summary, *outcome.details))
    else:
        assert wheel is None


@pytest.mark.parametrize("key, python, newest", [
    ("linux-x86_64", "3.6", "2.6.2"),  # 2.6.3 on have no cp36 wheel
    ("linux-x86_64", "3.7", "2.11.0"),  # 2.11.1 has no cp37 wheel
    ("windows-x86_64", "3.7", "2.11.0"),
    ("macos-x86_64", "3.12", "2.16.2"),
    ("linux-aarch64", "3.6", None),
])
def test_the_newest_release_is_judged_release_by_release(key, python, newest):
    found = releases.newest_tensorflow(key, python)
    assert (found["newest"] if found else None) == newest


def test_an_old_glibc_gets_the_newest_release_built_for_it():
    assert releases.newest_tensorflow("linux-x86_64", "3.11", "2.17")["newest"] == "2.20.0"  # 2.21 needs glibc 2.27
    assert newest_tensorflow_wheel(facts("linux-x86_64", "3.11", glibc="2.17"))[0] == "2.20.0"
    assert platform_support.run(facts("linux-x86_64", "3.11", glibc="2.17")).evidence["newest_release"] == "2.20.0"
