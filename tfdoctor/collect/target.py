"""Facts the target interpreter reports about itself, from a child process (no TensorFlow import)."""

from __future__ import annotations

import json
import os
import re
from typing import Any

from tfdoctor.child import source
from tfdoctor.collect.options import CollectOptions
from tfdoctor.processes.commands import run_process

TARGET_TIMEOUT_S = 10.0  # a Python describes itself in well under a second; longer means it hangs
VERSION_TIMEOUT_S = 10.0
_PYTHON_VERSION = re.compile(r"^Python (\d+)\.(\d+)")


class TargetUnusableError(RuntimeError):
    """The target interpreter cannot even describe itself: the doctor cannot run (exit 2)."""


def command(python: str) -> list[str]:
    """The child's command line (also started early, before the command line is parsed: tfdoctor/__main__.py).
    It runs from an empty directory (processes/commands.py) and is told the working directory, the user's
    project folder, which it reads (what is there named like a module) and never imports from."""
    try:
        working_directory = os.getcwd()
    except OSError:  # gone: the child describes the interpreter from its own empty directory
        working_directory = ""
    return [python, "-c", source("target_info"), working_directory]


def collect_target(options: CollectOptions) -> dict[str, Any]:
    try:
        finished = run_process(command(options.python), TARGET_TIMEOUT_S, options.environ)
    except OSError as exc:
        raise TargetUnusableError(f"cannot run {options.python}: {exc.strerror or exc}") from exc
    if finished.timed_out:
        raise TargetUnusableError(f"{options.python} did not describe itself within {TARGET_TIMEOUT_S:g} s "
                                  f"(does it hang at start? try '{options.python} -c pass')")
    if finished.returncode != 0:
        confirm_python(options.python)  # raises the clearer reason when it is no Python at all
        tail = finished.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or ["no output"]
        raise TargetUnusableError(f"{options.python} exited {finished.returncode}: {tail[0]}")
    try:
        described = json.loads(finished.stdout.decode("utf-8", "replace").strip().splitlines()[-1])
    except (ValueError, IndexError) as exc:
        confirm_python(options.python)
        raise TargetUnusableError(f"{options.python} did not describe itself: {exc}") from exc
    from tfdoctor.collect.library_imports import with_imports

    # what the libraries beside TensorFlow import, read from their own files (cached by RECORD): issue 38, build 5
    return {"python": described["python"], "distributions": with_imports(described["distributions"])}


def confirm_python(python: str) -> None:
    """The child wrote nothing: is the target a Python 3.6+ at all? If not, the doctor cannot run."""
    try:
        finished = run_process([python, "-V"], VERSION_TIMEOUT_S)
    except OSError as exc:
        raise TargetUnusableError(f"{python} is not a Python interpreter ({python} -V failed: "
                                  f"{exc.strerror or exc})") from exc
    if finished.timed_out:
        raise TargetUnusableError(f"{python} is not a Python interpreter ({python} -V did not answer "
                                  f"within {VERSION_TIMEOUT_S:g} s)")
    said = (finished.stdout + finished.stderr).decode("utf-8", "replace").strip().splitlines()
    first = said[0] if said else ""
    version = _PYTHON_VERSION.match(first)
    if not version:
        shown = repr(first[:80]) if first else "nothing"
        raise TargetUnusableError(f"{python} is not a Python interpreter ('{python} -V' printed {shown})")
    if (int(version.group(1)), int(version.group(2))) < (3, 6):
        raise TargetUnusableError(f"{python} is {first}; TensorFlow and tfdoctor need Python 3")
