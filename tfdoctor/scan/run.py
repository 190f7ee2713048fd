"""Diagnosing many environments at once: each is `tfdoctor --python PATH --json` (the CLI's own run path,
with the scan's --deep/--probe/--timeout/--strict/--config passed through), at most one per core at a time.

A process per environment, not a thread: the collectors keep one process-wide registry of their children
so that an interrupt or an unusable interpreter can kill them all at once (collect/commands.py), which is
right for one diagnosis and wrong for several side by side (one environment's dead interpreter would kill
the other diagnoses' children). A separate doctor per environment also means the scan gives exactly the
verdict a single run gives. An environment that cannot be diagnosed (no interpreter, one that does not
start, a doctor that crashed or hung) is a result with the reason, never an exception out of here.

On an interrupt the scan stops starting doctors and sends the running ones SIGTERM, which each handles as
a single run does (its children killed, exit 143); one that does not end within STOP_GRACE_S is killed.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional, Sequence

from tfdoctor.scan.find import Environment

STOP_GRACE_S = 10.0  # after an interrupt, how long a running doctor gets to end on its own
REASON_PREFIX = "tfdoctor: error: "


@dataclass(frozen=True)
class ScanOptions:
    """What the scan passes through to every environment's doctor."""

    probe: bool = False
    deep: bool = False
    timeout: Optional[float] = None
    strict: bool = False
    config: Optional[str] = None
    redact: bool = True

    def arguments(self, python: str) -> list[str]:
        args = ["--python", python, "--json"]
        args += ["--deep"] if self.deep else [] if self.probe else ["--no-probe"]
        args += ["--timeout", str(self.timeout)] if self.timeout is not None else []
        args += ["--strict"] if self.strict else []
        args += ["--config", self.config] if self.config else []
        return args + ([] if self.redact else ["--no-redact"])

    def limit_s(self) -> float:
        """How long one doctor may take before the scan gives up on it: its import and probe timeout, the
        workload, and its own collectors' timeouts (target 30 s, integrity 30 s) with room to spare."""
        return (self.timeout or 60.0) + (60.0 if self.deep else 0.0) + 120.0


@dataclass(frozen=True)
class Diagnosed:
    environment: Environment
    document: Optional[dict[str, Any]]  # the report, as `tfdoctor --python PATH --json` printed it
    exit_code: int  # what that run exited with: 0, 1, or 2 when it could not run
    reason: Optional[str]  # why it could not run
    seconds: float


def cores() -> int:
    """The cores this process may run on (its affinity where the OS says, else the machine's count)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


@dataclass
class Doctors:
    """The doctor processes running now, to stop on an interrupt."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    running: set = field(default_factory=set)
    stopping: threading.Event = field(default_factory=threading.Event)

    def start(self, argv: list[str]) -> Optional[subprocess.Popen]:
        with self.lock:
            if self.stopping.is_set():
                return None
            process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            self.running.add(process)
            return process

    def finished(self, process: subprocess.Popen) -> None:
        with self.lock:
            self.running.discard(process)

    def alive(self) -> list[subprocess.Popen]:
        with self.lock:
            return list(self.running)

    def stop(self) -> None:
        """No new doctor starts; the running ones are asked to end (SIGTERM: they kill their children)."""
        with self.lock:
            self.stopping.set()
        for process in self.alive():
            try:
                process.send_signal(signal.SIGTERM)
            except OSError:
                pass


def diagnose_one(environment: Environment, options: ScanOptions, doctors: Doctors) -> Optional[Diagnosed]:
    started = time.perf_counter()
    process = doctors.start([sys.executable, "-m", "tfdoctor", *options.arguments(environment.python)])
    if process is None:
        return None
    try:
        out, err = process.communicate(timeout=options.limit_s())
    except subprocess.TimeoutExpired:
        process.send_signal(signal.SIGTERM)
        try:
            out, err = process.communicate(timeout=STOP_GRACE_S)
        except subprocess.TimeoutExpired:
            process.kill()
            out, err = process.communicate()
        return Diagnosed(environment, None, 2, f"tfdoctor did not finish within {options.limit_s():.0f} s",
                         time.perf_counter() - started)
    finally:
        doctors.finished(process)
    seconds = time.perf_counter() - started
    said = err.decode("utf-8", "replace").strip().splitlines()
    if process.returncode in (0, 1):
        try:
            return Diagnosed(environment, json.loads(out), process.returncode, None, seconds)
        except ValueError as exc:
            return Diagnosed(environment, None, 2, f"tfdoctor printed no report ({exc})", seconds)
    reason = next((line[len(REASON_PREFIX):] for line in reversed(said) if line.startswith(REASON_PREFIX)), None)
    if reason is None:
        reason = f"tfdoctor exited {process.returncode}" + (f": {said[-1]}" if said else "")
    return Diagnosed(environment, None, 2, reason, seconds)


def expected_cost(environment: Environment) -> int:
    """2 where a TensorFlow is installed (its import takes seconds), 1 for another interpreter, 0 for none.
    The slow ones start first, so that the last doctor to finish is a quick one and no core idles long."""
    prefix = Path(environment.prefix)
    patterns = ("lib/python*/site-packages/tensorflow*.dist-info", "Lib/site-packages/tensorflow*.dist-info")
    if any(next(prefix.glob(pattern), None) is not None for pattern in patterns):
        return 2
    return 1 if os.path.exists(environment.python) else 0


def diagnose_all(environments: Sequence[Environment], options: ScanOptions, workers: Optional[int] = None,
                 done: Optional[Callable[[Diagnosed], None]] = None) -> list[Diagnosed]:
    """Every environment diagnosed, in the order given; `done` is called (in this thread) as each ends."""
    doctors = Doctors()
    results: dict[int, Diagnosed] = {}
    pool = ThreadPoolExecutor(max_workers=max(1, min(workers or cores(), len(environments) or 1)),
                              thread_name_prefix="scan")
    futures: dict[Future, int] = {}
    try:
        slowest_first = sorted(range(len(environments)), key=lambda i: -expected_cost(environments[i]))
        futures = {pool.submit(diagnose_one, environments[index], options, doctors): index for index in slowest_first}
        pending = set(futures)
        while pending:
            finished, pending = wait(pending, return_when=FIRST_COMPLETED)
            for future in finished:
                diagnosed = future.result()
                if diagnosed is not None:
                    results[futures[future]] = diagnosed
                    if done is not None:
                        done(diagnosed)
    except BaseException:
        doctors.stop()
        pool.shutdown(wait=False, cancel_futures=True)
        deadline = time.monotonic() + STOP_GRACE_S
        while doctors.alive() and time.monotonic() < deadline:
            time.sleep(0.02)
        for process in doctors.alive():
            process.kill()
        raise
    pool.shutdown(wait=True)
    return [results[index] for index in sorted(results)]
