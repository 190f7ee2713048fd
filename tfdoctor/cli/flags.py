"""The options the commands share, declared once (typer reads them from the parameters' defaults)."""

from __future__ import annotations

from typing import List, Optional

import typer

from tfdoctor.cli.emit import Format, fail
from tfdoctor.operations.limits import PROVE_S, RUN_MARGIN_S, run_s, words


def _exit_codes_help(cannot_run: str, more: str = "") -> str:
    return f"""\
Exit codes: 0 no failures (warnings allowed); 1 at least one check failed or crashed
(with --strict, a warning too; an unmet requirement is a failure); 2 the doctor could not run
({cannot_run});{more}
130 interrupted (Ctrl-C); 143 terminated (SIGTERM)."""


EXIT_CODES_HELP = _exit_codes_help(
    "bad arguments, unknown check id, unusable --python, unreadable report, bad configuration",
    "\n4 with --report-required: no check failed, but the report was not posted (it is kept);")
DEADLINE_HELP = f"""\
Deadline: a run ends within --timeout + --experiments-timeout + {RUN_MARGIN_S:g} s
({run_s(60.0, 30.0):g} s by default); a child still running then is killed and reported
as timed out, and no process it started is left behind. --prove: its trials end within
{words(PROVE_S)} more."""
EXPLAIN_EXIT_CODES_HELP = _exit_codes_help("bad arguments, unknown check id, unreadable report, bad configuration")
REPORT_HELP = "A report saved with --json (any 1.x schema), a fixture, or a hand-written facts file; '-' reads stdin."


def _complete_checks(incomplete: str) -> List[str]:
    """Shell completion for --only and --skip: check ids and tags; in 'a,b,pr' the last part."""
    from tfdoctor.operations.checks import list_checks

    checks = list_checks()
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
LIST_CHECKS = typer.Option(False, "--list", help="List the checks and exit (needs no TensorFlow).")
PYTHON = typer.Option(None, "--python", metavar="PATH", help="Diagnose another interpreter (default: this one).")
TIMEOUT = typer.Option(None, "--timeout", min=1.0, help="Seconds the TensorFlow import and probe may take (default 60).")
NO_PROBE = typer.Option(False, "--no-probe", help="Do not time the GPU against the CPU.")
DEEP = typer.Option(False, "--deep", help="Run the workload probe: crossover, dispatch, input pipeline, conv2d, "
                                          "training step, memory; up to ~15 s more.")
NO_EXPERIMENTS = typer.Option(False, "--no-experiments", help="Run no experiment when a failure has no known cause.")
EXPERIMENTS_TIMEOUT = typer.Option(30.0, "--experiments-timeout", min=1.0, metavar="SECONDS",
                                   help="Seconds all the offline experiments may take (default 30).")
PROVE = typer.Option(False, "--prove", help="Try the suspects' candidate repairs on throwaway copies "
                                            "(uses the package index, as fix --dry-run does); changes nothing; "
                                            f"within {words(PROVE_S)}.")
VERSION = typer.Option(False, "--version", help="Print the version and exit.")
REQUIRE_GPU = typer.Option(False, "--require-gpu", help="Require a GPU that TensorFlow lists.")
GPU_KIND = typer.Option(None, "--require-gpu-kind", metavar="metal|cuda",
                        help="Require a GPU of this kind (implies --require-gpu).")
REQUIRE_TF = typer.Option(None, "--require-tensorflow", metavar="SPEC",
                          help="Require a TensorFlow version (PEP 440, e.g. '>=2.16').")
REQUIRE_PYTHON = typer.Option(None, "--require-python", metavar="SPEC", help="Require a Python version (PEP 440).")
MIN_GFLOPS = typer.Option(None, "--min-gflops", metavar="N", help="Require the probe's best device to reach N GFLOPS.")
MIN_SPEEDUP = typer.Option(None, "--min-gpu-speedup", metavar="X", help="Require the GPU to be X times the CPU.")


def settings_from(config: Optional[str], discover: bool, gpu: Optional[str] = None,
                  tensorflow: Optional[str] = None,
                  python: Optional[str] = None, min_gflops: Optional[float] = None,
                  min_speedup: Optional[float] = None):
    """tfdoctor/diagnosis/options.py's settings; a bad file or flag is exit 2."""
    from tfdoctor.operations import CannotRun
    from tfdoctor.operations.common import settings

    try:
        return settings(config, discover, gpu=gpu, tensorflow=tensorflow, python=python, min_gflops=min_gflops,
                        min_speedup=min_speedup)
    except CannotRun as exc:
        raise fail(str(exc)) from None
