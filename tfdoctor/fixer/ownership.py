"""One owner at a time: `tfdoctor fix`, `--undo` and the clone they make hold an exclusive lock on the
environment (filelock: fcntl on POSIX, msvcrt on Windows; the kernel drops it when the holder dies,
even by SIGKILL, so a crash never leaves a stale lock).

The second caller does not wait: it exits 2 at once, naming the holder (pid and command line). A fix
waiting silently behind a ten-minute TensorFlow install would look hung, and what it diagnosed before
waiting would be stale by the time it got the environment; run it again when the first has finished.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sys
from pathlib import Path
from typing import Iterator

from tfdoctor.fixer.environment import Environment, FixError

LOCK = "lock"
OWNER = "lock.owner"  # who holds the lock: written after it is taken, read by whoever finds it taken


def lock_home(environment: Environment) -> Path:
    """The user's cache, one directory per prefix. Never the environment itself: a fix that stops before
    touching it (the plan failed on the copy, a refusal) leaves its prefix exactly as it was, and a lock
    file deleted on release would let two callers lock two inodes of one name."""
    from tfdoctor.fixer.rollback import _user_cache

    return _user_cache().parent / "locks" / hashlib.sha256(environment.prefix.encode()).hexdigest()[:16]


def _holder(home: Path) -> str:
    try:
        owner = json.loads((home / OWNER).read_text(encoding="utf-8"))
        return f"pid {int(owner['pid'])}: {str(owner['command'])[:200]}"
    except (OSError, ValueError, KeyError, TypeError):
        return "a process that has not yet said who it is"


@contextlib.contextmanager
def owning(environment: Environment) -> Iterator[None]:
    """Hold the environment's lock for the block; FixError (exit 2) naming the holder when it is taken."""
    from filelock import FileLock, Timeout

    home = lock_home(environment)
    try:
        home.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise FixError(f"cannot create {home} for the environment's lock: {exc}") from exc
    lock = FileLock(str(home / LOCK), thread_local=False)
    try:
        lock.acquire(timeout=0)
    except Timeout:
        raise FixError(f"another tfdoctor is changing {environment.prefix} ({_holder(home)}); "
                       "run this again when it has finished") from None
    except OSError as exc:
        raise FixError(f"cannot lock {home / LOCK}: {exc}") from exc
    owner = home / OWNER
    try:
        owner.write_text(json.dumps({"pid": os.getpid(), "command": " ".join(sys.argv)}), encoding="utf-8")
    except OSError:
        pass  # the lock holds without it; a second caller just cannot name us
    try:
        yield
    finally:
        with contextlib.suppress(OSError):
            owner.unlink()
        lock.release()
