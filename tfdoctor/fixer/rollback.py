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
import shutil
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


def restore(rollback: Rollback) -> list[str]:
    """Put the snapshot back in place of every root's current files, then drop the rollback; returns
    the freeze afterwards (which the caller compares with the record's). Entries the plan added are
    removed, entries it replaced come back; the state directory stays."""
    for index, root in enumerate(rollback.record.get("roots") or ()):
        snapshot = rollback.directory / "tree" / str(index)
        if not snapshot.is_dir():
            raise FixError(f"the rollback snapshot {snapshot} is missing: cannot undo")
        trash = rollback.directory / "replaced" / str(index)
        trash.mkdir(parents=True, exist_ok=True)
        root_path = Path(root)
        for entry in list(root_path.iterdir()):
            if entry.name != STATE_DIR:
                shutil.move(str(entry), str(trash / entry.name))  # a rename on one filesystem
        for entry in list(snapshot.iterdir()):
            shutil.move(str(entry), str(root_path / entry.name))
    after = freeze(str(rollback.record["python"]))
    remove(rollback.directory)
    return after
