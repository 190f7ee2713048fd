"""The installers the doctor knows, in one tuple: `REGISTERED`, whose order is the precedence of detection
(the first whose `detected` says yes is the environment's installer; `system` is last and takes what no
other claims).

Each installer is one module of this package implementing `base.Installer`: its report value (`kind`) and
label, its detection from facts["python"], the spelling of its steps (which tfdoctor/environment/spell.py,
the one speller, asks it for), and what `tfdoctor fix` may do with its environments. Callers (the speller,
the planner, the fixer, remedies and checks) ask the installer object; none of them branches on a kind.

Adding an installer: its module here, its name in `REGISTERED` at its place in the precedence, and a test
(tests/environment/test_installers.py). Where its detection needs a marker no fact records yet, the target
child records it (tfdoctor/child/target_info.py `installer_markers`, documented in the report schema),
and the plan's `installer` enum in the schema names the new value (tests/environment/test_installers.py
fails until it does)."""

from __future__ import annotations

from typing import Any, Callable, Mapping, Optional, Sequence, Union

from tfdoctor.environment.installers import conda, managed, pixi, system, uv, venv
from tfdoctor.environment.installers.base import Installer, Unspellable
from tfdoctor.facts import Facts, integrity, section
from tfdoctor.results.repairs import Repair

REGISTERED: tuple[Installer, ...] = (
    uv.INSTALLER,  # a uv venv: uv's pyvenv.cfg line, before any venv
    pixi.INSTALLER,  # conda-meta/pixi: before conda, whose conda-meta/ its environments hold too
    conda.INSTALLER,  # conda-meta/: conda's, even where a venv sits on it
    venv.INSTALLER,
    managed.INSTALLER,  # PEP 668's marker on a base interpreter
    system.INSTALLER,  # the rest
)
KINDS: tuple[str, ...] = tuple(installer.kind for installer in REGISTERED)
_BY_KIND = {installer.kind: installer for installer in REGISTERED}

__all__ = ["KINDS", "REGISTERED", "Installer", "Unspellable", "detect", "named", "recorded_by", "reinstall_repairs"]


def detect(python: Mapping[str, Any]) -> Installer:
    """The installer facts["python"] name (the target child's installer_markers, or `fix --undo`'s probe of
    the same markers): the first registered one that detects it."""
    return next(installer for installer in REGISTERED if installer.detected(python))


def named(kind: str) -> Installer:
    """The registered installer of a report value ("conda"); KeyError for a value none has."""
    return _BY_KIND[str(kind)]


def recorded_by(word: Any) -> Optional[Installer]:
    """The installer that keeps its own record of a distribution whose INSTALLER file says `word` (conda's
    "conda"), or None: pip, uv and the rest leave the distribution to whichever installer the environment has."""
    text = str(word or "").strip()
    return next((installer for installer in REGISTERED if text and installer.records == text), None)


def reinstall_repairs(facts: Facts, pins: Sequence[str],
                      reason: Union[str, Callable[[list[str]], str]]) -> tuple[Repair, ...]:
    """`pins` ('name==version') reinstalled as they were: what an installer that keeps its own records
    installed (INSTALLER says so) in one repair that names it (`manager`, with the environment's prefix), so
    that installer lays its own files down again; the rest in one repair for the environment's installer.
    `reason`: the words, or what words each group's pins."""
    groups: dict[Optional[str], list[str]] = {}
    for pin in pins:
        owner = recorded_by(integrity.installed_by(facts, pin.split("==")[0]))
        groups.setdefault(owner.kind if owner else None, []).append(pin)
    prefix = str(section(facts, "python").get("prefix") or "") or None
    def why(group: list[str]) -> str:
        return reason if isinstance(reason, str) else reason(group)

    owned = [Repair.reinstall(*group, reason=why(group), manager=kind, prefix=prefix)
             for kind, group in groups.items() if kind is not None]
    return (*owned, *([Repair.reinstall(*groups[None], reason=why(groups[None]))] if None in groups else []))
