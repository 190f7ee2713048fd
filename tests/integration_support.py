"""What the integration tests share: their skip rule and one real doctor run of the test setup's TensorFlow.

Skipped only where the test setup installs no TensorFlow (it installs tensorflow-cpu on Linux x86-64, so
there a missing TensorFlow fails these tests instead of silently skipping them)."""

from __future__ import annotations

import importlib.util
import json
import os
import platform
import subprocess
import sys
from pathlib import Path

import pytest

MARKS = [
    pytest.mark.integration,
    pytest.mark.skipif(
        importlib.util.find_spec("tensorflow") is None
        and not (sys.platform == "linux" and platform.machine() == "x86_64"),
        reason="the test setup installs tensorflow-cpu on Linux x86-64 only",
    ),
]


def doctor_json(args: list[str], cwd: Path) -> dict:
    """`python -m tfdoctor --json ARGS` as a real subprocess, from a neutral directory; `_exit` holds its code."""
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    completed = subprocess.run([sys.executable, "-m", "tfdoctor", "--json", *args], capture_output=True,
                               text=True, env=env, timeout=300, cwd=str(cwd))
    assert completed.stdout.strip(), completed.stderr
    document = json.loads(completed.stdout)
    document["_exit"] = completed.returncode
    return document
