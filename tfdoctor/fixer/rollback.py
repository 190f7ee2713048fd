"""The way back: before `tfdoctor fix` changes an environment it writes a rollback record (the freeze
and the plan) and a snapshot of the environment's files, and `tfdoctor fix --undo` puts them back.

The snapshot is a hard-link copy (no disk used until an installer replaces a file, then the old file
lives on in the snapshot only), so the way back is exact, offline and fast: no index is asked for
the old releases. It lives in the environment's own prefix (`<prefix>/.tfdoctor/rollback/<stamp>/`),
or, for a system Python whose site-packages tfdoctor may not write beside, in the user's cache dir.
The newest KEEP records are kept; older ones are removed when a new one is written.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import re
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from tfdoctor.fixer.environment import STATE_DIR, Environment, FixError, freeze, link_tree, remove

KEEP = 3
RECORD = "record.json"


def _user_cache() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "tfdoctor" / "rollback"


def _roots(environment: Environment) -> list[str]:
    """What is snapshotted: a whole environment of its own, or a system Python's site-packages."""
    if environment.isolated:
        return [environment.prefix]
    return [p for p in environment.site_packages if os.path.isdir(p)]


def _home(environment: Environment) -> Path:
    return environment.state_dir / "rollback" if environment.isolated else _user_cache()


@dataclass(frozen=True)
class Rollback:
    directory: Path
    record: dict[str, Any]

    @property
    def freeze(self) -> list[str]:
        return list(self.record.get("freeze") or ())


def create(environment: Environment, plan: dict[str, Any]) -> Rollback:
    """Write the record and the snapshot; raise FixError (nothing changed) when it cannot."""
    stamp = _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%dT%H%M%S.%f") + "-" + uuid.uuid4().hex[:6]  # sorts by time
    directory = _home(environment) / stamp
    roots = _roots(environment)
    record = {"version": 1, "created_at": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
              "python": environment.python, "prefix": environment.prefix, "kind": environment.kind,
              "roots": roots, "freeze": freeze(environment.python), "plan": plan}
    try:
        directory.mkdir(parents=True)
        for index, root in enumerate(roots):
            link_tree(Path(root), directory / "tree" / str(index))
        (directory / RECORD).write_text(json.dumps(record, indent=1), encoding="utf-8")
    except OSError as exc:
        remove(directory)
        raise FixError(f"cannot write the rollback snapshot in {directory}: {exc}") from exc
    _prune(directory.parent, keep=directory)
    return Rollback(directory, record)


def _prune(home: Path, keep: Path) -> None:
    records = sorted((d for d in home.iterdir() if (d / RECORD).is_file()), key=lambda d: d.name)
    for old in records[:-KEEP]:
        if old != keep:
            remove(old)


_STAMP = re.compile(r"\d{8}T\d{6}\.\d{6}-[0-9a-f]{6}")
REPORTED = "undeletable.json"  # the leftovers already reported as undeletable: each is said once


def leftovers(environment: Environment) -> list[Path]:
    """Snapshots no record owns: a snapshot cut short before its record was written, the rest of one whose
    restore was verified (its record goes first). Named as `create` names them, owned by this user.
    Called under the environment's lock: no running fix is writing one."""
    home = _home(environment)
    if not home.is_dir():
        return []
    found = []
    for directory in home.iterdir():
        if _STAMP.fullmatch(directory.name) and not (directory / RECORD).exists() and not directory.is_symlink():
            try:
                owned = os.name != "posix" or directory.lstat().st_uid == os.getuid()
            except OSError:
                continue
            if owned:
                found.append(directory)
    return sorted(found)


def _size(path: Path) -> int:
    total = 0
    for directory, _, files in os.walk(path):
        for name in files:
            try:
                total += os.lstat(os.path.join(directory, name)).st_size
            except OSError:
                pass
    return total


def sweep(environment: Environment, paths: list[Path]) -> list[str]:
    """Remove `paths` (leftovers of earlier runs); for each that cannot be removed (immutable files, no
    permission), one message with its size and a command to remove it, the first time only."""
    home = _home(environment)
    try:
        reported = set(json.loads((home / REPORTED).read_text(encoding="utf-8")))
    except (OSError, ValueError, TypeError):
        reported = set()
    messages = []
    for path in paths:
        remove(path)
        if not os.path.lexists(path) or str(path) in reported:
            continue
        from tfdoctor.environment.spell import quote

        size = _size(path)
        messages.append(f"{path} ({size / 1e6:.1f} MB), left by an earlier tfdoctor fix, cannot be removed; remove it "
                        f"with: sudo chattr -R -i {quote(str(path))}; sudo rm -rf {quote(str(path))}")
        reported.add(str(path))
    if messages:
        try:
            home.mkdir(parents=True, exist_ok=True)
            (home / REPORTED).write_text(json.dumps(sorted(reported)), encoding="utf-8")
        except OSError:
            pass
    return messages


def newest(environment: Environment) -> Optional[Rollback]:
    """The last rollback written for this interpreter, or None."""
    home = _home(environment)
    if not home.is_dir():
        return None
    for directory in sorted((d for d in home.iterdir() if (d / RECORD).is_file()), key=lambda d: d.name, reverse=True):
        try:
            record = json.loads((directory / RECORD).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        same_environment = (os.path.realpath(str(record.get("prefix"))) == os.path.realpath(environment.prefix)
                            if environment.isolated else record.get("python") == environment.python)
        if same_environment:
            return Rollback(directory, record)
    return None


JOURNAL = "journal.jsonl"


def _journal(rollback: Rollback) -> list[dict[str, Any]]:
    """The restore's journal so far (a line cut by a crash is the last and is ignored)."""
    path = rollback.directory / JOURNAL
    entries = []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        return []
    for line in lines:
        try:
            entries.append(json.loads(line))
        except ValueError:
            break
    return entries


def _write(rollback: Rollback, entry: dict[str, Any]) -> None:
    """One journal line, on disk before the move it announces."""
    with open(rollback.directory / JOURNAL, "a", encoding="utf-8") as journal:
        journal.write(json.dumps(entry) + "\n")
        journal.flush()
        os.fsync(journal.fileno())


def _move(rollback: Rollback, source: Path, target: Path) -> None:
    _write(rollback, {"move": str(source), "to": str(target)})
    os.rename(source, target)  # both inside the environment's prefix: one filesystem, atomic


def interrupted(environment: Environment) -> list[Rollback]:
    """Restores of this environment that began (a journal) and were not verified: oldest first."""
    home = _home(environment)
    if not home.is_dir():
        return []
    found = []
    for directory in sorted(home.iterdir(), key=lambda d: d.name):
        if (directory / JOURNAL).is_file() and (directory / RECORD).is_file():
            try:
                record = json.loads((directory / RECORD).read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue
            if os.path.realpath(str(record.get("prefix"))) == os.path.realpath(environment.prefix) or not environment.isolated:
                found.append(Rollback(directory, record))
    return found


@dataclass(frozen=True)
class Restored:
    freeze: list[str]  # the distributions afterwards
    verified: bool  # they are the record's: the record is gone; else it stays, and --undo can try again


def restore(rollback: Rollback) -> Restored:
    """Put the snapshot back in place of every root's current files, as a transaction that can be
    repeated: a journal in the record's directory says, before each move, what moves where, and in
    which phase the restore is ('aside': the current entries move to replaced/, 'back': the snapshot's
    move in). Run again after any interruption (even SIGKILL), it goes on from where the journal
    stopped and converges on the snapshot; it never moves a restored environment aside again. The
    record is removed only once the environment's freeze equals the record's. The caller holds the
    signals; the freeze here runs outside the children registry an interrupt closes."""
    roots = list(rollback.record.get("roots") or ())
    journal = _journal(rollback)
    phases = [entry["phase"] for entry in journal if "phase" in entry]
    if "back" not in phases:
        if not phases:
            for index in range(len(roots)):
                snapshot = rollback.directory / "tree" / str(index)
                if not snapshot.is_dir():
                    raise FixError(f"the rollback snapshot {snapshot} is missing: cannot undo")
            _write(rollback, {"phase": "aside"})
        for index, root in enumerate(roots):
            trash = rollback.directory / "replaced" / str(index)
            trash.mkdir(parents=True, exist_ok=True)
            for entry in sorted(Path(root).iterdir()):
                if entry.name != STATE_DIR:
                    target = trash / entry.name
                    while target.exists() or target.is_symlink():  # a name left by an earlier, undone attempt
                        target = target.with_name(target.name + "~")
                    _move(rollback, entry, target)
        _write(rollback, {"phase": "back"})
    for index, root in enumerate(roots):
        snapshot = rollback.directory / "tree" / str(index)
        if snapshot.is_dir():
            for entry in sorted(snapshot.iterdir()):
                _move(rollback, entry, Path(root) / entry.name)
    after = freeze(str(rollback.record["python"]), registered=False)
    verified = sorted(after) == sorted(rollback.freeze)
    if verified:
        _write(rollback, {"phase": "verified"})
        (rollback.directory / RECORD).unlink()  # first: without its record the rest is a leftover, pruned later
        remove(rollback.directory)
    return Restored(after, verified)
