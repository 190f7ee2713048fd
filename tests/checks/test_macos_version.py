"""The macos-version check: the macOS release, its compatibility mode (10.16) and the Metal plugin's minimums."""

from __future__ import annotations

from tfdoctor.checks.macos_version import is_compat_version, macos_version_check
from tfdoctor.results.model import Status

from tests.builders import MAC_VENV, check_result, fix_text, mac, site_distribution
from tests.plan_support import plan_commands, plan_of


def test_compat_mode_python_sees_10_16():
    facts = mac(mac_ver="10.16")
    result = check_result(macos_version_check, facts)
    assert result.status is Status.WARN and "SYSTEM_VERSION_COMPAT=0" in fix_text(result)
    plan = plan_of(facts, result)  # an environment variable: a manual step of the plan
    assert [(s.command, s.manual) for s in plan.steps] == [("export SYSTEM_VERSION_COMPAT=0", True)]


def test_metal_below_apples_minor_minimum_warns_and_hard_minimum_fails():
    facts = mac()
    facts["os"]["sw_vers"] = "ProductName:\tmacOS\nProductVersion:\t12.0\n"
    facts["distributions"] = [site_distribution("tensorflow-macos", "2.9.2"), site_distribution("tensorflow-metal", "0.5.0")]
    below_listed = check_result(macos_version_check, facts)
    assert below_listed.status is Status.WARN  # Apple: 12.1+
    assert plan_commands(facts, below_listed) == []  # it may load: removing it is a choice, in words
    assert "uninstall tensorflow-metal" in below_listed.remediation.advice
    facts["os"]["sw_vers"] = "ProductName:\tmacOS\nProductVersion:\t11.7.10\n"
    result = check_result(macos_version_check, facts)
    assert result.status is Status.FAIL and "MPSGraphCompilationDescriptor" in " ".join(result.details)
    assert result.remediation.commands == ("softwareupdate --list",)  # the OS update is manual
    assert plan_commands(facts, result) == [f"{MAC_VENV}/bin/python -m pip uninstall -y -- tensorflow-metal"]


def test_macos_version_falls_back_to_mac_ver_but_not_to_10_16():
    facts = mac(mac_ver="13.6")
    facts["os"] = {"sw_vers": None}
    assert check_result(macos_version_check, facts).summary == "macOS 13.6"
    facts["python"]["mac_ver"] = "10.16"
    assert check_result(macos_version_check, facts).status is Status.SKIP


def test_compat_version_is_10_16_only():
    assert is_compat_version("10.16")
    assert not is_compat_version("10.15.7") and not is_compat_version("11.0") and not is_compat_version(None)
