"""What the command line prints: the report in its format, to stdout or a file, with GitHub Actions'
annotations and job summary; the one-line errors; the live display while a run works."""

from __future__ import annotations

import sys
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

import typer

if TYPE_CHECKING:
    from tfdoctor.render.formats import OutputFormat

REPORT_WIDTH = 100  # columns of the text report off a terminal (a file, a pipe, a CI log)
ERROR_LINE_LIMIT = 300  # characters of an error line; -v shows the whole message


def _choices(command: str) -> Any:
    """The `--format` choices of a command: the registered formats that serve it (render/formats.py)."""
    from tfdoctor.render.formats import serving

    names = serving(command)
    return Enum(f"{command.title()}Format", {name: name for name in names}, type=str)


# typer reads choices from an Enum: one per kind of output, built from the registry, so a format that cannot
# render a command's output is no choice of it.
Format = _choices("report")  # run and explain
DiffFormat = _choices("diff")
ScanFormat = _choices("scan")
JSON_FORMAT = "json"  # what --json means for every command


def chosen(fmt: Any, as_json: bool) -> "OutputFormat":
    from tfdoctor.render.formats import output_format

    return output_format(JSON_FORMAT if as_json else fmt.value)


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


def emit(document: dict, fmt: "OutputFormat", verbose: bool, output: Optional[Path], quiet: bool = False) -> None:
    """The report in its format, then (under GitHub Actions or with --format github) the annotations and
    the job summary. Annotations go to stdout unless stdout carries JSON or Markdown: then to stderr,
    which the Actions runner reads for workflow commands too."""
    import os

    from tfdoctor.render.formats import Look

    terminal = output is None and sys.stdout.isatty()
    as_text = fmt.colored or fmt.annotates  # text for a reader (a terminal, a CI log), where annotations go inline
    color = terminal and fmt.colored and not os.environ.get("NO_COLOR")
    assert fmt.report is not None  # the choices are the formats that serve a report
    text = fmt.report(document, Look(verbose=verbose, quiet=quiet, color=color, width=_report_width(terminal)))
    if for_github(fmt):
        from tfdoctor.render.github import guarded, step_summary, workflow_annotations

        notes = workflow_annotations(document)
        if output is None and as_text:
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


def for_github(fmt: "OutputFormat") -> bool:
    """Output for GitHub Actions: --format github, or any run under Actions."""
    import os

    return fmt.annotates or os.environ.get("GITHUB_ACTIONS") == "true"


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
