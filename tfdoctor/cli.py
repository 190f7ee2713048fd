"""The command line. Heavy modules (rich, psutil, the checks' data) load only when a command needs them,
so `--version`, `--help` and `--list` stay fast."""

from __future__ import annotations

import sys
from enum import Enum
from pathlib import Path
from typing import List, Optional

import typer

from tfdoctor import __version__

EXIT_CODES_HELP = """\
Exit codes: 0 no failures (warnings allowed); 1 at least one check failed or crashed
(with --strict, a warning too); 2 the doctor could not run (bad arguments, unknown check id,
unusable --python, unreadable report)."""

app = typer.Typer(
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
    help=f"Diagnose a TensorFlow install and say how to fix it.\n\n{EXIT_CODES_HELP}",
)


class Format(str, Enum):
    text = "text"
    json = "json"
    markdown = "markdown"


def _split(values: Optional[List[str]]) -> tuple[str, ...]:
    """--only a,b --only c -> ('a', 'b', 'c')."""
    return tuple(part.strip() for value in values or () for part in value.split(",") if part.strip())


def _fail(message: str) -> "typer.Exit":
    typer.echo(f"tfdoctor: error: {message}", err=True)
    return typer.Exit(2)


def write(text: str, output: Optional[Path]) -> None:
    if output is None:
        try:
            sys.stdout.write(text)
        except UnicodeEncodeError:  # a legacy console code page: show what it can rather than crash
            encoding = sys.stdout.encoding or "ascii"
            sys.stdout.write(text.encode(encoding, "replace").decode(encoding))
        sys.stdout.flush()
        return
    try:
        output.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise _fail(f"cannot write {output}: {exc.strerror or exc}")
    typer.echo(f"tfdoctor: report written to {output}", err=True)


def emit(document: dict, fmt: Format, verbose: bool, output: Optional[Path]) -> None:
    from tfdoctor.render import renderer

    if fmt is Format.text:
        from tfdoctor.render.text import render

        color = None if output is None and sys.stdout.isatty() else False
        text = render(document, verbose=verbose, color=color)
    else:
        text = renderer(fmt.value)(document, verbose=verbose)
    write(text, output)


def redact(document: dict, no_redact: bool) -> dict:
    """Redaction happens once, on the document, before any renderer sees it (see tfdoctor/redact.py)."""
    document["redacted"] = not no_redact
    if no_redact:
        return document
    from tfdoctor.redact import Redactor

    return Redactor.for_this_machine().learning_from(document).document(document)


def _list_checks() -> None:
    from tfdoctor.doctor import selected_checks
    from tfdoctor.facts import PLATFORM_NAMES

    checks = selected_checks()
    width = max(len(c.id) for c in checks)
    for check in checks:
        where = ", ".join(PLATFORM_NAMES.get(p, p) for p in check.platforms) or "all platforms"
        tags = f"  [{', '.join(check.tags)}]" if check.tags else ""
        typer.echo(f"{check.id:<{width}}  {check.title} ({where}){tags}")


@app.callback(invoke_without_command=True)
def run(
    ctx: typer.Context,
    fmt: Format = typer.Option(Format.text, "--format", "-f", help="Output format."),
    as_json: bool = typer.Option(False, "--json", help="Same as --format json."),
    output: Optional[Path] = typer.Option(None, "--output", "-o", help="Write the report to FILE instead of stdout."),
    only: Optional[List[str]] = typer.Option(None, "--only", metavar="ID", help="Run only these checks (ids or tags; repeat or comma-separate)."),
    skip: Optional[List[str]] = typer.Option(None, "--skip", metavar="ID", help="Skip these checks (ids or tags)."),
    list_checks: bool = typer.Option(False, "--list", help="List the checks and exit (needs no TensorFlow)."),
    strict: bool = typer.Option(False, "--strict", help="Exit 1 on warnings too."),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Show details and timings for every check."),
    python: Optional[str] = typer.Option(None, "--python", metavar="PATH", help="Diagnose another interpreter (default: this one)."),
    timeout: float = typer.Option(60.0, "--timeout", min=1.0, help="Seconds the TensorFlow import and probe may take."),
    no_probe: bool = typer.Option(False, "--no-probe", help="Do not time the GPU against the CPU."),
    deep: bool = typer.Option(
        False,
        "--deep",
        help="Run the workload probe: crossover, dispatch, input pipeline, conv2d, training step, memory; up to ~15 s more.",
    ),
    no_redact: bool = typer.Option(False, "--no-redact", help="Show home paths, user and host names as they are."),
    version: bool = typer.Option(False, "--version", help="Print the version and exit."),
) -> None:
    if ctx.invoked_subcommand is not None:
        return
    if version:
        typer.echo(f"tfdoctor {__version__}")
        raise typer.Exit(0)
    if list_checks:
        _list_checks()
        raise typer.Exit(0)

    from tfdoctor.doctor import DoctorError, DoctorOptions, diagnose

    options = DoctorOptions(
        python=python or sys.executable,
        only=_split(only),
        skip=_split(skip),
        timeout=timeout,
        probe=not no_probe,
        deep=deep,
    )
    try:
        report = diagnose(options)
    except DoctorError as exc:
        raise _fail(str(exc))
    document = redact(report.to_dict(), no_redact)
    emit(document, Format.json if as_json else fmt, verbose, output)
    raise typer.Exit(report.exit_code(strict))


REPORT_HELP = "A report saved with --json (any 1.x schema), a fixture, or a hand-written facts file; '-' reads stdin."


@app.command(
    "explain",
    help="Diagnose a saved report again with today's checks.\n\n"
    "Facts the report lacks make the checks that need them skip ('not recorded'). The output is "
    "redacted unless --no-redact, even when the report was saved without redaction.\n\n"
    f"{EXIT_CODES_HELP}",
)
def explain_command(
    report: str = typer.Argument(..., metavar="REPORT.json", help=REPORT_HELP),
    fmt: Format = typer.Option(Format.text, "--format", "-f", help="Output format."),
    as_json: bool = typer.Option(False, "--json", help="Same as --format json."),
    output: Optional[Path] = typer.Option(None, "--output", "-o", help="Write the result to FILE instead of stdout."),
    only: Optional[List[str]] = typer.Option(None, "--only", metavar="ID", help="Run only these checks (ids or tags)."),
    skip: Optional[List[str]] = typer.Option(None, "--skip", metavar="ID", help="Skip these checks (ids or tags)."),
    strict: bool = typer.Option(False, "--strict", help="Exit 1 on warnings too."),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Show details and timings for every check."),
    no_redact: bool = typer.Option(False, "--no-redact", help="Show home paths, user and host names as they are."),
) -> None:
    from tfdoctor.doctor import DoctorError
    from tfdoctor.explain import ReportError, explain, read_report
    from tfdoctor.model import CheckResult
    from tfdoctor.report import exit_code_for

    try:
        document = explain(read_report(report), _split(only), _split(skip), redacted=not no_redact)
    except (ReportError, DoctorError) as exc:
        raise _fail(str(exc))
    code = exit_code_for([CheckResult.from_dict(r) for r in document["results"]], strict)
    emit(redact(document, no_redact), Format.json if as_json else fmt, verbose, output)
    raise typer.Exit(code)


@app.command(
    "diff",
    help="What differs between two reports (two machines, or one machine then and now): platform, "
    "Python, TensorFlow, GPU, packages, environment, and the verdict of today's checks on each.\n\n"
    "Exit codes: 0 no differences; 1 something differs; 2 a file is not a readable report.",
)
def diff_command(
    a: str = typer.Argument(..., metavar="A.json", help=REPORT_HELP),
    b: str = typer.Argument(..., metavar="B.json", help=REPORT_HELP),
    fmt: Format = typer.Option(Format.text, "--format", "-f", help="Output format."),
    as_json: bool = typer.Option(False, "--json", help="Same as --format json."),
    output: Optional[Path] = typer.Option(None, "--output", "-o", help="Write the result to FILE instead of stdout."),
    no_redact: bool = typer.Option(False, "--no-redact", help="Show home paths, user and host names as they are."),
) -> None:
    from tfdoctor.diff import RENDERERS, compare, exit_code
    from tfdoctor.explain import ReportError, read_report

    if a == "-" and b == "-":
        raise _fail("only one of A and B can be '-' (stdin)")
    try:
        document = compare(read_report(a), read_report(b), redacted=not no_redact)
    except ReportError as exc:
        raise _fail(str(exc))
    document = redact(document, no_redact)
    write(RENDERERS[(Format.json if as_json else fmt).value](document), output)
    raise typer.Exit(exit_code(document))


def main() -> None:
    sys.exit(run_command_line(sys.argv[1:]))


# Typer has shipped click both as a dependency and vendored; find its classes by name, not by module.
_USAGE_ERROR = next(c for c in typer.BadParameter.__mro__ if c.__name__ == "UsageError")


def run_command_line(args: List[str]) -> int:
    """Run the CLI and return its exit code; every failure to run is a one-line message and 2."""
    command = typer.main.get_command(app)
    try:
        code = command.main(args=args, prog_name="tfdoctor", standalone_mode=False)
    except _USAGE_ERROR as exc:
        typer.echo(f"tfdoctor: error: {exc.format_message()} (see 'tfdoctor --help')", err=True)
        return 2
    except (KeyboardInterrupt, typer.Abort):
        typer.echo("tfdoctor: interrupted", err=True)
        return 2
    except Exception as exc:  # noqa: BLE001 - the contract: a one-line reason, never a traceback
        if type(exc).__name__ == "Exit" and isinstance(getattr(exc, "exit_code", None), int):
            return exc.exit_code
        typer.echo(f"tfdoctor: internal error: {type(exc).__name__}: {exc}", err=True)
        return 2
    return code if isinstance(code, int) else 0
