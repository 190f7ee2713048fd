"""Facts the target interpreter reports about itself, from a child process (no TensorFlow import)."""

from __future__ import annotations

import json
import os
import re
import subprocess
from typing import Any

from tfdoctor.child import source
from tfdoctor.collect.options import CollectOptions

TARGET_TIMEOUT_S = 30.0
VERSION_TIMEOUT_S = 10.0
_PYTHON_VERSION = re.compile(r"^Python (\d+)\.(\d+)")


class TargetUnusableError(RuntimeError):
    """The target interpreter cannot even describe itself: the doctor cannot run (exit 2)."""


def collect_target(options: CollectOptions) -> dict[str, Any]:
    try:
        completed = subprocess.run(
            [options.python, "-c", source("target_info")],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=TARGET_TIMEOUT_S,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise TargetUnusableError(f"cannot run {options.python}: {exc}") from exc
    if completed.returncode != 0:
        confirm_python(options.python)  # raises the clearer reason when it is no Python at all
        tail = completed.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or ["no output"]
        raise TargetUnusableError(f"{options.python} exited {completed.returncode}: {tail[0]}")
    try:
        described = json.loads(completed.stdout.decode("utf-8", "replace").strip().splitlines()[-1])
    except (ValueError, IndexError) as exc:
        confirm_python(options.python)
        raise TargetUnusableError(f"{options.python} did not describe itself: {exc}") from exc
    return {"python": described["python"], "distributions": described["distributions"]}


def confirm_python(python: str) -> None:
    """The child wrote nothing: is the target a Python 3.6+ at all? If not, the doctor cannot run."""
    try:
        completed = subprocess.run([python, "-V"], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, timeout=VERSION_TIMEOUT_S, start_new_session=os.name == "posix")
        said = completed.stdout.decode("utf-8", "replace").strip().splitlines()
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise TargetUnusableError(f"{python} is not a Python interpreter ({python} -V failed: {exc})") from exc
    first = said[0] if said else ""
    version = _PYTHON_VERSION.match(first)
    if not version:
        shown = repr(first[:80]) if first else "nothing"
        raise TargetUnusableError(f"{python} is not a Python interpreter ('{python} -V' printed {shown})")
    if (int(version.group(1)), int(version.group(2))) < (3, 6):
        raise TargetUnusableError(f"{python} is {first}; TensorFlow and tfdoctor need Python 3")
