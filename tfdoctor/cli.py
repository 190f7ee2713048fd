"""The command line. Heavy modules (rich, psutil, the checks' data) load only when a command needs them,
so `--version`, `--help` and `--list` stay fast."""

from __future__ import annotations

import sys
from enum import Enum
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, List, Optional

import typer

from tfdoctor import __version__

if TYPE_CHECKING:
    from tfdoctor.config import Config


def _exit_codes_help(cannot_run: str) -> str:
    return f"""\
Exit codes: 0 no failures (warnings allowed); 1 at least one check failed or crashed
(with --strict, a warning too; an unmet requirement is a failure); 2 the doctor could not run
({cannot_run});
130 interrupted (Ctrl-C); 143 terminated (SIGTERM)."""


EXIT_CODES_HELP = _exit_codes_help(
    "bad arguments, unknown check id, unusable --python, unreadable report, bad configuration")
EXPLAIN_EXIT_CODES_HELP = _exit_codes_help("bad arguments, unknown check id, unreadable report, bad configuration")
REPORT_WIDTH = 100  # columns of the text report off a terminal (a file, a pipe, a CI log)

app = typer.Typer(
    add_completion=True,  # typer's own --install-completion / --show-completion
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
    help=f"Diagnose a TensorFlow install and say how to fix it.\n\n{EXIT_CODES_HELP}",
)


class Format(str, Enum):
    text = "text"
    json = "json"
    markdown = "markdown"
    github = "github"  # text, plus GitHub Actions annotations and the job summary
    openmetrics = "openmetrics"  # Prometheus / node_exporter textfile collector (tfdoctor/render/openmetrics.py)


class Interrupted(BaseException):
    """SIGINT or SIGTERM arrived: unwinds the run (children killed on the way) to exit 128 + signal.

    A BaseException of its own, not KeyboardInterrupt: click turns that into Abort and prints."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _complete_checks(incomplete: str) -> List[str]:
    """Shell completion for --only and --skip: check ids and tags; in 'a,b,pr' the last part."""
    from tfdoctor.registry import all_checks

    checks = all_checks()
    done, comma, last = incomplete.rpartition(",")
    chosen = set(done.split(",")) if comma else set()
    names = [c.id for c in checks] + sorted({tag for c in checks for tag in c.tags})
    return [f"{done}{comma}{name}" for name in names if name.startswith(last) and name not in chosen]


# --- options shared by `tfdoctor` (run) and `tfdoctor explain`, declared once ------------------------
FORMAT = typer.Option(Format.text, "--format", "-f",
                      help="Output format (github: text plus GitHub Actions annotations and job summary).")
JSON = typer.Option(False, "--json", help="Same as --format json.")
OUTPUT = typer.Option(None, "--output", "-o",
                      help="Write the report to FILE (a file is replaced whole; a device or pipe is written to).")
ONLY = typer.Option(None, "--only", metavar="ID", autocompletion=_complete_checks,
                    help="Run only these checks (ids or tags; repeat or comma-separate).")
SKIP = typer.Option(None, "--skip", metavar="ID", autocompletion=_complete_checks,
                    help="Skip these checks (ids or tags).")
STRICT = typer.Option(False, "--strict", help="Exit 1 on warnings too.")
VERBOSE = typer.Option(False, "--verbose", "-v", help="Show details and timings for every check.")
QUIET = typer.Option(False, "--quiet", "-q", help="Text: only the problems and the summary line; no progress.")
NO_REDACT = typer.Option(False, "--no-redact", help="Show home paths, user and host names as they are.")
CONFIG = typer.Option(None, "--config", metavar="FILE",
                      help="Requirements and settings from FILE (a pyproject.toml with [tool.tfdoctor], or a TOML "
                           "file of the same keys) instead of the nearest pyproject.toml.")
REQUIRE_GPU = typer.Option(False, "--require-gpu", help="Require a GPU that TensorFlow lists.")
GPU_KIND = typer.Option(None, "--require-gpu-kind", metavar="metal|cuda",
                        help="Require a GPU of this kind (implies --require-gpu).")
REQUIRE_TF = typer.Option(None, "--require-tensorflow", metavar="SPEC",
                          help="Require a TensorFlow version (PEP 440, e.g. '>=2.16').")
REQUIRE_PYTHON = typer.Option(None, "--require-python", metavar="SPEC", help="Require a Python version (PEP 440).")
MIN_GFLOPS = typer.Option(None, "--min-gflops", metavar="N", help="Require the probe's best device to reach N GFLOPS.")
MIN_SPEEDUP = typer.Option(None, "--min-gpu-speedup", metavar="X", help="Require the GPU to be X times the CPU.")


# --- `--report-to`: post the report to a team server (issue 28; tfdoctor/report_to.py, stdlib only) ------
REPORT_TO = typer.Option(None, "--report-to", metavar="URL",
                         help="After printing the report, post it (redacted as printed) to a `tfdoctor serve` server.")
REPORT_TOKEN_FILE = typer.Option(None, "--report-token-file", metavar="FILE",
                                 help="The server's token, from FILE (default: $TFDOCTOR_REPORT_TOKEN).")
REPORT_HOSTNAME = typer.Option(False, "--report-hostname",
                               help="Send this machine's hostname with --report-to (default: only a random id).")
LABEL = typer.Option(None, "--label", metavar="KEY=VALUE", help="A label for --report-to (repeatable), e.g. team=vision.")


def _report_to(url: Optional[str], documents: List[dict], token_file: Optional[str], labels: Optional[List[str]],
               hostname: bool) -> None:
    """Post the reports; a failure is one line on stderr and leaves the exit code alone."""
    if not url or not documents:
        return
    from tfdoctor.report_to import report_to

    failure = report_to(url, documents, token_file, labels or [], hostname)
    if failure:
        typer.echo(_one_line(failure), err=True)


def _no_openmetrics(fmt: Format, command: str) -> None:
    if fmt is Format.openmetrics:
        raise _fail(f"{command} has no openmetrics format (it is one environment's report: tfdoctor, explain)")


ERROR_LINE_LIMIT = 300  # characters of an error line; -v shows the whole message


def _fail(message: str, verbose: Optional[bool] = None) -> "typer.Exit":
    """One line on stderr and exit 2. `verbose`: False for a command with -v (the line is cut and
    says so), True shows it whole, None for a command without -v (cut)."""
    typer.echo(f"tfdoctor: error: {_one_line(message, verbose)}", err=True)
    return typer.Exit(2)


def _one_line(message: str, verbose: Optional[bool] = None) -> str:
    from tfdoctor.render.sanitize import clean  # messages can quote a report or a config file

    line = " ".join(clean(message).split("\n"))
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
    tfdoctor/output.py says: a file replaced whole, through a symlink; a device, FIFO or pipe written to."""
    if output is None:
        from tfdoctor.output import SignalsHeld

        with SignalsHeld():
            _write_stdout(text)
        return
    from tfdoctor.output import write_report

    try:
        write_report(str(output), text)
    except OSError as exc:
        raise _fail(f"cannot write {output}: {exc.strerror or exc}")
    typer.echo(f"tfdoctor: report written to {output}", err=True)


def emit(document: dict, fmt: Format, verbose: bool, output: Optional[Path], quiet: bool = False) -> None:
    """The report in its format, then (under GitHub Actions or with --format github) the annotations and
    the job summary. Annotations go to stdout unless stdout carries JSON or Markdown: then to stderr,
    which the Actions runner reads for workflow commands too."""
    import os

    from tfdoctor.render import renderer

    github = _github(fmt)
    if fmt in (Format.text, Format.github):
        from tfdoctor.render.text import render

        terminal = output is None and sys.stdout.isatty()
        color = terminal and fmt is Format.text and not os.environ.get("NO_COLOR")
        text = render(document, verbose=verbose, color=color, quiet=quiet, width=_report_width(terminal))
    else:
        text = renderer(fmt.value)(document, verbose=verbose)
    if github:
        from tfdoctor.render.github import annotations, guarded, step_summary

        notes = annotations(document)
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


def _github(fmt: Format) -> bool:
    """Output for GitHub Actions: --format github, or any run under Actions."""
    import os

    return fmt is Format.github or os.environ.get("GITHUB_ACTIONS") == "true"


def redact(document: dict, no_redact: bool) -> dict:
    """Redaction happens once, on the document, before any renderer sees it (see tfdoctor/redact.py)."""
    document["redacted"] = not no_redact
    if no_redact:
        return document
    from tfdoctor.redact import Redactor

    return Redactor.for_this_machine().learning_from(document).document(document)


def _config(path: Optional[str], discover: bool, gpu: Optional[str], tensorflow: Optional[str],
            python: Optional[str], min_gflops: Optional[float], min_speedup: Optional[float]) -> "Config":
    """The configuration file (or none), then the requirement flags over it; ConfigError -> exit 2."""
    from tfdoctor import config as cfg

    try:
        loaded = cfg.load_config(path) if (path or discover) else cfg.Config()
        flags = {}
        for flag, value, checker, name in (
            ("--require-gpu-kind", gpu, cfg.gpu_requirement, "gpu"),
            ("--require-tensorflow", tensorflow, cfg.specifier, "tensorflow"),
            ("--require-python", python, cfg.specifier, "python"),
            ("--min-gflops", min_gflops, cfg.positive_number, "min_gflops"),
            ("--min-gpu-speedup", min_speedup, cfg.positive_number, "min_gpu_speedup"),
        ):
            if value is not None:
                try:
                    flags[name] = checker(value)
                except ValueError as exc:
                    raise _fail(f"{flag}: {exc}")
        return loaded.overridden(**flags)
    except cfg.ConfigError as exc:
        raise _fail(str(exc))


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
    fmt: Format = FORMAT,
    as_json: bool = JSON,
    output: Optional[Path] = OUTPUT,
    only: Optional[List[str]] = ONLY,
    skip: Optional[List[str]] = SKIP,
    list_checks: bool = typer.Option(False, "--list", help="List the checks and exit (needs no TensorFlow)."),
    strict: bool = STRICT,
    verbose: bool = VERBOSE,
    quiet: bool = QUIET,
    python: Optional[str] = typer.Option(None, "--python", metavar="PATH", help="Diagnose another interpreter (default: this one)."),
    timeout: Optional[float] = typer.Option(None, "--timeout", min=1.0,
                                            help="Seconds the TensorFlow import and probe may take (default 60)."),
    no_probe: bool = typer.Option(False, "--no-probe", help="Do not time the GPU against the CPU."),
    deep: bool = typer.Option(
        False,
        "--deep",
        help="Run the workload probe: crossover, dispatch, input pipeline, conv2d, training step, memory; up to ~15 s more.",
    ),
    config: Optional[str] = CONFIG,
    require_gpu: bool = REQUIRE_GPU,
    require_gpu_kind: Optional[str] = GPU_KIND,
    require_tensorflow: Optional[str] = REQUIRE_TF,
    require_python: Optional[str] = REQUIRE_PYTHON,
    min_gflops: Optional[float] = MIN_GFLOPS,
    min_gpu_speedup: Optional[float] = MIN_SPEEDUP,
    no_redact: bool = NO_REDACT,
    version: bool = typer.Option(False, "--version", help="Print the version and exit."),
    report_to: Optional[str] = REPORT_TO,
    report_token_file: Optional[str] = REPORT_TOKEN_FILE,
    report_hostname: bool = REPORT_HOSTNAME,
    label: Optional[List[str]] = LABEL,
) -> None:
    if ctx.invoked_subcommand is not None:
        return
    if version:
        typer.echo(f"tfdoctor {__version__}")
        raise typer.Exit(0)
    if list_checks:
        _list_checks()
        raise typer.Exit(0)

    if python is not None and not python.strip():
        raise _fail("--python needs the path of an interpreter; it is empty")
    settings = _config(config, True, require_gpu_kind or ("any" if require_gpu else None), require_tensorflow,
                       require_python, min_gflops, min_gpu_speedup)
    fmt = Format.json if as_json else fmt
    target = python or sys.executable
    live = fmt is Format.text and output is None and not quiet and sys.stdout.isatty()
    with _live_display(live, target, no_redact) as display:  # on screen before the doctor is even imported
        from tfdoctor.doctor import DoctorError, DoctorOptions, diagnose
        from tfdoctor.registry import split_ids

        options = DoctorOptions(
            python=target,
            only=split_ids(only) or settings.only,
            skip=split_ids(skip) or settings.skip,
            timeout=timeout if timeout is not None else settings.timeout or 60.0,
            probe=not no_probe,
            deep=deep,
            requirements=settings.requirements.to_facts(settings.source) if not settings.requirements.empty else None,
            progress=display,
        )
        try:
            report = diagnose(options)
        except DoctorError as exc:
            report, failure = None, str(exc)
    if report is None:  # said once the live display is gone
        raise _fail(failure, verbose)
    strict = strict or bool(settings.strict)
    document = redact(report.to_dict(), no_redact)
    emit(document, fmt, verbose, output, quiet)
    _report_to(report_to, [document], report_token_file, label, report_hostname)
    raise typer.Exit(report.exit_code(strict))


def _live_display(live: bool, target: str, no_redact: bool) -> Any:
    """The live display (a context manager and the progress callback), or a stand-in that is None."""
    if not live:
        from contextlib import nullcontext

        return nullcontext(None)
    from tfdoctor.render.live import LiveDisplay

    return LiveDisplay(target, redact=_live_redactor(no_redact))


def _live_redactor(no_redact: bool):
    if no_redact:
        return lambda text: text
    from tfdoctor.redact import Redactor

    return Redactor.for_this_machine().text


REPORT_HELP = "A report saved with --json (any 1.x schema), a fixture, or a hand-written facts file; '-' reads stdin."


@app.command(
    "explain",
    help="Diagnose a saved report again with today's checks.\n\n"
    "Facts the report lacks make the checks that need them skip ('not recorded'). The requirements the "
    "report recorded are judged again; --config and the --require-* flags replace them. The output is "
    "redacted unless --no-redact, even when the report was saved without redaction.\n\n"
    f"{EXPLAIN_EXIT_CODES_HELP}",
)
def explain_command(
    report: str = typer.Argument(..., metavar="REPORT.json", help=REPORT_HELP),
    fmt: Format = FORMAT,
    as_json: bool = JSON,
    output: Optional[Path] = OUTPUT,
    only: Optional[List[str]] = ONLY,
    skip: Optional[List[str]] = SKIP,
    strict: bool = STRICT,
    verbose: bool = VERBOSE,
    quiet: bool = QUIET,
    config: Optional[str] = CONFIG,
    require_gpu: bool = REQUIRE_GPU,
    require_gpu_kind: Optional[str] = GPU_KIND,
    require_tensorflow: Optional[str] = REQUIRE_TF,
    require_python: Optional[str] = REQUIRE_PYTHON,
    min_gflops: Optional[float] = MIN_GFLOPS,
    min_gpu_speedup: Optional[float] = MIN_SPEEDUP,
    no_redact: bool = NO_REDACT,
) -> None:
    from dataclasses import replace

    from tfdoctor.doctor import DoctorError, with_requirements
    from tfdoctor.registry import split_ids
    from tfdoctor.saved_reports import ReportError, explain, read_report
    from tfdoctor.model import CheckResult
    from tfdoctor.report import exit_code_for

    settings = _config(config, False, require_gpu_kind or ("any" if require_gpu else None), require_tensorflow, require_python, min_gflops, min_gpu_speedup)
    try:
        saved = read_report(report)
        if not settings.requirements.empty:
            facts = {k: v for k, v in saved.facts.items() if k != "requirements"}
            saved = replace(saved, facts=with_requirements(facts, settings.requirements.to_facts(settings.source)))
        document = explain(saved, split_ids(only) or settings.only, split_ids(skip) or settings.skip,
                           redacted=not no_redact)
    except (ReportError, DoctorError) as exc:
        raise _fail(str(exc), verbose)
    code = exit_code_for([CheckResult.from_dict(r) for r in document["results"]], strict or bool(settings.strict))
    emit(redact(document, no_redact), Format.json if as_json else fmt, verbose, output, quiet)
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
    from tfdoctor.saved_reports import ReportError, read_report

    _no_openmetrics(fmt, "diff")
    if a == "-" and b == "-":
        raise _fail("only one of A and B can be '-' (stdin)")
    try:
        document = compare(read_report(a), read_report(b), redacted=not no_redact)
    except ReportError as exc:
        raise _fail(str(exc))
    document = redact(document, no_redact)
    fmt = Format.json if as_json else fmt
    text = RENDERERS[Format.text.value if fmt is Format.github else fmt.value](document)
    if output is None and fmt in (Format.text, Format.github) and _github(fmt):
        from tfdoctor.render.github import guarded

        text = guarded(text)  # the reports' lines run no workflow command in the Actions log
    write(text, output)
    raise typer.Exit(exit_code(document))


@app.command(
    "fix",
    help="Repair the environment with the doctor's one plan, proven first on a throwaway copy.\n\n"
    "Diagnoses the environment, prints the plan and what it changes, runs the plan on a hard-link copy "
    "of the environment (conda: conda create --clone) and the doctor on that copy; only if the copy "
    "comes out with no failed check, and after you say yes (--yes for scripts), it writes a rollback "
    "record and snapshot and applies the plan to the environment. If applying fails, the snapshot is "
    "put back. --undo restores the last fix's snapshot. A system or externally managed Python is "
    "changed only with both --yes and --system.\n\n"
    "Exit codes: 0 repaired and the doctor passes (or nothing to repair); 1 the plan could not be "
    "verified or applied (the environment is as it was); 2 fix cannot run (bad --python, a system "
    "Python without --system, no terminal to ask and no --yes); 130/143 interrupted (any change undone).",
)
def fix_command(
    python: Optional[str] = typer.Option(None, "--python", metavar="PATH",
                                         help="The environment's interpreter (default: the one running tfdoctor)."),
    only: Optional[List[str]] = ONLY,
    skip: Optional[List[str]] = SKIP,
    dry_run: bool = typer.Option(False, "--dry-run", help="Ask the installer's resolver whether the plan "
                                 "resolves (needs the package index); change nothing."),
    yes: bool = typer.Option(False, "--yes", "-y", help="Do not ask before applying (scripts)."),
    system: bool = typer.Option(False, "--system", help="Allow changing a system or externally managed Python "
                                "(with --yes)."),
    undo: bool = typer.Option(False, "--undo", help="Restore the environment as it was before the last fix."),
    timeout: float = typer.Option(60.0, "--timeout", metavar="SECONDS", help="Time limit of each TensorFlow import."),
    no_redact: bool = NO_REDACT,
) -> None:
    from tfdoctor.doctor import DoctorError, validate_python
    from tfdoctor.fixer.environment import FixError
    from tfdoctor.fixer.flow import FixOptions, fix, undo as undo_fix
    from tfdoctor.render.fix_console import ConsoleUi
    from tfdoctor.registry import split_ids

    if python == "":
        raise _fail("--python: an empty path")
    try:
        target = validate_python(python or sys.executable)
    except DoctorError as exc:
        raise _fail(str(exc))
    ui = ConsoleUi()
    try:
        if undo:
            code = undo_fix(target, ui, yes)
        else:
            code = fix(FixOptions(target, split_ids(only), split_ids(skip), yes, system, dry_run, timeout,
                                  redact=lambda document: redact(document, no_redact)), ui)
    except (FixError, DoctorError) as exc:
        raise _fail(str(exc))
    raise typer.Exit(code)


@app.command(
    "scan",
    help="Find the Python environments on this machine and diagnose each: which has a TensorFlow that "
    "works, with the GPU?\n\n"
    "Without PATH: conda's environments, pyenv's versions, pipx and uv tool venvs, and every directory "
    "holding a pyvenv.cfg a few levels under the working and home directories. With PATHs: only what is "
    "under them (a PATH may also be an environment or an interpreter). Each is diagnosed as "
    "'tfdoctor --python ENV --no-probe' would, several at once (one per core).\n\n"
    "Exit codes: 0 at least one environment passes; 1 none does (or none was found); 2 bad arguments.",
)
def scan_command(
    paths: Optional[List[str]] = typer.Argument(None, metavar="PATH", help="Where to look (default: see above)."),
    fmt: Format = typer.Option(Format.text, "--format", "-f", help="Output format (github: as text)."),
    as_json: bool = JSON,
    output: Optional[Path] = typer.Option(None, "--output", "-o", help="Write the table to FILE instead of stdout."),
    probe: bool = typer.Option(False, "--probe", help="Time the GPU against the CPU in each environment."),
    deep: bool = typer.Option(False, "--deep", help="Run the workload probe in each environment (implies --probe)."),
    timeout: Optional[float] = typer.Option(None, "--timeout", min=1.0,
                                            help="Seconds each TensorFlow import (and probe) may take (default 60)."),
    depth: int = typer.Option(4, "--depth", min=0, help="Directory levels searched for pyvenv.cfg under each PATH."),
    jobs: Optional[int] = typer.Option(None, "--jobs", "-j", min=1,
                                       help="Environments diagnosed at once (default: the cores; 1 with --probe or "
                                            "--deep, whose timings need the machine to themselves)."),
    strict: bool = STRICT,
    config: Optional[str] = CONFIG,
    no_redact: bool = NO_REDACT,
    report_to: Optional[str] = REPORT_TO,
    report_token_file: Optional[str] = REPORT_TOKEN_FILE,
    report_hostname: bool = REPORT_HOSTNAME,
    label: Optional[List[str]] = LABEL,
) -> None:
    import os

    from tfdoctor.doctor import DoctorOptions
    from tfdoctor.render import scan_table
    from tfdoctor.scan import summary
    from tfdoctor.scan.find import Places, find_environments
    from tfdoctor.scan.run import diagnose_all

    _no_openmetrics(fmt, "scan")
    settings = _config(config, True, None, None, None, None, None)  # as `tfdoctor --python ENV` reads it
    missing = [path for path in paths or () if not os.path.lexists(os.path.expanduser(path))]
    if missing:
        raise _fail(f"{missing[0]}: no such file or directory")
    fmt = Format.json if as_json else fmt
    environments = find_environments(Places.default(paths or (), depth))
    requirements = settings.requirements.to_facts(settings.source) if not settings.requirements.empty else None

    def options_for(environment) -> DoctorOptions:
        return DoctorOptions(python=environment.python, only=settings.only, skip=settings.skip,
                             timeout=timeout if timeout is not None else settings.timeout or 60.0,
                             probe=probe or deep, deep=deep, requirements=requirements)

    text = _live_redactor(no_redact)
    bar = scan_table.ProgressBar(len(environments)) if environments and sys.stderr.isatty() else None
    with bar if bar is not None else _nullcontext():
        # timings need the machine to themselves: with --probe or --deep one environment at a time
        diagnosed = diagnose_all(environments, options_for, lambda document: redact(document, no_redact),
                                 strict=strict or bool(settings.strict), workers=jobs or (1 if probe or deep else None),
                                 done=(lambda d: bar(text(d.environment.prefix))) if bar is not None else None)
    rows = summary.sorted_rows([summary.row(d, text(d.environment.prefix), text(d.environment.python),
                                            text(d.reason) if d.reason else None) for d in diagnosed])
    if fmt is Format.json:
        rendered = scan_table.render_json(rows, redacted=not no_redact)
    elif fmt is Format.markdown:
        rendered = scan_table.render_markdown(rows)
    else:
        terminal = output is None and sys.stdout.isatty()
        rendered = scan_table.render_text(rows, color=None if terminal else False,
                                          width=_terminal_columns() if terminal else None)
    write(rendered, output)
    _report_to(report_to, [d.document for d in diagnosed if d.document is not None], report_token_file, label,
               report_hostname)
    raise typer.Exit(summary.exit_code(rows))


@app.command(
    "serve",
    help="Run the team server (needs the extra: pip install 'tfdoctor[server]'): machines post their reports "
    "with `tfdoctor --report-to URL`; the pages show the fleet worst first, what changed since a machine last "
    "passed, and each label's known-good baseline; /metrics serves Prometheus. See docs/server.md.\n\n"
    "Exit codes: 0 stopped; 2 cannot run (the extra is missing, an unreadable --token-file or --db).",
)
def serve_command(
    host: str = typer.Option("127.0.0.1", "--host", help="Address to listen on (default: loopback only)."),
    port: int = typer.Option(8765, "--port", min=1, max=65535, help="Port to listen on."),
    db: Optional[str] = typer.Option(None, "--db", metavar="URL",
                                     help="SQLAlchemy URL or SQLite file (default: a SQLite file in the user's data "
                                          "directory); postgresql+psycopg://... for a team."),
    token_file: Optional[str] = typer.Option(None, "--token-file", metavar="FILE",
                                             help="Posts must carry this bearer token (the file's first line)."),
) -> None:
    try:
        from tfdoctor.servers.team.serve import INSTALL_LINE, missing_module
    except ImportError:  # the package itself is there; its stack is not
        missing, INSTALL_LINE = "the server stack", "pip install 'tfdoctor[server]'"
    else:
        missing = missing_module()
    if missing:
        raise _fail(f"tfdoctor serve needs {missing}: {INSTALL_LINE}")
    from tfdoctor.servers.team.serve import serve

    try:
        code = serve(host, port, db, token_file)
    except (OSError, ValueError) as exc:
        raise _fail(str(exc))
    raise typer.Exit(code)


def _terminal_columns() -> int:
    import shutil

    return shutil.get_terminal_size().columns


def _nullcontext() -> Any:
    from contextlib import nullcontext

    return nullcontext()


def main() -> None:
    from tfdoctor.report import EXIT_INTERRUPTED, EXIT_TERMINATED

    code = run_command_line(sys.argv[1:])
    if code in (EXIT_INTERRUPTED, EXIT_TERMINATED):
        _end_after_interrupt(code)
    sys.exit(code)


# Typer has shipped click both as a dependency and vendored; find its classes by name, not by module.
_USAGE_ERROR = next(c for c in typer.BadParameter.__mro__ if c.__name__ == "UsageError")


def _raise_interrupted(signum: int, frame: object) -> None:
    import signal

    for each in (signal.SIGINT, signal.SIGTERM):  # the unwinding takes milliseconds: let it finish
        signal.signal(each, _ignore_signal)
    raise Interrupted(signum)


def _ignore_signal(signum: int, frame: object) -> None:
    """A handler, not SIG_IGN: children started meanwhile must not inherit an ignored signal."""


def _end_after_interrupt(code: int, grace_s: float = 1.0) -> None:
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
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)


class _InterruptsUnwind:
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


@lru_cache(maxsize=1)
def _click_command() -> Any:
    """`app` as a click command, built once per process. Typer builds it anew on each call (~9 ms, a third
    of an in-process `explain`); a process that runs several command lines (the tests) reuses it."""
    return typer.main.get_command(app)


def run_command_line(args: List[str]) -> int:
    """Run the CLI and return its exit code; every failure to run is a one-line message and 2;
    an interrupt is "interrupted" on stderr and 130 (SIGINT) or 143 (SIGTERM), nothing on stdout."""
    from tfdoctor.report import EXIT_INTERRUPTED

    try:
        with _InterruptsUnwind():
            try:
                code = _click_command().main(args=args, prog_name="tfdoctor", standalone_mode=False)
            except BaseException as exc:  # said while a second signal is still ignored
                interrupt = _interrupt_behind(exc)
                if interrupt is None:
                    raise
                return _interrupted(128 + interrupt.signum)
    except Interrupted as exc:
        return _interrupted(128 + exc.signum)
    except _USAGE_ERROR as exc:
        typer.echo(f"tfdoctor: error: {exc.format_message()} (see 'tfdoctor --help')", err=True)
        return 2
    except (KeyboardInterrupt, typer.Abort):
        return _interrupted(EXIT_INTERRUPTED)
    except Exception as exc:  # noqa: BLE001 - the contract: a one-line reason, never a traceback
        if type(exc).__name__ == "Exit" and isinstance(getattr(exc, "exit_code", None), int):
            return exc.exit_code
        typer.echo(f"tfdoctor: internal error: {_one_line(f'{type(exc).__name__}: {exc}')}", err=True)
        return 2
    return code if isinstance(code, int) else 0


def _interrupt_behind(exc: BaseException) -> Optional[Interrupted]:
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


def _interrupted(code: int) -> int:
    from tfdoctor.collect.commands import CHILDREN

    CHILDREN.kill_all()  # an interrupt outside the collectors' wait: nothing may outlive the doctor
    try:
        sys.stderr.write("\ntfdoctor: interrupted\n" if sys.stderr.isatty() else "tfdoctor: interrupted\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass
    return code
