"""Applying a proven plan, or undoing a fix, in a process of its own that outlives whoever asked for it.

A server applies for a client that may go away at any moment, and a server whose client went away is
ended (an MCP client closes its stdin, then kills the server's process group). Killed halfway, an apply
run in the server itself left pip writing on as an orphan, no doctor after it and no word of how it
ended. So the server starts this module as a detached child: its own session, no terminal, its standard
streams on /dev/null, nothing of the server's held open. The child takes the environment's lock
(ownership.py, as `tfdoctor fix` does), applies the proof (proven.py: rollback record and snapshot, the
steps, the doctor on the result, the snapshot put back when a step or the doctor fails) or restores the
last snapshot, and writes how it ended into the user's cache. Whoever asks next about that environment
(the server that started it, or a later one) reads it there, once: `settle`.

The child has a total deadline of its own: at it, it stops as an interrupted `tfdoctor fix` does (its
children killed, the snapshot put back) and records that.

Records: `<cache>/fix-outcomes/<environment key>/<job id>.json`, private files (own_files.py), states
`starting` (written by the asker before the child exists), `running` (the child's pid and stage) and
`done` (how it ended: `result`, `exit_code`, `verified`, `changes`, `left_to_you`, `messages`, `error`).
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Collection, Dict, List, Optional

OUTCOMES = "fix-outcomes"
RECORD_LIMIT = 1 << 20  # an outcome is a few kilobytes; a larger file there is not ours
STARTING_GRACE_S = 60.0  # a `starting` record whose child never said it runs is taken as lost after this
_KEEP = 64  # records read per environment: what a planted flood of files there can cost

# The child imports the same tfdoctor as its parent: that sys.path, minus the working directory (the
# user's project, whose files are not run), with the directory holding the tfdoctor package first.
_LAUNCH = ("import json, sys\nsys.path[:] = json.loads(sys.argv[1])\n"
           "from tfdoctor.fixer.detached import main\nmain(sys.argv[2])\n")


class StillRunning(Exception):
    """An apply or undo of the environment still runs past the wait: the message says which and where."""


class Stopped(BaseException):
    """The child's deadline, or a signal, unwinds its run (the flow puts its snapshot back on the way)."""


@dataclass(frozen=True)
class Job:
    operation: str  # "apply" (a proof, by plan_id) or "undo" (the last fix's snapshot)
    python: str
    deadline_s: float
    plan_id: str = ""
    only: List[str] = field(default_factory=list)
    skip: List[str] = field(default_factory=list)
    timeout: float = 60.0  # each TensorFlow import of the doctor's diagnoses
    job_id: str = field(default_factory=lambda: uuid.uuid4().hex[:16])

    @classmethod
    def from_dict(cls, data: Dict[str, Any]) -> "Job":
        return cls(str(data["operation"]), str(data["python"]), float(data["deadline_s"]), str(data.get("plan_id", "")),
                   [str(x) for x in data.get("only") or ()], [str(x) for x in data.get("skip") or ()],
                   float(data.get("timeout", 60.0)), str(data["job_id"]))


def environment_key(python: str) -> str:
    """One name per environment, from its interpreter's path without running it: the real directory the
    interpreter is in (a venv's bin/, whatever `python` links to) and the real interpreter (two system
    Pythons in /usr/bin). bin/python and bin/python3 of one venv share it; two venvs never do."""
    path = os.path.abspath(python)
    blob = os.path.realpath(os.path.dirname(path)) + "\0" + os.path.realpath(path)
    return hashlib.sha256(blob.encode("utf-8", "surrogateescape")).hexdigest()[:16]


def _home(python: str) -> Path:
    from tfdoctor.files.own_files import cache_dir

    return cache_dir() / OUTCOMES / environment_key(python)


def _path(job: Job) -> Path:
    return _home(job.python) / f"{job.job_id}.json"


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def _write(path: Path, record: Dict[str, Any]) -> None:
    from tfdoctor.files.own_files import cache_dir, private_dir, write_private

    private_dir(path.parent, cache_dir())
    write_private(path, json.dumps(record, indent=1))


def _read(path: Path) -> Optional[Dict[str, Any]]:
    from tfdoctor.files.own_files import read_private

    try:
        record = json.loads(read_private(path, RECORD_LIMIT))
    except (OSError, ValueError):
        return None
    if not isinstance(record, dict) or not isinstance(record.get("job"), dict):
        return None
    return record


# --- the asker's side ------------------------------------------------------------------------------------

def _process_id(pid: int) -> Dict[str, Any]:
    """A process named so that a reused pid is not taken for it: its pid and start time."""
    import psutil

    return {"pid": pid, "create_time": psutil.Process(pid).create_time()}


def start(job: Job) -> "subprocess.Popen[bytes]":
    """Record the job as starting and start its detached child. OSError when neither can be done."""
    asker = _process_id(os.getpid())
    _write(_path(job), {"state": "starting", "job": asdict(job), "asker": asker, "requested_at": _now(),
                        "requested_at_s": time.time()})
    home = str(Path(__file__).resolve().parents[2])  # the directory holding this tfdoctor package
    here = os.getcwd()
    paths = [home] + [p for p in sys.path if p and p != home and os.path.abspath(p) != here]
    detach: Dict[str, Any] = ({"start_new_session": True} if os.name == "posix" else
                              {"creationflags": getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0)
                               | getattr(subprocess, "DETACHED_PROCESS", 0)})
    # -I: no PYTHON* variables, no user site, no working directory on the child's own path (the
    # environment's variables still reach the doctor's children and the installer, as they did the asker's)
    return subprocess.Popen([sys.executable, "-I", "-c", _LAUNCH, json.dumps(paths),
                             json.dumps({**asdict(job), "asker": asker})],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            close_fds=True, **detach)


def run(job: Job, started: Callable[["subprocess.Popen[bytes]"], None] = lambda process: None) -> Dict[str, Any]:
    """Start the job and wait for its end; its record (`done`), or a `lost` one when the child ended
    without writing it. The record stays until `forget`: an asker that is gone by then leaves it to `settle`."""
    process = start(job)
    started(process)
    process.wait()
    record = _read(_path(job))
    if record is None or record.get("state") != "done":
        return _lost(record or {"job": asdict(job)}, f"exit status {process.returncode}")
    return record


def forget(job: Job) -> None:
    """The job's outcome was reported: drop its record."""
    try:
        os.unlink(_path(job))
    except OSError:
        pass


def _running(named: Any) -> bool:
    """The process `named` (`_process_id`) still runs: same pid, same start, not a zombie."""
    import psutil

    try:
        process = psutil.Process(int(named["pid"]))
        return (abs(process.create_time() - float(named["create_time"])) < 0.01
                and process.status() != psutil.STATUS_ZOMBIE)
    except (psutil.Error, KeyError, TypeError, ValueError):
        return False


def _alive(record: Dict[str, Any]) -> bool:
    if record.get("state") == "starting":
        return time.time() - float(record.get("requested_at_s") or 0) < STARTING_GRACE_S
    return record.get("state") == "running" and _running(record)


def _asked_elsewhere(record: Dict[str, Any]) -> bool:
    """Another process that asked for the job still runs: it tells the outcome itself (in its answer, or
    its next call about the environment), and a record taken from under it would read to it as lost."""
    asker = record.get("asker")
    return isinstance(asker, dict) and asker.get("pid") != os.getpid() and _running(asker)


def _lost(record: Dict[str, Any], how: str) -> Dict[str, Any]:
    job = record.get("job") or {}
    pid = record.get("pid")
    stage = f"; it was at: {record['stage']}" if record.get("stage") else ""
    return {**record, "state": "done", "result": "lost",
            "error": f"the process that ran {job.get('operation', 'the fix')} (pid {pid or '?'}, {how}) ended "
                     f"without recording how it ended{stage}. The environment may be half changed: `tfdoctor fix "
                     "--undo` completes an interrupted restore or puts the last snapshot back."}


def describe(record: Dict[str, Any]) -> str:
    job = record.get("job") or {}
    stage = f", at: {record['stage']}" if record.get("stage") else ""
    started = record.get("started_at") or record.get("requested_at")
    return (f"an {'apply' if job.get('operation') == 'apply' else 'undo'} of this environment started at {started} "
            f"is still running (pid {record.get('pid', '?')}{stage})")


def _records(python: str) -> list[tuple[Path, Dict[str, Any]]]:
    home = _home(python)
    try:
        names = sorted(entry.name for entry in os.scandir(home) if entry.name.endswith(".json"))
    except OSError:
        return []
    found = []
    for name in names[-_KEEP:]:
        record = _read(home / name)
        if record is not None:
            found.append((home / name, record))
    return sorted(found, key=lambda item: str(item[1].get("requested_at") or item[1].get("started_at") or ""))


def settle(python: str, wait_s: float, skip: Collection[str] = (), poll_s: float = 0.2) -> list[Dict[str, Any]]:
    """How the earlier applies and undos of `python`'s environment ended, oldest first, each given once (its
    record is dropped). One still running is waited for up to `wait_s` (StillRunning after that): what is
    asked next about the environment must see it finished. `skip`: job ids whose asker reports them itself;
    so are the jobs of another process that asked for them and still runs."""
    deadline = time.monotonic() + wait_s
    while True:
        records = [(path, record) for path, record in _records(python)
                   if str((record.get("job") or {}).get("job_id")) not in skip and not _asked_elsewhere(record)]
        running = [record for _, record in records if _alive(record)]
        if not running:
            break
        if time.monotonic() >= deadline:
            raise StillRunning(describe(running[0]))
        time.sleep(poll_s)
    outcomes = []
    for path, record in records:
        outcomes.append(record if record.get("state") == "done" else _lost(record, "no longer running"))
        try:
            os.unlink(path)
        except OSError:
            pass
    return outcomes


# --- the child --------------------------------------------------------------------------------------------

def _stop(signum: int, frame: object) -> None:
    for each in _ENDING:  # one stop is enough: the unwinding (the put-back) must finish
        signal.signal(each, _ignore)
    raise Stopped(f"stopped by signal {signum}")


def _ignore(signum: int, frame: object) -> None:
    """A handler, not SIG_IGN: children started meanwhile must not inherit an ignored signal."""


_ENDING = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name))


def _deadline(seconds: float) -> threading.Timer:
    """At the deadline, the main thread is signalled as by SIGTERM (pthread_kill: its blocking wait is cut
    short, where a process-wide signal may land on another thread)."""
    main_thread = threading.main_thread().ident

    def expire() -> None:
        if hasattr(signal, "pthread_kill") and main_thread is not None:
            signal.pthread_kill(main_thread, signal.SIGTERM)
        else:
            os.kill(os.getpid(), signal.SIGTERM)

    timer = threading.Timer(seconds, expire)
    timer.daemon = True
    return timer


def _stopped_behind(exc: BaseException) -> Optional[Stopped]:
    """The Stopped `exc` is, or was raised while unwinding from (a signal between a lock's release and
    re-acquire surfaces as a RuntimeError over it)."""
    seen: set[int] = set()
    current: Optional[BaseException] = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, Stopped):
            return current
        seen.add(id(current))
        current = current.__context__
    return None


def _apply(job: Job, ui: Any, redact: Callable[[str], str]) -> Dict[str, Any]:
    from tfdoctor.diagnosis.options import redact_document
    from tfdoctor.fixer.flow import FixOptions
    from tfdoctor.fixer.proven import apply_proven

    options = FixOptions(job.python, tuple(job.only), tuple(job.skip), yes=True, system=False, timeout=job.timeout,
                         redact=lambda document: redact_document(document, True))
    applied = apply_proven(options, job.plan_id, ui)
    return {"result": "repaired" if applied.applied else "put back", "exit_code": applied.exit_code,
            "verified": applied.applied, "changes": [redact(line) for line in applied.changes],
            "left_to_you": [redact(line) for line in applied.left_to_you]}


def _undo(job: Job, ui: Any, redact: Callable[[str], str]) -> Dict[str, Any]:
    from tfdoctor.fixer import flow

    code = flow.undo(job.python, ui, yes=True)
    return {"result": "restored" if code == flow.EXIT_REPAIRED else "not restored", "exit_code": code,
            "verified": code == flow.EXIT_REPAIRED}


def main(spec: str) -> None:
    """The detached child: run the job, record how it ended, exit. Never returns."""
    data = json.loads(spec)
    job = Job.from_dict(data)
    path = _path(job)

    from tfdoctor.diagnosis.options import text_redactor
    from tfdoctor.fixer.environment import FixError
    from tfdoctor.fixer.proven import RecordingUi
    from tfdoctor.processes.commands import CHILDREN

    redact = text_redactor(True)
    record: Dict[str, Any] = {"state": "running", "job": asdict(job), "asker": data.get("asker"),
                              **_process_id(os.getpid()), "started_at": _now(), "stage": "starting"}
    _write(path, record)
    # the holder the environment's lock names (ownership.py writes sys.argv) to a `tfdoctor fix` refused meanwhile
    sys.argv = ["tfdoctor", "mcp", f"{job.operation}_fix", "--python", job.python]

    def stage(text: str) -> None:
        record["stage"] = text
        try:
            _write(path, record)
        except OSError:
            pass

    ui = RecordingUi(redact, stage)
    for each in _ENDING:
        signal.signal(each, _stop)
    timer = _deadline(job.deadline_s)
    timer.start()
    outcome: Dict[str, Any]
    try:
        outcome = (_apply if job.operation == "apply" else _undo)(job, ui, redact)
    except FixError as exc:  # refused before any change: the lock is held, the proof no longer holds, ...
        outcome = {"result": "refused", "exit_code": 2, "verified": False, "error": redact(str(exc)),
                   "refused_for": getattr(exc, "reason", "cannot run")}
    except BaseException as exc:  # noqa: BLE001 - whatever ended the run is recorded, then the process ends
        stopped = _stopped_behind(exc)
        timed_out = stopped is not None and not timer.is_alive()
        why = (f"ran past its deadline of {job.deadline_s:g} s" if timed_out else str(stopped) if stopped
               else f"{type(exc).__name__}: {exc}")
        outcome = {"result": "stopped" if stopped else "crashed", "exit_code": 1, "verified": False,
                   "error": redact(f"{job.operation} {why}; the lines before say whether the snapshot was put back")}
    finally:
        timer.cancel()
        CHILDREN.kill_all()  # nothing the run started outlives it
    record.update(outcome, state="done", finished_at=_now(), messages=ui.lines)
    record.setdefault("changes", [])
    record.setdefault("left_to_you", [])
    try:
        _write(path, record)
    finally:
        os._exit(0)  # not the interpreter's shutdown, which would join a collector's thread without a bound
