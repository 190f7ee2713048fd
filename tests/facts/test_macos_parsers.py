"""The macOS readers (tfdoctor/facts/sw_vers_sysctl.py) on real outputs: sw_vers, sysctl, system_profiler's
displays, and the specifier helper."""

from __future__ import annotations

import pytest

from tfdoctor.facts.system_profiler import parse_displays
from tfdoctor.facts.sw_vers_sysctl import parse_sw_vers, product_version, sysctl_flag, sysctl_int
from tfdoctor.knowledge.specifiers import satisfies


def test_sw_vers_catalina_with_tabs_and_spaces():
    text = "ProductName:\tMac OS X\nProductVersion:\t10.15.5\nBuildVersion:\t19F101\n"  # rbenv/ruby-build PR #1451
    assert parse_sw_vers(text) == {"ProductName": "Mac OS X", "ProductVersion": "10.15.5", "BuildVersion": "19F101"}
    assert product_version("ProductName:    macOS\nProductVersion: 12.6\n") == "12.6"
    assert product_version("ProductVersion:\t10.13\n") == "10.13"  # first releases omit the patch
    assert product_version(None) is None and product_version("") is None


@pytest.mark.parametrize("value, number, flag", [("1", 1, True), ("0", 0, False), (" 1\n", 1, True),
                                                 ("", None, None), (None, None, None),
                                                 ("sysctl: unknown oid 'hw.optional.arm64'", None, None)])
def test_sysctl_values(value, number, flag):
    assert sysctl_int(value) == number
    assert sysctl_flag(value) is flag


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
