"""Which installer an environment has: one type, and one precedence for the doctor (from the recorded
facts), `fix --undo` (from a quick look at a live interpreter) and anything else that asks.

Adding an installer: a value here (with its label), its detection rule in the child that describes the
target (tfdoctor/child/target_info.py), and its spelling in tfdoctor/environment/spell.py."""

from __future__ import annotations

from enum import Enum
from typing import Any, Mapping


class InstallerKind(str, Enum):
    UV = "uv"  # a uv venv: uv's own resolver and installer, no pip in it
    CONDA = "conda"
    VENV = "venv"
    MANAGED = "managed"  # PEP 668 externally managed (Homebrew, Debian): pip refuses without a flag
    SYSTEM = "system"

    def __str__(self) -> str:
        return self.value

    def __format__(self, spec: str) -> str:
        return format(self.value, spec)

    def __hash__(self) -> int:  # equal to its string, so the same key in a dict or set (Enum hashes the name)
        return str.__hash__(self)

    @property
    def label(self) -> str:
        return _LABELS[self]

    @property
    def uses_pip(self) -> bool:
        """Install commands run the target's own pip (uv brings its own resolver and installer)."""
        return self in (InstallerKind.CONDA, InstallerKind.VENV, InstallerKind.SYSTEM)

    @property
    def isolated(self) -> bool:
        """An environment of its own (a venv, uv's, conda's), not an interpreter's base installation."""
        return self in (InstallerKind.VENV, InstallerKind.UV, InstallerKind.CONDA)


_LABELS = {
    InstallerKind.UV: "uv-managed environment",
    InstallerKind.CONDA: "conda environment",
    InstallerKind.VENV: "virtual environment",
    InstallerKind.SYSTEM: "system Python",
    InstallerKind.MANAGED: "externally managed system Python (Homebrew, Debian)",
}


def detect(*, uv: Any = False, conda: Any = False, venv: Any = False, externally_managed: Any = False) -> InstallerKind:
    """The one precedence: a uv venv, then conda, then any other venv, then an externally managed base
    Python, else a system Python."""
    if uv:
        return InstallerKind.UV
    if conda:
        return InstallerKind.CONDA
    if venv:
        return InstallerKind.VENV
    if externally_managed:
        return InstallerKind.MANAGED
    return InstallerKind.SYSTEM


def kind_of(python: Mapping[str, Any]) -> InstallerKind:
    """The kind the doctor's facts["python"] (the target child's description) name."""
    return detect(uv=python.get("uv_version"), conda=python.get("conda"), venv=python.get("in_venv"),
                  externally_managed=python.get("externally_managed"))
