"""The Windows OS facts: whether long paths are enabled, read from the registry value Python's Windows docs
name (a stand-in winreg module here, so the test runs anywhere and touches no registry)."""

from __future__ import annotations

import sys
import types

import pytest

from tfdoctor.collect import system

KEY = r"SYSTEM\CurrentControlSet\Control\FileSystem"


def fake_winreg(value=None, missing: bool = False, denied: bool = False) -> types.ModuleType:
    module = types.ModuleType("winreg")
    module.HKEY_LOCAL_MACHINE = "HKLM"
    opened = []

    class Key:
        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

    def open_key(root, path):
        if denied:
            raise PermissionError(5, "Access is denied")
        opened.append((root, path))
        return Key()

    def query(key, name):
        assert name == "LongPathsEnabled"
        if missing:
            raise FileNotFoundError(2, "The system cannot find the file specified")
        return value, 4  # REG_DWORD

    module.OpenKey, module.QueryValueEx, module.opened = open_key, query, opened
    return module


@pytest.mark.parametrize("registry, expected", [
    (fake_winreg(1), True),
    (fake_winreg(0), False),
    (fake_winreg(missing=True), False),  # Windows' default: the value is absent and long paths are off
    (fake_winreg(denied=True), None),
])
def test_long_paths_enabled_reads_the_registry_value(monkeypatch, registry, expected):
    monkeypatch.setitem(sys.modules, "winreg", registry)
    assert system.long_paths_enabled() is expected
    if expected is not None:
        assert registry.opened == [("HKLM", KEY)]


def test_without_winreg_it_is_unknown(monkeypatch):
    monkeypatch.setitem(sys.modules, "winreg", None)  # import winreg raises ImportError off Windows
    assert system.long_paths_enabled() is None


def test_the_windows_section_records_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "winreg", fake_winreg(0))
    monkeypatch.setattr(system.platform, "system", lambda: "Windows")
    monkeypatch.setattr(system.platform, "version", lambda: "10.0.22631")
    monkeypatch.setattr(system.platform, "win32_edition", lambda: "Professional", raising=False)
    facts = system.collect_os(None)["os"]["windows"]
    assert facts["long_paths_enabled"] is False and set(facts) >= {"release", "version", "edition"}
