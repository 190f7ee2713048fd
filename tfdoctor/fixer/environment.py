"""The environment `tfdoctor fix` works on: where it lives, what is installed in it (its freeze), and
a throwaway clone of it to prove a plan on.

A venv (pip's or uv's) is cloned as a hard-link copy: pip and uv replace a file by unlinking it and
writing a new one, and delete by unlinking, so nothing they do to the clone reaches the original's
files. The few files installers edit in place (`*.pth`, conda's records) are copied, not linked.
A conda environment is cloned by conda itself (`conda create --clone`), which appends to its history
in place.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Optional

from tfdoctor.environment import installers
from tfdoctor.environment.installers import venv
from tfdoctor.environment.spell import clone_argv, stand_in_venv_argv
from tfdoctor.processes.commands import run_command

STATE_DIR = ".tfdoctor"  # inside the environment's prefix: rollback snapshots (never cloned, never snapshotted)
CLONE_MARK = ".tfdoctor-verify-"  # a throwaway clone is `.<name>.tfdoctor-verify-<8 hex>` beside the environment
_HEX = frozenset("0123456789abcdef")


def is_fixer_clone(name: str) -> bool:
    """A directory named as `tfdoctor fix` names its throwaway clones (scan never lists one). String
    operations, not a pattern: a name is untrusted, and a regular expression for it backtracks on long ones."""
    head, mark, tail = name.rpartition(CLONE_MARK)
    return bool(mark) and len(head) >= 2 and head[0] == "." and len(tail) == 8 and set(tail) <= _HEX


def leftover_clones(prefix: str) -> list[Path]:
    """Clones of the environment at `prefix` that an earlier, interrupted fix left beside it: named for
    it and owned by this user. Called under the environment's lock, so no running fix owns one."""
    source = Path(prefix)
    found = []
    try:
        siblings = list(source.parent.iterdir())
    except OSError:
        return []
    for path in siblings:
        if path.name.startswith(f".{source.name}{CLONE_MARK}") and is_fixer_clone(path.name):
            try:
                owned = os.name != "posix" or path.lstat().st_uid == os.getuid()
            except OSError:
                continue
            if owned and not path.is_symlink():
                found.append(path)
    return sorted(found)
FREEZE_TIMEOUT_S = 60.0
CLONE_TIMEOUT_S = 1800.0

# Every distribution the environment's own sys.path shows (-I: no PYTHONPATH, no user site, no working
# directory), each copy once: what `pip freeze --all` lists, without needing pip (a uv venv has none).
_FREEZE = r"""
import re, sys
try:
    from importlib import metadata
except ImportError:
    import importlib_metadata as metadata
rows = []
for dist in metadata.distributions():
    name = dist.metadata["Name"]
    if name:
        rows.append(re.sub(r"[-_.]+", "-", name).lower() + "==" + str(dist.version))
answer = {"prefix": sys.prefix, "freeze": sorted(rows)}
"""
# Appended to every JSON child: the answer goes to the file named by the last argument, never to stdout,
# which a sitecustomize or a .pth line may write to; a file has no size cap either.
_ANSWER = "\nimport json as _json, sys as _sys\nwith open(_sys.argv[-1], 'w', encoding='utf-8') as _out:\n    _json.dump(answer, _out)\n"


class FixError(Exception):
    """`tfdoctor fix` cannot go on; the message is one line for the user."""


@dataclass(frozen=True)
class Environment:
    python: str  # the interpreter, inside `prefix` for venvs and conda environments
    prefix: str
    kind: str  # the registered installer's report value (tfdoctor/environment/installers/)
    site_packages: tuple[str, ...] = ()

    @classmethod
    def from_facts(cls, facts: Mapping[str, Any]) -> "Environment":
        from tfdoctor.environment.pip import installer_for

        python = facts.get("python") or {}
        return cls(str(python.get("executable") or ""), str(python.get("prefix") or ""), installer_for(facts).kind,
                   tuple(str(p) for p in python.get("site_packages") or ()))

    @property
    def installer(self) -> installers.Installer:
        return installers.named(self.kind)

    @property
    def isolated(self) -> bool:
        """An environment of its own (a venv, uv's or conda's), not the system's or Homebrew's Python."""
        return self.installer.isolated

    @property
    def state_dir(self) -> Path:
        return Path(self.prefix) / STATE_DIR

    def python_in(self, prefix: str) -> str:
        """This environment's interpreter path, moved into another prefix (its clone)."""
        relative = os.path.relpath(self.python, self.prefix)
        if relative.startswith(os.pardir):
            raise FixError(f"the interpreter {self.python} is not inside its environment {self.prefix}: cannot clone it")
        return os.path.join(prefix, relative)


def child_json(python: str, code: str, timeout: float = FREEZE_TIMEOUT_S, registered: bool = True) -> Any:
    """Run `code` (which sets `answer`) in the interpreter and return `answer`, passed back through a
    file. `registered=False` (the restore): the child is not listed in the process-wide children
    registry, which an interrupt closes, so an interrupt cannot kill it; it runs in a session of its own,
    out of the terminal's reach, and the caller holds the signals meanwhile. Either way it is killed with
    whatever it started at the timeout, and the wait ends when it does, not when a descendant that escaped
    its session lets go of its pipes (processes/commands.py run_process)."""
    import tempfile

    from tfdoctor.processes.commands import run_process

    handle, answer_path = tempfile.mkstemp(prefix="tfdoctor-answer-", suffix=".json")
    os.close(handle)
    argv = [python, "-I", "-c", code + _ANSWER, answer_path]
    try:
        if registered:
            result = run_command(argv, timeout=timeout)
            status, detail = result["status"], (result["stderr"] or result["stdout"])
        else:
            try:
                done = run_process(argv, timeout, registered=False)
                status = "timed_out" if done.timed_out else "ok" if done.returncode == 0 else "failed"
                detail = done.stderr.decode("utf-8", "replace")
            except OSError as exc:
                status, detail = "error", str(exc)
        if status != "ok":
            raise FixError(f"{python} could not answer: {status} {detail.strip().splitlines()[-1:] or ''}")
        try:
            with open(answer_path, encoding="utf-8") as answer:
                return json.load(answer)
        except (OSError, ValueError) as exc:
            raise FixError(f"{python} gave no readable answer: {exc}") from exc
    finally:
        with contextlib.suppress(OSError):
            os.unlink(answer_path)


def freeze(python: str, registered: bool = True) -> list[str]:
    """Sorted 'name==version' of every distribution the interpreter sees on its own sys.path."""
    try:
        return list(child_json(python, _FREEZE, registered=registered)["freeze"])
    except FixError as exc:
        raise FixError(f"cannot list the distributions of {python}: {exc}") from exc


def prefix_of(python: str) -> str:
    try:
        return str(child_json(python, "import sys\nanswer = sys.prefix\n"))
    except FixError as exc:
        raise FixError(f"{python} does not start as a Python interpreter (give the python of the environment): {exc}") from exc


def link_tree(source: Path, target: Path) -> None:
    """A copy of `source` made of hard links (copies where linking fails: another filesystem, or a
    file an installer edits in place). Symlinks stay symlinks. The state directory is left out."""

    def link_or_copy(src: str, dst: str) -> str:
        if src.endswith(".pth") or os.sep + "conda-meta" + os.sep in src:
            return shutil.copy2(src, dst)
        try:
            os.link(src, dst)
        except OSError:
            shutil.copy2(src, dst)
        return dst

    shutil.copytree(source, target, symlinks=True, copy_function=link_or_copy,
                    ignore=lambda directory, names: [STATE_DIR] if Path(directory) == source else [])


def clone(environment: Environment) -> Environment:
    """A throwaway copy of the environment beside it, to run the plan on first. A system Python's prefix
    (/usr, a framework) is never copied: its stand-in is a temporary venv that sees its packages
    (--system-site-packages), where the plan's installs land in front of them. An installer with a copy of
    its own (conda's `create --clone`) makes it; one whose environments `fix` leaves alone (pixi's: its lock
    file rules them) gets none."""
    installer = environment.installer
    if installer.fix_refusal:
        raise FixError(f"cannot verify the plan on a copy: {installer.fix_refusal}")
    if not environment.isolated:
        return _stand_in(environment)
    source = Path(environment.prefix)
    target = source.parent / f".{source.name}{CLONE_MARK}{uuid.uuid4().hex[:8]}"
    if installer.clone_tools:
        tool = next((found for found in map(shutil.which, installer.clone_tools) if found), None)
        if tool is None:
            raise FixError(f"cannot verify the plan: {' or '.join(installer.clone_tools)} is not on PATH to clone this "
                           f"{installer.label}")
        result = run_command(clone_argv(environment.kind, tool, str(source), str(target)), timeout=CLONE_TIMEOUT_S)
        if result["status"] != "ok":
            remove(target)
            raise FixError(f"{Path(tool).name} could not clone the environment: {result['stderr'].strip()[-300:]}")
    else:
        try:
            link_tree(source, target)
        except OSError as exc:
            remove(target)
            raise FixError(f"cannot make a throwaway copy of {source} beside it: {exc}") from exc
    copy = Environment(environment.python_in(str(target)), str(target), environment.kind)
    try:
        actual = prefix_of(copy.python)
    except FixError:
        remove(target)
        raise
    if os.path.realpath(actual) != os.path.realpath(target):
        remove(target)  # the copy's interpreter would install into the original: never run the plan there
        raise FixError(f"the copy's interpreter runs in {actual}, not in the copy: cannot verify the plan safely")
    return copy


def _stand_in(environment: Environment) -> Environment:
    import tempfile

    target = Path(tempfile.mkdtemp(prefix="tfdoctor-verify-"))
    result = run_command(stand_in_venv_argv(environment.python, str(target)),
                         timeout=CLONE_TIMEOUT_S)
    if result["status"] != "ok":
        remove(target)
        raise FixError(f"cannot make a stand-in environment for {environment.python}: "
                       f"{(result['stderr'] or result['stdout']).strip()[-300:]}")
    python = target / ("Scripts" if os.name == "nt" else "bin") / ("python.exe" if os.name == "nt" else "python")
    return Environment(str(python), str(target), venv.INSTALLER.kind)


def remove(path: Path | str) -> None:
    """Remove a tree tfdoctor made (a clone, a restored snapshot's leftovers); never follows links."""
    path = Path(path)
    if path.is_symlink() or path.is_file():
        path.unlink(missing_ok=True)
    elif path.exists():
        shutil.rmtree(path, ignore_errors=True)


def run_step(argv: list[str], timeout: float, env: Optional[Mapping[str, str]] = None) -> dict[str, Any]:
    """One plan step, no shell, no standard input, the installer told not to ask anything; in a session
    of its own, killed with everything it started on a timeout or an interrupt (run_process)."""
    from tfdoctor.processes.commands import run_process

    environ = dict(env if env is not None else os.environ)
    environ.update(PIP_NO_INPUT="1", PIP_DISABLE_PIP_VERSION_CHECK="1")
    try:
        finished = run_process(argv, timeout, environ)
    except OSError as exc:
        return {"status": "error", "exit_code": None, "stdout": str(exc), "stderr": ""}
    status = "timed_out" if finished.timed_out else "ok" if finished.returncode == 0 else "failed"
    return {"status": status, "exit_code": finished.returncode,
            "stdout": finished.stdout.decode("utf-8", "replace"), "stderr": finished.stderr.decode("utf-8", "replace")}


def installer_available(argv: list[str]) -> Optional[str]:
    """None when the step's program exists (uv, conda must be on PATH), else why not."""
    program = argv[0]
    if os.sep in program:
        return None if os.access(program, os.X_OK) else f"{program} is not executable"
    return None if shutil.which(program) else f"{program} is not on PATH"

