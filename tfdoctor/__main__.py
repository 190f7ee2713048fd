"""The `tfdoctor` command. A diagnosis of this interpreter starts its collectors' children before the
command line is parsed: typer and the checks take longer to import than those children take to run,
and a run that skips the TensorFlow checks waits for nothing else. A collector takes a child started
here only when it would start the very same command (tfdoctor/processes/commands.py: HeadStarts), so
the head start never changes what a run reports; anything this cheap look at the arguments does not
recognise goes the normal way, without one."""

from __future__ import annotations

import os
import sys
from contextlib import contextmanager
from typing import Iterator, NamedTuple, Optional

# The run's options that leave the children's command lines to --only, --skip and --deep. Any other
# argument (--python, --config and the requirement flags, which change the selection, --help, a
# subcommand, a typo) means no head start: typer decides what it means.
SWITCHES = frozenset({"--json", "--strict", "--verbose", "-v", "--quiet", "-q", "--no-probe", "--no-redact", "--deep"})
WITH_VALUE = frozenset({"--format", "-f", "--output", "-o", "--only", "--skip", "--timeout"})


class Diagnosis(NamedTuple):
    only: tuple[str, ...]
    skip: tuple[str, ...]
    deep: bool


def diagnosis_asked(args: list[str]) -> Optional[Diagnosis]:
    """What `args` select when they plainly ask for a diagnosis of this interpreter, else None."""
    if any(name.startswith("_") and name.endswith("_COMPLETE") for name in os.environ):
        return None  # shell completion
    values: dict[str, list[str]] = {"--only": [], "--skip": []}
    deep = False
    at = 0
    while at < len(args):
        name, equals, value = args[at].partition("=")
        if name in SWITCHES and not equals:
            deep = deep or name == "--deep"
        elif name in WITH_VALUE and (equals or at + 1 < len(args)):
            if not equals:
                at += 1
                value = args[at]
            if name in values:
                values[name].append(value)
        else:
            return None
        at += 1
    from tfdoctor.operations.checks import split_ids

    return Diagnosis(split_ids(values["--only"]), split_ids(values["--skip"]), deep)


def start_children(asked: Diagnosis) -> None:
    """Start the target's and the integrity collectors' children as the run will ask for them."""
    from tfdoctor.operations.processes import start_head_start

    start_head_start(asked.only, asked.skip, asked.deep)


@contextmanager
def head_start(args: list[str]) -> Iterator[None]:
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield  # (signal handlers are the main thread's to set)
        return
    from tfdoctor.cli.interrupts import head_start_handlers

    # the early handlers whether or not children start here: a SIGINT or SIGTERM while typer and the checks
    # still load (a second or more on a busy machine) is "interrupted" and 128 + signal, as later, not a death by
    # the signal (tests/attack/test_hanging_interpreter.py, 0.4 s into a run with --python)
    with head_start_handlers():
        asked = diagnosis_asked(args)
        if asked is None or not sys.executable:
            yield
            return
        from tfdoctor.operations.processes import discard_head_start

        try:
            start_children(asked)
            yield
        finally:
            discard_head_start()


def main() -> None:
    with head_start(sys.argv[1:]):
        from tfdoctor.cli.entry import main as run

        run()


def console() -> None:
    """The `tfdoctor` command and `python -m tfdoctor`: `main`, then the process ends without the interpreter's
    teardown, which frees every module one by one (typer, pydantic, rich, the checks, the knowledge tables): about
    a tenth of a run without the TensorFlow checks (0.8 s of 6 s on a loaded 2-core machine, strace).
    `main` stays the in-process entry (tests call it and catch its SystemExit)."""
    try:
        main()
    except SystemExit as done:
        if done.code is None or isinstance(done.code, int):
            leave_at_once(done.code or 0)
        raise


def leave_at_once(code: int) -> None:
    """os._exit(code) once what an exit must do is done: the atexit functions (the children's working directory)
    and both streams flushed. Returns, for the usual exit, when a thread still runs (the usual exit waits for it)
    or a stream cannot be flushed (the usual exit says so, as it always did)."""
    import atexit
    import threading

    if threading.active_count() > 1:
        return
    atexit._run_exitfuncs()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        return
    os._exit(code)


if __name__ == "__main__":
    console()
