"""`tfdoctor fix --dry-run`: ask the installer's own resolver whether the plan's install steps resolve,
changing nothing (pip >= 22.2: `pip install --dry-run --report -`; uv: `uv pip install --dry-run`).
It needs the package index: offline, it says so."""

from __future__ import annotations

import json
import os
from typing import Any, Mapping

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
    worst = 0
    for step in installs:
        argv = step.argv(spelling)
        where = argv.index("install") + 1
        argv[where:where] = ["--dry-run"] + ([] if spelling.uv else ["--quiet", "--report", "-"])
        with ui.progress(f"asking the resolver about step {step.number}"):
            result = run_step(argv, timeout=600.0)
        output = result["stdout"] + result["stderr"]
        if result["status"] != "ok":
            if any(marker in output for marker in _OFFLINE) or _index_turned_off(os.environ, spelling.uv):
                ui.say("Offline: the package index cannot be reached (or is turned off): --dry-run needs it (the plan is unchanged; "
                       "tfdoctor fix without --dry-run proves it on a copy instead).", "yellow")
                return 2
            tail = "\n".join(output.strip().splitlines()[-8:])
            ui.say(f"Step {step.number} does not resolve:\n{tail}", "red")
            worst = 1
            continue
        ui.say(f"Step {step.number} resolves: {_would_install(result['stdout'], spelling.uv) or 'nothing to install'}.", "green")
    return worst


def _index_turned_off(environ: Mapping[str, str], uv: bool) -> bool:
    """The installer was told not to use an index (pip's PIP_NO_INDEX, uv's UV_OFFLINE / UV_NO_INDEX):
    what does not resolve then is unknown, not unresolvable. Truth as pip reads its boolean settings
    (strtobool: 1, true, yes, on, y, t)."""
    names = ("UV_OFFLINE", "UV_NO_INDEX") if uv else ("PIP_NO_INDEX",)
    return any(environ.get(name, "").strip().lower() in ("1", "true", "yes", "on", "y", "t") for name in names)


def _would_install(stdout: str, uv: bool) -> str:
    if uv:
        return "; ".join(line.strip() for line in stdout.splitlines() if line.strip().startswith(("+", "-")))
    try:
        report = json.loads(stdout)
    except ValueError:
        return ""
    items = [f"{i['metadata']['name']} {i['metadata']['version']}" for i in report.get("install") or ()]
    return ", ".join(items)
