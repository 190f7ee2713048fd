"""What every operation shares: the one error a door reports (exit 2 on the command line, a DoctorError in the
API, a tool error in MCP), the one check of an interpreter path, and the settings merged once."""

from __future__ import annotations

import os
import stat
import sys
from typing import TYPE_CHECKING, Any, Callable, Mapping, Optional

from tfdoctor.report.document import CannotRun

if TYPE_CHECKING:
    from tfdoctor.diagnosis.config import Config
    from tfdoctor.diagnosis.options import ConfigLike

__all__ = ["CannotRun", "interpreter", "settings", "redactor", "text_redactor", "scrub_secrets", "Progress"]

# progress(event, data): what an operation is doing, for the door to show (a live display, MCP notifications, a log)
Progress = Callable[[str, Mapping[str, Any]], None]


def interpreter(python: Optional[str], *, absolute: bool = False) -> str:
    """The interpreter an operation works on: this one by default, else an existing executable file (CannotRun
    with one line otherwise). `absolute`: a relative path is refused (an assistant passes paths it read somewhere)."""
    if python is None:
        return sys.executable
    if not python.strip():
        raise CannotRun("--python needs the path of an interpreter; it is empty")
    if "\x00" in python:
        raise CannotRun("--python: the path contains a NUL character")
    path = os.path.expanduser(python)
    if absolute and not os.path.isabs(path):
        raise CannotRun(f"--python {python!r} is not an absolute path (give the interpreter's full path, "
                        "e.g. /home/me/venv/bin/python)")
    try:
        info = os.stat(path)
    except OSError as exc:  # the reason too: "No such file or directory" is not "Permission denied"
        raise CannotRun(f"--python {python}: not an executable file ({exc.strerror or exc})") from None
    if not stat.S_ISREG(info.st_mode) or not os.access(path, os.X_OK):
        raise CannotRun(f"--python {python}: not an executable file")
    return path


def settings(config: "ConfigLike" = None, discover: bool = True, *, gpu: Optional[str] = None,
             tensorflow: Optional[str] = None, python: Optional[str] = None, min_gflops: Optional[float] = None,
             min_speedup: Optional[float] = None) -> "Config":
    """[tool.tfdoctor] (or the file or mapping given), then the requirement flags over it; CannotRun when bad."""
    from tfdoctor.diagnosis.options import OptionsError, load_settings

    try:
        return load_settings(config, discover, gpu=gpu, tensorflow=tensorflow, python=python,
                             min_gflops=min_gflops, min_speedup=min_speedup)
    except OptionsError as exc:
        raise CannotRun(str(exc)) from None


def redactor(redact: bool) -> Callable[[dict], dict]:
    """The one redaction of a report document (report/redact.py), or none."""
    from tfdoctor.diagnosis.options import redact_document

    return lambda document: redact_document(document, redact)


def text_redactor(redact: bool) -> Callable[[str], str]:
    """The same redaction for a line: what an installer printed, a path on a progress line."""
    from tfdoctor.diagnosis.options import text_redactor as text

    return text(redact)


def scrub_secrets(text: str) -> str:
    """Credentials and token-shaped strings hidden, whatever the redaction asked: for a line that may quote what an
    environment or a server said (an error message)."""
    from tfdoctor.report.redact import scrub_secrets as scrub

    return scrub(text)
