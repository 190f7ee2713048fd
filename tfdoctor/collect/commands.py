"""Running external commands for facts: always with a timeout, never raising, fate recorded.

nvidia-smi is known to hang and sysctl keys can be unknown; a collector records what happened
(`status`: ok, failed, not_found, timed_out, error) next to the raw output so a check can judge it.

Every child the collectors start is registered in `CHILDREN` while it runs, so that an interrupt
(Ctrl-C, SIGTERM) can kill them all at once: the worker threads waiting on them then return at once.
Each is registered under the diagnosis that started it (`owned_by`), so that one diagnosis giving up
(an unusable interpreter) kills its own children and not those of another running beside it in the
same process (`tfdoctor scan`).
"""

from __future__ import annotations

import contextvars
import os
import shutil
import signal
import subprocess
import threading
import time
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

OUTPUT_LIMIT = 64 * 1024  # keep the head of long outputs; facts must stay small


class RunningChildren:
    """The children started by collectors and not yet reaped, to kill on an interrupt.

    Process-wide by nature: a signal arrives for the whole process, not for one collector. After
    `kill_all` the set stays closed, so a child started a moment later (a collector that had not yet
    noticed) is killed as soon as it is registered. A child is removed before it is reaped, so its pid
    (its process group id) cannot be reused while it is here."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._processes: dict[subprocess.Popen, object] = {}  # each child and the diagnosis it belongs to
        self._closed = False
        self._closed_owners: set[object] = set()

    def add(self, process: subprocess.Popen) -> None:
        owner = _OWNER.get()
        with self._lock:
            self._processes[process] = owner
            if self._closed or (owner is not None and owner in self._closed_owners):
                kill_tree(process)

    def discard(self, process: subprocess.Popen) -> None:
        with self._lock:
            self._processes.pop(process, None)

    @property
    def interrupted(self) -> bool:
        return self._closed

    def kill_all(self) -> None:
        with self._lock:
            self._closed = True
            for process in self._processes:
                kill_tree(process)

    def kill_owned(self, owner: object) -> None:
        """Kill the children of one diagnosis, and any it starts from now on; the others run on."""
        with self._lock:
            self._closed_owners.add(owner)
            for process, owned_by in self._processes.items():
                if owned_by is owner:
                    kill_tree(process)

    def release(self, owner: object) -> None:
        """The diagnosis is over: forget it (its children are gone)."""
        with self._lock:
            self._closed_owners.discard(owner)

    def reopen(self) -> None:
        """For a process that runs the doctor again after an interrupt (a notebook, the tests)."""
        with self._lock:
            self._closed = False


_OWNER: contextvars.ContextVar[object] = contextvars.ContextVar("tfdoctor_children_owner", default=None)
CHILDREN = RunningChildren()


def _start(argv: Sequence[str], env: Mapping[str, str] | None, stdin: int = subprocess.DEVNULL) -> subprocess.Popen:
    return subprocess.Popen(
        list(argv),
        stdin=stdin,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=dict(env) if env is not None else None,
        start_new_session=os.name == "posix",
    )


class HeadStarts:
    """Children started before the command line is parsed (tfdoctor/__main__.py: typer and the
    doctor's imports take longer than the children they would delay). Each waits for the collector
    that starts the very same command: `run_process` takes it instead of starting another. A child is
    taken only when its command, working directory and environment are those of the run's own
    command, so a head start can make a run earlier, never different; one nobody takes is killed
    (`discard`). Process-wide like CHILDREN: these children exist before anything that could hold them."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._started: list[subprocess.Popen] = []
        self._waiting: dict[tuple, subprocess.Popen] = {}

    @staticmethod
    def _key(argv: Sequence[str]) -> tuple:
        return tuple(argv), os.getcwd(), tuple(sorted(os.environ.items()))

    def start(self, argv: Sequence[str]) -> None:
        """Start argv now as `run_process(argv, timeout)` would; OSError when it cannot start (or the
        working directory is gone)."""
        self.settle(self._spawn(argv, subprocess.DEVNULL), argv)

    def start_unsettled(self, argv: Sequence[str]) -> subprocess.Popen:
        """Start argv, a child that reads the last argument of its command on stdin: no collector
        takes it until `settle` gives it that argument."""
        return self._spawn(argv, subprocess.PIPE)

    def _spawn(self, argv: Sequence[str], stdin: int) -> subprocess.Popen:
        self._key(argv)  # OSError now, not later, when the working directory is gone
        process = _start(argv, None, stdin)
        CHILDREN.add(process)
        with self._lock:
            self._started.append(process)
        return process

    def settle(self, process: subprocess.Popen, argv: Sequence[str], last_argument: str | None = None) -> None:
        """From now on `process` stands for `argv`; `last_argument` (argv's last, when the child was
        started without it) is sent on its stdin."""
        if process.stdin is not None:
            try:
                if last_argument is not None:
                    process.stdin.write(last_argument.encode("utf-8") + b"\n")
                process.stdin.close()
            except OSError:  # it died: a collector taking it reports how
                pass
            process.stdin = None  # communicate() must not touch the closed pipe
        key = self._key(argv)
        with self._lock:
            self._waiting[key] = process

    def take(self, argv: Sequence[str]) -> subprocess.Popen | None:
        with self._lock:
            if not self._waiting:
                return None
            try:
                key = self._key(argv)
            except OSError:  # the working directory is gone: not the one the head start ran in
                return None
            process = self._waiting.pop(key, None)
            if process is not None:
                self._started.remove(process)
            return process

    def kill_in_handler(self) -> None:
        """Kill the children no collector took, from a signal handler: without the locks, which the
        interrupted main thread may hold."""
        for process in list(self._started):
            kill_tree(process)

    def discard(self) -> None:
        """Kill and reap the children no collector took."""
        with self._lock:
            left, self._started, self._waiting = self._started, [], {}
        for process in left:
            kill_tree(process)
            CHILDREN.discard(process)  # before reaping: its pid stays its own while listed
            process.wait()


HEAD_STARTS = HeadStarts()


@dataclass(frozen=True)
class Finished:
    returncode: int  # negative: killed by that signal (POSIX); -9 after a timeout or an interrupt
    stdout: bytes
    stderr: bytes
    timed_out: bool


def run_process(argv: Sequence[str], timeout: float, env: Mapping[str, str] | None = None) -> Finished:
    """argv in its own session (its own process group), listed in CHILDREN while it runs, its whole
    group killed at the timeout, or when an interrupt unwinds through the wait (a caller on the main
    thread: the child must not outlive the doctor). OSError when it cannot start."""
    process = HEAD_STARTS.take(argv) if env is None else None
    if process is None:
        process = _start(argv, env)
    CHILDREN.add(process)  # again for a head start: now under this diagnosis
    timed_out = False
    try:
        out, err = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        kill_tree(process)
        out, err = process.communicate()
    except BaseException:
        kill_tree(process)
        process.wait()
        raise
    finally:
        CHILDREN.discard(process)
    return Finished(process.returncode, out, err, timed_out)


def owned_by(owner: object, function: Any, *args: Any) -> Any:
    """function(*args), with the children it starts registered under `owner` (a collector's thread)."""
    token = _OWNER.set(owner)
    try:
        return function(*args)
    finally:
        _OWNER.reset(token)


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
            finished = run_process([executable, *argv[1:]], timeout, env)
        except OSError as exc:
            result.update(status="error", stderr=str(exc))
        else:
            if finished.timed_out:
                result.update(status="timed_out", timeout_s=timeout)
            else:
                result["exit_code"] = finished.returncode
                result["status"] = "ok" if finished.returncode == 0 else "failed"
            result["stdout"] = finished.stdout.decode("utf-8", "replace")[:OUTPUT_LIMIT]
            result["stderr"] = finished.stderr.decode("utf-8", "replace")[:OUTPUT_LIMIT]
    result["duration_ms"] = round((time.perf_counter() - started) * 1000, 3)
    return result


def kill_tree(process: subprocess.Popen) -> None:
    """Kill a child and everything it started (it runs in its own session on POSIX)."""
    if process.returncode is not None:  # reaped: its pid may belong to someone else by now
        return
    try:
        if os.name == "posix":
            os.killpg(process.pid, signal.SIGKILL)
        else:
            process.kill()
    except (ProcessLookupError, PermissionError, OSError):
        pass
