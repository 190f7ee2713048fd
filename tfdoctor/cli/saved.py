"""The commands on saved reports: `explain` judges one again with today's checks, `diff` compares two."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from tfdoctor.cli.emit import DiffFormat, Format, chosen, emit, fail, for_github, write
from tfdoctor.cli.flags import (
    CONFIG,
    EXPLAIN_EXIT_CODES_HELP,
    FORMAT,
    GPU_KIND,
    JSON,
    MIN_GFLOPS,
    MIN_SPEEDUP,
    NO_REDACT,
    ONLY,
    OUTPUT,
    QUIET,
    REPORT_HELP,
    REQUIRE_GPU,
    REQUIRE_PYTHON,
    REQUIRE_TF,
    SKIP,
    STRICT,
    VERBOSE,
    settings_from,
)
from tfdoctor.cli.root import app


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
    from tfdoctor.operations import CannotRun
    from tfdoctor.operations.checks import split_ids
    from tfdoctor.operations.explain import ExplainRequest, explain

    settings = settings_from(config or None, False, require_gpu_kind or ("any" if require_gpu else None),
                             require_tensorflow, require_python, min_gflops, min_gpu_speedup)
    request = ExplainRequest(report, split_ids(only) or settings.only, split_ids(skip) or settings.skip, settings,
                             not no_redact, strict or None)
    try:
        diagnosis = explain(request)
    except CannotRun as exc:
        raise fail(str(exc), verbose) from None
    emit(diagnosis.document.data, chosen(fmt, as_json), verbose, output, quiet)
    raise typer.Exit(diagnosis.exit_code)


@app.command(
    "diff",
    help="What differs between two reports (two machines, or one machine then and now): platform, "
    "Python, TensorFlow, GPU, packages, environment, and the verdict of today's checks on each.\n\n"
    "Exit codes: 0 no differences; 1 something differs; 2 a file is not a readable report.",
)
def diff_command(
    a: str = typer.Argument(..., metavar="A.json", help=REPORT_HELP),
    b: str = typer.Argument(..., metavar="B.json", help=REPORT_HELP),
    fmt: DiffFormat = typer.Option(DiffFormat.text, "--format", "-f", help="Output format (github: as text)."),
    as_json: bool = typer.Option(False, "--json", help="Same as --format json."),
    output: Optional[Path] = typer.Option(None, "--output", "-o", help="Write the result to FILE instead of stdout."),
    no_redact: bool = typer.Option(False, "--no-redact", help="Show home paths, user and host names as they are."),
) -> None:
    from tfdoctor.operations import CannotRun
    from tfdoctor.operations.explain import compare
    from tfdoctor.render.formats import Look

    try:
        comparison = compare(a, b, redact=not no_redact)
    except CannotRun as exc:
        raise fail(str(exc)) from None
    document = comparison.document
    fmt = chosen(fmt, as_json)
    assert fmt.diff is not None  # the choices are the formats that serve diff
    text = fmt.diff(document, Look())
    if output is None and (fmt.colored or fmt.annotates) and for_github(fmt):
        from tfdoctor.render.github import guarded

        text = guarded(text)  # the reports' lines run no workflow command in the Actions log
    write(text, output)
    raise typer.Exit(comparison.exit_code)
