"""The command line's commands. Heavy modules (rich, psutil, the checks' data) load only when a command needs them,
so `--version`, `--help` and `--list` stay fast."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import List, Optional

import typer

from tfdoctor import __version__
from tfdoctor.cli.emit import Format, emit, fail, for_github, live_display, print_checks, terminal_columns, write
from tfdoctor.cli.flags import (CONFIG, EXIT_CODES_HELP, EXPLAIN_EXIT_CODES_HELP, FORMAT, GPU_KIND, JSON,
                                MIN_GFLOPS, MIN_SPEEDUP, NO_REDACT, ONLY, OUTPUT, QUIET, REPORT_HELP, REQUIRE_GPU,
                                REQUIRE_PYTHON, REQUIRE_TF, SKIP, STRICT, VERBOSE, settings_from)
from tfdoctor.cli.team import (LABEL, REPORT_HOSTNAME, REPORT_TO, REPORT_TOKEN_FILE, SERVE_HELP, post_reports,
                               refuse_openmetrics, serve_command)
from tfdoctor.options import doctor_options, redact_document, requirement_facts, text_redactor

app = typer.Typer(
    add_completion=True,  # typer's own --install-completion / --show-completion
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
    help=f"Diagnose a TensorFlow install and say how to fix it.\n\n{EXIT_CODES_HELP}",
)


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
        print_checks()
        raise typer.Exit(0)

    if python is not None and not python.strip():
        raise fail("--python needs the path of an interpreter; it is empty")
    settings = settings_from(config, True, require_gpu_kind or ("any" if require_gpu else None), require_tensorflow,
                         require_python, min_gflops, min_gpu_speedup)
    fmt = Format.json if as_json else fmt
    target = python or sys.executable
    live = fmt is Format.text and output is None and not quiet and sys.stdout.isatty()
    with live_display(live, target, no_redact) as display:  # on screen before the doctor is even imported
        from tfdoctor.doctor import DoctorError, diagnose
        from tfdoctor.registry import split_ids

        options = doctor_options(settings, target, only=split_ids(only), skip=split_ids(skip), timeout=timeout,
                                 probe=not no_probe, deep=deep, progress=display)
        try:
            report = diagnose(options)
        except DoctorError as exc:
            report, failure = None, str(exc)
    if report is None:  # said once the live display is gone
        raise fail(failure, verbose)
    strict = strict or bool(settings.strict)
    document = redact_document(report.to_dict(), not no_redact)
    emit(document, fmt, verbose, output, quiet)
    post_reports(report_to, [document], report_token_file, label, report_hostname)
    raise typer.Exit(report.exit_code(strict))


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

    settings = settings_from(config or None, False, require_gpu_kind or ("any" if require_gpu else None),
                         require_tensorflow, require_python, min_gflops, min_gpu_speedup)
    try:
        saved = read_report(report)
        if requirement_facts(settings) is not None:
            facts = {k: v for k, v in saved.facts.items() if k != "requirements"}
            saved = replace(saved, facts=with_requirements(facts, requirement_facts(settings)))
        document = explain(saved, split_ids(only) or settings.only, split_ids(skip) or settings.skip,
                           redacted=not no_redact)
    except (ReportError, DoctorError) as exc:
        raise fail(str(exc), verbose)
    code = exit_code_for([CheckResult.from_dict(r) for r in document["results"]], strict or bool(settings.strict))
    emit(redact_document(document, not no_redact), Format.json if as_json else fmt, verbose, output, quiet)
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

    refuse_openmetrics(fmt, "diff")
    if a == "-" and b == "-":
        raise fail("only one of A and B can be '-' (stdin)")
    try:
        document = compare(read_report(a), read_report(b), redacted=not no_redact)
    except ReportError as exc:
        raise fail(str(exc))
    document = redact_document(document, not no_redact)
    fmt = Format.json if as_json else fmt
    text = RENDERERS[Format.text.value if fmt is Format.github else fmt.value](document)
    if output is None and fmt in (Format.text, Format.github) and for_github(fmt):
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
        raise fail("--python: an empty path")
    try:
        target = validate_python(python or sys.executable)
    except DoctorError as exc:
        raise fail(str(exc))
    ui = ConsoleUi()
    try:
        if undo:
            code = undo_fix(target, ui, yes)
        else:
            code = fix(FixOptions(target, split_ids(only), split_ids(skip), yes, system, dry_run, timeout,
                                  redact=lambda document: redact_document(document, not no_redact)), ui)
    except (FixError, DoctorError) as exc:
        raise fail(str(exc))
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
    from contextlib import nullcontext

    from tfdoctor.render import scan_table
    from tfdoctor.scan import summary
    from tfdoctor.scan.find import Places, find_environments
    from tfdoctor.scan.run import diagnose_all

    refuse_openmetrics(fmt, "scan")
    settings = settings_from(config, True)  # as `tfdoctor --python ENV` reads it
    missing = [path for path in paths or () if not os.path.lexists(os.path.expanduser(path))]
    if missing:
        raise fail(f"{missing[0]}: no such file or directory")
    fmt = Format.json if as_json else fmt
    environments = find_environments(Places.default(paths or (), depth))

    def options_for(environment):
        return doctor_options(settings, environment.python, timeout=timeout, probe=probe or deep, deep=deep)

    text = text_redactor(not no_redact)
    bar = scan_table.ProgressBar(len(environments)) if environments and sys.stderr.isatty() else None
    with bar if bar is not None else nullcontext():
        # timings need the machine to themselves: with --probe or --deep one environment at a time
        diagnosed = diagnose_all(environments, options_for, lambda document: redact_document(document, not no_redact),
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
                                          width=terminal_columns() if terminal else None)
    write(rendered, output)
    post_reports(report_to, [d.document for d in diagnosed if d.document is not None], report_token_file, label,
                 report_hostname)
    raise typer.Exit(summary.exit_code(rows))


@app.command("mcp", help="Serve the doctor to AI assistants: a Model Context Protocol server on stdin/stdout "
             "(needs the [mcp] extra, Python >= 3.10). Tools: diagnose, list_checks, explain_check, explain_report, "
             "repair_plan, verify_fix, diff_reports, scan; apply_fix and undo_fix only with --allow-fix. See docs/mcp.md.")
def mcp_command(allow_fix: bool = typer.Option(False, "--allow-fix", help="Also offer apply_fix (only a plan "
                                               "verify_fix proved in the session) and undo_fix.")) -> None:
    try:
        from tfdoctor.servers.mcp import serve  # the SDK loads here only: the plain CLI never imports it
    except ModuleNotFoundError as exc:
        if (exc.name or "").split(".")[0] not in ("mcp", "mcp_types", "anyio", "pydantic"):
            raise
        raise fail("tfdoctor mcp needs the MCP SDK (Python >= 3.10): pip install 'tfdoctor[mcp]'")
    serve(allow_fix)


app.command("serve", help=SERVE_HELP)(serve_command)
