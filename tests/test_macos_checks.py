"""The macOS checks (and the cross-platform tensorflow-install and memory) on small fact sets: one
situation per test, each asserting the verdict and the command that fixes it."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from tfdoctor.checks.architecture import architecture
from tfdoctor.checks.macos_version import macos_version_check
from tfdoctor.checks.memory import memory
from tfdoctor.checks.metal_plugin import metal_plugin
from tfdoctor.checks.tensorflow_install import tensorflow_install

from tfdoctor.model import CheckResult, Remediation, Status
from tfdoctor.repairs import Repair

from tests.plan_support import plan_commands, plan_of
from tests.builders import METAL_100_X86_64_HEX, METAL_120_ARM64_HEX, UNIVERSAL2_HEX, MAC_SITE, MAC_USER_SITE, MAC_VENV, fix_text, linux, mac, run, site_distribution

GB = 1024 ** 3












# --- architecture ---------------------------------------------------------------------------------

def test_native_arm64_passes_and_mentions_a_universal_executable():
    facts = mac(executable_macho={"path": "/x/python3.11", "header_hex": UNIVERSAL2_HEX})
    result = run(architecture, facts)
    assert result.status is Status.PASS
    assert "universal" in " ".join(result.details)


def test_universal2_python_launched_under_rosetta_fails_with_a_new_arm64_environment():
    facts = mac(machine="x86_64", translated="1", executable_macho={"path": "/x/python3.11", "header_hex": UNIVERSAL2_HEX})
    result = run(architecture, facts)
    assert result.status is Status.FAIL
    assert "Open using Rosetta" in " ".join(result.details)
    commands = result.remediation.commands
    assert any(c.startswith("arch -arm64 ") and "-m venv" in c for c in commands)
    assert not any("pip" in c for c in commands), "never a pip command: the broken env gets no repair, the new one words"
    assert result.remediation.repairs == ()
    assert "tensorflow==2.19.*, tensorflow-metal==1.2.0" in result.remediation.advice
    assert "2.16.2" in " ".join(result.details) and "1.0.0" in " ".join(result.details)


def test_x86_64_only_interpreter_is_named_as_such():
    facts = mac(machine="x86_64", translated="1", executable_macho={"path": "/x/python", "header_hex": METAL_100_X86_64_HEX})
    result = run(architecture, facts)
    assert result.status is Status.FAIL
    assert "x86_64 only" in " ".join(result.details)


def test_intel_homebrew_under_rosetta_points_to_opt_homebrew():
    facts = mac(machine="x86_64", translated="1", real_executable="/usr/local/Cellar/python@3.11/3.11.7/bin/python3.11")
    result = run(architecture, facts)
    assert result.status is Status.FAIL and "/opt/homebrew" in " ".join(result.details)


def test_rosetta_under_conda_gets_miniforge_and_under_uv_gets_an_aarch64_cpython():
    conda = mac(machine="x86_64", translated="1", conda=True, in_venv=False, executable="/Users/me/miniconda3/bin/python")
    assert "Miniforge3-MacOSX-arm64.sh" in fix_text(run(architecture, conda))
    uv = mac(machine="x86_64", translated="1", uv_version="0.5.1")
    assert "uv python install cpython-3.12-macos-aarch64-none" in run(architecture, uv).remediation.commands


def test_translation_is_read_from_the_target_not_the_doctor():
    facts = mac()  # the target is native...
    facts["host"]["machine"] = "x86_64"  # ...while the doctor runs translated
    result = run(architecture, facts)
    assert result.status is Status.PASS and "tfdoctor itself runs under Rosetta" in " ".join(result.details)


def test_intel_mac_passes():
    facts = mac(machine="x86_64", translated=None)
    facts["sysctl"] = {"hw.optional.arm64": "0", "machdep.cpu.brand_string": "Intel(R) Core(TM) i7-8850H CPU @ 2.60GHz"}
    result = run(architecture, facts)
    assert result.status is Status.PASS and result.summary.startswith("Intel Mac")


def test_unknown_hardware_skips():
    facts = mac(machine="")
    facts["sysctl"] = {}
    assert run(architecture, facts).status is Status.SKIP


# --- macos-version --------------------------------------------------------------------------------

def test_compat_mode_python_sees_10_16():
    facts = mac(mac_ver="10.16")
    result = run(macos_version_check, facts)
    assert result.status is Status.WARN and "SYSTEM_VERSION_COMPAT=0" in fix_text(result)
    plan = plan_of(facts, result)  # an environment variable: a manual step of the plan
    assert [(s.command, s.manual) for s in plan.steps] == [("export SYSTEM_VERSION_COMPAT=0", True)]


def test_metal_below_apples_minor_minimum_warns_and_hard_minimum_fails():
    facts = mac()
    facts["os"]["sw_vers"] = "ProductName:\tmacOS\nProductVersion:\t12.0\n"
    facts["distributions"] = [site_distribution("tensorflow-macos", "2.9.2"), site_distribution("tensorflow-metal", "0.5.0")]
    below_listed = run(macos_version_check, facts)
    assert below_listed.status is Status.WARN  # Apple: 12.1+
    assert plan_commands(facts, below_listed) == []  # it may load: removing it is a choice, in words
    assert "uninstall tensorflow-metal" in below_listed.remediation.advice
    facts["os"]["sw_vers"] = "ProductName:\tmacOS\nProductVersion:\t11.7.10\n"
    result = run(macos_version_check, facts)
    assert result.status is Status.FAIL and "MPSGraphCompilationDescriptor" in " ".join(result.details)
    assert result.remediation.commands == ("softwareupdate --list",)  # the OS update is manual
    assert plan_commands(facts, result) == [f"{MAC_VENV}/bin/python -m pip uninstall -y tensorflow-metal"]


def test_macos_version_falls_back_to_mac_ver_but_not_to_10_16():
    facts = mac(mac_ver="13.6")
    facts["os"] = {"sw_vers": None}
    assert run(macos_version_check, facts).summary == "macOS 13.6"
    facts["python"]["mac_ver"] = "10.16"
    assert run(macos_version_check, facts).status is Status.SKIP


# --- tensorflow-install ---------------------------------------------------------------------------

def planned(result, facts) -> list[str]:
    """The plan steps tensorflow-install's repairs make (it writes no install command itself)."""
    from tfdoctor.planner import build_plan

    assert not any(" -m pip " in command for command in result.remediation.commands)
    return [step.command for step in build_plan([result], facts).steps]


def test_nothing_installed_on_linux_fails_with_the_install_command():
    facts = linux()
    result = run(tensorflow_install, facts)
    assert result.status is Status.FAIL
    assert result.remediation.commands == ()
    assert planned(result, facts) == ["/srv/venv/bin/python -m pip install tensorflow"]


def test_nothing_installed_on_a_python_without_wheels_creates_a_new_environment():
    facts = linux(version="3.15.0")
    result = run(tensorflow_install, facts)
    assert result.status is Status.FAIL
    # the new environment is the user's to make; nothing is installed into this one
    assert result.remediation.commands == ("python3.12 -m venv ~/.venvs/tf", "source ~/.venvs/tf/bin/activate")
    assert "No TensorFlow wheel exists for Python 3.15.0" in result.remediation.advice
    assert planned(result, facts) == []


def test_nothing_installed_on_apple_silicon_installs_the_gpu_pair():
    facts = mac()
    result = run(tensorflow_install, facts)
    assert planned(result, facts) == [f"{MAC_VENV}/bin/python -m pip install 'tensorflow==2.19.*' 'tensorflow-metal==1.2.0'"]


def test_nothing_installed_under_rosetta_never_pip_installs_there():
    result = run(tensorflow_install, mac(machine="x86_64", translated="1"))
    assert result.status is Status.FAIL and "arch -arm64" in fix_text(result)


def test_dev_venv_passes():
    """The interpreter running these tests: tensorflow-cpu + keras 3 + numpy 2 must pass (when installed)."""
    from tfdoctor.child import source

    out = subprocess.run([sys.executable, "-c", source("target_info")], capture_output=True, text=True, timeout=60)
    described = json.loads(out.stdout.strip().splitlines()[-1])
    names = {d["name"] for d in described["distributions"]}
    if not names & {"tensorflow", "tensorflow-cpu"}:
        pytest.skip("no TensorFlow in this interpreter")
    facts = {"host": {"system": "Linux", "machine": "x86_64"}, **described, "environment": dict(os.environ)}
    result = run(tensorflow_install, facts)
    assert result.status is Status.PASS, result.summary


def test_shim_without_its_real_package_fails():
    facts = mac()
    facts["distributions"] = [site_distribution("tensorflow", "2.15.0")]
    result = run(tensorflow_install, facts)
    assert result.status is Status.FAIL and "only a shim for tensorflow-macos" in result.summary
    assert planned(result, facts) == [f"{MAC_VENV}/bin/python -m pip install 'tensorflow-macos==2.15.0'"]


def test_shim_and_target_at_different_versions_fail():
    facts = mac()
    facts["distributions"] = [site_distribution("tensorflow", "2.14.0"), site_distribution("tensorflow-macos", "2.13.0")]
    assert "differ" in run(tensorflow_install, facts).summary


def test_shim_pair_of_2_16_is_normal():
    facts = mac(version="3.12.2")
    facts["distributions"] = [site_distribution("tensorflow", "2.16.2"), site_distribution("tensorflow-macos", "2.16.2"), site_distribution("keras", "3.3.3"),
                              site_distribution("numpy", "1.26.4")]
    result = run(tensorflow_install, facts)
    assert result.status is Status.PASS
    assert "tensorflow-macos 2.16.2 is the shim for tensorflow" in " ".join(result.details)


def test_recorded_files_beat_the_knowledge_table():
    facts = mac()  # a community 2.15 build is real although PyPI's arm64 2.15 is a shim
    facts["distributions"] = [site_distribution("tensorflow", "2.15.0", top_level=["tensorflow"]), site_distribution("numpy", "1.26.4"),
                              site_distribution("keras", "2.15.0")]
    assert run(tensorflow_install, facts).status is Status.PASS


def test_a_shim_is_recognised_from_its_requires_when_the_table_has_no_row():
    facts = linux()
    facts["distributions"] = [site_distribution("tensorflow", "2.99.0", top_level=[],
                                   requires=['tensorflow-intel ==2.99.0 ; platform_system == "Windows"'])]
    assert "only a shim for tensorflow-intel" in run(tensorflow_install, facts).summary


def test_one_name_twice_at_two_versions_fails():
    facts = mac()
    facts["distributions"] = [site_distribution("tensorflow", "2.16.1", MAC_USER_SITE), site_distribution("tensorflow", "2.19.0"),
                              site_distribution("numpy", "1.26.4"), site_distribution("keras", "3.3.3")]
    result = run(tensorflow_install, facts)
    assert result.status is Status.FAIL and "installed 2 times" in result.summary


@pytest.mark.parametrize("tf, numpy, needle", [
    ("2.15.0", "2.0.1", "numpy<2"),              # TF built for NumPy 1
    ("2.13.0", "1.21.6", ">=1.22,<=1.24.3"),     # older than TF's C API needs
])
def test_numpy_outside_tensorflow_pins_fails(tf, numpy, needle):
    facts = linux()
    facts["distributions"] = [site_distribution("tensorflow", tf), site_distribution("numpy", numpy), site_distribution("keras", f"{tf[:4]}.0")]
    result = run(tensorflow_install, facts)
    assert result.status is Status.FAIL and needle in " ".join(planned(result, facts))


def test_numpy_2_with_tensorflow_2_18_passes():
    facts = linux()
    facts["distributions"] = [site_distribution("tensorflow", "2.18.0"), site_distribution("numpy", "2.0.2"), site_distribution("keras", "3.6.0")]
    assert run(tensorflow_install, facts).status is Status.PASS


def test_keras_3_with_tensorflow_2_15_fails():
    facts = linux()
    facts["distributions"] = [site_distribution("tensorflow", "2.15.0"), site_distribution("numpy", "1.26.4"), site_distribution("keras", "3.0.5")]
    result = run(tensorflow_install, facts)
    assert result.status is Status.FAIL
    assert planned(result, facts) == ["/srv/venv/bin/python -m pip install 'keras>=2.15.0,<2.16' 'tensorflow==2.15.0'"]


def test_legacy_keras_switch_without_tf_keras_fails():
    facts = linux()
    facts["environment"] = {"TF_USE_LEGACY_KERAS": "1"}
    facts["distributions"] = [site_distribution("tensorflow", "2.16.1"), site_distribution("numpy", "1.26.4"), site_distribution("keras", "3.3.3")]
    result = run(tensorflow_install, facts)
    assert result.status is Status.FAIL
    # the tf-keras release made for TensorFlow 2.16 (companion table); `tensorflow` is installed, so no --no-deps
    assert [(r.action.value, r.packages) for r in result.remediation.repairs] == [("install", ("tf-keras==2.16.0",))]
    assert planned(result, facts) == ["/srv/venv/bin/python -m pip install 'tf-keras==2.16.0' 'tensorflow==2.16.1'"]


def test_tensorflow_without_a_wheel_for_this_python_warns():
    facts = linux(version="3.9.18")
    facts["distributions"] = [site_distribution("tensorflow", "2.21.0"), site_distribution("numpy", "2.1.0"), site_distribution("keras", "3.12.0")]
    result = run(tensorflow_install, facts)
    assert result.status is Status.WARN and "Python 3.10-3.13" in result.summary


# --- metal-plugin ---------------------------------------------------------------------------------

def test_two_plugin_copies_in_user_site_and_venv_fail():
    facts = mac()
    facts["python"]["tensorflow_plugin_dirs"] = [
        {"path": f"{MAC_USER_SITE}/tensorflow-plugins", "files": [{"name": "libmetal_plugin.dylib", "header_hex": METAL_120_ARM64_HEX}]},
        {"path": f"{MAC_SITE}/tensorflow-plugins", "files": [{"name": "libmetal_plugin.dylib", "header_hex": METAL_120_ARM64_HEX}]},
    ]
    facts["distributions"] = [site_distribution("tensorflow", "2.19.0"), site_distribution("tensorflow-metal", "1.2.0"),
                              site_distribution("tensorflow-metal", "1.2.0", MAC_USER_SITE)]
    result = run(metal_plugin, facts)
    assert result.status is Status.FAIL and result.summary.startswith("2 copies of libmetal_plugin.dylib")
    # the environment's pip does not uninstall outside the environment: the plan hides the user site;
    # removing that copy with the base interpreter is the alternative, in words
    assert plan_commands(facts, result) == ["export PYTHONNOUSERSITE=1"]
    assert "/opt/homebrew/opt/python@3.11/Frameworks/Python.framework/Versions/3.11/bin/python3.11" in fix_text(result)
    assert result.remediation.commands == ()


def test_two_plugin_copies_inside_the_environment_uninstall_all_but_one():
    facts = mac()
    other_site = f"{MAC_VENV}/lib/python3.11/site-packages/extra"
    facts["python"]["tensorflow_plugin_dirs"] = [
        {"path": f"{d}/tensorflow-plugins", "files": [{"name": "libmetal_plugin.dylib", "header_hex": METAL_120_ARM64_HEX}]}
        for d in (MAC_SITE, other_site, f"{MAC_VENV}/lib/python3.11/site-packages/third")]
    facts["distributions"] = [site_distribution("tensorflow", "2.19.0"), site_distribution("tensorflow-metal", "1.2.0")]
    result = run(metal_plugin, facts)
    assert result.status is Status.FAIL and result.summary.startswith("3 copies")
    uninstall = f"{MAC_VENV}/bin/python -m pip uninstall -y tensorflow-metal"
    assert plan_commands(facts, result) == [uninstall, uninstall]  # pip removes one copy per call; one stays


def test_a_plugin_named_by_tf_pluggable_device_library_path_counts_as_a_copy():
    facts = mac()
    facts["environment"] = {"TF_PLUGGABLE_DEVICE_LIBRARY_PATH": "/opt/metal/libmetal_plugin.dylib"}
    facts["distributions"] = [site_distribution("tensorflow", "2.19.0"), site_distribution("tensorflow-metal", "1.2.0")]
    result = run(metal_plugin, facts)
    assert result.status is Status.FAIL and "/opt/metal" in " ".join(result.details)


def test_plugin_built_for_the_other_architecture_fails():
    facts = mac()
    facts["python"]["tensorflow_plugin_dirs"] = [
        {"path": f"{MAC_SITE}/tensorflow-plugins", "files": [{"name": "libmetal_plugin.dylib", "header_hex": METAL_100_X86_64_HEX}]}]
    facts["distributions"] = [site_distribution("tensorflow", "2.13.0"), site_distribution("tensorflow-macos", "2.13.0"), site_distribution("tensorflow-metal", "1.0.0")]
    result = run(metal_plugin, facts)
    assert result.status is Status.FAIL and "x86_64 but Python runs as arm64" in result.summary
    plan = plan_of(facts, result)  # the same release again, from this interpreter: pip picks the arm64 wheel
    assert [s.command for s in plan.steps] == [
        f"{MAC_VENV}/bin/python -m pip install --force-reinstall --no-deps 'tensorflow-metal==1.0.0'"]


def test_matching_plugin_with_matching_architecture_passes():
    facts = mac()
    facts["python"]["tensorflow_plugin_dirs"] = [
        {"path": f"{MAC_SITE}/tensorflow-plugins", "files": [{"name": "libmetal_plugin.dylib", "header_hex": METAL_120_ARM64_HEX}]}]
    facts["distributions"] = [site_distribution("tensorflow", "2.19.1"), site_distribution("tensorflow-metal", "1.2.0")]
    result = run(metal_plugin, facts)
    assert result.status is Status.PASS and result.evidence["plugin_architectures"] == ["arm64"]


def test_tensorflow_2_20_without_plugin_warns_with_the_working_pair():
    facts = mac(version="3.12.4")
    facts["distributions"] = [site_distribution("tensorflow", "2.20.0")]
    result = run(metal_plugin, facts)
    assert result.status is Status.WARN and "CPU only" in result.summary
    # TensorFlow works here, on the CPU: the plan never moves it back for the GPU; the pair is advice
    assert "tensorflow==2.19.*, tensorflow-metal==1.2.0" in result.remediation.advice
    assert plan_commands(facts, result) == []


def test_tensorflow_2_20_with_metal_uninstalls_the_plugin_in_one_step_with_tensorflow_import():
    facts = mac(version="3.12.4")
    facts["distributions"] = [site_distribution("tensorflow", "2.20.0"), site_distribution("tensorflow-metal", "1.2.0")]
    result = run(metal_plugin, facts)
    assert result.status is Status.FAIL
    assert [(r.action.value, r.packages) for r in result.remediation.repairs] == [("uninstall", ("tensorflow-metal",))]
    assert "2.20 or later" in result.remediation.repairs[0].reason
    assert "tensorflow==2.19.*, tensorflow-metal==1.2.0" in result.remediation.advice  # the GPU way, in words
    # tensorflow-import asks the same of this machine: one plan step that both point to, TensorFlow stays
    import_failed = CheckResult("tensorflow-import", "import", Status.FAIL, "x", remediation=Remediation(
        "x", repairs=(Repair.uninstall("tensorflow-metal", reason="the plugin breaks import tensorflow"),)))
    plan = plan_of(facts, result, import_failed)
    assert [s.command for s in plan.steps] == [f"{MAC_VENV}/bin/python -m pip uninstall -y tensorflow-metal"]
    assert plan.steps_for("metal-plugin") == plan.steps_for("tensorflow-import") == [1]
    assert plan.moves_tensorflow is None and not plan.conflicts


def test_a_stock_tensorflow_without_a_fitting_plugin_moves_forward_to_the_newest_pair_and_says_why():
    facts = mac(version="3.12.4")
    facts["distributions"] = [site_distribution("tensorflow", "2.16.1"), site_distribution("tensorflow-metal", "1.2.0")]
    result = run(metal_plugin, facts)
    assert result.status is Status.WARN and "untested" in result.summary
    plan = plan_of(facts, result)
    assert [s.command for s in plan.steps] == [f"{MAC_VENV}/bin/python -m pip install 'tensorflow==2.19.*' "
                                               "'tensorflow-metal==1.2.0'"]
    assert plan.moves_tensorflow.source == "tensorflow==2.16.1"
    assert "TensorFlow must move to 2.19" in plan.moves_tensorflow.why


def test_keras_3_slowdown_installs_tf_keras_and_sets_the_switch_as_a_manual_step():
    facts = mac()
    facts["distributions"] = [site_distribution("tensorflow", "2.16.1"), site_distribution("tensorflow-metal", "1.1.0")]
    result = run(metal_plugin, facts)
    plan = plan_of(facts, result)
    assert [(s.command, s.manual) for s in plan.steps] == [
        (f"{MAC_VENV}/bin/python -m pip install 'tf-keras~=2.16.0' 'tensorflow==2.16.1'", False),
        ("export TF_USE_LEGACY_KERAS=1", True)]


def test_legacy_keras_switch_silences_the_keras_3_warning():
    facts = mac()
    facts["distributions"] = [site_distribution("tensorflow", "2.16.1"), site_distribution("tensorflow-metal", "1.1.0")]
    assert run(metal_plugin, facts).status is Status.WARN
    facts["environment"] = {"TF_USE_LEGACY_KERAS": "1"}
    assert run(metal_plugin, facts).status is Status.PASS


def test_intel_mac_without_plugin_skips():
    facts = mac(machine="x86_64", translated=None)
    facts["sysctl"] = {"hw.optional.arm64": "0", "machdep.cpu.brand_string": "Intel(R) Core(TM) i9-9880H CPU @ 2.30GHz"}
    facts["distributions"] = [site_distribution("tensorflow", "2.16.2")]
    result = run(metal_plugin, facts)
    assert result.status is Status.SKIP and "1.0.0" in result.summary


# --- memory ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("level, status", [("1", Status.PASS), ("2", Status.WARN), ("4", Status.FAIL)])
def test_macos_pressure_level_decides(level, status):
    facts = mac()
    facts["memory"] = {"total_bytes": 16 * GB, "available_bytes": 8 * GB, "swap_total_bytes": 0, "swap_used_bytes": 0}
    facts["sysctl"]["kern.memorystatus_vm_pressure_level"] = level
    assert run(memory, facts).status is status


def test_swap_from_sysctl_with_decimal_comma_overrides_psutil():
    facts = mac()
    facts["memory"] = {"total_bytes": 1 * GB, "available_bytes": GB // 2, "swap_total_bytes": 0, "swap_used_bytes": 0}
    facts["sysctl"]["vm.swapusage"] = "total = 1024,00M  used = 379,25M  free = 644,75M  (encrypted)"
    result = run(memory, facts)
    assert result.evidence["swap_used_bytes"] == int(379.25 * 1024 ** 2)
    assert result.status is Status.WARN  # 37 % of a 1 GiB machine


def test_apple_silicon_hint_says_the_gpu_shares_memory_and_names_it():
    facts = mac()
    facts["memory"] = {"total_bytes": 16 * GB, "available_bytes": int(0.05 * 16 * GB), "swap_total_bytes": 0,
                       "swap_used_bytes": 0}
    facts["system_profiler"] = {"SPDisplaysDataType": "Graphics/Displays:\n\n    Apple M1:\n\n      Chipset Model: Apple M1\n"
                                                      "      Type: GPU\n      Total Number of Cores: 8\n"
                                                      "      Vendor: Apple (0x106b)\n"}
    result = run(memory, facts)
    assert result.status is Status.WARN
    assert "Apple M1 GPU (8 cores) shares this memory" in " ".join(result.details)
    assert "shares this RAM" in result.remediation.advice


@pytest.mark.parametrize("available_share, status", [(0.5, Status.PASS), (0.08, Status.WARN), (0.02, Status.FAIL)])
def test_linux_uses_psutil_numbers(available_share, status):
    facts = linux()
    facts["memory"] = {"total_bytes": 32 * GB, "available_bytes": int(available_share * 32 * GB),
                       "swap_total_bytes": 2 * GB, "swap_used_bytes": 0}
    result = run(memory, facts)
    assert result.status is status
    if status is not Status.PASS:
        assert "free -h" in result.remediation.commands


def test_memory_without_total_skips():
    facts = linux()
    facts["memory"] = {"total_bytes": None, "available_bytes": None}
    assert run(memory, facts).status is Status.SKIP
