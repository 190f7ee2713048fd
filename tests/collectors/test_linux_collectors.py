"""Collectors on Windows and WSL: nothing may call sysctl, read /proc or crash where they do not exist."""

from __future__ import annotations

import platform

import pytest

from tfdoctor.collect import macos, nvidia, system
from tfdoctor.collect.options import CollectOptions
from tfdoctor.facts.platform import detect_wsl
from tfdoctor.facts.tensorflow_build import wsl_version


def test_collectors_on_windows_run_no_unix_tools(monkeypatch, tmp_path):
    calls = []

    def fake_run(argv, timeout, env=None):
        calls.append(list(argv))
        return {"argv": list(argv), "status": "not_found", "exit_code": None, "stdout": "", "stderr": "",
                "duration_ms": 0.0}

    def no_reading(path, *args, **kwargs):
        raise AssertionError(f"read {path} on Windows")

    monkeypatch.setattr(platform, "system", lambda: "Windows")
    monkeypatch.setattr(platform, "release", lambda: "10")
    monkeypatch.setattr(platform, "version", lambda: "10.0.19045")
    monkeypatch.setattr(system, "_read", no_reading)
    monkeypatch.setattr(nvidia, "_read", no_reading)
    for module in (system, macos, nvidia):
        monkeypatch.setattr(module, "run_command", fake_run)
    monkeypatch.setenv("PATH", str(tmp_path))
    options = CollectOptions()
    assert macos.collect_sysctl(options) == {"sysctl": None}
    assert macos.collect_displays(options) == {}
    os_facts = system.collect_os(options)["os"]
    assert os_facts["windows"]["version"] == "10.0.19045" and os_facts["wsl"] is None
    assert os_facts["proc_version"] is None and os_facts["glibc"] is None
    facts = nvidia.collect_nvidia(options)["nvidia"]
    assert facts["smi"]["status"] == "not_found"
    assert facts["proc_driver_version"] is None and facts["pci_devices"] is None and facts["ldconfig"] is None
    assert calls == [["nvidia-smi"], ["nvidia-smi", "--query-gpu=name,driver_version,memory.total,compute_cap",
                                      "--format=csv"]]
    assert system.collect_host(options)["host"]["system"] == "Windows"


def test_nvidia_collector_skips_macos(monkeypatch):
    monkeypatch.setattr(platform, "system", lambda: "Darwin")
    assert nvidia.collect_nvidia(CollectOptions()) == {"nvidia": None}


@pytest.mark.parametrize("release, proc_version, environ, paths, version", [
    # current WSL2 kernel (tensorflow/tensorflow#89272)
    ("5.15.167.4-microsoft-standard-WSL2", None, {}, [], 2),
    # old WSL2 kernel, no -WSL2 suffix (microsoft/WSL#5955)
    (None, "Linux version 4.19.128-microsoft-standard (oe-user@oe-host) (gcc version 8.2.0 (GCC)) #1 SMP Tue Jun 23 "
           "12:58:10 UTC 2020", {}, [], 2),
    # WSL1 (microsoft/DirectML#18)
    ("4.4.0-20150-Microsoft", "Linux version 4.4.0-20150-Microsoft (Microsoft@Microsoft.com) (gcc version 5.4.0 (GCC) ) "
                              "#1000-Microsoft Thu Jun 12 17:34:00 PST 2020", {"WSL_DISTRO_NAME": "Ubuntu"}, [], 1),
    # a custom kernel: only WSL's environment and files tell
    ("6.6.0-custom", None, {"WSL_INTEROP": "/run/WSL/1_interop", "WSL_DISTRO_NAME": "Ubuntu"}, [], 2),
    ("6.6.0-custom", None, {}, ["/dev/dxg"], 2),
    ("6.6.0-custom", None, {"WSL_DISTRO_NAME": "Ubuntu"}, [], None),
])
def test_wsl_detection(release, proc_version, environ, paths, version):
    found = detect_wsl(release, proc_version, environ, paths)
    assert found is not None and found["version"] == version and found["signals"]


def test_not_wsl():
    # an ordinary Linux VM's kernel string (not WSL's)
    assert detect_wsl("6.18.44-fc-v669", "Linux version 6.18.44-fc-v669 (builder@sandboxing) (gcc (GCC) 15.3.0, GNU ld "
                                         "(GNU Binutils) 2.46) #1 SMP PREEMPT_DYNAMIC", {}, []) is None


def test_wsl_version_from_a_saved_report_without_the_wsl_fact():
    facts = {"host": {"system": "Linux", "release": "5.15.167.4-microsoft-standard-WSL2"}, "os": {}}
    assert wsl_version(facts) == 2
    assert wsl_version({"host": {"system": "Linux", "release": "6.1.0"}, "os": {"wsl": None}}) is None
    assert wsl_version({"host": {"system": "Windows", "release": "10"}}) is None
