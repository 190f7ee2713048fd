"""Every signal handler of the command line. SIGINT and SIGTERM unwind a run (the collectors kill their
children on the way) to exit 128 + signal with "tfdoctor: interrupted" on stderr and nothing on stdout;
before the command line is parsed, the head start's own handler does the same at once."""

from __future__ import annotations

import os
import sys
from contextlib import contextmanager
from typing import Iterator, Optional


class Interrupted(BaseException):
    """SIGINT or SIGTERM arrived: unwinds the run (children killed on the way) to exit 128 + signal.

    A BaseException of its own, not KeyboardInterrupt: click turns that into Abort and prints."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _raise_interrupted(signum: int, frame: object) -> None:
    import signal

    for each in (signal.SIGINT, signal.SIGTERM):  # the unwinding takes milliseconds: let it finish
        signal.signal(each, _ignore_signal)
    raise Interrupted(signum)


def _ignore_signal(signum: int, frame: object) -> None:
    """A handler, not SIG_IGN: children started meanwhile must not inherit an ignored signal."""


def end_after_interrupt(code: int, grace_s: float = 1.0) -> None:
    """Leave at once after an interrupt, with `code`. The collectors' threads end within moments once
    their children are dead (removing their temporary directories on the way): they get `grace_s`.
    Then os._exit, not the interpreter's shutdown: that joins threads without a bound and, at its very
    end, restores the default handlers, so a second Ctrl-C there printed a traceback or killed the
    process by the signal. Meanwhile a second signal ends it at once with the same code."""
    import os
    import signal
    import threading
    import time

    def end(signum: int, frame: object) -> None:
        os._exit(code)

    for each in (signal.SIGINT, signal.SIGTERM):
        signal.signal(each, end)
    deadline = time.monotonic() + grace_s
    for thread in threading.enumerate():
        if thread is not threading.current_thread() and not thread.daemon:
            thread.join(max(0.0, deadline - time.monotonic()))
    _remove_neutral_directory()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)


def _remove_neutral_directory() -> None:
    """The children's empty working directory (processes/commands.py): os._exit skips the atexit that removes it."""
    from tfdoctor.operations.processes import remove_working_directory

    remove_working_directory()


class InterruptsUnwind:
    """SIGINT and SIGTERM raise Interrupted in the main thread for the length of a run (then the old
    handlers come back): the collectors kill their children on the way out (tfdoctor/collect)."""

    def __enter__(self) -> None:
        import signal
        import threading

        self.saved = {}
        if threading.current_thread() is not threading.main_thread():
            return
        for signum in (signal.SIGINT, signal.SIGTERM):
            self.saved[signum] = signal.signal(signum, _raise_interrupted)

    def __exit__(self, *exc: object) -> None:
        import signal

        for signum, handler in self.saved.items():
            signal.signal(signum, handler)


def interrupt_behind(exc: Optional[BaseException]) -> Optional[Interrupted]:
    """The interrupt `exc` is, or was raised while unwinding from. A signal that lands between a lock's
    release and re-acquire (threading.Condition.wait's finally, under a future's result()) makes the
    `with` that holds it release an unlocked lock: RuntimeError, with the Interrupted as its context."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, Interrupted):
            return exc
        seen.add(id(exc))
        exc = exc.__context__
    return None


def interrupted(code: int) -> int:
    from tfdoctor.operations.processes import kill_all_children

    kill_all_children()  # an interrupt outside the collectors' wait: nothing may outlive the doctor
    try:
        sys.stderr.write("\ntfdoctor: interrupted\n" if sys.stderr.isatty() else "tfdoctor: interrupted\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass
    return code


def _interrupted_early(signum: int, frame: object) -> None:
    """SIGINT or SIGTERM before the command line has its own handlers (InterruptsUnwind), or after:
    the head start's children die with the doctor, which says so and exits 128 + signal, as a run does."""
    try:
        from tfdoctor.operations.processes import kill_head_start_in_handler

        kill_head_start_in_handler()
        _remove_neutral_directory()
    except Exception:  # noqa: BLE001 - no head start (its modules half imported when the signal came): nothing runs
        pass
    try:
        sys.stderr.write("\ntfdoctor: interrupted\n" if sys.stderr.isatty() else "tfdoctor: interrupted\n")
        sys.stderr.flush()
    finally:
        os._exit(128 + signum)


@contextmanager
def head_start_handlers() -> Iterator[None]:
    """The head start's handlers, for as long as its children may run (the main thread's to set)."""
    import signal

    saved = {signum: signal.signal(signum, _interrupted_early) for signum in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for signum, handler in saved.items():
            signal.signal(signum, handler)
