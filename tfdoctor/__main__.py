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
    from tfdoctor.checking.registry import split_ids

    return Diagnosis(split_ids(values["--only"]), split_ids(values["--skip"]), deep)


def start_children(asked: Diagnosis) -> None:
    """Start the target's and the integrity collectors' children as the run will ask for them."""
    from tfdoctor.collect import integrity, target
    from tfdoctor.processes.commands import HEAD_STARTS
    from tfdoctor.diagnosis.doctor import needed_sections, selected_checks, validate_python

    try:
        python = validate_python(sys.executable)
        HEAD_STARTS.start(target.command(python))
        # the integrity child walks its RECORDs while the checks are imported, then reads its options
        checking = HEAD_STARTS.start_unsettled([*integrity.command_without_options(python), "-"])
        checks = selected_checks(asked.only, asked.skip, deep=asked.deep)
        settled = integrity.command(python, needed_sections(checks))
        HEAD_STARTS.settle(checking, settled, settled[-1])
    except Exception:  # noqa: BLE001 - CannotRun, OSError, a broken check module: the run says why
        return  # its own way, or starts the children itself


@contextmanager
def head_start(args: list[str]) -> Iterator[None]:
    import threading

    asked = diagnosis_asked(args)
    if asked is None or not sys.executable or threading.current_thread() is not threading.main_thread():
        yield  # (signal handlers are the main thread's to set)
        return
    from tfdoctor.cli.interrupts import head_start_handlers
    from tfdoctor.processes.commands import HEAD_STARTS

    with head_start_handlers():
        try:
            start_children(asked)
            yield
        finally:
            HEAD_STARTS.discard()


def main() -> None:
    with head_start(sys.argv[1:]):
        from tfdoctor.cli.entry import main as run

        run()


if __name__ == "__main__":
    main()
