"""The memory check: macOS memory pressure and swap (sysctl's real outputs), Apple Silicon's shared GPU memory,
psutil's numbers on Linux."""

from __future__ import annotations

import pytest

from tfdoctor.checks.memory import memory, parse_swapusage, pressure_level
from tfdoctor.results.model import Status

from tests.builders import check_result, linux, mac

GB = 1024 ** 3


@pytest.mark.parametrize("level, status", [("1", Status.PASS), ("2", Status.WARN), ("4", Status.FAIL)])
def test_macos_pressure_level_decides(level, status):
    facts = mac()
    facts["memory"] = {"total_bytes": 16 * GB, "available_bytes": 8 * GB, "swap_total_bytes": 0, "swap_used_bytes": 0}
    facts["sysctl"]["kern.memorystatus_vm_pressure_level"] = level
    assert check_result(memory, facts).status is status


def test_swap_from_sysctl_with_decimal_comma_overrides_psutil():
    facts = mac()
    facts["memory"] = {"total_bytes": 1 * GB, "available_bytes": GB // 2, "swap_total_bytes": 0, "swap_used_bytes": 0}
    facts["sysctl"]["vm.swapusage"] = "total = 1024,00M  used = 379,25M  free = 644,75M  (encrypted)"
    result = check_result(memory, facts)
    assert result.evidence["swap_used_bytes"] == int(379.25 * 1024 ** 2)
    assert result.status is Status.WARN  # 37 % of a 1 GiB machine


def test_apple_silicon_hint_says_the_gpu_shares_memory_and_names_it():
    facts = mac()
    facts["memory"] = {"total_bytes": 16 * GB, "available_bytes": int(0.05 * 16 * GB), "swap_total_bytes": 0,
                       "swap_used_bytes": 0}
    facts["system_profiler"] = {"SPDisplaysDataType": "Graphics/Displays:\n\n    Apple M1:\n\n      Chipset Model: Apple M1\n"
                                                      "      Type: GPU\n      Total Number of Cores: 8\n"
                                                      "      Vendor: Apple (0x106b)\n"}
    result = check_result(memory, facts)
    assert result.status is Status.WARN
    assert "Apple M1 GPU (8 cores) shares this memory" in " ".join(result.details)
    assert "shares this RAM" in result.remediation.advice


@pytest.mark.parametrize("available_share, status", [(0.5, Status.PASS), (0.08, Status.WARN), (0.02, Status.FAIL)])
def test_linux_uses_psutil_numbers(available_share, status):
    facts = linux()
    facts["memory"] = {"total_bytes": 32 * GB, "available_bytes": int(available_share * 32 * GB),
                       "swap_total_bytes": 2 * GB, "swap_used_bytes": 0}
    result = check_result(memory, facts)
    assert result.status is status
    if status is not Status.PASS:
        assert "free -h" in result.remediation.commands


def test_memory_without_total_skips():
    facts = linux()
    facts["memory"] = {"total_bytes": None, "available_bytes": None}
    assert check_result(memory, facts).status is Status.SKIP


MB = 1024 ** 2


def test_pressure_levels_are_the_kernels_1_2_4():
    assert [pressure_level(v) for v in ("1", "2", "4")] == ["normal", "warn", "critical"]
    assert pressure_level("3") is None and pressure_level(None) is None


def test_swapusage_real_output():
    parsed = parse_swapusage("total = 4096.00M  used = 2743.50M  free = 1352.50M  (encrypted)")  # walles/px#80
    assert parsed == {"total_bytes": 4096 * MB, "used_bytes": int(2743.5 * MB), "free_bytes": int(1352.5 * MB),
                      "encrypted": True}


def test_swapusage_decimal_comma_locale_and_key_prefix():
    # Powerlevel9k PR #1108: a comma locale makes sysctl print decimal commas.
    parsed = parse_swapusage("vm.swapusage: total = 1024,00M  used = 379,25M  free = 644,75M  (encrypted)")
    assert parsed["total_bytes"] == 1024 * MB
    assert parsed["used_bytes"] == int(379.25 * MB)
    assert parsed["free_bytes"] == int(644.75 * MB)


def test_swapusage_units_and_empty_swap():
    assert parse_swapusage("total = 2.00G  used = 1.50G  free = 0.50G")["used_bytes"] == int(1.5 * 1024 ** 3)
    assert parse_swapusage("total = 0.00M  used = 0.00M  free = 0.00M")["total_bytes"] == 0
    assert parse_swapusage("") is None and parse_swapusage("Disabled") is None
