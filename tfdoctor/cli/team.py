"""The command line's side of the team server (issue 28): `--report-to` and its options (run and scan post
their reports with tfdoctor/report_to.py, stdlib only), and `tfdoctor serve`, which imports the server
stack only when it runs."""

from __future__ import annotations

from typing import List, Optional

import typer

from tfdoctor.cli.emit import Format, fail, one_line

REPORT_TO = typer.Option(None, "--report-to", metavar="URL",
                         help="After printing the report, post it (redacted as printed) to a `tfdoctor serve` server.")
REPORT_TOKEN_FILE = typer.Option(None, "--report-token-file", metavar="FILE",
                                 help="The server's token, from FILE (default: $TFDOCTOR_REPORT_TOKEN).")
REPORT_HOSTNAME = typer.Option(False, "--report-hostname",
                               help="Send this machine's hostname with --report-to (default: only a random id).")
LABEL = typer.Option(None, "--label", metavar="KEY=VALUE", help="A label for --report-to (repeatable), e.g. team=vision.")

SERVE_HELP = (
    "Run the team server (needs the extra: pip install 'tfdoctor[server]'): machines post their reports "
    "with `tfdoctor --report-to URL`; the pages show the fleet worst first, what changed since a machine last "
    "passed, and each label's known-good baseline; /metrics serves Prometheus. See docs/server.md.\n\n"
    "Exit codes: 0 stopped (SIGTERM included) or --new-token written; 2 cannot run (the extra is missing, an "
    "unreadable or world-readable --token-file, --private without a token, an unreachable --db, --new-token "
    "FILE exists); 130 Ctrl-C."
)


def post_reports(url: Optional[str], documents: List[dict], token_file: Optional[str], labels: Optional[List[str]],
                 hostname: bool) -> None:
    """Post the reports; a failure is one line on stderr and leaves the exit code alone."""
    if not url or not documents:
        return
    from tfdoctor.report_to import report_to

    failure = report_to(url, documents, token_file, labels or [], hostname)
    if failure:
        typer.echo(one_line(failure), err=True)


def refuse_openmetrics(fmt: Format, command: str) -> None:
    if fmt is Format.openmetrics:
        raise fail(f"{command} has no openmetrics format (it is one environment's report: tfdoctor, explain)")


def serve_command(
    host: str = typer.Option("127.0.0.1", "--host", help="Address to listen on (default: loopback only)."),
    port: int = typer.Option(8765, "--port", min=1, max=65535, help="Port to listen on."),
    db: Optional[str] = typer.Option(None, "--db", metavar="URL",
                                     help="SQLAlchemy URL or SQLite file (default: a SQLite file in the user's data "
                                          "directory); postgresql+psycopg://... for a team."),
    token_file: Optional[str] = typer.Option(None, "--token-file", metavar="FILE",
                                             help="Every write (posts, marking known-good) needs this token (the "
                                                  "file's first line; refused when every user may read it)."),
    private: bool = typer.Option(False, "--private",
                                 help="Reads need the token too: the API and /metrics as a bearer token, the pages "
                                      "through a sign-in form."),
    new_token: Optional[str] = typer.Option(None, "--new-token", metavar="FILE",
                                            help="Write a fresh random token to FILE (a new file, mode 0600) and "
                                                 "exit; then serve with --token-file FILE."),
    stale_after: float = typer.Option(24, "--stale-after", metavar="HOURS", min=0.01,
                                      help="Mark a machine stale when it has not reported for this long."),
    keep_days: Optional[float] = typer.Option(None, "--keep-days", metavar="DAYS", min=0.01,
                                              help="Remove reports older than this (hourly, inside the server); each "
                                                   "environment's last and last passing reports and the baselines stay."),
    keep_reports: Optional[int] = typer.Option(None, "--keep-reports", metavar="N", min=1,
                                               help="Keep at most the newest N reports of each environment (the "
                                                    "same ones stay)."),
) -> None:
    from tfdoctor.servers.team.serve import INSTALL_LINE, missing_module  # stdlib only until serve() runs

    if new_token:  # a token is made with the standard library alone: before the extra is installed too
        from tfdoctor.servers.team.serve import new_token as write_token

        try:
            code = write_token(new_token)
        except (OSError, ValueError) as exc:
            raise fail(str(exc))
        raise typer.Exit(code)
    missing = missing_module()
    if missing:
        raise fail(f"tfdoctor serve needs {missing}: {INSTALL_LINE}")
    from tfdoctor.servers.team.serve import serve

    try:
        code = serve(host, port, db, token_file, private, stale_after, keep_days, keep_reports)
    except (OSError, ValueError) as exc:
        raise fail(str(exc))
    raise typer.Exit(code)
