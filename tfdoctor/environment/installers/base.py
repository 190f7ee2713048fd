"""What an installer is (the `Installer` protocol), and the spelling the installers that run the target's
own pip share (`PipInstaller`). Each registered installer is one module of this package; the registry and
its precedence are `tfdoctor/environment/installers/__init__.py`'s.

An installer's methods return argument vectors for words already screened by the speller
(tfdoctor/environment/spell.py `refusal`): the speller stays the one entry that words a command, and asks
the installer only what differs between installers."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Mapping, Optional, Protocol, Sequence

if TYPE_CHECKING:
    from tfdoctor.environment.spell import Spelling

POSIX, POWERSHELL = "posix", "powershell"  # the shells a plan is written for
END_OF_OPTIONS = "--"  # pip (optparse), uv and pixi (clap), conda (argparse): the end of their options
CHECK_ARM64 = "python -c \"import platform; print(platform.machine())\"  # must print arm64"


class Unspellable(ValueError):
    """A step this installer has no command for (pixi cannot install without dependencies): the plan says
    why in its notes rather than write a command that would not do what the step asks."""


@dataclass(frozen=True)
class DryRun:
    """How `tfdoctor fix --dry-run` asks this installer's resolver about an install step, changing nothing."""

    flags: tuple[str, ...]  # put after the argv's `install`
    offline_variables: tuple[str, ...]  # set to a true value, the installer uses no index: unknown, not unresolvable
    would_install: Callable[[str], str]  # its stdout, read into "name version, ..."


def _pip_report(stdout: str) -> str:
    try:
        report = json.loads(stdout)
    except ValueError:
        return ""
    return ", ".join(f"{i['metadata']['name']} {i['metadata']['version']}" for i in report.get("install") or ())


def _uv_lines(stdout: str) -> str:
    return "; ".join(line.strip() for line in stdout.splitlines() if line.strip().startswith(("+", "-")))


# pip >= 22.2: `pip install --dry-run --report -` (https://pip.pypa.io/en/stable/cli/pip_install/#cmdoption-dry-run)
PIP_DRY_RUN = DryRun(("--dry-run", "--quiet", "--report", "-"), ("PIP_NO_INDEX",), _pip_report)
UV_DRY_RUN = DryRun(("--dry-run",), ("UV_OFFLINE", "UV_NO_INDEX"), _uv_lines)


class Installer(Protocol):
    """One installer: how the doctor recognises its environments, how its commands are spelled, and what
    `tfdoctor fix` may do with them. `kind` is the report's value (the plan's `installer`)."""

    @property
    def kind(self) -> str:
        """The report's value ("venv", "uv", ...): written in reports and rollback records; never renamed."""

    @property
    def label(self) -> str:
        """Words for a reader ("virtual environment")."""

    @property
    def uses_pip(self) -> bool:
        """Its install steps run the target's `python -m pip`: the plan brings that pip up first."""

    @property
    def isolated(self) -> bool:
        """An environment of its own; if not, `fix` changes it only with --yes --system, proving on a stand-in venv."""

    @property
    def records(self) -> Optional[str]:
        """The INSTALLER word of what it installs and records itself ("conda"): it lays those down again."""

    @property
    def keeps_records(self) -> bool:
        """Its environments hold their own records (conda-meta): a dist-info without RECORD is theirs."""

    @property
    def clone_tools(self) -> tuple[str, ...]:
        """`fix` copies its environments with the first of these on PATH (clone_argv); none: as hard links."""

    @property
    def fix_refusal(self) -> Optional[str]:
        """Why `tfdoctor fix` proves and applies nothing here (None: it does)."""

    @property
    def dry_run(self) -> Optional[DryRun]:
        """How `fix --dry-run` asks its resolver; None: it has none to ask without changing anything."""

    @property
    def arm64_origin(self) -> Optional[str]:
        """The knowledge/macos.toml arm64_python row its native Mac environment starts from."""

    def detected(self, python: Mapping[str, Any]) -> bool:
        """Whether facts["python"] (the child's installer_markers) name an environment of this installer,
        the installers before it in the registry having said no."""

    def context(self, python: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
        """What its commands need beyond the interpreter (pixi: the manifest and the environment's name)."""

    def install(self, spelling: "Spelling", requirements: Sequence[str], *, no_deps: bool, pre: bool) -> list[str]: ...

    def uninstall(self, spelling: "Spelling", names: Sequence[str]) -> list[str]: ...

    def reinstall(self, spelling: "Spelling", pins: Sequence[str], *, owner: Optional["Installer"],
                  prefix: Optional[str]) -> list[str]:
        """`pins` ('name==version') laid down again as they were, dependencies untouched; `owner`: the installer
        whose records say it installed them (conda), whose own reinstall this one defers to where it can."""

    def reinstall_recorded(self, pins: Sequence[str], prefix: Optional[str]) -> list[str]:
        """Its own reinstall of what it installed and records (`records`); Unspellable where it has none."""

    def upgrade_pip(self, spelling: "Spelling", *, missing: bool) -> list[str]: ...

    def clone_argv(self, tool: str, source: str, target: str) -> list[str]:
        """Its own copy of an environment, offline, for `fix` to prove a plan on (only with clone_tools)."""

    def fresh_environment(self, shell: str, python_version: str) -> tuple[str, ...]:
        """Commands that create and activate a clean environment of this installer, in `shell`."""

    def native_arm64(self, python_version: str, installer_url: str) -> tuple[str, ...]:
        """Commands that create and activate a native arm64 environment on a Mac and confirm it is arm64."""

    def native_arm64_name(self, row: Optional[Mapping[str, Any]]) -> str:
        """The arm64 Python that environment is made with, for a reader (`row`: its arm64_origin row)."""

    def capability_note(self, python: Mapping[str, Any]) -> Optional[str]:
        """The installer check's pass where pip is not what installs here (uv, pixi) or installs only with a
        flag the plan passes (PEP 668); None: the check judges the target's pip."""


@dataclass(frozen=True)
class PipInstaller:
    """An installer whose steps run the target's own pip (`python -m pip`), with `pip_flags` before the
    rest (PEP 668's --break-system-packages). Shared by venv, conda, system and managed."""

    kind: str
    label: str
    detect: Callable[[Mapping[str, Any]], Any]  # truthy: detected
    isolated: bool = True
    pip_flags: tuple[str, ...] = ()
    records: Optional[str] = None
    keeps_records: bool = False
    clone_tools: tuple[str, ...] = ()
    note: Optional[str] = None
    fresh: Callable[[str, str], tuple[str, ...]] = field(default=lambda shell, version: venv_fresh(shell, version))
    arm64: Callable[[str, str], tuple[str, ...]] = field(default=lambda version, url: python_org_arm64(version))
    arm64_origin: Optional[str] = "python.org"
    uses_pip: bool = True
    fix_refusal: Optional[str] = None
    dry_run: Optional[DryRun] = PIP_DRY_RUN

    def detected(self, python: Mapping[str, Any]) -> bool:
        return bool(self.detect(python))

    def context(self, python: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
        return ()

    def _pip(self, spelling: "Spelling") -> list[str]:
        return [spelling.python, "-m", "pip"]

    def install(self, spelling: "Spelling", requirements: Sequence[str], *, no_deps: bool, pre: bool) -> list[str]:
        return [*self._pip(spelling), "install", *self.pip_flags, *(["--no-deps"] if no_deps else []),
                *(["--pre"] if pre else []), END_OF_OPTIONS, *requirements]

    def uninstall(self, spelling: "Spelling", names: Sequence[str]) -> list[str]:
        return [*self._pip(spelling), "uninstall", *self.pip_flags, "-y", END_OF_OPTIONS, *names]

    def reinstall(self, spelling: "Spelling", pins: Sequence[str], *, owner: Optional[Installer],
                  prefix: Optional[str]) -> list[str]:
        if owner is not None:
            return owner.reinstall_recorded(pins, prefix)
        return [*self._pip(spelling), "install", *self.pip_flags, "--force-reinstall", "--no-deps", END_OF_OPTIONS, *pins]

    def reinstall_recorded(self, pins: Sequence[str], prefix: Optional[str]) -> list[str]:
        raise Unspellable(f"{self.label}: keeps no record of its own to reinstall from")

    def upgrade_pip(self, spelling: "Spelling", *, missing: bool) -> list[str]:
        if missing:
            return [spelling.python, "-m", "ensurepip", "--upgrade"]
        return [*self._pip(spelling), "install", *self.pip_flags, "--upgrade", "pip"]

    def clone_argv(self, tool: str, source: str, target: str) -> list[str]:
        raise Unspellable(f"{self.label}: copied as hard links, by no tool of its own")

    def fresh_environment(self, shell: str, python_version: str) -> tuple[str, ...]:
        return self.fresh(shell, python_version)

    def native_arm64(self, python_version: str, installer_url: str) -> tuple[str, ...]:
        return self.arm64(python_version, installer_url)

    def native_arm64_name(self, row: Optional[Mapping[str, Any]]) -> str:
        return f"the {row['name'] if row else 'python.org universal2 installer'} ({row['installer_url'] if row else ''})"

    def capability_note(self, python: Mapping[str, Any]) -> Optional[str]:
        return self.note


def venv_fresh(shell: str, python_version: str) -> tuple[str, ...]:
    """A plain venv made with the Python of that version (the `py` launcher on Windows)."""
    if shell == POWERSHELL:
        return (f"py -{python_version} -m venv $env:USERPROFILE\\tf-venv", "& $env:USERPROFILE\\tf-venv\\Scripts\\Activate.ps1")
    return (f"python{python_version} -m venv ~/.venvs/tf", "source ~/.venvs/tf/bin/activate")


def python_org_arm64(python_version: str) -> tuple[str, ...]:
    """A venv of python.org's universal2 framework build, started as arm64."""
    framework = f"/Library/Frameworks/Python.framework/Versions/{python_version}/bin/python{python_version}"
    return (f"arch -arm64 {framework} -m venv ~/.venvs/tf", "source ~/.venvs/tf/bin/activate", CHECK_ARM64)
