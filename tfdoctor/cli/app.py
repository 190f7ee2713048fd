"""The command line's commands. Heavy modules (rich, psutil, the checks' data) load only when a command needs them,
so `--version`, `--help` and `--list` stay fast."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, List, Mapping, Optional

import typer

from tfdoctor._version import __version__
from tfdoctor.cli.emit import (
    Format,
    ScanFormat,
    chosen,
    emit,
    experiment_progress,
    fail,
    live_display,
    print_checks,
    terminal_columns,
    write,
)
from tfdoctor.cli.flags import (
    CONFIG,
    DEEP,
    EXPERIMENTS_TIMEOUT,
    FORMAT,
    GPU_KIND,
    JSON,
    LIST_CHECKS,
    MIN_GFLOPS,
    MIN_SPEEDUP,
    NO_EXPERIMENTS,
    NO_PROBE,
    NO_REDACT,
    ONLY,
    OUTPUT,
    PROVE,
    PYTHON,
    QUIET,
    REQUIRE_GPU,
    REQUIRE_PYTHON,
    REQUIRE_TF,
    SKIP,
    STRICT,
    TIMEOUT,
    VERBOSE,
    VERSION,
    settings_from,
)
from tfdoctor.cli.root import app
from tfdoctor.cli.team import (
    LABEL,
    REPORT_HOSTNAME,
    REPORT_REQUIRED,
    REPORT_TIMEOUT,
    REPORT_TO,
    REPORT_TOKEN_FILE,
    post_reports,
)
from tfdoctor.operations.limits import FIX_S, SCAN_S, UNDO_S, words

SCAN_DEADLINE_WORDS = words(SCAN_S)



@app.callback(invoke_without_command=True)
def run(
    ctx: typer.Context,
    fmt: Format = FORMAT,
    as_json: bool = JSON,
    output: Optional[Path] = OUTPUT,
    only: Optional[List[str]] = ONLY,
    skip: Optional[List[str]] = SKIP,
    list_checks: bool = LIST_CHECKS,
    strict: bool = STRICT,
    verbose: bool = VERBOSE,
    quiet: bool = QUIET,
    python: Optional[str] = PYTHON,
    timeout: Optional[float] = TIMEOUT,
    no_probe: bool = NO_PROBE,
    deep: bool = DEEP,
    no_experiments: bool = NO_EXPERIMENTS,
    experiments_timeout: float = EXPERIMENTS_TIMEOUT,
    config: Optional[str] = CONFIG,
    require_gpu: bool = REQUIRE_GPU,
    require_gpu_kind: Optional[str] = GPU_KIND,
    require_tensorflow: Optional[str] = REQUIRE_TF,
    require_python: Optional[str] = REQUIRE_PYTHON,
    min_gflops: Optional[float] = MIN_GFLOPS,
    min_gpu_speedup: Optional[float] = MIN_SPEEDUP,
    no_redact: bool = NO_REDACT,
    prove: bool = PROVE,
    version: bool = VERSION,
    report_to: Optional[str] = REPORT_TO,
    report_token_file: Optional[str] = REPORT_TOKEN_FILE,
    report_hostname: bool = REPORT_HOSTNAME,
    label: Optional[List[str]] = LABEL,
    report_timeout: float = REPORT_TIMEOUT,
    report_required: bool = REPORT_REQUIRED,
) -> None:
    if ctx.invoked_subcommand is not None:
        return
    if version:
        typer.echo(f"tfdoctor {__version__}")
        raise typer.Exit(0)
    if list_checks:
        print_checks()
        raise typer.Exit(0)

    settings = settings_from(config, True, require_gpu_kind or ("any" if require_gpu else None), require_tensorflow,
                             require_python, min_gflops, min_gpu_speedup)
    fmt = chosen(fmt, as_json)
    live = fmt.colored and output is None and not quiet and sys.stdout.isatty()
    with live_display(live, python or sys.executable, no_redact) as display:  # on screen before the doctor is imported
        from tfdoctor.operations import CannotRun
        from tfdoctor.operations.checks import split_ids
        from tfdoctor.operations.diagnose import DiagnoseRequest, diagnose

        request = DiagnoseRequest(python, split_ids(only), split_ids(skip), timeout, not no_probe, deep,
                                  not no_experiments, experiments_timeout, settings, not no_redact, strict or None)
        try:
            diagnosis = diagnose(request, display or experiment_progress())
        except CannotRun as exc:
            diagnosis, failure = None, str(exc)
    if diagnosis is None:  # said once the live display is gone
        raise fail(failure, verbose)
    emit(diagnosis.document.data, fmt, verbose, output, quiet)
    if prove:  # issue 29: the trials, on stderr so that --json keeps stdout to the report
        from tfdoctor.operations.fix import prove_suspects
        from tfdoctor.render.sanitize import clean

        prove_suspects(diagnosis, lambda line: typer.echo(clean(line), err=True), redact=not no_redact)
    posted = post_reports(report_to, [diagnosis.document.data], report_token_file, label, report_hostname,
                          report_timeout)
    raise typer.Exit(posted.exit_code(diagnosis.exit_code, report_required))


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
    "verified or applied (the environment is as it was); 3 applied and verified, and a step only your shell "
    "can do (a variable to set or unset) is left to you, named; 2 fix cannot run (bad --python, a system "
    "Python without --system, no terminal to ask and no --yes, another tfdoctor fix or --undo holding the "
    "environment: it is named, pid and command; run again when it has finished); 129/130/131/143 ended by "
    "SIGHUP/SIGINT/SIGQUIT/SIGTERM (any change undone first). An --undo or fix that finds an interrupted "
    "restore completes it first.\n\n"
    f"Deadlines: fix ends within {words(FIX_S)} (proving and applying; a plan the deadline cuts mid-apply is put "
    f"back); --undo within {words(UNDO_S)} of the interpreter's answers before it restores, and a restore once "
    "begun is finished (its check at most 60 s more). No process fix started is left behind.",
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
    choice: Optional[int] = typer.Option(None, "--choice", metavar="N", min=1,
                                         help="Prove and apply the report's choice N (a complete plan of its own) "
                                              "instead of its plan."),
) -> None:
    from tfdoctor.operations import CannotRun
    from tfdoctor.operations.checks import split_ids
    from tfdoctor.operations.common import text_redactor
    from tfdoctor.operations.fix import FixRequest, fix, undo as undo_fix
    from tfdoctor.render.fix_console import ConsoleUi

    ui = ConsoleUi(redact=text_redactor(not no_redact))  # the installer's relayed output too (issue 25)
    try:
        if undo:
            code = undo_fix(python, ui, yes)
        else:
            code = fix(FixRequest(python, split_ids(only), split_ids(skip), yes, system, dry_run, timeout,
                                  redact=not no_redact, choice=choice), ui)
    except CannotRun as exc:
        raise fail(str(exc)) from None
    raise typer.Exit(code)


@app.command(
    "scan",
    help="Find the Python environments on this machine and diagnose each: which has a TensorFlow that "
    "works, with the GPU?\n\n"
    "Without PATH: conda's environments, pyenv's versions, pipx and uv tool venvs, and every directory "
    "holding a pyvenv.cfg a few levels under the working and home directories. With PATHs: only what is "
    "under them (a PATH may also be an environment or an interpreter). Each is diagnosed as "
    "'tfdoctor --python ENV --no-probe' would, several at once (one per core).\n\n"
    f"Deadline: the scan ends within --deadline seconds (default {SCAN_DEADLINE_WORDS}), each environment "
    "within its run's deadline (see tfdoctor --help); an environment it cuts short, or never reaches, is a row "
    "saying so. No process a diagnosis started is left behind.\n\n"
    "Exit codes: 0 at least one environment passes; 1 none does (or none was found); 2 bad arguments; "
    "4 with --report-required, 0 but a report was not posted.",
)
def scan_command(
    paths: Optional[List[str]] = typer.Argument(None, metavar="PATH", help="Where to look (default: see above)."),
    fmt: ScanFormat = typer.Option(ScanFormat.text, "--format", "-f", help="Output format (github: as text)."),
    as_json: bool = JSON,
    output: Optional[Path] = typer.Option(None, "--output", "-o", help="Write the table to FILE instead of stdout."),
    probe: bool = typer.Option(False, "--probe", help="Time the GPU against the CPU in each environment."),
    deep: bool = typer.Option(False, "--deep", help="Run the workload probe in each environment (implies --probe)."),
    timeout: Optional[float] = typer.Option(None, "--timeout", min=1.0,
                                            help="Seconds each TensorFlow import (and probe) may take (default 60)."),
    depth: int = typer.Option(4, "--depth", min=0, help="Directory levels searched for pyvenv.cfg under each PATH."),
    deadline: float = typer.Option(SCAN_S, "--deadline", min=1.0, metavar="SECONDS",
                                   help=f"Seconds the whole scan may take (default {SCAN_DEADLINE_WORDS})."),
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
    report_timeout: float = REPORT_TIMEOUT,
    report_required: bool = REPORT_REQUIRED,
) -> None:
    from tfdoctor.operations import CannotRun
    from tfdoctor.operations.scan import ScanRequest, scan
    from tfdoctor.render import scan_table
    from tfdoctor.render.formats import Look

    request = ScanRequest(tuple(paths or ()), depth, probe, deep, timeout, deadline, jobs, strict or None,
                          settings_from(config, True), not no_redact)  # settings as `tfdoctor --python ENV` reads them
    fmt = chosen(fmt, as_json)
    bar: list = []  # the progress bar, once the scan says how many it found (on a terminal only)

    def progress(event: str, data: Mapping[str, Any]) -> None:
        if event == "found" and data["count"] and sys.stderr.isatty():
            bar.append(scan_table.ProgressBar(data["count"]).__enter__())
        elif event == "done" and bar:
            bar[0](data["environment"])

    try:
        result = scan(request, progress)
    except CannotRun as exc:
        raise fail(str(exc)) from None
    finally:
        if bar:
            bar[0].__exit__(None, None, None)
    rows = result.rows
    terminal = output is None and sys.stdout.isatty()
    assert fmt.scan is not None  # the choices are the formats that serve scan
    rendered = fmt.scan(rows, Look(color=None if terminal and fmt.colored else False,
                                   width=terminal_columns() if terminal else None, redacted=not no_redact))
    write(rendered, output)
    posted = post_reports(report_to, [r.document for r in result.reports], report_token_file, label, report_hostname,
                          report_timeout, names=[r.python for r in result.reports])  # every one's, each failure named
    raise typer.Exit(posted.exit_code(result.exit_code, report_required))


# The commands on saved reports (explain, diff) and the optional extras' (mcp, and the team server's)
# register on `app` (cli/root.py) from their own modules, after these: the order is the help's.
from tfdoctor.cli import extras, saved  # noqa: E402,F401
