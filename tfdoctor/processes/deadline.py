"""One total deadline per operation (a run, `fix`, `fix --undo`, `--prove`, `scan`): every child started
while it holds gets at most the time that is left, so an operation ends when it said it would, however
many children it starts one after another and whatever each is allowed on its own.

The deadline is a context variable: it follows the code that runs the operation, and the collectors'
and the scan's worker threads carry it over (`carried`), while two operations side by side in one process
(the scan's diagnoses, a server's requests) each keep their own. Nested deadlines only shorten: a run
inside a scan ends by the earlier of the two. A restore of a rollback snapshot is never cut short
(`suspended`): half a restore is worse than a late one.
"""

from __future__ import annotations

import contextvars
import math
import time
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Optional

# Each operation's deadline, in one place: the commands' help states them from here.
# A run: its TensorFlow import (--timeout) and experiments (--experiments-timeout), and this much for the
# children beside them (the interpreter's description, 10 s and 10 s more to tell whether it is a Python;
# the RECORD check, 30 s; nvidia-smi).
RUN_MARGIN_S = 30.0
# `tfdoctor fix`: proving the plan (and any trials) and applying it; a plan cut mid-apply is put back.
FIX_S = 3600.0
# `tfdoctor fix --undo`: the interpreter's answers before the restore (the environment's place, 30 s; its
# distributions, 60 s). A restore, once begun, is finished: its own check of the result takes 60 s at most.
UNDO_S = 90.0
# `tfdoctor --prove`: every trial on every throwaway copy.
PROVE_S = 1800.0
# `tfdoctor scan`, unless --deadline says otherwise.
SCAN_S = 1800.0


def run_s(timeout: float, experiments_timeout: float, experiments: bool = True) -> float:
    """A run's deadline: its TensorFlow import, its experiments, and RUN_MARGIN_S."""
    return timeout + (experiments_timeout if experiments else 0.0) + RUN_MARGIN_S


@dataclass(frozen=True)
class Deadline:
    seconds: float  # as stated to the user
    at: float  # time.monotonic() when it passes

    def left(self) -> float:
        return self.at - time.monotonic()


_DEADLINE: contextvars.ContextVar[Optional[Deadline]] = contextvars.ContextVar("tfdoctor_deadline", default=None)


@contextmanager
def within(seconds: Optional[float]) -> Iterator[Deadline | None]:
    """The code inside ends by `seconds` from now (or by the deadline already held, if that is earlier).
    None: no deadline of its own (the one held, if any, still counts)."""
    held = _DEADLINE.get()
    if seconds is None:
        yield held
        return
    mine = Deadline(seconds, time.monotonic() + max(0.0, seconds))
    chosen = mine if held is None or mine.at < held.at else held
    token = _DEADLINE.set(chosen)
    try:
        yield chosen
    finally:
        _DEADLINE.reset(token)


@contextmanager
def suspended() -> Iterator[None]:
    """No deadline inside: for work that must finish once begun (a restore); each child keeps its own timeout."""
    token = _DEADLINE.set(None)
    try:
        yield
    finally:
        _DEADLINE.reset(token)


def current() -> Optional[Deadline]:
    return _DEADLINE.get()


def bounded(timeout: float) -> float:
    """`timeout`, or the time left to the operation's deadline when that is shorter (never below 0)."""
    held = _DEADLINE.get()
    if held is None:
        return timeout
    return max(0.0, min(timeout, held.left()))


def passed() -> bool:
    held = _DEADLINE.get()
    return held is not None and held.left() <= 0


def carried(function: Callable[..., Any]) -> Callable[..., Any]:
    """`function` run in a copy of the caller's context (its deadline, the children's owner): for a worker
    thread, which starts with an empty one. Each call of the result gets its own copy, taken now."""
    context = contextvars.copy_context()

    def run(*args: Any, **kwargs: Any) -> Any:
        return context.copy().run(function, *args, **kwargs)

    return run


def words(seconds: float) -> str:
    """'120 s', '30 min', '1 h' for a stated deadline."""
    if seconds >= 3600 and seconds % 3600 == 0:
        return f"{int(seconds // 3600)} h"
    if seconds >= 120 and seconds % 60 == 0:
        return f"{int(seconds // 60)} min"
    return f"{math.ceil(seconds):d} s"
