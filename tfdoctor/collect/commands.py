"""Running external commands for facts: always with a timeout, never raising, fate recorded.

nvidia-smi is known to hang and sysctl keys can be unknown; a collector records what happened
(`status`: ok, failed, not_found, timed_out, error) next to the raw output so a check can judge it.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from typing import Any, Mapping, Sequence

OUTPUT_LIMIT = 64 * 1024  # keep the head of long outputs; facts must stay small


def run_command(
    argv: Sequence[str], timeout: float, env: Mapping[str, str] | None = None
) -> dict[str, Any]:
    started = time.perf_counter()
    result: dict[str, Any] = {"argv": list(argv), "status": "ok", "exit_code": None, "stdout": "", "stderr": ""}
    executable = shutil.which(argv[0], path=(env or os.environ).get("PATH"))
    if executable is None:
        result["status"] = "not_found"
    else:
        try:
            process = subprocess.Popen(
                [executable, *argv[1:]],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=dict(env) if env is not None else None,
                start_new_session=os.name == "posix",
            )
        except OSError as exc:
            result.update(status="error", stderr=str(exc))
        else:
            try:
                out, err = process.communicate(timeout=timeout)
                result["exit_code"] = process.returncode
                result["status"] = "ok" if process.returncode == 0 else "failed"
            except subprocess.TimeoutExpired:
                kill_tree(process)
                out, err = process.communicate()
                result["status"] = "timed_out"
                result["timeout_s"] = timeout
            result["stdout"] = out.decode("utf-8", "replace")[:OUTPUT_LIMIT]
            result["stderr"] = err.decode("utf-8", "replace")[:OUTPUT_LIMIT]
    result["duration_ms"] = round((time.perf_counter() - started) * 1000, 3)
    return result


def kill_tree(process: subprocess.Popen) -> None:
    """Kill a child and everything it started (it runs in its own session on POSIX)."""
    try:
        if os.name == "posix":
            os.killpg(process.pid, signal.SIGKILL)
        else:
            process.kill()
    except (ProcessLookupError, PermissionError, OSError):
        pass
