"""Run a command line: the typer app under the interrupt rules, every failure a one-line message."""

from __future__ import annotations

import sys
from functools import lru_cache
from typing import Any, List

import typer

from tfdoctor.cli.emit import one_line
from tfdoctor.cli.interrupts import Interrupted, InterruptsUnwind, end_after_interrupt, interrupt_behind, interrupted

# Typer has shipped click both as a dependency and vendored; find its classes by name, not by module.
_USAGE_ERROR: Any = next(c for c in typer.BadParameter.__mro__ if c.__name__ == "UsageError")  # click's, either one


def main() -> None:
    from tfdoctor.report.document import EXIT_INTERRUPTED, EXIT_TERMINATED

    code = run_command_line(sys.argv[1:])
    if code in (EXIT_INTERRUPTED, EXIT_TERMINATED):
        end_after_interrupt(code)
    sys.exit(code)


@lru_cache(maxsize=1)
def _click_command() -> Any:
    """`app` as a click command, built once per process. Typer builds it anew on each call (~9 ms, a third
    of an in-process `explain`); a process that runs several command lines (the tests) reuses it."""
    from tfdoctor.cli.app import app

    return typer.main.get_command(app)


def run_command_line(args: List[str]) -> int:
    """Run the CLI and return its exit code; every failure to run is a one-line message and 2;
    an interrupt is "interrupted" on stderr and 130 (SIGINT) or 143 (SIGTERM), nothing on stdout."""
    from tfdoctor.report.document import EXIT_INTERRUPTED

    try:
        with InterruptsUnwind():
            try:
                code = _click_command().main(args=args, prog_name="tfdoctor", standalone_mode=False)
            except BaseException as exc:  # said while a second signal is still ignored
                interrupt = interrupt_behind(exc)
                if interrupt is None:
                    raise
                return interrupted(128 + interrupt.signum)
    except Interrupted as exc:
        return interrupted(128 + exc.signum)
    except _USAGE_ERROR as exc:
        typer.echo(f"tfdoctor: error: {exc.format_message()} (see 'tfdoctor --help')", err=True)
        return 2
    except (KeyboardInterrupt, typer.Abort):
        return interrupted(EXIT_INTERRUPTED)
    except Exception as exc:  # noqa: BLE001 - the contract: a one-line reason, never a traceback
        exit_code = getattr(exc, "exit_code", None)
        if type(exc).__name__ == "Exit" and isinstance(exit_code, int):
            return exit_code
        typer.echo(f"tfdoctor: internal error: {one_line(f'{type(exc).__name__}: {exc}')}", err=True)
        return 2
    return code if isinstance(code, int) else 0
