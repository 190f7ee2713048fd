"""`tfdoctor fix`: diagnose, plan, prove the plan on a throwaway clone, then (asked, recorded, undoable)
apply it to the real environment.

The real environment is changed only when every step worked on the clone and the doctor then found
no failure there, only after the user said yes (or passed --yes), and only after the rollback record
and snapshot are written. If anything goes wrong while applying (a step fails, the doctor finds a
failure, Ctrl-C), the snapshot is put back before tfdoctor exits.

Exit codes: 0 repaired and the doctor passes (or nothing needed repair); 1 the plan could not be
verified or applied (the real environment as it was); 2 fix cannot run (bad --python, refused
system Python, no terminal to ask and no --yes).
"""

from __future__ import annotations

import contextlib
import os
import sys
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Mapping, Optional, Protocol

from tfdoctor.fixer import rollback
from tfdoctor.fixer.environment import Environment, FixError, clone, freeze, installer_available, remove, run_step
from tfdoctor.environment.kinds import detect
from tfdoctor.environment.spell import POSIX, Spelling

EXIT_REPAIRED, EXIT_NOT_REPAIRED, EXIT_CANNOT_RUN = 0, 1, 2
STEP_TIMEOUT_S = 1800.0


class Ui(Protocol):
    """What the flow tells the user and asks (the CLI gives it a rich console; tests a recorder)."""

    def progress(self, text: str) -> Any: ...  # a context manager shown while a stage runs
    def say(self, text: str, style: str = "") -> None: ...
    def plan(self, document: Mapping[str, Any]) -> None: ...
    def confirm(self, question: str) -> bool: ...
    def can_ask(self) -> bool: ...


@dataclass(frozen=True)
class FixOptions:
    python: str
    only: tuple[str, ...] = ()
    skip: tuple[str, ...] = ()
    yes: bool = False
    system: bool = False
    dry_run: bool = False
    timeout: float = 60.0
    step_timeout: float = STEP_TIMEOUT_S
    redact: Callable[[dict], dict] = field(default=lambda document: document, compare=False)


def diagnose(options: FixOptions, python: Optional[str] = None) -> Any:
    from tfdoctor.doctor import diagnose as run_doctor
    from tfdoctor.options import doctor_options

    # --deep and the probe time things; a repair needs neither
    return run_doctor(doctor_options(None, python or options.python, only=options.only, skip=options.skip,
                                     timeout=options.timeout, probe=False, deep=False))


def _failures(report: Any) -> list[str]:
    return [f"{r.check_id}: {r.summary}" for r in report.results if r.status.value in ("fail", "error")]


def _warnings(report: Any) -> list[str]:
    return [f"{r.check_id}: {r.summary}" for r in report.results if r.status.value == "warn"]


def changes(before: list[str], after: list[str]) -> list[str]:
    """'numpy 2.4.6 -> 2.2.6', 'tensorflow 2.21.0 -> removed', 'tf-keras (new) -> 2.21.0' from two freezes."""
    old = dict(line.split("==", 1) for line in before)
    new = dict(line.split("==", 1) for line in after)
    lines = []
    for name in sorted(set(old) | set(new)):
        if old.get(name) != new.get(name):
            lines.append(f"{name} {old.get(name, '(not installed)')} -> {new.get(name, 'removed')}")
    return lines


def _tensorflow_versions(lines: list[str]) -> dict[str, str]:
    from tfdoctor.facts.requirements import is_tensorflow_build

    return {name: version for name, version in (line.split("==", 1) for line in lines) if is_tensorflow_build(name)}


def _tensorflow_moved(before: list[str], after: list[str]) -> bool:
    """Did the TensorFlow release change? A second build removed, or one build swapped for another of
    the same version, is no move: the same TensorFlow imports afterwards."""
    old, new = set(_tensorflow_versions(before).values()), set(_tensorflow_versions(after).values())
    return bool(new - old) or (bool(old) and not new)


def _run_plan(steps: list[Any], spelling: Spelling, options: FixOptions, ui: Ui, where: str,
              prefix: str, never_touch: Optional[str] = None) -> Optional[str]:
    """Run the steps in order in the environment at `prefix`; None when all worked, else what failed
    (one line and the output's tail). On a clone, `never_touch` is the real environment's prefix: a step
    that names it is refused, whatever built it."""
    for step in steps:
        argv = step.argv(spelling, prefix)
        if never_touch and any(word == never_touch or word.startswith(never_touch.rstrip(os.sep) + os.sep)
                               for word in argv):
            return f"step {step.number} would reach the real environment ({never_touch}); refused on the copy"
        missing = installer_available(argv)
        if missing:
            return f"step {step.number} cannot run: {missing}"
        with ui.progress(f"{where}: step {step.number} of {len(steps)}" + (f": {step.command}" if where == "applying" else "")):
            result = run_step(argv, options.step_timeout)
        if result["status"] != "ok":
            tail = "\n".join((result["stdout"] + result["stderr"]).strip().splitlines()[-12:])
            return f"step {step.number} ({step.command}) {result['status']} (exit {result.get('exit_code')}):\n{tail}"
    return None


def fix(options: FixOptions, ui: Ui) -> int:
    with ui.progress("diagnosing"):
        report = diagnose(options)
    plan = report.plan
    document = options.redact(report.to_dict())
    steps = list(plan.runnable)
    if not plan.steps and not plan.conflicts:
        failures = _failures(report)
        if not failures:
            ui.say("Nothing to fix: no check asks for a change to this environment.", "green")
            return EXIT_REPAIRED
        ui.say("No plan can repair what is left: " + "; ".join(failures) + ". See `tfdoctor` for the advice.", "red")
        return EXIT_NOT_REPAIRED
    ui.plan(document.get("plan") or {})
    if plan.conflicts:
        ui.say("The plan cannot be carried out: no install satisfies the conflicting requirements above. "
               "Nothing was changed.", "red")
        return EXIT_NOT_REPAIRED
    if not steps:
        ui.say("Every step is for your shell or project (marked manual above): tfdoctor fix changes nothing.", "yellow")
        return EXIT_NOT_REPAIRED if _failures(report) else EXIT_REPAIRED
    environment = Environment.from_facts(report.facts)
    if options.dry_run:
        from tfdoctor.fixer.dry_run import ask_resolver

        return ask_resolver(steps, environment, ui)
    if not environment.isolated and not (options.yes and options.system):
        ui.say(f"This is a {'system' if environment.kind == 'system' else 'externally managed'} Python "
               f"({environment.python}): tfdoctor fix changes it only with both --yes and --system. A virtual "
               "environment of your own is the safer place for TensorFlow.", "red")
        return EXIT_CANNOT_RUN
    if not options.yes and not ui.can_ask():
        ui.say("tfdoctor fix asks before it changes anything, and there is no terminal to ask on: pass --yes.", "red")
        return EXIT_CANNOT_RUN

    before = freeze(environment.python)
    verified = _verify(steps, environment, options, ui, before, plan.moves_tensorflow is not None)
    if verified is None:
        return EXIT_NOT_REPAIRED
    if not options.yes and not ui.confirm(f"Apply these {len(steps)} steps to {environment.prefix}?"):
        ui.say("Nothing was changed.", "yellow")
        return EXIT_NOT_REPAIRED
    return _apply(steps, environment, options, ui, document.get("plan") or {})


def _verify(steps: list[Any], environment: Environment, options: FixOptions, ui: Ui, before: list[str],
            tensorflow_may_move: bool) -> Optional[list[str]]:
    """Run the plan on a throwaway clone and the doctor on it; the clone's freeze when it comes out
    with no failure, else None (said why). The clone is removed whatever happens."""
    with ui.progress("making a throwaway copy of the environment"):
        copy = clone(environment)
    try:
        spelling = Spelling(environment.kind, copy.python, POSIX)
        failed = _run_plan(steps, spelling, options, ui, "on the copy", copy.prefix, environment.prefix)
        if failed:
            ui.say(f"The plan did not work on a copy of the environment: {failed}\nYour environment is untouched.", "red")
            return None
        with ui.progress("diagnosing the copy"):
            after_report = diagnose(options, copy.python)
        after = freeze(copy.python)
        failures = _failures(after_report)
        if failures:
            ui.say("On a copy of the environment the plan ran, but the doctor still finds: " + "; ".join(failures)
                   + ". Your environment is untouched.", "red")
            return None
        if _tensorflow_moved(before, after) and not tensorflow_may_move:
            ui.say(f"On the copy the plan moved TensorFlow ({', '.join(changes(before, after))}) though no check "
                   "asked for that: not applied. Your environment is untouched.", "red")
            return None
        ui.say("Verified on a copy: every step worked and the doctor finds no failure there"
               + (f" ({len(_warnings(after_report))} warnings)" if _warnings(after_report) else "") + ".", "green")
        for line in changes(before, after) or ["(no distribution changes version)"]:
            ui.say(f"  {line}")
        return after
    finally:
        remove(copy.prefix)


def _apply(steps: list[Any], environment: Environment, options: FixOptions, ui: Ui, plan: Mapping[str, Any]) -> int:
    with ui.progress("writing the rollback record"):
        way_back = rollback.create(environment, dict(plan))
    ui.say(f"Rollback record: {way_back.directory} (tfdoctor fix --undo restores it)", "dim")
    try:
        failed = _run_plan(steps, Spelling(environment.kind, environment.python, POSIX), options, ui, "applying",
                           environment.prefix)
        failures: list[str] = []
        if not failed:
            with ui.progress("diagnosing the repaired environment"):
                failures = _failures(diagnose(options))
    except BaseException:
        _put_back(way_back, ui)
        raise
    if failed or failures:
        ui.say(f"Applying the plan failed: {failed or '; '.join(failures)}", "red")
        _put_back(way_back, ui)
        return EXIT_NOT_REPAIRED
    ui.say(f"Repaired: {len(steps)} step{'s' if len(steps) != 1 else ''} applied and the doctor finds no failure. "
           f"Undo with: tfdoctor fix --undo --python {environment.python}", "green")
    return EXIT_REPAIRED


@contextlib.contextmanager
def _shielded() -> Iterator[None]:
    """Ctrl-C and SIGTERM wait while the snapshot goes back: half a restore is worse than either state."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    saved = {signum: signal.signal(signum, signal.SIG_IGN) for signum in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for signum, handler in saved.items():
            signal.signal(signum, handler)


def _put_back(way_back: rollback.Rollback, ui: Ui) -> None:
    with _shielded():
        after = rollback.restore(way_back)
    same = sorted(after) == sorted(way_back.freeze)
    ui.say("The environment was put back as it was." if same else
           "The environment was put back from the snapshot, but its distributions differ from the record: "
           + "; ".join(changes(way_back.freeze, after)), "yellow" if same else "red")


def undo(python: str, ui: Ui, yes: bool = False) -> int:
    environment = probe(python)
    way_back = rollback.newest(environment)
    if way_back is None:
        ui.say(f"No rollback record for {python}: nothing to undo.", "yellow")
        return EXIT_NOT_REPAIRED
    current = freeze(environment.python)
    ui.say(f"Restoring the environment as it was at {way_back.record.get('created_at')}:")
    for line in changes(current, way_back.freeze) or ["(no distribution changes version)"]:
        ui.say(f"  {line}")
    if not yes and not ui.can_ask():
        ui.say("tfdoctor fix --undo asks first, and there is no terminal to ask on: pass --yes.", "red")
        return EXIT_CANNOT_RUN
    if not yes and not ui.confirm("Restore it?"):
        return EXIT_NOT_REPAIRED
    with ui.progress("restoring the snapshot"):
        after = rollback.restore(way_back)
    if sorted(after) != sorted(way_back.freeze):
        ui.say("Restored, but the distributions differ from the record: " + "; ".join(changes(way_back.freeze, after)), "red")
        return EXIT_NOT_REPAIRED
    ui.say("Restored: the environment's distributions are exactly as recorded before the fix.", "green")
    return EXIT_REPAIRED


_PROBE = ("import json, os, site, sys, sysconfig; print(json.dumps({'prefix': sys.prefix, 'base': getattr(sys, 'base_prefix', sys.prefix),"
          " 'conda': os.path.isdir(os.path.join(sys.prefix, 'conda-meta')),"
          " 'uv': any(l.startswith('uv') for l in open(os.path.join(sys.prefix, 'pyvenv.cfg'))) if os.path.isfile(os.path.join(sys.prefix, 'pyvenv.cfg')) else False,"
          " 'externally_managed': os.path.isfile(os.path.join(sysconfig.get_path('stdlib') or '', 'EXTERNALLY-MANAGED')),"
          " 'site': getattr(site, 'getsitepackages', lambda: [])()}))")


def probe(python: str) -> Environment:
    """Where an interpreter's environment is, without a diagnosis (for --undo)."""
    import json

    from tfdoctor.collect.commands import run_command

    result = run_command([python, "-I", "-c", _PROBE], timeout=30.0)
    if result["status"] != "ok":
        raise FixError(f"{python} does not start: {result['status']}")
    data = json.loads(result["stdout"])
    kind = detect(uv=data["uv"], conda=data["conda"], venv=data["prefix"] != data["base"],
                  externally_managed=data["externally_managed"])  # the doctor's precedence
    return Environment(os.path.abspath(python) if os.sep in python else python, data["prefix"], kind, tuple(data["site"]))


def interactive() -> bool:
    return sys.stdin.isatty() and sys.stdout.isatty()
