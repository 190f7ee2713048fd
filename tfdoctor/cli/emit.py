"""What the command line prints: the report in its format, to stdout or a file, with GitHub Actions'
annotations and job summary; the one-line errors; the live display while a run works."""

from __future__ import annotations

import sys
from enum import Enum
from pathlib import Path
from typing import Any, Optional

import typer

REPORT_WIDTH = 100  # columns of the text report off a terminal (a file, a pipe, a CI log)
ERROR_LINE_LIMIT = 300  # characters of an error line; -v shows the whole message


class Format(str, Enum):
    text = "text"
    json = "json"
    markdown = "markdown"
    github = "github"  # text, plus GitHub Actions annotations and the job summary
    openmetrics = "openmetrics"  # Prometheus / node_exporter textfile collector (tfdoctor/render/openmetrics.py)


def fail(message: str, verbose: Optional[bool] = None) -> "typer.Exit":
    """One line on stderr and exit 2. `verbose`: False for a command with -v (the line is cut and
    says so), True shows it whole, None for a command without -v (cut)."""
    typer.echo(f"tfdoctor: error: {one_line(message, verbose)}", err=True)
    return typer.Exit(2)


def one_line(message: str, verbose: Optional[bool] = None) -> str:
    """The message on one line, without control characters (it can quote a report or a config file) and
    without secrets: it can quote a tool's output too (an installer's, an interpreter's last line), and an
    error line is no report that --no-redact would ask to see whole."""
    from tfdoctor.operations.common import scrub_secrets
    from tfdoctor.render.sanitize import clean

    line = " ".join(clean(scrub_secrets(message)).split("\n"))
    if verbose or len(line) <= ERROR_LINE_LIMIT:
        return line
    return line[:ERROR_LINE_LIMIT] + (" … (-v shows all)" if verbose is False else " …")


def _write_stdout(text: str) -> None:
    try:
        sys.stdout.write(text)
    except UnicodeEncodeError:  # a legacy console code page: show what it can rather than crash
        encoding = sys.stdout.encoding or "ascii"
        sys.stdout.write(text.encode(encoding, "replace").decode(encoding))
    sys.stdout.flush()


def write(text: str, output: Optional[Path]) -> None:
    """The report to stdout in one write (signals wait until it is done), or to FILE as
    tfdoctor/files/output.py says: a file replaced whole, through a symlink; a device, FIFO or pipe written to."""
    if output is None:
        from tfdoctor.operations.output import signals_held

        with signals_held():
            _write_stdout(text)
        return
    from tfdoctor.operations.output import write_report

    try:
        write_report(str(output), text)
    except OSError as exc:
        raise fail(f"cannot write {output}: {exc.strerror or exc}") from None
    typer.echo(f"tfdoctor: report written to {output}", err=True)


def emit(document: dict, fmt: Format, verbose: bool, output: Optional[Path], quiet: bool = False) -> None:
    """The report in its format, then (under GitHub Actions or with --format github) the annotations and
    the job summary. Annotations go to stdout unless stdout carries JSON or Markdown: then to stderr,
    which the Actions runner reads for workflow commands too."""
    import os

    from tfdoctor.render import renderer

    github = for_github(fmt)
    if fmt in (Format.text, Format.github):
        from tfdoctor.render.text import render

        terminal = output is None and sys.stdout.isatty()
        color = terminal and fmt is Format.text and not os.environ.get("NO_COLOR")
        text = render(document, verbose=verbose, color=color, quiet=quiet, width=_report_width(terminal))
    else:
        text = renderer(fmt.value)(document, verbose=verbose)
    if github:
        from tfdoctor.render.github import guarded, step_summary, workflow_annotations

        notes = workflow_annotations(document)
        if output is None and fmt in (Format.text, Format.github):
            text = guarded(text) + notes  # the report's own lines run no workflow command
        elif notes:
            sys.stderr.write(notes)
        summary_file = os.environ.get("GITHUB_STEP_SUMMARY")
        if summary_file:
            try:
                with open(summary_file, "a", encoding="utf-8") as stream:
                    stream.write(step_summary(document) + "\n")
            except OSError as exc:
                typer.echo(f"tfdoctor: cannot append to GITHUB_STEP_SUMMARY {summary_file}: {exc.strerror or exc}",
                           err=True)
    write(text, output)


def _report_width(terminal: bool) -> int:
    """The terminal's columns (COLUMNS first, as shutil and rich read them; at least 40), or 100 off one."""
    if not terminal:
        return REPORT_WIDTH
    import shutil

    return max(40, shutil.get_terminal_size((REPORT_WIDTH, 24)).columns)


def for_github(fmt: Format) -> bool:
    """Output for GitHub Actions: --format github, or any run under Actions."""
    import os

    return fmt is Format.github or os.environ.get("GITHUB_ACTIONS") == "true"


def live_display(live: bool, target: str, no_redact: bool) -> Any:
    """The live display (a context manager and the progress callback), or a stand-in that is None."""
    if not live:
        from contextlib import nullcontext

        return nullcontext(None)
    from tfdoctor.operations.common import text_redactor
    from tfdoctor.render.live import LiveDisplay

    return LiveDisplay(target, redact=text_redactor(not no_redact))


def terminal_columns() -> int:
    import shutil

    return shutil.get_terminal_size().columns


def print_checks() -> None:
    from tfdoctor.operations.checks import list_checks

    checks = list_checks()
    width = max(len(c.id) for c in checks)
    for check in checks:
        where = ", ".join(check.platforms) or "all platforms"
        tags = f"  [{', '.join(check.tags)}]" if check.tags else ""
        typer.echo(f"{check.id:<{width}}  {check.title} ({where}){tags}")


def experiment_progress() -> Any:
    """Without the live display: a line on stderr while experiments run, only when stderr is a terminal."""
    if not sys.stderr.isatty():
        return None
    from tfdoctor.render.live import ExperimentLine

    return ExperimentLine(sys.stderr)
