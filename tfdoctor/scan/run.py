"""Diagnosing many environments at once, each as `tfdoctor --python PATH` would (tfdoctor.diagnosis.doctor.diagnose
with the options that run builds), at most one per core at a time.

Threads in this process, not a doctor process per environment: a diagnosis spends its time in its own
children (the TensorFlow import, the target's self-description, the RECORD check), which run side by side
anyway, and one process imports the doctor and parses its knowledge once instead of once per environment
(about 0.2 s of CPU each). Each diagnosis's children are registered under it (processes/commands.py), so one
environment's unusable interpreter ends only its own. An environment that cannot be diagnosed (no
interpreter, one that does not start, a doctor error) is a result with the reason, never an exception
out of here.

On an interrupt the main thread stops handing out environments and kills every child the collectors
started, again until the running diagnoses have returned (one may be starting its children just then),
then lets the interrupt go on.
"""

from __future__ import annotations

import os
import threading
import time
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Optional, Sequence

from tfdoctor.diagnosis.doctor import CannotRun, DoctorOptions
from tfdoctor.scan.find import FoundEnvironment

STOP_GRACE_S = 10.0  # after an interrupt, how long the running diagnoses get to return


@dataclass(frozen=True)
class Diagnosed:
    environment: FoundEnvironment
    document: Optional[dict[str, Any]]  # the report document, prepared (redacted) as the CLI prints it
    exit_code: int  # what `tfdoctor --python PATH` exits with: 0, 1, or 2 when it could not run
    reason: Optional[str]  # why it could not run
    seconds: float


def cores() -> int:
    """The cores this process may run on (its affinity where the OS says, else the machine's count)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def expected_cost(environment: FoundEnvironment) -> int:
    """2 where a TensorFlow is installed (its import takes seconds), 1 for another interpreter, 0 for none.
    The slow ones start first, so that the last diagnosis to finish is a quick one and no core idles long."""
    prefix = Path(environment.prefix)
    patterns = ("lib/python*/site-packages/tensorflow*.dist-info", "Lib/site-packages/tensorflow*.dist-info")
    if any(next(prefix.glob(pattern), None) is not None for pattern in patterns):
        return 2
    return 1 if os.path.exists(environment.python) else 0


def diagnose_one(environment: FoundEnvironment, options: DoctorOptions, prepare: Callable[[dict], dict],
                 strict: bool) -> Diagnosed:
    """One environment's diagnosis; under the scan's deadline (tfdoctor/processes/deadline.py) an environment it cuts
    short is a row saying so, not a verdict on the children it killed."""
    from tfdoctor.diagnosis.doctor import diagnose
    from tfdoctor.processes.deadline import current, passed, words

    started = time.perf_counter()
    scan_deadline = current()
    if scan_deadline is not None and passed():
        return Diagnosed(environment, None, 2, f"not diagnosed: the scan's deadline ({words(scan_deadline.seconds)}) "
                         "passed first", 0.0)
    try:
        report = diagnose(options)
    except CannotRun as exc:
        return Diagnosed(environment, None, 2, str(exc), time.perf_counter() - started)
    except Exception as exc:  # noqa: BLE001 - one environment must not end the scan
        return Diagnosed(environment, None, 2, f"internal error: {type(exc).__name__}: {exc}",
                         time.perf_counter() - started)
    if scan_deadline is not None and scan_deadline.left() <= 0:
        return Diagnosed(environment, None, 2, f"not finished: the scan's deadline ({words(scan_deadline.seconds)}) "
                         "passed during its diagnosis", time.perf_counter() - started)
    return Diagnosed(environment, prepare(report.to_dict()), report.exit_code(strict), None,
                     time.perf_counter() - started)


def diagnose_all(environments: Sequence[FoundEnvironment], options_for: Callable[[FoundEnvironment], DoctorOptions],
                 prepare: Callable[[dict], dict], strict: bool = False, workers: Optional[int] = None,
                 done: Optional[Callable[[Diagnosed], None]] = None) -> list[Diagnosed]:
    """Every environment diagnosed, in the order given; `done` is called (in this thread) as each ends."""
    from tfdoctor.processes.commands import CHILDREN
    from tfdoctor.processes.deadline import carried

    stopping = threading.Event()

    def task(environment: FoundEnvironment) -> Optional[Diagnosed]:
        if stopping.is_set():
            return None
        return diagnose_one(environment, options_for(environment), prepare, strict)

    results: dict[int, Diagnosed] = {}
    pool = ThreadPoolExecutor(max_workers=max(1, min(workers or cores(), len(environments) or 1)),
                              thread_name_prefix="scan")
    futures: dict[Future, int] = {}
    try:
        slowest_first = sorted(range(len(environments)), key=lambda i: -expected_cost(environments[i]))
        # each in a copy of this thread's context: the scan's deadline holds in the workers too
        futures = {pool.submit(carried(task), environments[index]): index for index in slowest_first}
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
        stopping.set()
        for future in futures:
            future.cancel()
        deadline = time.monotonic() + STOP_GRACE_S
        while any(not f.done() for f in futures) and time.monotonic() < deadline:
            CHILDREN.kill_all()
            wait([f for f in futures if not f.done()], timeout=0.05)
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown(wait=True)
    return [results[index] for index in sorted(results)]
