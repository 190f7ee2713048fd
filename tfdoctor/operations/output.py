"""A rendered report written to `-o PATH` (files/output.py: a regular file replaced whole, never half written; a
device, FIFO or socket written through), with SIGINT and SIGTERM held while a temporary file is on disk."""

from __future__ import annotations

from typing import Any


def write_report(path: str, text: str) -> None:
    """OSError when it cannot be written."""
    from tfdoctor.files.output import write_report as write

    write(path, text)


def signals_held() -> Any:
    """A context in which SIGINT and SIGTERM wait (POSIX): for a short write the user must not see half of."""
    from tfdoctor.files.output import SignalsHeld

    return SignalsHeld()
