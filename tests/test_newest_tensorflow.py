"""One answer to "the newest TensorFlow this Python gets here": platform-support and the installer check
both read facts/releases.py's newest_tensorflow, and name the same release for every Python 3.6-3.13 on
every platform (before, Python 3.6 and 3.7 got 2.4/2.10 from one and 2.6/2.11 from the other)."""

from __future__ import annotations

import pytest

from tfdoctor.checks.installer import installer_capability
from tfdoctor.checks.platform_support import platform_support
from tfdoctor.facts import releases
from tfdoctor.installers import TENSORFLOW_WHEEL_TAGS, newest_tensorflow_wheel

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
