"""Finding Python environments: conda's list, pyenv's versions, pipx and uv tool venvs, and every
directory holding a `pyvenv.cfg` (or a conda environment's `conda-meta`) a few levels under the paths
given (default: the working directory and the home directory).

Where each tool keeps them:
- conda: `conda info --envs --json` prints {"envs": [prefix, ...]}
  (https://github.com/conda/conda/pull/15353, https://github.com/conda/conda/issues/6797); without a
  conda to ask, `~/.conda/environments.txt`, where conda records every environment it creates, one
  prefix a line.
- pyenv: `$PYENV_ROOT/versions/*` (default `~/.pyenv`), pyenv-virtualenv's `versions/*/envs/*` too
  (https://github.com/pyenv/pyenv#understanding-python-version-selection).
- pipx: `$PIPX_HOME/venvs/*`, else the default and fallback homes its documentation lists
  (https://pipx.pypa.io/latest/how-to/configure-paths/).
- uv: `$UV_TOOL_DIR/*`, else `$XDG_DATA_HOME/uv/tools/*` or `~/.local/share/uv/tools/*`
  (https://docs.astral.sh/uv/reference/storage/).

The walk never follows a symbolic link to a directory, never enters an environment it found (its
site-packages holds no other environment), and skips caches, VCS metadata, node_modules and
site-packages, so a home directory takes a fraction of a second. An environment found twice (a conda
env inside a walked directory) is listed once, under every way it was found.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Iterator, Mapping, Sequence

DEFAULT_DEPTH = 4  # ~/code/project/.venv is 3 levels under home; one more for an organisation folder
CONDA_TIMEOUT_S = 30.0
# Directories the walk never enters: caches (hidden or not), version control, JavaScript and Python
# package trees, the desktop's trash.
SKIPPED = frozenset({"node_modules", "site-packages", "dist-packages", "__pycache__", ".git", ".hg", ".svn",
                     ".npm", ".cargo", ".rustup", ".gradle", ".m2", ".vscode-server", ".Trash", "Trash",
                     ".ipynb_checkpoints"})
ENVIRONMENT_MARKERS = ("pyvenv.cfg", "conda-meta")  # a venv; a conda environment
INTERPRETERS = ("bin/python", "bin/python3", "python.exe", "Scripts/python.exe")


@dataclass(frozen=True)
class FoundEnvironment:
    prefix: str  # the environment's directory (as found, not resolved: the name people know)
    python: str  # its interpreter; it may be missing or broken (the diagnosis says so)
    kinds: tuple[str, ...] = field(default=())  # how it was found: conda, pyenv, venv, pipx, uv-tool, given


@dataclass(frozen=True)
class Places:
    """Where to look. `roots` are walked for pyvenv.cfg; `managers` adds conda, pyenv, pipx and uv."""

    roots: tuple[Path, ...]
    home: Path
    environ: Mapping[str, str]
    managers: bool = True
    depth: int = DEFAULT_DEPTH

    @classmethod
    def default(cls, paths: Sequence[str] = (), depth: int = DEFAULT_DEPTH) -> "Places":
        """The paths given, and nothing else; without paths, the working and home directories and
        every environment manager's list."""
        home = Path.home()
        roots = tuple(dict.fromkeys(Path(p).expanduser() for p in paths)) or tuple(dict.fromkeys((Path.cwd(), home)))
        return cls(roots=roots, home=home, environ=dict(os.environ), managers=not paths, depth=depth)


def interpreter(prefix: Path) -> Path:
    """The environment's python: the first that exists of bin/python, bin/python3 (POSIX), python.exe,
    Scripts/python.exe (Windows); bin/python when none does (the diagnosis then says it is missing)."""
    for candidate in INTERPRETERS:
        path = prefix / candidate
        if os.path.lexists(path):
            return path
    return prefix / ("python.exe" if sys.platform == "win32" else "bin/python")


def is_environment(directory: Path) -> bool:
    return any(os.path.lexists(directory / marker) for marker in ENVIRONMENT_MARKERS)


def skipped(name: str) -> bool:
    """Not walked: caches, and `tfdoctor fix`'s throwaway clones (a fix running now, or one interrupted
    before it removed its clone: the next fix removes it)."""
    from tfdoctor.fixer.environment import is_fixer_clone

    bare = name.lstrip(".").lower()
    return name in SKIPPED or bare.endswith(("cache", "caches")) or is_fixer_clone(name)


def walk(root: Path, depth: int) -> Iterator[Path]:
    """Environments at most `depth` directories below `root` (root itself counts as level 0)."""
    if root.is_dir() and is_environment(root):
        yield root
        return
    level = [root]
    for _ in range(depth):
        below = []
        for directory in level:
            try:
                with os.scandir(directory) as entries:
                    children = sorted((e for e in entries if not skipped(e.name) and e.is_dir(follow_symlinks=False)),
                                      key=lambda e: e.name)
            except OSError:  # unreadable (permissions), vanished meanwhile
                continue
            for entry in children:
                path = Path(entry.path)
                if is_environment(path):
                    yield path
                else:
                    below.append(path)
        level = below


def conda_environments(places: Places) -> list[Path]:
    """conda's own list; without conda on PATH (or when it fails), ~/.conda/environments.txt."""
    from tfdoctor.processes.commands import run_command

    conda = places.environ.get("CONDA_EXE") or "conda"
    answer = run_command([conda, "info", "--envs", "--json"], CONDA_TIMEOUT_S, env=places.environ)
    if answer["status"] == "ok":
        try:
            envs = json.loads(answer["stdout"]).get("envs")
        except (ValueError, AttributeError):
            envs = None
        if isinstance(envs, list):
            return [Path(p) for p in envs if isinstance(p, str) and p]
    try:
        lines = (places.home / ".conda" / "environments.txt").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    return [Path(line.strip()) for line in lines.splitlines() if line.strip() and not line.startswith("#")]


def pyenv_versions(places: Places) -> list[Path]:
    root = Path(places.environ.get("PYENV_ROOT") or places.home / ".pyenv") / "versions"
    found = []
    for version in _children(root):
        found.append(version)
        found += _children(version / "envs")  # pyenv-virtualenv
    return found


def pipx_venvs(places: Places) -> list[Path]:
    if places.environ.get("PIPX_HOME"):
        homes = [Path(places.environ["PIPX_HOME"])]
    else:
        home = places.home
        homes = [home / ".local/share/pipx", home / ".local/pipx", home / "Library/Application Support/pipx",
                 home / "pipx", home / "AppData/Local/pipx"]
    return [venv for pipx_home in homes for venv in _children(pipx_home / "venvs")]


def uv_tools(places: Places) -> list[Path]:
    environ = places.environ
    if environ.get("UV_TOOL_DIR"):
        roots = [Path(environ["UV_TOOL_DIR"])]
    else:
        data = Path(environ["XDG_DATA_HOME"]) if environ.get("XDG_DATA_HOME") else places.home / ".local/share"
        roots = [data / "uv/tools"]
        if environ.get("APPDATA"):
            roots.append(Path(environ["APPDATA"]) / "uv/data/tools")
    return [tool for root in roots for tool in _children(root)]


def _children(directory: Path) -> list[Path]:
    try:
        return sorted(p for p in directory.iterdir() if p.is_dir() and not p.name.startswith("."))
    except OSError:
        return []


def find_environments(places: Places) -> list[FoundEnvironment]:
    """Every environment found, once each (by resolved path), in the order found."""
    sources: list[tuple[str, Iterable[Path]]] = []
    for root in places.roots:
        if root.is_file():  # an interpreter given by path
            sources.append(("given", [root]))
    if places.managers:
        sources += [("conda", conda_environments(places)), ("pyenv", pyenv_versions(places)),
                    ("pipx", pipx_venvs(places)), ("uv-tool", uv_tools(places))]
    sources += [("venv", walk(root, places.depth)) for root in places.roots if not root.is_file()]
    found: dict[str, tuple[Path, Path, list[str]]] = {}
    for kind, paths in sources:
        for path in paths:
            if kind != "given" and skipped(path.name):  # conda lists a clone it made (conda create --clone)
                continue
            python = path if kind == "given" else interpreter(path)
            key = os.path.realpath(path)
            kind_here = "conda" if kind == "venv" and os.path.lexists(path / "conda-meta") else kind
            if key in found:
                kinds = found[key][2]
                if kind_here not in kinds:
                    kinds.append(kind_here)
            else:
                found[key] = (path, python, [kind_here])
    return [FoundEnvironment(str(prefix), str(python), tuple(kinds)) for prefix, python, kinds in found.values()]

