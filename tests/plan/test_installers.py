"""Install hints name the command that works for the user's kind of environment."""

from __future__ import annotations

import pytest

from tfdoctor.environment.pip import installer_for


def facts(system="Darwin", **python):
    return {"host": {"system": system}, "python": {"executable": "/opt/py/bin/python3", **python}}


@pytest.mark.parametrize(
    "python, expected",
    [
        ({"in_venv": True}, "/opt/py/bin/python3 -m pip install 'tensorflow==2.19.*' tensorflow-metal"),
        ({"conda": True}, "/opt/py/bin/python3 -m pip install 'tensorflow==2.19.*' tensorflow-metal"),
        ({"in_venv": True, "uv_version": "0.5.1"},
         "uv pip install --python /opt/py/bin/python3 'tensorflow==2.19.*' tensorflow-metal"),
        ({"externally_managed": True},
         "/opt/py/bin/python3 -m venv ~/.venvs/tf && ~/.venvs/tf/bin/python -m pip install 'tensorflow==2.19.*' "
         "tensorflow-metal"),
    ],
)
def test_install_command_per_environment_kind(python, expected):
    assert installer_for(facts(**python)).install("tensorflow==2.19.*", "tensorflow-metal") == expected


def test_windows_quotes_with_double_quotes():
    installer = installer_for(facts("Windows", in_venv=True))
    assert installer.install("numpy<2") == '/opt/py/bin/python3 -m pip install "numpy<2"'


def test_uninstall_and_reinstall():
    venv = installer_for(facts(in_venv=True))
    assert venv.uninstall("tensorflow-macos") == "/opt/py/bin/python3 -m pip uninstall -y tensorflow-macos"
    assert venv.reinstall("tensorflow==2.19.0") == (
        "/opt/py/bin/python3 -m pip install --force-reinstall --no-deps 'tensorflow==2.19.0'")


def test_conda_fresh_environment_uses_conda():
    assert installer_for(facts(conda=True)).fresh_environment("3.11") == (
        "conda create -n tf python=3.11 -y", "conda activate tf")
