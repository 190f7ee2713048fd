"""Running external commands for facts: always with a timeout, never raising, fate recorded.

nvidia-smi is known to hang and sysctl keys can be unknown; a collector records what happened
(`status`: ok, failed, not_found, timed_out, error) next to the raw output so a check can judge it.

Every child the collectors start is registered in `CHILDREN` while it runs, so that an interrupt
(Ctrl-C, SIGTERM) can kill them all at once: the worker threads waiting on them then return at once.
Each is registered under the diagnosis that started it (`owned_by`), so that one diagnosis giving up
(an unusable interpreter) kills its own children and not those of another running beside it in the
same process (`tfdoctor scan`).

A child ends with everything it started: its session is killed when it exits or times out, and so is any
descendant that left that session (each child carries a mark of its own, CHILD_MARK); the wait returns once
the child itself has ended, reading its pipes a moment longer at most, never for as long as an escaped
descendant holds them. Children run from an empty directory of their own (`neutral_directory`): the
user's project folder is read by the doctor, never run by its probes.
"""

from __future__ import annotations

import contextvars
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from typing import IO, Any, Callable, Iterable, Mapping, Protocol, Sequence

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
                kill_escaped([mark_of(process)])

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
            kill_escaped(mark_of(process) for process in self._processes)

    def kill_owned(self, owner: object) -> None:
        """Kill the children of one diagnosis, and any it starts from now on; the others run on."""
        with self._lock:
            self._closed_owners.add(owner)
            doomed = [process for process, owned_by in self._processes.items() if owned_by is owner]
            for process in doomed:
                kill_tree(process)
            kill_escaped(mark_of(process) for process in doomed)

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


# Every child carries this variable, a token of its own, into everything it starts: a descendant that left
# the child's session (setsid) and so escapes the group kill is found by it and killed too (`kill_escaped`).
# An environment variable, not a subreaper: it works on macOS as on Linux, and changes nothing about how the
# process that embeds the doctor (the API, the servers) reaps its other children.
CHILD_MARK = "TFDOCTOR_CHILD"
# After the child itself has exited (or been killed), what its pipes still hold is read for this long; a
# descendant that escaped every kill and keeps them open is then left holding closed pipes.
DRAIN_GRACE_S = 1.0
POLL_S = 0.01


class NeutralDirectory:
    """An empty private directory to run the target's children in: the working directory is first on
    sys.path of `python -c` (and of `python -m pip`), so a json.py of the user's project folder would be
    imported by the doctor's own probes. `-I` would drop PYTHONPATH and the user site, which the doctor
    must see, and `-P` needs Python 3.11: an empty working directory covers every version. One per
    process, made on first use (again if a cleaner took it), removed at exit."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._path: str | None = None

    def path(self) -> str:
        with self._lock:
            if self._path is None or not os.path.isdir(self._path):
                import atexit
                import tempfile

                self._path = tempfile.mkdtemp(prefix="tfdoctor-cwd-")
                atexit.register(self.remove)
            return self._path

    def remove(self) -> None:
        """At exit (os._exit after an interrupt skips atexit: the CLI calls this itself then)."""
        with self._lock:
            if self._path is not None:
                try:
                    os.rmdir(self._path)  # empty unless a child wrote there; then it is left, never walked
                except OSError:
                    pass
                self._path = None


NEUTRAL = NeutralDirectory()


def neutral_directory() -> str:
    return NEUTRAL.path()


def start_child(argv: Sequence[str], env: Mapping[str, str] | None = None, stdin: int = subprocess.DEVNULL,
                cwd: str | None = None) -> subprocess.Popen:
    """argv in its own session (its own process group; a new process group on Windows), stdout and stderr
    piped, marked with a token of its own (CHILD_MARK) and run from `cwd`, by default the neutral
    directory. OSError when it cannot start."""
    import secrets

    mark = secrets.token_hex(8)
    argv = list(argv)
    if argv and os.path.dirname(argv[0]) and not os.path.isabs(argv[0]):
        argv[0] = os.path.abspath(argv[0])  # a path relative to the doctor's working directory, not the child's
    environ = dict(os.environ if env is None else env)
    environ[CHILD_MARK] = mark
    isolation: dict[str, Any] = (
        {"start_new_session": True} if os.name == "posix"
        else {"creationflags": getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0)}
    )
    process = subprocess.Popen(argv, stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               env=environ, cwd=cwd or neutral_directory(), **isolation)
    process.tfdoctor_mark = mark  # type: ignore[attr-defined]  # Popen declares no place for it; mark_of reads it
    return process


def _start(argv: Sequence[str], env: Mapping[str, str] | None, stdin: int = subprocess.DEVNULL) -> subprocess.Popen:
    return start_child(argv, env, stdin)


def mark_of(process: subprocess.Popen) -> str | None:
    return getattr(process, "tfdoctor_mark", None)


def marked_processes(marks: Iterable[str]) -> list[int]:
    """Pids of the processes (other than this one) whose environment carries one of these marks: the
    children's descendants wherever they went. On Linux read from /proc directly (1.2 ms for 90
    processes, where psutil's process_iter takes 13 ms: it builds an object per process), elsewhere
    through psutil; processes of other users cannot be read and are not ours."""
    marks = [mark for mark in marks if mark]
    wanted = [f"{CHILD_MARK}={mark}".encode() for mark in marks]
    if not wanted:
        return []
    me = os.getpid()
    found = []
    if sys.platform.startswith("linux") and os.path.isdir("/proc/self"):
        needles = [b"\0" + w + b"\0" for w in wanted]
        for name in os.listdir("/proc"):
            if not name.isdigit() or int(name) == me:
                continue
            try:
                with open(f"/proc/{name}/environ", "rb") as handle:
                    data = b"\0" + handle.read() + b"\0"
            except OSError:
                continue
            if any(needle in data for needle in needles):
                found.append(int(name))
        return found
    import psutil

    chosen = set(marks)
    for process in psutil.process_iter():
        try:
            if process.pid != me and process.environ().get(CHILD_MARK) in chosen:
                found.append(process.pid)
        except (psutil.Error, OSError):
            continue
    return found


def kill_escaped(marks: Iterable[str | None]) -> list[int]:
    """SIGKILL every process that carries one of these marks: descendants that left their child's session
    (setsid) and its group kill. Again until none is found (one may fork meanwhile), a few rounds at most."""
    known = [m for m in marks if m]
    killed: list[int] = []
    for _ in range(4):
        found = marked_processes(known)
        if not found:
            break
        for pid in found:
            try:
                os.kill(pid, signal.SIGKILL if os.name == "posix" else signal.SIGTERM)
                if pid not in killed:  # one still dying is found again by the next round
                    killed.append(pid)
            except OSError:
                pass
    return killed


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
        started = list(self._started)
        for process in started:
            kill_tree(process)
        kill_escaped(mark_of(process) for process in started)

    def discard(self) -> None:
        """Kill and reap the children no collector took."""
        with self._lock:
            left, self._started, self._waiting = self._started, [], {}
        for process in left:
            kill_tree(process)
        kill_escaped(mark_of(process) for process in left)
        for process in left:
            CHILDREN.discard(process)  # before reaping: its pid stays its own while listed
            _close(process)
            process.wait()


HEAD_STARTS = HeadStarts()


@dataclass(frozen=True)
class Finished:
    returncode: int  # negative: killed by that signal (POSIX); -9 after a timeout or an interrupt
    stdout: bytes
    stderr: bytes
    timed_out: bool


class Sink(Protocol):
    """Where a child's stream goes as it is read (Collected, or the TensorFlow child's StreamCapture)."""

    def feed(self, chunk: bytes) -> None: ...


class Collected:
    def __init__(self) -> None:
        self.data = bytearray()

    def feed(self, chunk: bytes) -> None:
        self.data += chunk


def run_process(argv: Sequence[str], timeout: float, env: Mapping[str, str] | None = None, *,
                cwd: str | None = None, registered: bool = True) -> Finished:
    """argv in its own session (start_child: marked, run from the neutral directory unless `cwd` says),
    listed in CHILDREN while it runs (unless `registered` is False: a restore's own check, which an
    interrupt must not cut), and `finish`ed: the whole group and its escaped descendants killed at the
    timeout (or the operation's deadline, if that comes first), or when an interrupt unwinds through the
    wait; it returns once the child itself has ended, never waiting on pipes a descendant still holds.
    OSError when it cannot start."""
    from tfdoctor.processes.deadline import bounded

    timeout = bounded(timeout)
    process = HEAD_STARTS.take(argv) if env is None and cwd is None and registered else None
    if process is None:
        if timeout <= 0:  # the operation's deadline has passed: nothing more is started
            return Finished(-signal.SIGKILL if os.name == "posix" else 1, b"", b"", True)
        process = start_child(argv, env, cwd=cwd)
    if registered:
        CHILDREN.add(process)  # again for a head start: now under this diagnosis
    out, err = Collected(), Collected()
    try:
        timed_out = finish(process, timeout, out, err)
    finally:
        CHILDREN.discard(process)
    return Finished(process.returncode, bytes(out.data), bytes(err.data), timed_out)


def finish(process: subprocess.Popen, timeout: float, stdout: Sink, stderr: Sink,
           watch: Callable[[], None] | None = None) -> bool:
    """Read the child's stdout and stderr into the sinks until it ends (it exits, or at `timeout` it is
    killed), then kill its group and every escaped descendant (CHILD_MARK), read what the pipes still
    hold for DRAIN_GRACE_S at most, close them and reap the child. True when it was killed at the timeout.
    `watch` is called while it runs (the live display's stage). Whatever ends the wait (an interrupt
    raised in this thread) kills the same way before it goes on. The caller keeps the child listed in
    CHILDREN until this returns: its pid is not reused before it is reaped here."""
    try:
        if os.name == "posix":
            return _finish_posix(process, timeout, stdout, stderr, watch)
        return _finish_with_threads(process, timeout, stdout, stderr, watch)
    except BaseException:
        kill_tree(process)
        kill_escaped([mark_of(process)])
        _close(process)
        process.wait()
        raise


def _exited(process: subprocess.Popen) -> bool:
    """Has the child exited? It stays a zombie (not reaped): its pid, which is its process group's id,
    cannot be reused until `finish` reaps it, so the group kill that follows cannot hit a stranger."""
    if process.returncode is not None:
        return True
    if not hasattr(os, "waitid"):  # some macOS builds: reaped here, and the group killed by its old id
        if process.poll() is None:
            return False
        _kill_group(process.pid)
        return True
    try:
        return os.waitid(os.P_PID, process.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:
        return True


def _finish_posix(process: subprocess.Popen, timeout: float, stdout: Sink, stderr: Sink,
                  watch: Callable[[], None] | None) -> bool:
    import selectors

    deadline = time.monotonic() + timeout
    selector = selectors.DefaultSelector()
    for stream, sink in ((process.stdout, stdout), (process.stderr, stderr)):
        if stream is not None:
            os.set_blocking(stream.fileno(), False)
            selector.register(stream.fileno(), selectors.EVENT_READ, sink)
    timed_out, drain_until, pause = False, None, 0.001
    try:
        while True:
            if drain_until is None:
                ended = _exited(process)
                if not ended and time.monotonic() >= deadline:
                    timed_out = ended = True
                if ended:  # whatever it started goes with it: its group, and what escaped the group
                    kill_tree(process)
                    kill_escaped([mark_of(process)])
                    drain_until = time.monotonic() + DRAIN_GRACE_S
            if drain_until is not None and (not selector.get_map() or time.monotonic() >= drain_until):
                break
            if watch is not None:
                watch()
            if not selector.get_map():  # both pipes closed, the child still running: look again shortly
                time.sleep(pause)
                pause = min(POLL_S, pause * 2)
                continue
            wait_s = POLL_S if drain_until is None else max(0.0, min(POLL_S, drain_until - time.monotonic()))
            for key, _ in selector.select(wait_s):
                try:
                    chunk = os.read(key.fd, 65536)
                except BlockingIOError:
                    continue
                except OSError:
                    chunk = b""
                if chunk:
                    key.data.feed(chunk)
                else:
                    selector.unregister(key.fd)
    finally:
        selector.close()
    _close(process)
    process.wait()
    return timed_out


def _finish_with_threads(process: subprocess.Popen, timeout: float, stdout: Sink, stderr: Sink,
                         watch: Callable[[], None] | None) -> bool:
    """Where pipes cannot be selected (Windows): one thread per pipe reads; one still blocked after the
    grace (a descendant holds the pipe) is left behind, a daemon, and the pipe with it."""

    def drain(stream: IO[bytes], sink: Sink) -> None:
        try:
            while True:
                chunk = stream.read1(65536) if hasattr(stream, "read1") else stream.read(65536)
                if not chunk:
                    break
                sink.feed(chunk)
        except (OSError, ValueError):
            pass

    threads = [threading.Thread(target=drain, args=(stream, sink), daemon=True, name="tfdoctor-child-pipe")
               for stream, sink in ((process.stdout, stdout), (process.stderr, stderr)) if stream is not None]
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + timeout
    timed_out = False
    while process.poll() is None:
        if time.monotonic() >= deadline:
            timed_out = True
            break
        if watch is not None:
            watch()
        time.sleep(POLL_S)
    kill_tree(process)
    kill_escaped([mark_of(process)])
    process.wait()
    grace_end = time.monotonic() + DRAIN_GRACE_S
    for thread in threads:
        thread.join(max(0.0, grace_end - time.monotonic()))
    if not any(thread.is_alive() for thread in threads):
        _close(process)
    return timed_out


def _close(process: subprocess.Popen) -> None:
    for stream in (process.stdout, process.stderr, process.stdin):
        if stream is not None:
            try:
                stream.close()
            except OSError:
                pass


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
    if os.name == "posix":
        _kill_group(process.pid)
    else:
        try:
            process.kill()
        except OSError:
            pass


def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError, OSError):
        pass
