"""Writing a report to `-o PATH`, whatever is at PATH.

- A regular file, or nothing yet: the report goes to a temporary file beside it, renamed over it, so the
  path holds the whole old report or the whole new one. An existing file keeps its mode (and, written by
  root, its owner); a new one gets what the umask gives, as `> FILE` would. A file with other hard links
  is replaced too: its other names keep the previous report.
- A symlink is followed (relative or absolute, chains too): its final target is written as above and
  the link stays a link.
- Anything else is written through and never replaced or removed: a character device (/dev/null), a
  FIFO, a Unix socket (connected to), a descriptor of this process (/dev/stdout, /dev/fd/N as a
  process substitution `>(cmd)` passes it: written to that descriptor, as the shell would).
"""

from __future__ import annotations

import errno
import os
import re
import secrets
import signal
import socket
import stat
from typing import Optional

from tfdoctor.files.own_files import write_all

MAX_LINKS = 40  # as the kernel's limit on symlinks in a path
_DESCRIPTOR_DIR = re.compile(r"/proc/(\d+)/fd")  # /dev/fd and /proc/self/fd resolve to /proc/<pid>/fd
_FLAGS = getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)


class SignalsHeld:
    """Blocks SIGINT and SIGTERM for a short write (POSIX); they are delivered after it."""

    def __enter__(self) -> None:
        self.blocked = hasattr(signal, "pthread_sigmask")
        if self.blocked:
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})

    def __exit__(self, *exc: object) -> None:
        if self.blocked:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGTERM})


def write_report(path: str, text: str) -> None:
    """Write `text` (UTF-8) to `path` as the module docstring says; OSError when it cannot."""
    data = text.encode("utf-8")
    final, descriptor = resolve(path)
    if descriptor is not None:
        write_all(descriptor, data)
        return
    try:
        status: Optional[os.stat_result] = os.stat(final)
    except FileNotFoundError:
        status = None
    if status is None or stat.S_ISREG(status.st_mode):
        with SignalsHeld():  # a temporary file on disk: quick, and never left half-written by a signal
            _replace(final, data, status)
    elif stat.S_ISSOCK(status.st_mode):
        _send(final, data)
    else:  # a device, a FIFO (the open waits for a reader, as the shell's would); a directory fails here
        handle = os.open(final, os.O_WRONLY | _FLAGS)
        try:
            write_all(handle, data)
        finally:
            os.close(handle)


def resolve(path: str) -> tuple[str, Optional[int]]:
    """(the path at the end of PATH's symlinks, None), or (…, N) when a link leads into this process's
    own descriptors (/dev/stdout -> /proc/self/fd/1): those are written through descriptor N, because
    reopening them would lose a pipe's or socket's identity and a `>>` file's append mode."""
    current = os.path.abspath(path)
    for _ in range(MAX_LINKS):
        parent, name = os.path.split(current)
        parent = os.path.realpath(parent)
        current = os.path.join(parent, name)
        own = _DESCRIPTOR_DIR.fullmatch(parent)
        if own and int(own.group(1)) == os.getpid() and name.isdigit():
            return current, int(name)
        if not os.path.islink(current):
            return current, None
        current = os.path.join(parent, os.readlink(current))
    raise OSError(errno.ELOOP, os.strerror(errno.ELOOP), path)


def _replace(final: str, data: bytes, existing: Optional[os.stat_result]) -> None:
    directory, name = os.path.split(final)
    # A new file: 0666 less the umask (the kernel applies it). An existing one: private until its own
    # mode is set, so the report is never readable by more people than the file it replaces.
    mode = 0o666 if existing is None else 0o600
    while True:
        temporary = os.path.join(directory, f".{name}.{secrets.token_hex(4)}.tmp")
        try:
            handle = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _FLAGS, mode)
            break
        except FileExistsError:
            continue
    try:
        try:
            if existing is not None:
                _keep_owner_and_mode(handle, existing)
            write_all(handle, data)
        finally:
            os.close(handle)
        os.replace(temporary, final)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise


def _keep_owner_and_mode(handle: int, existing: os.stat_result) -> None:
    if hasattr(os, "fchown") and os.geteuid() == 0 and (existing.st_uid, existing.st_gid) != (0, 0):
        try:
            os.fchown(handle, existing.st_uid, existing.st_gid)
        except OSError:
            pass
    if hasattr(os, "fchmod"):
        os.fchmod(handle, stat.S_IMODE(existing.st_mode))


def _send(path: str, data: bytes) -> None:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
        connection.connect(path)
        connection.sendall(data)


