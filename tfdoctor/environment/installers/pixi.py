"""A pixi environment: a conda prefix that pixi installs and keeps in step with its workspace's manifest
(pixi.toml or pyproject.toml) and lock file (pixi.lock).

Detected by conda-meta/pixi, the file pixi writes into every environment it installs, naming the manifest and
the environment ("Environment Installation Metadata", https://pixi.sh/latest/workspace/environment/); in a report
recorded before the child read that file, by the default place, `<workspace>/.pixi/envs/<name>`, of a conda
prefix (same page, "Structure"). Before conda in the registry: its environments hold conda-meta/ too.

Its steps change the workspace, not the environment alone: pixi re-installs an environment as its lock file
says at the next `pixi run`, `pixi shell` or `pixi install` ("you cannot manually edit them, this should always
go through the pixi.toml", same page), so a `pip install` into it would not last. Commands, with the workspace
given by `--manifest-path=` ("The path to pixi.toml, pyproject.toml, or the workspace directory"; read from the
environment's own conda-meta/pixi, so bound to its option with `=`, as clap, pixi's parser, reads it):
- install: `pixi add --pypi REQ...` (https://pixi.sh/latest/reference/cli/pixi/add/), which writes the
  requirements into the manifest, solves, locks and installs; it has no --no-deps and no pre-release switch, so
  such a step has no pixi command (Unspellable: said in the plan's notes);
- uninstall: `pixi remove --pypi NAME...` (https://pixi.sh/latest/reference/cli/pixi/remove/): it removes what
  the manifest names; a distribution only another requires stays;
- reinstall: `pixi reinstall -e ENV NAME...` (https://pixi.sh/latest/reference/cli/pixi/reinstall/), conda's and
  PyPI's packages alike, so conda's own records stay right.
No pixi binary is on the package indexes this project reaches, so these are spelled as pixi's documentation
says, not run here.

`tfdoctor fix` leaves a pixi environment alone: a copy of it cannot prove a step that changes the workspace's
manifest, and a step run on the environment alone is undone by pixi."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Mapping, Optional, Sequence

from tfdoctor.environment.installers.base import CHECK_ARM64, END_OF_OPTIONS, Installer, Unspellable

if TYPE_CHECKING:
    from tfdoctor.environment.spell import Spelling

DOCS_URL = "https://pixi.sh/latest/workspace/environment/"


def _recorded(python: Mapping[str, Any]) -> Mapping[str, Any]:
    pixi = python.get("pixi")
    return pixi if isinstance(pixi, Mapping) else {}


def _default_place(python: Mapping[str, Any]) -> Optional[tuple[str, str]]:
    """(workspace directory, environment name) of a conda prefix at `<workspace>/.pixi/envs/<name>`."""
    prefix = str(python.get("prefix") or "")
    parts = re.split(r"[\\/]", prefix.rstrip("\\/"))
    if not python.get("conda") or len(parts) < 4 or parts[-3:-1] != [".pixi", "envs"] or not parts[-1]:
        return None
    return prefix.rstrip("\\/")[: -len("/.pixi/envs/" + parts[-1])] or "/", parts[-1]


@dataclass(frozen=True)
class PixiInstaller:
    kind: str = "pixi"
    label: str = "pixi environment"
    uses_pip: bool = False
    isolated: bool = True
    records: Optional[str] = None
    keeps_records: bool = True  # conda-meta: its conda packages' dist-infos carry no RECORD of pip's
    clone_tools: tuple[str, ...] = ()
    fix_refusal: Optional[str] = (
        "pixi keeps this environment as its workspace's manifest and pixi.lock say, so a change is made with pixi "
        f"in the workspace (a step run on the environment alone, or proven on a copy, does not last: {DOCS_URL})")
    dry_run: None = None
    arm64_origin: None = None

    def detected(self, python: Mapping[str, Any]) -> bool:
        return bool(_recorded(python)) or _default_place(python) is not None

    def context(self, python: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
        recorded, place = _recorded(python), _default_place(python)
        manifest = str(recorded.get("manifest_path") or (place[0] if place else ""))
        environment = str(recorded.get("environment_name") or (place[1] if place else ""))
        return tuple((key, value) for key, value in (("manifest", manifest), ("environment", environment)) if value)

    def _pixi(self, spelling: "Spelling", command: str) -> list[str]:
        # `--option=value`: the value (read from the environment's own files) binds to its option whatever it starts with
        manifest = spelling.given("manifest")
        return ["pixi", command, *([f"--manifest-path={manifest}"] if manifest else [])]

    def install(self, spelling: "Spelling", requirements: Sequence[str], *, no_deps: bool, pre: bool) -> list[str]:
        if no_deps:
            raise Unspellable("`pixi add` resolves every dependency (it has no --no-deps)")
        if pre:
            raise Unspellable("`pixi add` has no switch for pre-releases (pixi's pypi-options set the mode)")
        return [*self._pixi(spelling, "add"), "--pypi", END_OF_OPTIONS, *requirements]

    def uninstall(self, spelling: "Spelling", names: Sequence[str]) -> list[str]:
        return [*self._pixi(spelling, "remove"), "--pypi", END_OF_OPTIONS, *names]

    def reinstall(self, spelling: "Spelling", pins: Sequence[str], *, owner: Optional[Installer],
                  prefix: Optional[str]) -> list[str]:
        environment = spelling.given("environment")
        return [*self._pixi(spelling, "reinstall"), *([f"--environment={environment}"] if environment else []),
                END_OF_OPTIONS, *(pin.split("==", 1)[0] for pin in pins)]

    def reinstall_recorded(self, pins: Sequence[str], prefix: Optional[str]) -> list[str]:
        raise Unspellable("pixi keeps no INSTALLER record of its own")

    def upgrade_pip(self, spelling: "Spelling", *, missing: bool) -> list[str]:
        raise Unspellable("pixi installs PyPI packages itself, not with the environment's pip")

    def clone_argv(self, tool: str, source: str, target: str) -> list[str]:
        raise Unspellable(self.fix_refusal or "")

    def fresh_environment(self, shell: str, python_version: str) -> tuple[str, ...]:
        # https://pixi.sh/latest/first_workspace/: pixi init, pixi add, pixi shell
        return ("pixi init tf", f"pixi add --manifest-path tf python={python_version}",
                "pixi shell --manifest-path tf")

    def native_arm64(self, python_version: str, installer_url: str) -> tuple[str, ...]:
        # conda-forge's osx-arm64 packages (https://pixi.sh/latest/reference/cli/pixi/init/: --platform)
        return ("pixi init --platform osx-arm64 tf", f"pixi add --manifest-path tf python={python_version}",
                "pixi shell --manifest-path tf", CHECK_ARM64)

    def native_arm64_name(self, row: Optional[Mapping[str, Any]]) -> str:
        return "a pixi workspace for osx-arm64 (conda-forge's arm64 CPython)"

    def capability_note(self, python: Mapping[str, Any]) -> Optional[str]:
        version = _recorded(python).get("pixi_version")
        return (f"pixi{f' {version}' if version else ''} manages this environment: it installs PyPI packages with "
                "its own resolver, not pip, and keeps the environment as the workspace's pixi.lock says")


INSTALLER = PixiInstaller()
