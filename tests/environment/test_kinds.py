"""One installer kind, one precedence: the doctor's facts and `fix --undo`'s live look agree."""

from __future__ import annotations

import sys

import pytest

from tfdoctor.environment.kinds import InstallerKind, kind_of
from tfdoctor.environment.pip import installer_for


@pytest.mark.parametrize("python, expected", [
    ({"uv_version": "0.5.1", "conda": True, "in_venv": True}, InstallerKind.UV),
    ({"conda": True, "in_venv": True, "externally_managed": True}, InstallerKind.CONDA),
    ({"in_venv": True, "externally_managed": True}, InstallerKind.VENV),
    ({"externally_managed": True}, InstallerKind.MANAGED),
    ({}, InstallerKind.SYSTEM),
])
def test_the_one_precedence(python, expected):
    assert kind_of(python) is expected
    assert installer_for({"python": {"executable": "/py", **python}}).kind is expected


def test_a_kind_is_its_string_in_json_and_as_a_key():
    assert InstallerKind.CONDA == "conda" and {"conda": 1}[InstallerKind.CONDA] == 1
    assert f"{InstallerKind.UV}" == "uv" and str(InstallerKind.MANAGED) == "managed"


def test_fix_undo_reads_this_venv_as_the_doctor_would():
    """`fix --undo` looks at a live interpreter without a diagnosis: the tests' venv is a venv to it (uv's
    when uv made it), a kind of the one type, not a string of its own."""
    from tfdoctor.fixer.flow import probe

    assert sys.prefix != getattr(sys, "base_prefix", sys.prefix)  # the tests run in a venv
    assert probe(sys.executable).kind in (InstallerKind.VENV, InstallerKind.UV)
    assert isinstance(probe(sys.executable).kind, InstallerKind)
