"""Repair intents: what a check wants done to the environment, as data, never as a command line.

A check says *what* would repair what it found (install these requirements, reinstall this release
as it was, uninstall that build, bring pip up, set a variable) and *why*. The planner
(tfdoctor/plan/planner.py) merges every intent of a run into one ordered plan, and the command renderer
(tfdoctor/environment/spell.py) spells that plan for the environment's installer and shell, in one
place, so two checks can never print commands that disagree.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any, Mapping, Optional


class Action(str, Enum):
    # In the order a plan runs them (see planner.ORDER): the installer first, removals before installs,
    # exact reinstalls before the resolver step, --no-deps installs after it, the shell's part last.
    UPGRADE_INSTALLER = "upgrade-installer"
    # a distribution without RECORD: pip refuses to replace it, uv leaves its metadata behind (issue 29)
    REMOVE_METADATA = "remove-metadata"
    UNINSTALL = "uninstall"
    REINSTALL = "reinstall"
    INSTALL = "install"
    SET_ENV = "set-env"
    UNSET_ENV = "unset-env"
    RENAME = "rename"


@dataclass(frozen=True)
class Repair:
    """One intent. `packages` holds PEP 508 requirements for install, `name==version` for reinstall,
    distribution names for uninstall."""

    action: Action
    reason: str
    packages: tuple[str, ...] = ()
    no_deps: bool = False  # install: outside the resolver (a companion whose requirement names another build)
    pre: bool = False  # install: pre-releases allowed (a nightly, a release candidate)
    copies: int = 1  # uninstall: copies of one distribution on sys.path, each needs its own uninstall
    manager: Optional[str] = None  # reinstall: "conda" for what conda installed (its files, its record)
    prefix: Optional[str] = None  # reinstall with conda: the environment's prefix
    variable: Optional[str] = None  # set-env / unset-env
    value: Optional[str] = None
    path: Optional[str] = None  # rename: a file that hides a module (outside the environment)
    new_path: Optional[str] = None
    minimum: Optional[str] = None  # upgrade-installer: the oldest pip that does the job
    missing: bool = False  # upgrade-installer: there is no pip module at all (ensurepip first)
    # set-env / unset-env / rename: the modules this manual step stops another copy from hiding. Until it is
    # done, an install into the environment would be defeated (the hiding copy still comes first), so the
    # planner withholds every runnable step (tfdoctor/plan/planner.py).
    unhides: tuple[str, ...] = ()
    # install: 'name==version' of the installed distribution whose Requires-Dist line this intent carries. A plan
    # that replaces that very version drops the intent: the replaced release's requirements no longer apply.
    required_by: Optional[str] = None

    @classmethod
    def install(cls, *requirements: str, reason: str, no_deps: bool = False, pre: bool = False,
                required_by: Optional[str] = None) -> "Repair":
        return cls(Action.INSTALL, reason, tuple(requirements), no_deps=no_deps, pre=pre, required_by=required_by)

    @classmethod
    def remove_metadata(cls, name: str, version: str, reason: str) -> "Repair":
        """Delete the .dist-info/.egg-info of `name==version` that has no RECORD (its files stay, the next
        install overwrites them): pip cannot uninstall it, so no install over it works before this."""
        return cls(Action.REMOVE_METADATA, reason, (f"{name}=={version}",))

    @classmethod
    def uninstall(cls, *names: str, reason: str, copies: int = 1) -> "Repair":
        return cls(Action.UNINSTALL, reason, tuple(names), copies=copies)

    @classmethod
    def reinstall(cls, *pins: str, reason: str, manager: Optional[str] = None,
                  prefix: Optional[str] = None) -> "Repair":
        return cls(Action.REINSTALL, reason, tuple(pins), manager=manager, prefix=prefix)

    @classmethod
    def upgrade_pip(cls, reason: str, minimum: Optional[str] = None, missing: bool = False) -> "Repair":
        return cls(Action.UPGRADE_INSTALLER, reason, ("pip",), minimum=minimum, missing=missing)

    @classmethod
    def set_env(cls, variable: str, value: str, reason: str, unhides: tuple[str, ...] = ()) -> "Repair":
        return cls(Action.SET_ENV, reason, variable=variable, value=value, unhides=tuple(unhides))

    @classmethod
    def unset_env(cls, variable: str, reason: str, unhides: tuple[str, ...] = ()) -> "Repair":
        return cls(Action.UNSET_ENV, reason, variable=variable, unhides=tuple(unhides))

    @classmethod
    def rename(cls, path: str, new_path: str, reason: str, unhides: tuple[str, ...] = ()) -> "Repair":
        return cls(Action.RENAME, reason, path=path, new_path=new_path, unhides=tuple(unhides))

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"action": self.action.value, "reason": self.reason}
        if self.packages:
            data["packages"] = list(self.packages)
        for key in ("no_deps", "pre", "missing"):
            if getattr(self, key):
                data[key] = True
        if self.copies != 1:
            data["copies"] = self.copies
        if self.unhides:
            data["unhides"] = list(self.unhides)
        for key in ("manager", "prefix", "variable", "value", "path", "new_path", "minimum", "required_by"):
            if getattr(self, key) is not None:
                data[key] = getattr(self, key)
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "Repair":
        return cls(
            Action(data["action"]), str(data.get("reason") or ""), tuple(str(p) for p in data.get("packages") or ()),
            no_deps=bool(data.get("no_deps")), pre=bool(data.get("pre")), copies=int(data.get("copies") or 1),
            manager=data.get("manager"), prefix=data.get("prefix"), variable=data.get("variable"),
            value=data.get("value"), path=data.get("path"), new_path=data.get("new_path"),
            minimum=data.get("minimum"), missing=bool(data.get("missing")),
            unhides=tuple(str(m) for m in data.get("unhides") or ()), required_by=data.get("required_by"),
        )
