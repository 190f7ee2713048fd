"""One owner at a time: `tfdoctor fix`, `--undo` and the clone they make hold an exclusive lock on the
environment (filelock: fcntl on POSIX, msvcrt on Windows; the kernel drops it when the holder dies,
even by SIGKILL, so a crash never leaves a stale lock).

The second caller does not wait: it exits 2 at once, naming the holder (pid and command line). A fix
waiting silently behind a ten-minute TensorFlow install would look hung, and what it diagnosed before
waiting would be stale by the time it got the environment; run it again when the first has finished.

The lock and its owner file live in a private directory of the user's cache (tfdoctor/files/own_files.py): the owner
file is written through a fresh file renamed over it, and the lock file is made before filelock opens it, never
through a link (filelock follows one before 3.20.1, CVE-2025-68146, and 3.20.1 needs Python 3.10).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sys
from pathlib import Path
from typing import Iterator

from tfdoctor.files.own_files import cache_dir, private_dir, read_private, touch_private, write_private
from tfdoctor.fixer.environment import Environment, FixError

LOCK = "lock"
OWNER = "lock.owner"  # who holds the lock: written after it is taken, read by whoever finds it taken


def lock_home(environment: Environment) -> Path:
    """The user's cache, one directory per prefix. Never the environment itself: a fix that stops before
    touching it (the plan failed on the copy, a refusal) leaves its prefix exactly as it was, and a lock
    file deleted on release would let two callers lock two inodes of one name."""
    return cache_dir() / "locks" / hashlib.sha256(environment.prefix.encode()).hexdigest()[:16]


def _holder(home: Path) -> str:
    try:
        owner = json.loads(read_private(home / OWNER, limit=65536))
        return f"pid {int(owner['pid'])}: {str(owner['command'])[:200]}"
    except (OSError, ValueError, KeyError, TypeError):
        return "a process that has not yet said who it is"


@contextlib.contextmanager
def owning(environment: Environment) -> Iterator[None]:
    """Hold the environment's lock for the block; FixError (exit 2) naming the holder when it is taken."""
    from filelock import FileLock, Timeout

    home = lock_home(environment)
    try:
        private_dir(home, below=cache_dir().parent)
        touch_private(home / LOCK)
    except OSError as exc:
        raise FixError(f"cannot use {home} for the environment's lock: {exc}") from exc
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
        write_private(owner, json.dumps({"pid": os.getpid(), "command": " ".join(sys.argv)}))
    except OSError:
        pass  # the lock holds without it; a second caller just cannot name us
    try:
        yield
    finally:
        with contextlib.suppress(OSError):
            owner.unlink()
        lock.release()
