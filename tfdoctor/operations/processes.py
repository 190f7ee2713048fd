"""The operations' child processes, as a door sees them: the head start of a plain diagnosis (its first children
started before the command line is even parsed), every child killed at once on an interrupt, and the children's
empty working directory removed on the way out (os._exit skips the atexit that would). Signal handlers call these:
they take no lock the interrupted thread may hold."""

from __future__ import annotations

import sys
from typing import Iterable


def start_head_start(only: Iterable[str], skip: Iterable[str], deep: bool) -> None:
    """Start the target's and the integrity collectors' children as the run will ask for them (the run takes them
    only if it would start the very same commands: processes/commands.HeadStarts). Never raises: a run that cannot
    start them says why its own way."""
    from tfdoctor.collect import integrity, target
    from tfdoctor.diagnosis.doctor import needed_sections, selected_checks, validate_python
    from tfdoctor.processes.commands import HEAD_STARTS

    try:
        python = validate_python(sys.executable)
        HEAD_STARTS.start(target.command(python))
        # the integrity child walks its RECORDs while the checks are imported, then reads its options
        checking = HEAD_STARTS.start_unsettled([*integrity.command_without_options(python), "-"])
        checks = selected_checks(tuple(only), tuple(skip), deep=deep)
        settled = integrity.command(python, needed_sections(checks))
        HEAD_STARTS.settle(checking, settled, settled[-1])
    except Exception:  # noqa: BLE001 - CannotRun, OSError, a broken check module: the run says why
        return


def discard_head_start() -> None:
    """Kill and reap the head start's children no collector took."""
    from tfdoctor.processes.commands import HEAD_STARTS

    HEAD_STARTS.discard()


def kill_head_start_in_handler() -> None:
    from tfdoctor.processes.commands import HEAD_STARTS

    HEAD_STARTS.kill_in_handler()


def kill_all_children() -> None:
    """Every child any operation of this process started, killed with what it started: nothing outlives the doctor."""
    from tfdoctor.processes.commands import CHILDREN

    CHILDREN.kill_all()


def reopen_children() -> None:
    """Let children start again after `kill_all_children` (a server that runs the next request after a cancelled one)."""
    from tfdoctor.processes.commands import CHILDREN

    CHILDREN.reopen()


def remove_working_directory() -> None:
    """The children's empty working directory (processes/commands.NEUTRAL)."""
    from tfdoctor.processes.commands import NEUTRAL

    NEUTRAL.remove()
