"""The architecture check: arm64, x86-64 and Rosetta interpreters on Macs (facts built around real sysctl,
sw_vers and Mach-O bytes)."""

from __future__ import annotations

from tfdoctor.checks.architecture import architecture
from tfdoctor.results.model import Status

from tests.builders import METAL_100_X86_64_HEX, UNIVERSAL2_HEX, check_result, fix_text, mac


def test_native_arm64_passes_and_mentions_a_universal_executable():
    facts = mac(executable_macho={"path": "/x/python3.11", "header_hex": UNIVERSAL2_HEX})
    result = check_result(architecture, facts)
    assert result.status is Status.PASS
    assert "universal" in " ".join(result.details)


def test_universal2_python_launched_under_rosetta_fails_with_a_new_arm64_environment():
    facts = mac(machine="x86_64", translated="1", executable_macho={"path": "/x/python3.11", "header_hex": UNIVERSAL2_HEX})
    result = check_result(architecture, facts)
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
    result = check_result(architecture, facts)
    assert result.status is Status.FAIL
    assert "x86_64 only" in " ".join(result.details)


def test_intel_homebrew_under_rosetta_points_to_opt_homebrew():
    facts = mac(machine="x86_64", translated="1", real_executable="/usr/local/Cellar/python@3.11/3.11.7/bin/python3.11")
    result = check_result(architecture, facts)
    assert result.status is Status.FAIL and "/opt/homebrew" in " ".join(result.details)


def test_rosetta_under_conda_gets_miniforge_and_under_uv_gets_an_aarch64_cpython():
    conda = mac(machine="x86_64", translated="1", conda=True, in_venv=False, executable="/Users/me/miniconda3/bin/python")
    assert "Miniforge3-MacOSX-arm64.sh" in fix_text(check_result(architecture, conda))
    uv = mac(machine="x86_64", translated="1", uv_version="0.5.1")
    assert "uv python install cpython-3.12-macos-aarch64-none" in check_result(architecture, uv).remediation.commands


def test_translation_is_read_from_the_target_not_the_doctor():
    facts = mac()  # the target is native...
    facts["host"]["machine"] = "x86_64"  # ...while the doctor runs translated
    result = check_result(architecture, facts)
    assert result.status is Status.PASS and "tfdoctor itself runs under Rosetta" in " ".join(result.details)


def test_intel_mac_passes():
    facts = mac(machine="x86_64", translated=None)
    facts["sysctl"] = {"hw.optional.arm64": "0", "machdep.cpu.brand_string": "Intel(R) Core(TM) i7-8850H CPU @ 2.60GHz"}
    result = check_result(architecture, facts)
    assert result.status is Status.PASS and result.summary.startswith("Intel Mac")


def test_unknown_hardware_skips():
    facts = mac(machine="")
    facts["sysctl"] = {}
    assert check_result(architecture, facts).status is Status.SKIP
