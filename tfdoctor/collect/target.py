"""Facts the target interpreter reports about itself, from a child process (no TensorFlow import)."""

from __future__ import annotations

import json
import subprocess
from typing import Any

from tfdoctor.child import source
from tfdoctor.collect.options import CollectOptions

TARGET_TIMEOUT_S = 30.0


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
        tail = completed.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or ["no output"]
        raise TargetUnusableError(f"{options.python} exited {completed.returncode}: {tail[0]}")
    try:
        described = json.loads(completed.stdout.decode("utf-8", "replace").strip().splitlines()[-1])
    except (ValueError, IndexError) as exc:
        raise TargetUnusableError(f"{options.python} did not describe itself: {exc}") from exc
    return {"python": described["python"], "distributions": described["distributions"]}
