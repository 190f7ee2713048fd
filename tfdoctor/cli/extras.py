"""The commands of the optional extras ([mcp], [server]): their SDKs load only inside the command; and the team
server's client side, `tfdoctor report send`."""

from __future__ import annotations

import typer

from tfdoctor.cli.emit import fail
from tfdoctor.cli.root import app
from tfdoctor.cli.team import SERVE_HELP, report_app, serve_command


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
        raise fail("tfdoctor mcp needs the MCP SDK (Python >= 3.10): pip install 'tfdoctor[mcp]'") from None
    serve(allow_fix)


app.command("serve", help=SERVE_HELP)(serve_command)
app.add_typer(report_app, name="report")
