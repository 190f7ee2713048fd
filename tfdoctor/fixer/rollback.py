"""The way back: before `tfdoctor fix` changes an environment it writes a rollback record (the freeze
and the plan) and a snapshot of the environment's files, and `tfdoctor fix --undo` puts them back.

The snapshot is a hard-link copy (no disk used until an installer replaces a file, then the old file
lives on in the snapshot only), so the way back is exact, offline and fast: no index is asked for
the old releases. It lives in the environment's own prefix (`<prefix>/.tfdoctor/rollback/<stamp>/`),
or, for a system Python whose site-packages tfdoctor may not write beside, in the user's cache dir, one
directory per interpreter. The newest KEEP records of an environment are kept; older ones of that same
environment are removed when a new one is written (never another interpreter's).

A record is data found on disk, so it is trusted for nothing it says (issue 35):
- it belongs to one environment: its prefix (and, for a system Python, its interpreter) is this one's, and
  this user's cache holds its seal (`rollback-seals/`, out of reach of whoever can write into the environment):
  the sha256 of the record as written and the inode of the prefix it was made for. A record planted in the
  environment, written by another user, edited afterwards, or copied with its environment (even back to the
  same path: a copy is another directory) has none that matches, and is refused;
- what it restores is only the environment's own roots (the prefix; a system Python's site-packages as it
  reports them now), resolved, with no `..` and no link on the way; its snapshot and journal are real files
  and directories inside the record's own directory;
- it names no program: the restore checks its work with the interpreter the user passed, never the record's;
- a restore journal is used only when the seal says this user's tfdoctor began that restore, and each of its
  moves names a place inside the record's directory or the roots.
A record or journal that fails any of this is refused (Refused, one line saying why) before anything moves.
Every file here is written through own_files: never through a link planted at its name.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os
import re
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from tfdoctor.files.own_files import UnsafePath, append_private, cache_dir, private_dir, read_private, write_private
from tfdoctor.fixer.environment import STATE_DIR, Environment, FixError, freeze, link_tree, remove

KEEP = 3
RECORD = "record.json"
JOURNAL = "journal.jsonl"
REPORTED = "undeletable.json"  # the leftovers already reported as undeletable: each is said once
VERSION = 2  # 2: sealed, and its `python` is never run (1 was neither: refused)
PHASES = ("aside", "back", "verified")
_LIMIT = 64 << 20  # a record is a freeze and a plan; a journal a line per moved entry: both far below this
_STAMP = re.compile(r"\d{8}T\d{6}\.\d{6}-[0-9a-f]{6}")


class Refused(FixError):
    """A rollback record or restore journal tfdoctor will not use; the message is one line saying why."""


class _Elsewhere(Exception):
    """A record of another environment (one copied along with its environment): not this one's to use."""


def _real(path: str) -> str:
    return os.path.realpath(path)


def _key(environment: Environment) -> str:
    """One name per environment: its prefix; for a system Python (several may share one prefix, /usr) its
    interpreter too."""
    parts = [_real(environment.prefix)] if environment.isolated else [_real(environment.python), _real(environment.prefix)]
    return hashlib.sha256("\0".join(parts).encode("utf-8", "surrogateescape")).hexdigest()[:16]


def _below(environment: Environment) -> Path:
    """Where the caller's trust ends: from here down each component of a record's path is checked."""
    return Path(environment.prefix) if environment.isolated else cache_dir().parent


def _home(environment: Environment) -> Path:
    if environment.isolated:
        return environment.state_dir / "rollback"
    return cache_dir() / "rollback" / _key(environment)


def _seals(environment: Environment) -> Path:
    return cache_dir() / "rollback-seals" / _key(environment)


def _roots(environment: Environment) -> list[str]:
    """What is snapshotted: a whole environment of its own, or a system Python's site-packages."""
    if environment.isolated:
        return [environment.prefix]
    return [p for p in environment.site_packages if os.path.isdir(p)]


def _allowed_roots(environment: Environment) -> set[str]:
    return {_real(root) for root in _roots(environment)}


@dataclass(frozen=True)
class Rollback:
    directory: Path
    record: dict[str, Any]
    python: str = ""  # the interpreter the user passed: the one that checks the restore (never the record's)
    roots: tuple[str, ...] = ()  # the record's roots, checked and resolved
    seal: Optional[Path] = field(default=None, compare=False)

    @property
    def freeze(self) -> list[str]:
        return list(self.record.get("freeze") or ())


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _identity(environment: Environment) -> int:
    """What no copy of the environment keeps, even one put at the same path: its prefix directory's inode
    (not the device: an overlay filesystem, a container's, gets another one at each mount)."""
    return os.stat(_real(environment.prefix)).st_ino


def _write_seal(path: Path, environment: Environment, record: bytes) -> None:
    private_dir(path.parent, below=cache_dir().parent)
    write_private(path, json.dumps({"sha256": _digest(record), "inode": _identity(environment), "restoring": False}))


def create(environment: Environment, plan: dict[str, Any]) -> Rollback:
    """Write the record, its seal and the snapshot; raise FixError (nothing changed) when it cannot."""
    stamp = _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%dT%H%M%S.%f") + "-" + uuid.uuid4().hex[:6]  # sorts by time
    home = _home(environment)
    directory = home / stamp
    seal = _seals(environment) / f"{stamp}.json"
    roots = _roots(environment)
    record = {"version": VERSION, "created_at": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
              "python": environment.python, "prefix": environment.prefix, "kind": environment.kind,
              "roots": roots, "freeze": freeze(environment.python), "plan": plan}
    data = json.dumps(record, indent=1).encode("utf-8")
    made = False
    try:
        private_dir(home, below=_below(environment))
        os.mkdir(directory, 0o700)
        made = True
        for index, root in enumerate(roots):
            link_tree(Path(root), directory / "tree" / str(index))
        _write_seal(seal, environment, data)  # the seal first: a record without one is never used
        write_private(directory / RECORD, data)
    except OSError as exc:
        if made:
            remove(directory)
        raise FixError(f"cannot write the rollback snapshot in {directory}: {exc}") from exc
    _prune(environment, keep=directory)
    return Rollback(directory, record, environment.python, tuple(_real(root) for root in roots), seal)


def _records(home: Path) -> list[Path]:
    """The record directories `create` named in `home` (real directories holding a record), oldest first."""
    try:
        entries = list(os.scandir(home))
    except OSError:
        return []
    return sorted((Path(e.path) for e in entries if _STAMP.fullmatch(e.name) and e.is_dir(follow_symlinks=False)
                   and os.path.lexists(os.path.join(e.path, RECORD))), key=lambda d: d.name)


def _prune(environment: Environment, keep: Path) -> None:
    """This environment's sealed records beyond the newest KEEP go, with their seals; so do seals whose record
    is gone. What carries no seal of ours is not ours to remove."""
    seals = _seals(environment)
    sealed = [d for d in _records(_home(environment)) if (seals / f"{d.name}.json").is_file()]
    for old in sealed[:-KEEP]:
        if old != keep:
            _drop(old, seals / f"{old.name}.json")
    try:
        names = os.listdir(seals)
    except OSError:
        return
    for name in names:
        if name.endswith(".json") and not os.path.lexists(_home(environment) / name[:-len(".json")] / RECORD):
            _unlink(seals / name)


def _unlink(path: Path) -> None:
    try:
        path.unlink()
    except OSError:
        pass


def _drop(directory: Path, seal: Optional[Path]) -> None:
    """A record gone: first its record (without it the rest is a leftover, swept later), then its seal and the rest."""
    _unlink(directory / RECORD)
    if seal is not None:
        _unlink(seal)
    remove(directory)


def _checked_home(environment: Environment) -> Optional[Path]:
    """The environment's record directory, every component a real directory of this user's; None when absent."""
    home = _home(environment)
    try:
        return private_dir(home, below=_below(environment), make=False)
    except FileNotFoundError:
        return None
    except UnsafePath as exc:
        raise Refused(f"refused the rollback records of {environment.prefix}: {exc.strerror}; nothing was moved") from None
    except OSError as exc:
        raise Refused(f"cannot read the rollback records in {home}: {exc}") from None


def leftovers(environment: Environment) -> list[Path]:
    """Snapshots no record owns: a snapshot cut short before its record was written, the rest of one whose
    restore was verified (its record goes first). Named as `create` names them, owned by this user.
    Called under the environment's lock: no running fix is writing one."""
    home = _checked_home(environment)
    if home is None:
        return []
    found = []
    for entry in os.scandir(home):
        if _STAMP.fullmatch(entry.name) and entry.is_dir(follow_symlinks=False) \
                and not os.path.lexists(os.path.join(entry.path, RECORD)):
            try:
                owned = os.name != "posix" or entry.stat(follow_symlinks=False).st_uid == os.getuid()
            except OSError:
                continue
            if owned:
                found.append(Path(entry.path))
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
        reported = set(json.loads(read_private(home / REPORTED, limit=_LIMIT)))
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
            private_dir(home, below=_below(environment))
            write_private(home / REPORTED, json.dumps(sorted(reported)))
        except OSError:
            pass
    return messages


def _is_real_dir(path: Path) -> bool:
    import stat

    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def _within(path: str, places: tuple[str, ...]) -> bool:
    """`path` is absolute, has no `..`, and (its directory resolved) lies in one of `places` (resolved)."""
    candidate = Path(path)
    if not candidate.is_absolute() or ".." in candidate.parts or not candidate.name:
        return False
    resolved = os.path.join(_real(str(candidate.parent)), candidate.name)
    return any(resolved.startswith(place.rstrip(os.sep) + os.sep) for place in places)


def _load(environment: Environment, directory: Path) -> Rollback:
    """The record in `directory` if it passes every check (Refused saying which it fails; _Elsewhere when it
    is another environment's)."""
    def refused(why: str) -> Refused:
        return Refused(f"refused the rollback record {directory}: {why}; nothing was moved")

    if not _is_real_dir(directory):
        raise refused("it is not a directory (a link?)")
    try:
        data = read_private(directory / RECORD, limit=_LIMIT + 1)
    except UnsafePath as exc:
        raise refused(exc.strerror or str(exc)) from None
    except OSError as exc:
        raise refused(f"it cannot be read ({exc.strerror or exc})") from None
    if len(data) > _LIMIT:
        raise refused(f"it is larger than {_LIMIT >> 20} MiB")
    try:
        record = json.loads(data)
    except ValueError:
        raise refused("it is not JSON") from None
    if not isinstance(record, dict):
        raise refused("it is not a JSON object")
    prefix, python = record.get("prefix"), record.get("python")
    if not isinstance(prefix, str) or _real(prefix) != _real(environment.prefix):
        raise _Elsewhere
    if not environment.isolated and (not isinstance(python, str) or _real(python) != _real(environment.python)):
        raise _Elsewhere
    roots = record.get("roots")
    allowed = _allowed_roots(environment)
    if not isinstance(roots, list) or not roots or not all(isinstance(root, str) for root in roots):
        raise refused("its roots are not a list of paths")
    own = "the environment" if environment.isolated else "one of the interpreter's site-packages"
    for root in roots:
        if not os.path.isabs(root) or ".." in Path(root).parts or _real(root) not in allowed:
            raise refused(f"it would restore {root}, which is not {own}")
    if len({_real(root) for root in roots}) != len(roots):
        raise refused("it names one root twice")
    freeze_lines = record.get("freeze")
    if not isinstance(freeze_lines, list) or not all(isinstance(line, str) and "==" in line for line in freeze_lines):
        raise refused("its freeze is not a list of name==version")
    for part in ("tree", "replaced"):
        for index in range(len(roots)):
            for path in (directory / part, directory / part / str(index)):
                if os.path.lexists(path) and not _is_real_dir(path):
                    raise refused(f"{path} is not a directory (a link?)")
    if record.get("version") != VERSION:
        raise refused(f"it is of version {record.get('version')!r}, not {VERSION}: not a record this tfdoctor writes "
                      "(an older one's carries no seal)")
    seal_path = _seals(environment) / f"{directory.name}.json"
    seal = _read_seal(seal_path)
    if seal is None:
        raise refused("no seal of this user's tfdoctor is kept for it (another user's record, one copied or planted "
                      "here, or a cleared cache)")
    if seal.get("sha256") != _digest(data):
        raise refused("it differs from what this user's tfdoctor wrote (its seal does not match)")
    try:
        same = seal.get("inode") == _identity(environment)
    except OSError:
        same = False
    if not same:
        raise refused(f"it was made for another environment at {environment.prefix} (a copy made or restored there)")
    return Rollback(directory, record, environment.python, tuple(_real(root) for root in roots), seal_path)


def _read_seal(path: Path) -> Optional[dict[str, Any]]:
    try:
        seal = json.loads(read_private(path, limit=4096))
    except (OSError, ValueError):
        return None
    return seal if isinstance(seal, dict) else None


def newest(environment: Environment) -> Optional[Rollback]:
    """The last rollback written for this environment, or None; Refused when that record fails a check."""
    home = _checked_home(environment)
    if home is None:
        return None
    for directory in reversed(_records(home)):
        try:
            return _load(environment, directory)
        except _Elsewhere:
            continue
    return None


def _journal(rollback: Rollback) -> list[dict[str, Any]]:
    """The restore's journal so far (a line cut by a crash is the last and is ignored), checked before any
    move: a journal of a restore this user's tfdoctor began (its seal says so), each line a phase in order or
    a move between places inside the record's directory and the roots. Refused otherwise."""
    def refused(why: str) -> Refused:
        return Refused(f"refused the restore journal {rollback.directory / JOURNAL}: {why}; nothing was moved")

    try:
        data = read_private(rollback.directory / JOURNAL, limit=_LIMIT + 1)
    except FileNotFoundError:
        return []
    except UnsafePath as exc:
        raise refused(exc.strerror or str(exc)) from None
    except OSError as exc:
        raise refused(f"it cannot be read ({exc.strerror or exc})") from None
    if len(data) > _LIMIT:
        raise refused(f"it is larger than {_LIMIT >> 20} MiB")
    seal = _read_seal(rollback.seal) if rollback.seal is not None else None
    if not data.strip():
        return []
    if seal is None or not seal.get("restoring"):
        raise refused("this user's tfdoctor did not begin that restore (its seal does not say so)")
    lines = data.decode("utf-8", "replace").splitlines()
    entries: list[dict[str, Any]] = []
    places = (_real(str(rollback.directory)),) + rollback.roots
    for number, line in enumerate(lines):
        try:
            entry = json.loads(line)
        except ValueError:
            if number == len(lines) - 1:
                break  # cut by a crash while it was written
            raise refused(f"line {number + 1} is not JSON") from None
        if not isinstance(entry, dict):
            raise refused(f"line {number + 1} is not an entry")
        if set(entry) == {"phase"} and entry["phase"] in PHASES:
            entries.append(entry)
        elif set(entry) == {"move", "to"} and all(isinstance(entry[k], str) and _within(entry[k], places)
                                                  for k in ("move", "to")):
            entries.append(entry)
        else:
            raise refused(f"line {number + 1} names a place outside the record and the environment, or is no entry")
    phases = [entry["phase"] for entry in entries if "phase" in entry]
    if phases != [phase for phase in PHASES if phase in phases] or (phases and phases[0] != "aside"):
        raise refused("its phases are out of order")
    return entries


def _write(rollback: Rollback, entry: dict[str, Any]) -> None:
    """One journal line, on disk before the move it announces."""
    append_private(rollback.directory / JOURNAL, json.dumps(entry) + "\n")


def _move(rollback: Rollback, source: Path, target: Path) -> None:
    places = (_real(str(rollback.directory)),) + rollback.roots
    if not (_within(str(source), places) and _within(str(target), places)):
        raise Refused(f"refused to move {source} to {target}: outside the record and the environment")
    _write(rollback, {"move": str(source), "to": str(target)})
    os.rename(source, target)  # both inside the environment's prefix: one filesystem, atomic


def interrupted(environment: Environment) -> list[Rollback]:
    """Restores of this environment that began (a journal) and were not verified: oldest first. Refused when
    such a record or its journal fails a check."""
    home = _checked_home(environment)
    if home is None:
        return []
    found = []
    for directory in _records(home):
        if os.path.lexists(directory / JOURNAL):
            try:
                way_back = _load(environment, directory)
            except _Elsewhere:
                continue
            _journal(way_back)
            found.append(way_back)
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
    record is removed only once the environment's freeze (by the interpreter the user passed) equals the
    record's. The caller holds the signals; the freeze here runs outside the children registry an interrupt
    closes. `rollback` comes from `create`, `newest` or `interrupted`: checked, its roots resolved."""
    roots = rollback.roots
    if not roots or not rollback.python:
        raise Refused(f"refused the rollback record {rollback.directory}: it was not checked; nothing was moved")
    journal = _journal(rollback)
    phases = [entry["phase"] for entry in journal if "phase" in entry]
    if "back" not in phases:
        if not phases:
            for index in range(len(roots)):
                snapshot = rollback.directory / "tree" / str(index)
                if not _is_real_dir(snapshot):
                    raise FixError(f"the rollback snapshot {snapshot} is missing: cannot undo")
            _begin(rollback)
            _write(rollback, {"phase": "aside"})
        for index, root in enumerate(roots):
            trash = private_dir(rollback.directory / "replaced" / str(index), below=rollback.directory)
            for name in sorted(os.listdir(root)):
                if name != STATE_DIR:
                    target = trash / name
                    while os.path.lexists(target):  # a name left by an earlier, undone attempt
                        target = target.with_name(target.name + "~")
                    _move(rollback, Path(root) / name, target)
        _write(rollback, {"phase": "back"})
    for index, root in enumerate(roots):
        snapshot = rollback.directory / "tree" / str(index)
        if _is_real_dir(snapshot):
            for name in sorted(os.listdir(snapshot)):
                _move(rollback, snapshot / name, Path(root) / name)
    after = freeze(rollback.python, registered=False)
    verified = sorted(after) == sorted(rollback.freeze)
    if verified:
        _write(rollback, {"phase": "verified"})
        _drop(rollback.directory, rollback.seal)
    return Restored(after, verified)


def _begin(rollback: Rollback) -> None:
    """The seal says this user's tfdoctor began the restore: only then is its journal used by a later run."""
    if rollback.seal is None:
        raise Refused(f"refused the rollback record {rollback.directory}: it has no seal; nothing was moved")
    seal = _read_seal(rollback.seal) or {}
    private_dir(rollback.seal.parent, below=cache_dir().parent)
    write_private(rollback.seal, json.dumps({**seal, "restoring": True}))
