"""Mach-O headers: real bytes of macOS binaries (layouts: Apple's mach-o/loader.h and fat.h), read by the package
parser and written by the child script's header reader."""

from __future__ import annotations

import struct

import pytest

from tfdoctor.child import target_info
from tfdoctor.facts import mach_o
from tfdoctor.checks import metal_plugin as metal_plugin_check

# tensorflow-metal 1.2.0 libmetal_plugin.dylib (arm64, MH_DYLIB) and 1.0.0's x86_64 dylib: first 16 bytes.
METAL_120_ARM64 = bytes.fromhex("cffaedfe0c0000010000000006000000")
METAL_100_X86_64 = bytes.fromhex("cffaedfe070000010300000006000000")
# markupsafe/_speedups.cpython-311-darwin.so from a universal2 wheel: the fat header.
MARKUPSAFE_UNIVERSAL = bytes.fromhex(
    "cafe babe 0000 0002 0100 0007 0000 0003"
    "0000 4000 0000 89d0 0000 000e 0100 000c"
    "0000 0000 0001 0000 0000 caec 0000 000e")


def test_thin_arm64_and_x86_64():
    assert mach_o.architectures(METAL_120_ARM64) == ["arm64"]
    assert mach_o.architectures(METAL_100_X86_64) == ["x86_64"]


def test_universal_binary_lists_both_slices():
    assert mach_o.architectures(MARKUPSAFE_UNIVERSAL) == ["x86_64", "arm64"]
    assert mach_o.architectures_from_hex(MARKUPSAFE_UNIVERSAL.hex()) == ["x86_64", "arm64"]


def test_arm64e_is_told_apart_but_runs_natively():
    # launchd: cpu_type 16777228, cpu_subtype -2147483646 (osquery PR #7507)
    header = b"\xcf\xfa\xed\xfe" + struct.pack("<Ii", 16777228, -2147483646) + struct.pack("<I", 2)
    assert mach_o.architectures(header) == ["arm64e"]
    assert metal_plugin_check.can_run_as(["arm64e"], "arm64") is True


def test_x86_64_executable_subtype_flags_are_ignored():
    header = b"\xcf\xfa\xed\xfe" + struct.pack("<II", 0x01000007, 0x80000003) + struct.pack("<I", 2)
    assert mach_o.architectures(header) == ["x86_64"]


@pytest.mark.parametrize("data", [b"", b"\x7fELF\x02\x01\x01", b"\xcf\xfa\xed", bytes.fromhex("cafebabe0000003d"),
                                  bytes.fromhex("cafebabe00000000")])
def test_not_mach_o(data):
    # ELF, truncated, a Java class file (0xcafebabe then version 61), and an empty fat header
    assert mach_o.architectures(data) is None


def test_bad_hex_is_none():
    assert mach_o.architectures_from_hex("zz") is None
    assert mach_o.architectures_from_hex(None) is None


def test_can_run_as():
    assert metal_plugin_check.can_run_as(["x86_64"], "arm64") is False
    assert metal_plugin_check.can_run_as(["arm64"], "x86_64") is False
    assert metal_plugin_check.can_run_as(["x86_64", "arm64"], "x86_64") is True
    assert metal_plugin_check.can_run_as(None, "arm64") is None


def test_child_reads_thin_header_and_whole_fat_header(tmp_path):
    thin = tmp_path / "libmetal_plugin.dylib"
    thin.write_bytes(METAL_120_ARM64 + b"\x00" * 4096)
    fat = tmp_path / "_speedups.so"
    fat.write_bytes(MARKUPSAFE_UNIVERSAL + b"\x00" * 4096)
    thin_hex = target_info.macho_header(str(thin))
    assert len(thin_hex) == 32 and mach_o.architectures_from_hex(thin_hex) == ["arm64"]
    fat_hex = target_info.macho_header(str(fat))
    assert len(fat_hex) == 2 * (8 + 2 * 20) and mach_o.architectures_from_hex(fat_hex) == ["x86_64", "arm64"]
    assert target_info.macho_header(str(tmp_path / "missing")) is None


def test_child_plugin_dirs_found_like_tensorflow(tmp_path, monkeypatch):
    site_dir = tmp_path / "lib" / "python3.11" / "site-packages"
    plugins = site_dir / "tensorflow-plugins"
    plugins.mkdir(parents=True)
    (plugins / "libmetal_plugin.dylib").write_bytes(METAL_120_ARM64)
    (plugins / "__init__.py").write_text("")
    monkeypatch.setattr(target_info.sys, "path", [str(site_dir), str(site_dir), "/elsewhere/dist-packages"])
    monkeypatch.setattr(target_info.site, "getsitepackages", lambda: [str(site_dir)], raising=False)
    monkeypatch.setattr(target_info.site, "ENABLE_USER_SITE", False)
    found = target_info.tensorflow_plugin_dirs()
    assert [d["path"] for d in found] == [str(plugins)]  # one directory, however often it is listed
    assert [f["name"] for f in found[0]["files"]] == ["libmetal_plugin.dylib"]
