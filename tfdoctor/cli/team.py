"""The command line's side of the team server (issue 28): `--report-to` and its options (run and scan post
their reports with tfdoctor/posting/client.py, stdlib only), `tfdoctor report send` (what a failed post kept), and
`tfdoctor serve`, which imports the server stack only when it runs."""

from __future__ import annotations

from typing import Any, List, Mapping, Optional, Sequence

import typer

from tfdoctor.cli.emit import fail, one_line
from tfdoctor.report.document import EXIT_NOT_POSTED

DEFAULT_REPORT_TIMEOUT = 15.0  # tfdoctor.posting.client.TIMEOUT_S, which loads only when a post is made
REPORT_TO = typer.Option(None, "--report-to", metavar="URL",
                         help="After printing the report, post it (redacted as printed) to a `tfdoctor serve` server. "
                              "A redirect is not followed; a report not stored is kept for `tfdoctor report send`.")
REPORT_TOKEN_FILE = typer.Option(None, "--report-token-file", metavar="FILE",
                                 help="The server's token, from FILE (default: $TFDOCTOR_REPORT_TOKEN).")
REPORT_HOSTNAME = typer.Option(False, "--report-hostname",
                               help="Send this machine's hostname with --report-to (default: only a random id).")
LABEL = typer.Option(None, "--label", metavar="KEY=VALUE", help="A label for --report-to (repeatable), e.g. team=vision.")
REPORT_TIMEOUT = typer.Option(DEFAULT_REPORT_TIMEOUT, "--report-timeout", metavar="SECONDS", min=1.0,
                              help="The time all of --report-to's posts may take together, pending ones included; "
                                   "what is not posted by then is kept.")
REPORT_REQUIRED = typer.Option(False, "--report-required",
                               help=f"Exit {EXIT_NOT_POSTED} when no check failed but a report was not posted "
                                    "(CI: the server must have it).")

SERVE_HELP = (
    "Run the team server (needs the extra: pip install 'tfdoctor[server]'): machines post their reports "
    "with `tfdoctor --report-to URL`; the pages show the fleet worst first, what changed since a machine last "
    "passed, and each label's known-good baseline; /metrics serves Prometheus. See docs/server.md.\n\n"
    "Exit codes: 0 stopped (SIGTERM included) or --new-token written; 2 cannot run (the extra is missing, an "
    "unreadable or world-readable --token-file, --private without a token, an unreachable --db, --new-token "
    "FILE exists); 130 Ctrl-C."
)


def post_reports(url: Optional[str], documents: Sequence[Mapping[str, Any]], token_file: Optional[str], labels: Optional[List[str]],
                 hostname: bool, timeout: float = DEFAULT_REPORT_TIMEOUT, names: Optional[List[str]] = None) -> Any:
    """Post the reports (and first what is kept for that server); each failure, warning or pending report sent
    is one line on stderr. The post's outcome (operations.post.Posted): its exit_code(code, required) is the run's
    exit code, EXIT_NOT_POSTED for --report-required when a post failed and the run would exit 0."""
    from tfdoctor.operations.post import Posted, PostRequest, post

    if not url or not documents:
        return Posted(True)
    posted = post(PostRequest(url, documents, token_file, labels or (), hostname, timeout, names or ()))
    for line in posted.lines:
        typer.echo(one_line(line, True), err=True)
    return posted


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
            raise fail(str(exc)) from None
        raise typer.Exit(code)
    missing = missing_module()
    if missing:
        raise fail(f"tfdoctor serve needs {missing}: {INSTALL_LINE}")
    from tfdoctor.servers.team.serve import serve

    try:
        code = serve(host, port, db, token_file, private, stale_after, keep_days, keep_reports)
    except (OSError, ValueError) as exc:
        raise fail(str(exc)) from None
    raise typer.Exit(code)


report_app = typer.Typer(
    help="Reports a failed --report-to kept in the user's cache (the server down, a redirect, no answer in "
         "time): `tfdoctor report send` posts them.",
    no_args_is_help=True,
)


@report_app.command(
    "send",
    help="Post the reports kept after failed --report-to posts to the server they were meant for (with "
    "--report-to, only those kept for that server), oldest first, within --report-timeout; each one stored "
    "is removed. The token comes from $TFDOCTOR_REPORT_TOKEN or --report-token-file, as for --report-to; when "
    "reports are kept for several servers, name one with --report-to (the token goes only where you point it).\n\n"
    f"Exit codes: 0 every kept report was posted (or none is kept); {EXIT_NOT_POSTED} some were not (they stay "
    "kept); 2 cannot run (a bad URL, reports kept for several servers and no --report-to).",
)
def report_send_command(
    report_to: Optional[str] = typer.Option(None, "--report-to", metavar="URL",
                                            help="Only the reports kept for this server (its URL may carry "
                                                 "user:password)."),
    report_token_file: Optional[str] = REPORT_TOKEN_FILE,
    report_timeout: float = REPORT_TIMEOUT,
) -> None:
    from tfdoctor.operations import CannotRun
    from tfdoctor.operations.post import send_pending

    try:
        posted = send_pending(report_to, report_token_file, report_timeout)
    except CannotRun as exc:
        raise fail(str(exc)) from None
    for line in posted.lines:
        typer.echo(one_line(line, True), err=True)
    raise typer.Exit(0 if posted.ok else EXIT_NOT_POSTED)
