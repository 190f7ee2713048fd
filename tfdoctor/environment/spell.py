"""The one place where commands are spelled: repair steps as command lines and as the argument vectors
`tfdoctor fix` runs, the lines that create a fresh environment (of the same kind, or a native arm64 one on
a Mac), and the fixer's clones. For the environment's installer (pip in a venv or a system Python, uv,
conda for what conda installed) and for its shell (POSIX shells, or PowerShell on Windows, where `&&`
does not exist before PowerShell 7: every step is one line).

Nothing else in tfdoctor writes an install, uninstall, reinstall or environment-creating command.

Every package word of a step comes from the environment's own metadata somewhere upstream (a distribution's
name and version, a Requires-Dist specifier, an import error's suspect), so it is data, never an option: it
must be a PEP 508 name with PEP 440 versions and nothing else (`refusal`; no URL, no marker, no path, no
character outside a requirement's), and it is passed after `--`, which pip (optparse), uv (clap) and conda
(argparse) all read as the end of their options. A word that fails is never spelled: `argv` and `command`
raise RefusedWord; the planner and the trials screen their words first and say what they refused.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional, Sequence

from packaging.requirements import InvalidRequirement, Requirement
from packaging.version import InvalidVersion, Version

from tfdoctor.environment import installers
from tfdoctor.environment.installers.base import CHECK_ARM64, END_OF_OPTIONS, POSIX, POWERSHELL, Installer, Unspellable
from tfdoctor.results.repairs import Action

if TYPE_CHECKING:
    from tfdoctor.facts import Facts

__all__ = ["CHECK_ARM64", "END_OF_OPTIONS", "POSIX", "POWERSHELL", "REMOVE_METADATA_SCRIPT", "RefusedWord", "Spelling",
           "Unspellable", "argv", "clone_argv", "command", "fresh_environment", "native_arm64_environment", "quote",
           "refusal", "spelling_for", "stand_in_venv_argv"]
_NEEDS_QUOTES = set("<>=!~*[];&|() $'\"`")  # quoted even where harmless: requirements read alike everywhere
# A word made only of these is the same word unquoted. POSIX: shlex.quote's safe set (no glob, brace,
# tilde, escape, newline or expansion character). PowerShell: without ',' (an array), '@' (splatting)
# and '{}' (a script block) as well.
_PLAIN = {POSIX: re.compile(r"[\w@%+=:,./-]+", re.ASCII), POWERSHELL: re.compile(r"[\w%+=:./\\-]+", re.ASCII)}
# PowerShell reads the typographic quotes as its own: each closes a single-quoted string too
# (about_Quoting_Rules, https://learn.microsoft.com/powershell/module/microsoft.powershell.core/about/about_quoting_rules).
_POWERSHELL_SINGLE_QUOTES = "'\u2018\u2019\u201a\u201b"


def quote(word: str, shell: str = POSIX) -> str:
    """`word` as one argument for `shell`, read back exactly: POSIX single quotes (shlex.quote's form), or
    PowerShell's single-quoted string, where nothing expands and a quote is doubled. PowerShell reads a bare
    `--` as the end of its own parameters and may drop it (a `.ps1` wrapper always does), so there it is
    quoted too."""
    if shell == POWERSHELL and word == END_OF_OPTIONS:
        return "'--'"
    if word and _PLAIN[shell].fullmatch(word) and not any(ch in _NEEDS_QUOTES for ch in word):
        return word
    if shell == POWERSHELL:
        return "'" + "".join(ch * 2 if ch in _POWERSHELL_SINGLE_QUOTES else ch for ch in word) + "'"
    return "'" + word.replace("'", "'\"'\"'") + "'"


@dataclass(frozen=True)
class Spelling:
    """How to write commands for one environment: its installer's kind (the report's value) and interpreter,
    the shell, and what the installer's commands need beyond the interpreter (`Installer.context`)."""

    kind: str
    python: str
    shell: str = POSIX
    context: tuple[tuple[str, str], ...] = ()

    @property
    def installer(self) -> Installer:
        return installers.named(self.kind)

    def given(self, key: str) -> Optional[str]:
        return next((value for name, value in self.context if name == key), None)

    def quote(self, word: str) -> str:
        return quote(word, self.shell)

    def words(self, words: Sequence[str]) -> str:
        return " ".join(self.quote(w) for w in words)

    def interpreter(self) -> str:
        """The target Python as the first word of a line (PowerShell runs a quoted path only after `&`)."""
        quoted = self.quote(self.python)
        return f"& {quoted}" if self.shell == POWERSHELL and quoted != self.python else quoted

    @property
    def pip(self) -> str:
        return f"{self.interpreter()} -m pip"


class RefusedWord(ValueError):
    """A package word that is no plain requirement: it is never passed to an installer nor written in a plan."""


# PEP 508's name (https://packaging.python.org/en/latest/specifications/name-normalization/), and the only
# characters a plain requirement needs: a name, [extras], version clauses (<>=!~ , .* and a local +label).
_NAME = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?", re.ASCII)
_REQUIREMENT_CHARACTERS = re.compile(r"[A-Za-z0-9._\-\[\],<>=!~*+]+", re.ASCII)


def refusal(action: Action, word: str) -> Optional[str]:
    """Why `word` may not be a package argument of `action` (None: it may). An install takes a PEP 508
    requirement of a name, extras and PEP 440 version clauses (no URL, marker or `===`); a reinstall and a
    metadata removal `name==version`, the version PEP 440's; an uninstall a name."""
    if action is Action.UNINSTALL:
        return None if _NAME.fullmatch(word) else "not a distribution name (PEP 508)"
    if action in (Action.REINSTALL, Action.REMOVE_METADATA):
        name, equals, version = word.partition("==")
        if not equals or not _NAME.fullmatch(name):
            return "not name==version with a distribution name (PEP 508)"
        return None if _pep440(version) else "the version is not a PEP 440 version"
    if action is not Action.INSTALL:
        return None
    if not _REQUIREMENT_CHARACTERS.fullmatch(word):
        return "not a plain requirement (PEP 508): it holds characters no name, extra or version clause has"
    try:
        requirement = Requirement(word)
    except InvalidRequirement:
        return "not a requirement (PEP 508)"
    for clause in requirement.specifier:
        version = clause.version[:-2] if clause.version.endswith(".*") and clause.operator in ("==", "!=") \
            else clause.version
        if clause.operator == "===" or not _pep440(version):
            return f"{clause} is not a PEP 440 version clause"
    return None


def _pep440(text: str) -> bool:
    try:
        Version(text)
    except InvalidVersion:
        return False
    return True


def _checked(action: Action, packages: Sequence[str]) -> list[str]:
    for word in packages:
        why = refusal(action, word)
        if why is not None:
            raise RefusedWord(f"{word!r}: {why}")
    return list(packages)


# Removes the metadata directory (or egg-info file) of one distribution and version that has neither RECORD
# nor installed-files.txt: what pip needs before it can install over it ("Cannot uninstall ... no RECORD
# file was found"; "It is a distutils installed project"), and what uv leaves behind when it goes ahead.
REMOVE_METADATA_SCRIPT = (
    'import importlib.metadata as m,os,re,shutil,sys;n,v=sys.argv[1:3];'
    '[(shutil.rmtree(p) if os.path.isdir(p) else os.remove(p),print("removed",p)) for d in m.distributions() '
    'for p in [str(getattr(d,"_path",""))] if p and re.sub("[-_.]+","-",d.metadata["Name"] or "").lower()==n '
    'and d.version==v and d.read_text("RECORD") is None and d.read_text("installed-files.txt") is None]')


def argv(spelling: Spelling, action: Action, packages: Sequence[str] = (), *, no_deps: bool = False,
         pre: bool = False, manager: Optional[str] = None, prefix: Optional[str] = None,
         missing: bool = False) -> list[str]:
    """An installer step as the argument vector `tfdoctor fix` runs (no shell in between): the words checked
    here, the command the environment's installer's (tfdoctor/environment/installers/); Unspellable where it
    has none for the step. `manager`: the installer whose records say it installed the reinstalled pins."""
    s = spelling
    installer = s.installer
    if action is Action.REMOVE_METADATA:
        # the environment's own interpreter finds the metadata (so it runs on `tfdoctor fix`'s clone too); after
        # `-c CODE` Python reads no option: every word is the script's
        pins = _checked(action, packages)
        return [s.python, "-c", REMOVE_METADATA_SCRIPT, *(word for pin in pins for word in pin.split("==", 1))]
    if action is Action.UPGRADE_INSTALLER:
        return installer.upgrade_pip(s, missing=missing)
    if action is Action.UNINSTALL:
        return installer.uninstall(s, _checked(action, packages))
    if action is Action.REINSTALL:
        owner = installers.named(manager) if manager else None
        return installer.reinstall(s, _checked(action, packages), owner=owner, prefix=prefix)
    if action is Action.INSTALL:
        return installer.install(s, _checked(action, packages), no_deps=no_deps, pre=pre)
    raise ValueError(f"{action.value} is not an installer step")


def command(spelling: Spelling, action: Action, packages: Sequence[str] = (), *, no_deps: bool = False,
            pre: bool = False, manager: Optional[str] = None, prefix: Optional[str] = None,
            variable: Optional[str] = None, value: Optional[str] = None, path: Optional[str] = None,
            new_path: Optional[str] = None, missing: bool = False) -> str:
    """One step as one command line for the user's shell."""
    s = spelling
    if action is Action.SET_ENV:
        if s.shell == POWERSHELL:
            return f"$env:{variable} = {s.quote(value) if value else chr(34) * 2}"
        return f"export {variable}={s.quote(value) if value else chr(39) * 2}"
    if action is Action.UNSET_ENV:
        return f"Remove-Item Env:{variable}" if s.shell == POWERSHELL else f"unset {variable}"
    if action is Action.RENAME:
        if s.shell == POWERSHELL:
            return f"Move-Item -LiteralPath {s.quote(path or '')} -Destination {s.quote(new_path or '')}"
        return f"mv -- {s.quote(path or '')} {s.quote(new_path or '')}"
    words = argv(s, action, packages, no_deps=no_deps, pre=pre, manager=manager, prefix=prefix, missing=missing)
    first = s.interpreter() if words[0] == s.python else words[0]
    return " ".join([first, *(s.quote(w) for w in words[1:])])


def spelling_for(facts: "Facts") -> Spelling:
    """The spelling of the diagnosed environment: its installer, its interpreter, the host's shell."""
    from tfdoctor.environment.pip import installer_for
    from tfdoctor.facts import host_system, section

    installer = installer_for(facts)
    context = installers.named(installer.kind).context(section(facts, "python"))
    return Spelling(installer.kind, installer.python, POWERSHELL if host_system(facts) == "Windows" else POSIX, context)


def fresh_environment(spelling: Spelling, python_version: str = "3.12") -> tuple[str, ...]:
    """Commands that create a clean environment of the same kind and activate it, in the plan's shell."""
    return spelling.installer.fresh_environment(spelling.shell, python_version)


def native_arm64_environment(kind: str, python_version: str, installer_url: str = "") -> tuple[str, ...]:
    """Commands that create and activate a native arm64 environment on a Mac and confirm it is arm64, for the
    installer of report value `kind` (conda's: Miniforge from `installer_url`)."""
    return installers.named(kind).native_arm64(python_version, installer_url)


def clone_argv(kind: str, tool: str, source: str, target: str) -> list[str]:
    """An environment copied by its installer's own `tool` (conda create --clone), for `tfdoctor fix` to
    prove its plan on, offline."""
    return installers.named(kind).clone_argv(tool, source, target)


def stand_in_venv_argv(python: str, target: str) -> list[str]:
    """A venv that sees a system Python's packages, where the plan's installs land in front of them."""
    return [python, "-m", "venv", "--system-site-packages", target]
