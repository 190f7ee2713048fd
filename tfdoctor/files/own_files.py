"""The doctor's own files: where they live and how they are written.

tfdoctor keeps a few files of its own (rollback records, locks and their owners, the machine id, reports
waiting to be posted). Each lives where the doctor chose, in the user's cache or config directory or in an
environment's `.tfdoctor/`, so none of them may be a link someone else planted: a write through a link
planted there would overwrite whatever it points at, with root's rights when root runs the doctor.

- Directories are made private (0700) and refused when they are a link or another user's.
- Files are written to a fresh temporary file beside the target (O_EXCL | O_NOFOLLOW, 0600), synced, then
  renamed over it: a rename replaces a link at the target's name instead of following it, and a reader sees
  the whole old file or the whole new one.
- Files are read without following a link at their own name, and only when they are regular files.

`-o PATH` is not written here: that path is the user's own word, and follows links as the shell's `>` does
(tfdoctor/files/output.py).
"""

from __future__ import annotations

import errno
import os
import secrets
import stat
import sys
from pathlib import Path
from typing import Mapping, Optional, Union

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
PRIVATE_FILE = 0o600
PRIVATE_DIR = 0o700


def cache_dir(environ: Mapping[str, str] = os.environ) -> Path:
    """tfdoctor's directory in the user's cache (XDG_CACHE_HOME, else ~/.cache)."""
    base = environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "tfdoctor"


def config_dir(environ: Mapping[str, str] = os.environ) -> Path:
    """tfdoctor's directory in the user's config place (XDG on Linux, Application Support, APPDATA)."""
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Application Support" / "tfdoctor"
    if os.name == "nt":
        return Path(environ.get("APPDATA") or Path.home() / "AppData" / "Roaming") / "tfdoctor"
    return Path(environ.get("XDG_CONFIG_HOME") or Path.home() / ".config") / "tfdoctor"


class UnsafePath(OSError):
    """A path the doctor would write or read is a link, not what it should be, or another user's."""


def _refuse(path: Path, why: str) -> UnsafePath:
    return UnsafePath(errno.EPERM, f"{path} {why}: tfdoctor does not use it")


def _check_directory(path: Path) -> None:
    status = os.lstat(path)
    if stat.S_ISLNK(status.st_mode):
        raise _refuse(path, "is a symbolic link")
    if not stat.S_ISDIR(status.st_mode):
        raise _refuse(path, "is not a directory")
    # another user's directory could hold their links; root's cannot be planted by anyone else
    if hasattr(os, "getuid") and status.st_uid not in (os.getuid(), 0):
        raise _refuse(path, f"belongs to another user (uid {status.st_uid})")


def private_dir(path: Union[str, Path], below: Union[str, Path], make: bool = True) -> Path:
    """`path`, a directory under `below`, made where missing (0700), with every component from `below` down to it
    checked: a real directory, no link, this user's (or root's); UnsafePath otherwise. `below` itself is the
    caller's to trust (the user's cache directory, an environment's prefix): a home reached through a link is fine.
    `make=False` only checks (a reader): FileNotFoundError where a component is missing, nothing made."""
    path, below = Path(path), Path(below)
    relative = path.relative_to(below)
    current = below
    for part in relative.parts:
        current = current / part
        if not make:
            _check_directory(current)
            continue
        try:
            os.mkdir(current, PRIVATE_DIR)
        except FileExistsError:
            pass
        except FileNotFoundError:
            if current.parent == below:
                below.mkdir(parents=True, exist_ok=True)
                os.mkdir(current, PRIVATE_DIR)
            else:
                raise
        _check_directory(current)
    return path


def write_all(handle: int, data: bytes) -> None:
    """All of `data` to the descriptor (os.write may write less than asked)."""
    view = memoryview(data)
    while view:
        view = view[os.write(handle, view):]


def write_private(path: Union[str, Path], data: Union[bytes, str], mode: int = PRIVATE_FILE) -> None:
    """Write `data` to `path` whole, never through a link: a temporary file beside it (O_EXCL | O_NOFOLLOW),
    synced, renamed over it. Its directory must be a real directory, no link (`private_dir` makes it so)."""
    path = Path(path)
    _check_directory(path.parent)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    while True:
        temporary = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
        try:
            handle = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC, mode)
            break
        except FileExistsError:
            continue
    try:
        try:
            write_all(handle, payload)
            os.fsync(handle)
        finally:
            os.close(handle)
        os.replace(temporary, path)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise


def read_private(path: Union[str, Path], limit: Optional[int] = None) -> bytes:
    """The bytes of the regular file at `path`, opened without following a link at its name (UnsafePath for a
    link or anything but a regular file; FileNotFoundError when absent). `limit`: read at most that many."""
    path = Path(path)
    try:
        # O_NONBLOCK: opening a FIFO planted here must not wait for a writer; it is refused just below
        handle = os.open(path, os.O_RDONLY | _NOFOLLOW | _CLOEXEC | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise _refuse(path, "is a symbolic link") from None
        raise
    try:
        if not stat.S_ISREG(os.fstat(handle).st_mode):
            raise _refuse(path, "is not a regular file")
        chunks = []
        left = limit if limit is not None else -1
        while left != 0:
            chunk = os.read(handle, 1 << 20 if left < 0 else min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            if left > 0:
                left -= len(chunk)
        return b"".join(chunks)
    finally:
        os.close(handle)


def append_private(path: Union[str, Path], data: Union[bytes, str]) -> None:
    """Append `data` to the regular file at `path` (made 0600 where missing) and sync it, never through a link:
    a journal whose every line must be on disk before what it announces happens."""
    payload = data.encode("utf-8") if isinstance(data, str) else data
    handle = _open_regular(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    try:
        write_all(handle, payload)
        os.fsync(handle)
    finally:
        os.close(handle)


def touch_private(path: Union[str, Path]) -> None:
    """The regular file at `path`, made empty (0600) where missing and left as it is otherwise, never through a
    link (a lock file, before a locking library that may follow one opens it)."""
    os.close(_open_regular(path, os.O_RDONLY | os.O_CREAT))


def _open_regular(path: Union[str, Path], flags: int) -> int:
    path = Path(path)
    _check_directory(path.parent)
    try:
        handle = os.open(path, flags | _NOFOLLOW | _CLOEXEC | getattr(os, "O_NONBLOCK", 0), PRIVATE_FILE)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise _refuse(path, "is a symbolic link") from None
        raise
    if not stat.S_ISREG(os.fstat(handle).st_mode):
        os.close(handle)
        raise _refuse(path, "is not a regular file")
    return handle
