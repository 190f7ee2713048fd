"""The nvidia collector against fake `nvidia-smi` executables put first on PATH: one that prints real
outputs (taken from the fixtures), one that hangs, one that fails, an old driver that rejects
compute_cap, and none at all. Real processes, real timeouts; no timing asserts.
"""

from __future__ import annotations

import os
import platform
import stat
import sys
import textwrap
from pathlib import Path

import pytest

from tests.builders import fixture_facts
from tfdoctor.collect import nvidia as collector
from tfdoctor.collect.options import CollectOptions
from tfdoctor.checks.nvidia_driver import driver_summary
from tfdoctor.facts.nvidia_smi import detected_gpus
from tfdoctor.checking.registry import all_checks
from tfdoctor.checking.runner import run_checks

pytestmark = pytest.mark.skipif(os.name != "posix", reason="fake executables are POSIX shell scripts")

def real_output(name: str) -> dict:
    nvidia = fixture_facts(name)["nvidia"]
    return {"table": nvidia["smi"]["stdout"], "query": (nvidia.get("smi_query") or {}).get("stdout") or ""}


def install_fake(tmp_path: Path, monkeypatch, script: str) -> Path:
    """Write an executable `nvidia-smi` into tmp_path and put that directory alone on PATH."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "nvidia-smi"
    fake.write_text(f"#!{sys.executable}\n" + textwrap.dedent(script), encoding="utf-8")
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    monkeypatch.setenv("PATH", str(bin_dir))
    monkeypatch.setattr(collector, "WSL_SMI", str(tmp_path / "absent-wsl-nvidia-smi"))
    return fake


def printing_script(table: str, query: str, old_driver: bool = False) -> str:
    return f"""
    import sys
    args = sys.argv[1:]
    if args and args[0].startswith("--query-gpu="):
        if {old_driver!r} and "compute_cap" in args[0]:
            print('Field "compute_cap" is not a valid field to query.')
            sys.exit(2)
        sys.stdout.write({query!r})
    else:
        sys.stdout.write({table!r})
    """


def options(timeout: float = 10.0) -> CollectOptions:
    return CollectOptions(command_timeout=timeout)


@pytest.fixture(autouse=True)
def linux_host(monkeypatch):
    monkeypatch.setattr(platform, "system", lambda: "Linux")


def test_a_real_output_format_is_read(tmp_path, monkeypatch):
    outputs = real_output("linux/blackwell-rtx-5070-ti-tf-nightly.json")
    install_fake(tmp_path, monkeypatch, printing_script(outputs["table"], outputs["query"]))
    facts = collector.collect_nvidia(options())
    nvidia = facts["nvidia"]
    assert nvidia["smi"]["status"] == "ok" and nvidia["smi_query"]["status"] == "ok"
    assert nvidia["smi_query"]["argv"][1:] == ["--query-gpu=name,driver_version,memory.total,compute_cap", "--format=csv"]
    assert detected_gpus(facts) == [{"index": 0, "name": "NVIDIA GeForce RTX 5070 Ti", "driver_version": "580.95.05",
                                     "cuda_version": "13.0", "compute_capability": "12.0", "memory_mib": 16303}]


def test_an_old_driver_is_asked_again_without_compute_cap(tmp_path, monkeypatch):
    # A 470 driver's table (real) and the same GPUs' names in CSV (fields the old driver knows).
    table = real_output("linux/two-k80-driver-470-tensorflow-2.11.json")["table"]
    query = "name, driver_version, memory.total [MiB]\nTesla K80, 470.161.03, 11441 MiB\nTesla K80, 470.161.03, 11441 MiB\n"
    install_fake(tmp_path, monkeypatch, printing_script(table, query, old_driver=True))
    facts = collector.collect_nvidia(options())
    assert facts["nvidia"]["smi_query"]["argv"][1] == "--query-gpu=name,driver_version,memory.total"
    gpus = detected_gpus(facts)
    assert [(g["name"], g["compute_capability"], g["cuda_version"]) for g in gpus] == [
        ("Tesla K80", None, "11.4"), ("Tesla K80", None, "11.4")]


def test_a_hanging_nvidia_smi_is_cut_off_and_reported(tmp_path, monkeypatch):
    pid_file = tmp_path / "pids"
    install_fake(tmp_path, monkeypatch, f"""
    import os, time
    with open({str(pid_file)!r}, "a") as handle:
        handle.write(f"{{os.getpid()}}\\n")
    time.sleep(600)
    """)
    facts = collector.collect_nvidia(options(timeout=1.0))
    nvidia = facts["nvidia"]
    assert nvidia["smi"]["status"] == "timed_out" and nvidia["smi_query"]["status"] == "timed_out"
    assert nvidia["smi"]["timeout_s"] == 1.0
    for pid in (int(p) for p in pid_file.read_text().split()):
        with pytest.raises(ProcessLookupError):  # killed with its process group, not left running
            os.kill(pid, 0)
    results = {r.check_id: r for r in run_checks(all_checks(), {"host": {"system": "Linux"}, **facts})}
    assert results["nvidia-driver"].status.value == "fail"
    assert "did not answer within 1.0 s" in results["nvidia-driver"].summary


def test_a_failing_nvidia_smi_is_recorded_with_its_message(tmp_path, monkeypatch):
    message = real_output("linux/nvidia-smi-driver-not-loaded.json")["table"]
    install_fake(tmp_path, monkeypatch, f"""
    import sys
    sys.stdout.write({message!r})
    sys.exit(9)
    """)
    facts = collector.collect_nvidia(options())
    assert facts["nvidia"]["smi"]["status"] == "failed" and facts["nvidia"]["smi"]["exit_code"] == 9
    assert driver_summary(facts)["state"] == "driver_not_loaded"
    assert detected_gpus(facts) == []


def test_a_missing_nvidia_smi_is_handled(tmp_path, monkeypatch):
    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    monkeypatch.setattr(collector, "WSL_SMI", str(tmp_path / "absent-wsl-nvidia-smi"))
    monkeypatch.setattr(collector, "PCI_DEVICES", str(tmp_path / "no-pci"))
    facts = collector.collect_nvidia(options())
    nvidia = facts["nvidia"]
    assert nvidia["smi"]["status"] == "not_found" and nvidia["smi_query"] is None
    assert detected_gpus(facts) == []
    results = {r.check_id: r for r in run_checks(all_checks(), {"host": {"system": "Linux"}, **facts})}
    assert results["nvidia-driver"].status.value == "skip"
    assert results["nvidia-driver"].summary.startswith("no NVIDIA GPU")


def test_pci_devices_and_library_dirs(tmp_path):
    root = tmp_path / "pci"
    for slot, vendor, device_class in (("0000:01:00.0", "0x10de", "0x030000"), ("0000:01:00.1", "0x10de", "0x040300"),
                                       ("0000:02:00.0", "0x8086", "0x030000")):
        (root / slot).mkdir(parents=True)
        (root / slot / "vendor").write_text(vendor + "\n")
        (root / slot / "class").write_text(device_class + "\n")
        (root / slot / "device").write_text("0x2204\n")
    assert collector.nvidia_pci_devices(str(root)) == [{"slot": "0000:01:00.0", "device": "0x2204", "class": "0x030000"}]
    assert collector.nvidia_pci_devices(str(tmp_path / "missing")) is None

    libs = tmp_path / "cuda" / "lib64"
    libs.mkdir(parents=True)
    for name in ("libcudnn.so.8.1.1", "libcudart.so.11.0", "libcuda.so.1", "libfoo.so", "libcublasLt.so.11"):
        (libs / name).write_text("")
    found = collector.library_dirs(f"{libs}{os.pathsep}{tmp_path / 'nowhere'}")
    assert found == {str(libs): ["libcublasLt.so.11", "libcuda.so.1", "libcudart.so.11.0", "libcudnn.so.8.1.1"],
                     str(tmp_path / "nowhere"): []}
    assert collector.library_dirs(None) is None


def test_ldconfig_lines_are_filtered_to_cuda_libraries():
    text = ("1234 libs found in cache `/etc/ld.so.cache'\n"
            "\tlibcudnn.so.9 (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/libcudnn.so.9\n"
            "\tlibc.so.6 (libc6,x86-64, OS ABI: Linux 3.2.0) => /lib/x86_64-linux-gnu/libc.so.6\n"
            "\tlibcudart.so.12 (libc6,x86-64) => /usr/local/cuda/lib64/libcudart.so.12\n")
    assert collector.cuda_libraries_in_cache(text) == [
        "libcudnn.so.9 => /usr/lib/x86_64-linux-gnu/libcudnn.so.9",
        "libcudart.so.12 => /usr/local/cuda/lib64/libcudart.so.12"]
