"""One real doctor run shared by every test module (and every pytest-xdist worker) that reads the same
report: the `--deep` run of the test setup's TensorFlow takes ~15 s, and two modules only read its output.

The first caller runs it and saves its stdout; the others wait on a file lock and read the file. Under
xdist the file sits in the session's temporary directory, which the workers share (the pattern of
pytest-xdist's documentation, "Making session-scoped fixtures execute only once"); in one process, in
this session's own temporary directory. Never across sessions: each run of pytest gets a new one."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from filelock import FileLock


@dataclass(frozen=True)
class DoctorRun:
    stdout: str  # the report exactly as the doctor printed it
    returncode: int


def _session_directory(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def shared_doctor_run(args: list[str], tmp_path_factory: pytest.TempPathFactory) -> DoctorRun:
    """`python -m tfdoctor ARGS` as a real subprocess from a neutral directory, once per test session."""
    key = hashlib.sha256(json.dumps([sys.executable, *args]).encode()).hexdigest()[:16]
    saved = _session_directory(tmp_path_factory) / f"shared-run-{key}"
    with FileLock(f"{saved}.lock"):
        if not (saved / "done").is_file():
            saved.mkdir(exist_ok=True)
            env = {name: value for name, value in os.environ.items() if name != "PYTHONPATH"}
            completed = subprocess.run([sys.executable, "-m", "tfdoctor", *args], capture_output=True, text=True,
                                       env=env, timeout=300, cwd=str(saved))
            assert completed.stdout.strip(), completed.stderr
            (saved / "stdout").write_text(completed.stdout, encoding="utf-8")
            (saved / "done").write_text(str(completed.returncode))
    return DoctorRun((saved / "stdout").read_text(encoding="utf-8"), int((saved / "done").read_text()))


# The `--deep` run of the probe and the workload with the real TensorFlow, in JSON: the charts' test renders
# it to Markdown, the workload's integration test reads its figures.
DEEP_RUN = ["--deep", "--only", "probe,workload", "--json"]

# A plain `--json --no-probe` run of this machine: the schema's test documents every field of its facts, the
# explain test judges it again.
PLAIN_RUN = ["--json", "--no-probe"]
