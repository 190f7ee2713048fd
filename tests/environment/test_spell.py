"""The one speller: every command for an environment, in the plan's shell, for its kind of installer."""

from __future__ import annotations

import pytest

from tfdoctor.environment.spell import POSIX, POWERSHELL, Spelling, argv, command, fresh_environment, spelling_for
from tfdoctor.results.repairs import Action


def facts(system="Darwin", **python):
    return {"host": {"system": system}, "python": {"executable": "/opt/py/bin/python3", **python}}


@pytest.mark.parametrize(
    "python, expected",
    [
        ({"in_venv": True}, "/opt/py/bin/python3 -m pip install -- 'tensorflow==2.19.*' tensorflow-metal"),
        ({"conda": True}, "/opt/py/bin/python3 -m pip install -- 'tensorflow==2.19.*' tensorflow-metal"),
        ({"in_venv": True, "uv_version": "0.5.1"},
         "uv pip install --python /opt/py/bin/python3 -- 'tensorflow==2.19.*' tensorflow-metal"),
        ({"externally_managed": True},
         "/opt/py/bin/python3 -m pip install --break-system-packages -- 'tensorflow==2.19.*' tensorflow-metal"),
    ],
)
def test_install_command_per_environment_kind(python, expected):
    spelling = spelling_for(facts(**python))
    assert command(spelling, Action.INSTALL, ("tensorflow==2.19.*", "tensorflow-metal")) == expected


def test_an_externally_managed_python_has_one_policy_the_plan_line_and_what_fix_runs():
    """PEP 668: the plan changes the Python it diagnosed, with pip's own flag (`tfdoctor fix` asks for
    --system first); what fix executes is the plan's line word for word, never a venv somewhere else."""
    spelling = spelling_for(facts("Linux", externally_managed=True))
    assert spelling.kind == "managed"
    for action, packages in ((Action.INSTALL, ("numpy<2",)), (Action.UNINSTALL, ("tf-keras",)),
                             (Action.REINSTALL, ("tensorflow==2.21.0",))):
        words = argv(spelling, action, packages)
        assert "--break-system-packages" in words and "venv" not in words
        assert command(spelling, action, packages) == " ".join(spelling.quote(w) for w in words)


def test_windows_quotes_for_powershell():
    spelling = spelling_for(facts("Windows", in_venv=True))
    assert spelling.shell == POWERSHELL
    assert command(spelling, Action.INSTALL, ("numpy<2",)) == "/opt/py/bin/python3 -m pip install '--' 'numpy<2'"  # nothing expands; PowerShell keeps a quoted --


def test_uninstall_and_reinstall():
    venv = Spelling("venv", "/opt/py/bin/python3")
    assert command(venv, Action.UNINSTALL, ("tensorflow-macos",)) == (
        "/opt/py/bin/python3 -m pip uninstall -y -- tensorflow-macos")
    assert command(venv, Action.REINSTALL, ("tensorflow==2.19.0",)) == (
        "/opt/py/bin/python3 -m pip install --force-reinstall --no-deps -- 'tensorflow==2.19.0'")


def test_conda_fresh_environment_uses_conda():
    assert fresh_environment(spelling_for(facts(conda=True)), "3.11") == (
        "conda create -n tf python=3.11 -y", "conda activate tf")


@pytest.mark.parametrize("python", [{"in_venv": True}, {}, {"in_venv": True, "uv_version": "0.5.1"}])
def test_a_fresh_environment_on_windows_is_powershell_like_the_plan(python):
    """The plan on Windows is PowerShell; the new environment's lines were cmd.exe's (%USERPROFILE%,
    activate.bat), which PowerShell does not expand or run."""
    spelling = spelling_for(facts("Windows", **python))
    lines = fresh_environment(spelling, "3.12")
    assert spelling.shell == POWERSHELL
    assert not any("%" in line for line in lines), lines
    assert all("$env:USERPROFILE" in line for line in lines), lines
    assert lines[-1].startswith("& ") and lines[-1].endswith("\\Scripts\\Activate.ps1"), lines


def test_a_fresh_environment_elsewhere_is_posix():
    spelling = spelling_for(facts("Linux", in_venv=True))
    assert spelling.shell == POSIX
    assert fresh_environment(spelling, "3.12") == ("python3.12 -m venv ~/.venvs/tf", "source ~/.venvs/tf/bin/activate")
