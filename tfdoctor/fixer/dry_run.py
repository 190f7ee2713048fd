"""`tfdoctor fix --dry-run`: ask the installer's own resolver whether the plan's install steps resolve,
changing nothing (pip >= 22.2: `pip install --dry-run --report -`; uv: `uv pip install --dry-run`).
It needs the package index: offline, it says so."""

from __future__ import annotations

import os
from typing import Any, Mapping, Sequence

from tfdoctor.environment.spell import POSIX, Spelling
from tfdoctor.fixer.environment import Environment, run_step
from tfdoctor.results.repairs import Action

_OFFLINE = ("Could not fetch URL", "NewConnectionError", "Failed to establish a new connection",
            "Temporary failure in name resolution", "Network is unreachable", "ConnectTimeout", "error sending request")


def ask_resolver(steps: list[Any], environment: Environment, ui: Any) -> int:
    installs = [s for s in steps if s.action is Action.INSTALL]
    if not installs:
        ui.say("No install step: nothing for the resolver to answer (the other steps only remove or "
               "reinstall what is there).", "green")
        return 0
    spelling = Spelling(environment.kind, environment.python, POSIX)
    dry_run = spelling.installer.dry_run
    if dry_run is None:
        ui.say(f"The {spelling.installer.label}'s installer has no resolver to ask without changing anything: "
               "--dry-run cannot answer (the plan is unchanged).", "yellow")
        return 2
    worst = 0
    for step in installs:
        argv = step.argv(spelling)
        where = argv.index("install") + 1
        argv[where:where] = list(dry_run.flags)
        with ui.progress(f"asking the resolver about step {step.number}"):
            result = run_step(argv, timeout=600.0)
        output = result["stdout"] + result["stderr"]
        if result["status"] != "ok":
            if any(marker in output for marker in _OFFLINE) or _index_turned_off(os.environ, dry_run.offline_variables):
                ui.say("Offline: the package index cannot be reached (or is turned off): --dry-run needs it (the plan is unchanged; "
                       "tfdoctor fix without --dry-run proves it on a copy instead).", "yellow")
                return 2
            tail = "\n".join(output.strip().splitlines()[-8:])
            ui.say(f"Step {step.number} does not resolve:\n{tail}", "red")
            worst = 1
            continue
        ui.say(f"Step {step.number} resolves: {dry_run.would_install(result['stdout']) or 'nothing to install'}.", "green")
    return worst


def _index_turned_off(environ: Mapping[str, str], names: Sequence[str]) -> bool:
    """The installer was told not to use an index (pip's PIP_NO_INDEX, uv's UV_OFFLINE / UV_NO_INDEX: the
    installer's DryRun names them): what does not resolve then is unknown, not unresolvable. Truth as pip reads
    its boolean settings (strtobool: 1, true, yes, on, y, t)."""
    return any(environ.get(name, "").strip().lower() in ("1", "true", "yes", "on", "y", "t") for name in names)
