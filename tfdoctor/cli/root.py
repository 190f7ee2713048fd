"""The command line's one Typer application. Every command module registers on it (cli/app.py: the plain run, fix,
scan, then cli/saved.py and cli/extras.py); it lives apart from them so that none imports another to reach it."""

from __future__ import annotations

import typer

from tfdoctor.cli.flags import DEADLINE_HELP, EXIT_CODES_HELP

app = typer.Typer(
    add_completion=True,  # typer's own --install-completion / --show-completion
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
    help=f"Diagnose a TensorFlow install and say how to fix it.\n\n{DEADLINE_HELP}\n\n{EXIT_CODES_HELP}",
)
