"""Parsers for what macOS tools print (real outputs of sw_vers, sysctl and system_profiler)."""

from __future__ import annotations

import pytest

from tfdoctor.checks.macos_version import is_compat_version
from tfdoctor.checks.memory import parse_swapusage, pressure_level
from tfdoctor.facts.system_profiler import parse_displays
from tfdoctor.facts.sw_vers_sysctl import parse_sw_vers, product_version, sysctl_flag, sysctl_int
from tfdoctor.specifiers import satisfies

MB = 1024 ** 2


def test_sw_vers_catalina_with_tabs_and_spaces():
    text = "ProductName:\tMac OS X\nProductVersion:\t10.15.5\nBuildVersion:\t19F101\n"  # rbenv/ruby-build PR #1451
    assert parse_sw_vers(text) == {"ProductName": "Mac OS X", "ProductVersion": "10.15.5", "BuildVersion": "19F101"}
    assert product_version("ProductName:    macOS\nProductVersion: 12.6\n") == "12.6"
    assert product_version("ProductVersion:\t10.13\n") == "10.13"  # first releases omit the patch
    assert product_version(None) is None and product_version("") is None


def test_compat_version_is_10_16_only():
    assert is_compat_version("10.16")
    assert not is_compat_version("10.15.7") and not is_compat_version("11.0") and not is_compat_version(None)


@pytest.mark.parametrize("value, number, flag", [("1", 1, True), ("0", 0, False), (" 1\n", 1, True),
                                                 ("", None, None), (None, None, None),
                                                 ("sysctl: unknown oid 'hw.optional.arm64'", None, None)])
def test_sysctl_values(value, number, flag):
    assert sysctl_int(value) == number
    assert sysctl_flag(value) is flag


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


APPLE_DISPLAYS = """Graphics/Displays:

    Apple M4 Pro:

      Chipset Model: Apple M4 Pro
      Type: GPU
      Bus: Built-In
      Total Number of Cores: 16
      Vendor: Apple (0x106b)
      Metal Support: Metal 3
      Displays:
        Color LCD:
          Display Type: Built-in Liquid Retina XDR Display
"""

AMD_DISPLAYS = """Graphics/Displays:

    Radeon Pro Vega 64:

      Chipset Model: Radeon Pro Vega 64
      Type: GPU
      Bus: PCIe
      PCIe Lane Width: x16
      VRAM (Total): 16 GB
      Vendor: AMD (0x1002)
      Metal: Supported, feature set macOS GPUFamily2 v1
"""


def test_displays_apple_gpu_cores_and_no_vram():
    (gpu,) = parse_displays(APPLE_DISPLAYS)
    assert gpu["chipset"] == "Apple M4 Pro" and gpu["cores"] == 16 and gpu["vram"] is None
    assert gpu["vendor"].startswith("Apple") and gpu["metal"] == "Metal 3"


def test_displays_intel_mac_amd_gpu():
    (gpu,) = parse_displays(AMD_DISPLAYS)
    assert gpu["chipset"] == "Radeon Pro Vega 64" and gpu["vram"] == "16 GB" and gpu["cores"] is None
    assert parse_displays(None) == []


@pytest.mark.parametrize("version, spec, holds", [
    ("1.26.4", ">=1.23.5,<2.0.0", True), ("2.0.1", ">=1.23.5,<2.0.0", False), ("1.21.6", ">=1.22,<=1.24.3", False),
    ("1.24.3", ">=1.22,<=1.24.3", True), ("3.9.1", ">=3.0.0", True), ("2.15.1", ">=2.15.0,<2.16", True),
    ("2.16.0", "~=2.16.0", True), ("2.17.0", "~=2.16.0", False), ("2.19.1", "==2.19.*", True),
    ("2.20.0", "==2.19.*", False), ("1.0", "!=1.0.0", False)])
def test_specifiers(version, spec, holds):
    assert satisfies(version, spec) is holds


def test_specifiers_refuse_to_guess():
    assert satisfies(None, ">=1") is None
    assert satisfies("1.0", "===weird") is None
