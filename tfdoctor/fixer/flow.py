"""`tfdoctor fix`: diagnose, plan, prove the plan on a throwaway clone, then (asked, recorded, undoable)
apply it to the real environment.

The real environment is changed only when every step worked on the clone and the doctor then found
no failure there, only after the user said yes (or passed --yes), and only after the rollback record
and snapshot are written. If anything goes wrong while applying (a step fails, the doctor finds a
failure, Ctrl-C), the snapshot is put back before tfdoctor exits.

A plan whose steps include variables for the user's shell (`export TF_USE_LEGACY_KERAS=1`, `unset NAME`)
cannot be finished by tfdoctor fix, which cannot change the user's shell: it proves and applies the other
steps with the doctor run as that shell will be once those steps are done, then names them as left to the
user (exit 3).

Exit codes: 0 repaired and the doctor passes (or nothing needed repair); 1 the plan could not be
verified or applied (the real environment as it was); 2 fix cannot run (bad --python, refused
system Python, no terminal to ask and no --yes); 3 applied and verified, and steps only the user's
shell can do are left (named).
"""

from __future__ import annotations

import contextlib
import os
import sys
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Mapping, Optional, Protocol

from tfdoctor.child import source
from tfdoctor.environment import installers
from tfdoctor.environment.spell import POSIX, POWERSHELL, RefusedWord, Spelling, quote
from tfdoctor.fixer import ownership, rollback
from tfdoctor.fixer.environment import (
    Environment,
    FixError,
    child_json,
    clone,
    freeze,
    installer_available,
    remove,
    run_step,
)
from tfdoctor.processes.commands import CHILDREN

EXIT_REPAIRED, EXIT_NOT_REPAIRED, EXIT_CANNOT_RUN, EXIT_SHELL_STEPS_LEFT = 0, 1, 2, 3
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
    choice: Optional[int] = None  # the report's choice N (plan.choices) instead of its plan (issue 38)


def diagnose(options: FixOptions, python: Optional[str] = None, plan: Any = None) -> Any:
    """The doctor's diagnosis as the user's shell will be once the plan's variable steps are done (the plan
    is proven as it is pasted, in order): its children get those variables; this process's are not touched."""
    from tfdoctor.diagnosis.doctor import diagnose as run_doctor
    from tfdoctor.diagnosis.options import doctor_options

    environ = plan.environment_after(os.environ) if plan is not None else None
    # --deep and the probe time things; a repair needs neither
    return run_doctor(doctor_options(None, python or options.python, only=options.only, skip=options.skip,
                                     timeout=options.timeout, probe=False, deep=False, environ=environ))


def _shell_steps_words(plan: Any) -> str:
    """'step 2 (export TF_USE_LEGACY_KERAS=1)': the plan's steps only the user's shell or project can do."""
    steps = plan.manual if plan is not None else ()
    return ", ".join(f"step {step.number} ({step.command})" for step in steps)


def _failures(report: Any) -> list[str]:
    return [f"{r.check_id}: {r.summary}" for r in report.results if r.status.value in ("fail", "error")]


def _warnings(report: Any) -> list[str]:
    return [f"{r.check_id}: {r.summary}" for r in report.results if r.status.value == "warn"]


def changes(before: list[str], after: list[str]) -> list[str]:
    """'numpy 2.4.6 -> 2.2.6', 'tensorflow 2.21.0 -> removed', 'tf-keras (new) -> 2.21.0' from two freezes,
    TensorFlow's builds first, then by name (one line each)."""
    from tfdoctor.facts.requires_dist import is_tensorflow_build

    old = dict(line.split("==", 1) for line in before)
    new = dict(line.split("==", 1) for line in after)
    lines = []
    for name in sorted(set(old) | set(new), key=lambda name: (not is_tensorflow_build(name), name)):
        if old.get(name) != new.get(name):
            lines.append(f"{name} {old.get(name, '(not installed)')} -> {new.get(name, 'removed')}")
    return lines


def _tensorflow_versions(lines: list[str]) -> dict[str, str]:
    from tfdoctor.facts.requires_dist import is_tensorflow_build

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
        try:
            argv = step.argv(spelling, prefix)
        except RefusedWord as exc:  # the planner screens its words; a step built elsewhere is held to the same
            return f"step {step.number} refused: {exc}"
        if never_touch and any(word == never_touch or word.startswith(never_touch.rstrip(os.sep) + os.sep)
                               for word in argv):
            return f"step {step.number} would reach the real environment ({never_touch}); refused on the copy"
        missing = installer_available(argv)
        if missing:
            return f"step {step.number} cannot run: {missing}"
        with ui.progress(f"{where}: step {step.number} of {len(steps)}" + (f": {step.command}" if where == "applying" else "")):
            result = run_step(argv, options.step_timeout)
        if result["status"] != "ok":
            output = (result["stdout"] + result["stderr"]).strip()
            tail = "\n".join(output.splitlines()[-12:])
            return (f"step {step.number} ({step.command}) {result['status']} (exit {result.get('exit_code')}):\n{tail}"
                    + "".join(f"\n{line}" for line in why_the_installer_failed(output)))
    return None


def why_the_installer_failed(output: str) -> list[str]:
    """What a failed step's own output means, from the install-phase failure signatures
    (knowledge/signatures.toml): the same table the doctor reads, so fix names a known installer
    failure (a distribution without RECORD, Windows' path limit, an externally managed Python) in words."""
    from tfdoctor.facts.signatures import match_text

    return [f"Why: {m.signature.summary}. {m.signature.advice} ({m.signature.url or m.signature.source.split(' ')[0]})"
            for m in match_text(output, phases=("install",))]


def fix(options: FixOptions, ui: Ui) -> int:
    """Diagnose, prove on a copy, apply. Every signal that ends a session (SIGHUP, SIGQUIT as well as
    SIGINT, SIGTERM) unwinds it, so what was applied is put back; the environment is locked throughout
    (not for --dry-run, which changes nothing)."""
    from tfdoctor.processes.deadline import FIX_S, within

    CHILDREN.reopen()  # a new operation: an interrupt of an earlier one in this process (the API) is over
    with _ending_signals_unwind(), within(FIX_S):  # every child ends by the deadline --help states
        if options.dry_run:
            return _fix(options, ui)
        environment = probe(options.python)
        with ownership.owning(environment):
            _finish_interrupted_restores(environment, ui)
            return _fix(options, ui)


def _fix(options: FixOptions, ui: Ui) -> int:
    with ui.progress("diagnosing"):
        report = diagnose(options)
    plan = report.plan
    document = options.redact(report.to_dict())
    if options.choice is not None:
        chosen = plan.choice(options.choice)
        if chosen is None:
            offered = ", ".join(str(c.number) for c in plan.choices) or "none"
            ui.say(f"There is no choice {options.choice} for this environment (choices offered: {offered}). "
                   "Nothing was changed.", "red")
            return EXIT_CANNOT_RUN
        ui.say(f"Choice {chosen.number}: {chosen.summary}.", "bold")
        plan = chosen.plan
        offered_plans = (document.get("plan") or {}).get("choices") or ()
        document = dict(document, plan=next((c.get("plan") for c in offered_plans if c.get("number") == chosen.number),
                                            None) or {})
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
               "Nothing was changed." + (f" Each choice above is a complete plan: tfdoctor fix --choice N (1-"
                                         f"{len(plan.choices)}) proves and applies the one you pick."
                                         if plan.choices else ""), "red")
        return EXIT_NOT_REPAIRED
    if not steps:
        ui.say("Every step is for your shell or project (marked manual above): tfdoctor fix changes nothing.", "yellow")
        return EXIT_NOT_REPAIRED if _failures(report) else EXIT_REPAIRED
    environment = Environment.from_facts(report.facts)
    if environment.installer.fix_refusal:
        ui.say(f"tfdoctor fix leaves this {environment.installer.label} to its installer: "
               f"{environment.installer.fix_refusal}. Run the plan's commands above. Nothing was changed.", "yellow")
        return EXIT_CANNOT_RUN
    if options.dry_run:
        from tfdoctor.fixer.dry_run import ask_resolver

        return ask_resolver(steps, environment, ui)
    if not environment.isolated and not (options.yes and options.system):
        ui.say(f"This Python ({environment.python}) is no environment of its own but the "
               f"{environment.installer.label}: tfdoctor fix changes it only with both --yes and --system. A virtual "
               "environment of your own is the safer place for TensorFlow.", "red")
        return EXIT_CANNOT_RUN
    if not options.yes and not ui.can_ask():
        ui.say("tfdoctor fix asks before it changes anything, and there is no terminal to ask on: pass --yes.", "red")
        return EXIT_CANNOT_RUN

    from tfdoctor.fixer.trials import proven_steps  # issue 29: apply the smallest change a trial proved

    # a choice is the user's, whole: the trials' smallest change belongs to the report's own plan
    proven = proven_steps(report, environment, steps, ui.say) if options.choice is None else None
    before = freeze(environment.python)
    wanted = _tensorflow_the_plan_installs(plan)
    verified = _verify(proven or steps, environment, options, ui, before, wanted, plan=plan)
    if verified is None and proven is not None and [s.command for s in proven] != [s.command for s in steps]:
        # the trials prove only what they tried (the suspects' pins); what else the plan repairs (an altered file,
        # another pin) is still to do, and the pasted plan does it (issue 35)
        ui.say(f"The proven change alone leaves failures on the copy: proving the whole plan ({len(steps)} "
               f"step{'s' if len(steps) != 1 else ''}) on a copy.", "yellow")
        proven = None
        verified = _verify(steps, environment, options, ui, before, wanted, plan=plan)
    if verified is None:
        return EXIT_NOT_REPAIRED
    steps = proven or steps
    if not options.yes and not ui.confirm(f"Apply these {len(steps)} steps to {environment.prefix}?"):
        ui.say("Nothing was changed.", "yellow")
        return EXIT_NOT_REPAIRED
    return _apply(steps, environment, options, ui, document.get("plan") or {}, plan=plan)


def _tensorflow_the_plan_installs(plan: Any) -> list[str]:
    """The TensorFlow requirements the plan states a reason to install: its TensorFlow move's target, and
    the TensorFlow builds its install steps name (an environment without TensorFlow: `pip install
    tensorflow`, for the check that asked for it). A move on the copy is judged against these."""
    from tfdoctor.facts.requires_dist import is_tensorflow_build
    from tfdoctor.results.repairs import Action

    wanted = [plan.moves_tensorflow.target] if plan.moves_tensorflow is not None else []
    for step in plan.runnable:
        if step.action is Action.INSTALL and step.reasons:
            wanted += [package for package in step.packages if is_tensorflow_build(_requirement_name(package))]
    return wanted


def _requirement_name(requirement: str) -> str:
    import re

    return re.split(r"[\s\[<>=!~;@]", requirement.strip(), maxsplit=1)[0]


def _moved_as_stated(before: list[str], after: list[str], wanted: list[str]) -> bool:
    """The copy's TensorFlow, when it moved, is one the plan said it installs (name and version)."""
    from packaging.requirements import InvalidRequirement, Requirement
    from packaging.utils import canonicalize_name

    if not _tensorflow_moved(before, after):
        return True
    new = _tensorflow_versions(after)
    for text in wanted:
        try:
            requirement = Requirement(text)
        except InvalidRequirement:
            continue
        version = new.get(canonicalize_name(requirement.name))
        if version is not None and requirement.specifier.contains(version, prereleases=True):
            return True
    return False


def _verify(steps: list[Any], environment: Environment, options: FixOptions, ui: Ui, before: list[str],
            tensorflow_wanted: list[str], plan: Any = None) -> Optional[list[str]]:
    """Run the plan on a throwaway clone and the doctor on it (as the user's shell will be once the plan's
    variable steps are done); the clone's freeze when it comes out with no failure, else None (said why).
    The clone is removed whatever happens."""
    with ui.progress("making a throwaway copy of the environment"):
        copy = clone(environment)
    try:
        spelling = Spelling(environment.kind, copy.python, POSIX)
        failed = _run_plan(steps, spelling, options, ui, "on the copy", copy.prefix, environment.prefix)
        if failed:
            ui.say(f"The plan did not work on a copy of the environment: {failed}\nYour environment is untouched.", "red")
            return None
        with ui.progress("diagnosing the copy"):
            after_report = diagnose(options, copy.python, plan)
        after = freeze(copy.python)
        failures = _failures(after_report)
        if failures:
            ui.say("On a copy of the environment the plan ran, but the doctor still finds: " + "; ".join(failures)
                   + ". Your environment is untouched.", "red")
            return None
        if not _moved_as_stated(before, after, tensorflow_wanted):
            ui.say("On the copy the plan moved TensorFlow, which it does not say it installs: not applied. "
                   "Your environment is untouched. What changed on the copy:\n"
                   + "\n".join(f"  {line}" for line in changes(before, after)), "red")
            return None
        left = _shell_steps_words(plan)
        ui.say("Verified on a copy: every step worked and the doctor finds no failure there"
               + (f" once {left} is done in your shell" if left else "")
               + (f" ({len(_warnings(after_report))} warnings)" if _warnings(after_report) else "") + ".", "green")
        for line in changes(before, after) or ["(no distribution changes version)"]:
            ui.say(f"  {line}")
        return after
    finally:
        remove(copy.prefix)


def _apply(steps: list[Any], environment: Environment, options: FixOptions, ui: Ui, document: Mapping[str, Any],
           plan: Any = None) -> int:
    """Apply the steps (rollback record and snapshot first) and diagnose the environment as the user's shell
    will be once the plan's variable steps are done; put the snapshot back if anything fails."""
    with ui.progress("writing the rollback record"):
        way_back = rollback.create(environment, dict(document))
    ui.say(f"Rollback record: {way_back.directory} (tfdoctor fix --undo restores it)", "dim")
    try:
        failed = _run_plan(steps, Spelling(environment.kind, environment.python, POSIX), options, ui, "applying",
                           environment.prefix)
        failures: list[str] = []
        if not failed:
            with ui.progress("diagnosing the repaired environment"):
                failures = _failures(diagnose(options, plan=plan))
    except BaseException:
        _put_back(way_back, ui)
        raise
    if failed or failures:
        ui.say(f"Applying the plan failed: {failed or '; '.join(failures)}", "red")
        _put_back(way_back, ui)
        return EXIT_NOT_REPAIRED
    undo_line = "tfdoctor fix --undo --python " + quote(environment.python, POWERSHELL if os.name == "nt" else POSIX)
    left = _shell_steps_words(plan)
    if left:
        ui.say(f"Applied: {len(steps)} step{'s' if len(steps) != 1 else ''}. Left to you: {left}. tfdoctor fix cannot "
               "change your shell: do it in this shell and in your shell profile (~/.bashrc, ~/.zshrc, or your IDE's "
               "run configuration); with it the doctor finds no failure. Undo with: " + undo_line, "yellow")
        return EXIT_SHELL_STEPS_LEFT
    ui.say(f"Repaired: {len(steps)} step{'s' if len(steps) != 1 else ''} applied and the doctor finds no failure. "
           "Undo with: " + undo_line, "green")
    return EXIT_REPAIRED


ENDING_SIGNALS = ("SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT")  # those present on this platform


@contextlib.contextmanager
def _ending_signals_unwind() -> Iterator[None]:
    """SIGHUP (the terminal closed) and SIGQUIT unwind the run as SIGINT does (the handler the CLI or
    Python set for it is called with the signal's own number: exit 128 + N), so an apply they cut is put
    back; by default they would end tfdoctor on the spot, the installer writing on in its own session."""
    import signal
    import threading

    names = [name for name in ("SIGHUP", "SIGQUIT") if hasattr(signal, name)]
    if threading.current_thread() is not threading.main_thread() or not names:
        yield
        return

    def like_an_interrupt(signum: int, frame: Any) -> None:
        handler = signal.getsignal(signal.SIGINT)
        if callable(handler):
            handler(signum, frame)
        else:
            raise KeyboardInterrupt

    saved = {getattr(signal, name): signal.signal(getattr(signal, name), like_an_interrupt) for name in names}
    try:
        yield
    finally:
        for signum, handler in saved.items():
            signal.signal(signum, handler)


@contextlib.contextmanager
def _signals_held() -> Iterator[None]:
    """Every ending signal waits while the snapshot goes back: half a restore is worse than either state.
    One that arrived meanwhile is delivered again afterwards (the run then ends as it asked). The handler
    is a function, not SIG_IGN, which children would inherit."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    pending: list[int] = []
    signums = [getattr(signal, name) for name in ENDING_SIGNALS if hasattr(signal, name)]
    saved = {signum: signal.signal(signum, lambda signum, frame: pending.append(signum)) for signum in signums}
    try:
        yield
    finally:
        for signum, handler in saved.items():
            signal.signal(signum, handler)
        if pending and sys.exc_info()[0] is None:
            signal.raise_signal(pending[0])


def _restore(way_back: rollback.Rollback) -> rollback.Restored:
    from tfdoctor.processes.deadline import suspended

    with _signals_held(), suspended():  # once begun, finished: its check keeps its own timeout
        return rollback.restore(way_back)


def _put_back(way_back: rollback.Rollback, ui: Ui) -> None:
    restored = _restore(way_back)
    ui.say("The environment was put back as it was." if restored.verified else
           "The environment was put back from the snapshot, but its distributions differ from the record ("
           + "; ".join(changes(way_back.freeze, restored.freeze)) + f"); the record stays: {way_back.directory}",
           "yellow" if restored.verified else "red")


def _finish_interrupted_restores(environment: Environment, ui: Ui) -> None:
    """A restore cut short earlier (its journal is there, its record too) is completed before anything
    else touches the environment; then what earlier runs left (clones beside the environment, snapshots
    without a record) is removed, and what cannot be removed is said once."""
    from tfdoctor.fixer.environment import leftover_clones

    _complete_restores(environment, ui)
    for message in rollback.sweep(environment, leftover_clones(environment.prefix) + rollback.leftovers(environment)):
        ui.say(message, "yellow")


def _complete_restores(environment: Environment, ui: Ui) -> None:
    for way_back in rollback.interrupted(environment):
        ui.say(f"An earlier restore of {environment.prefix} was interrupted; completing it first "
               f"(journal in {way_back.directory}).", "yellow")
        restored = _restore(way_back)
        if not restored.verified:
            raise FixError(f"the interrupted restore from {way_back.directory} was completed, but the "
                           "distributions differ from its record: " + "; ".join(changes(way_back.freeze, restored.freeze)))
        ui.say("Completed: the environment is as it was before that fix.", "green")


def undo(python: str, ui: Ui, yes: bool = False) -> int:
    from tfdoctor.processes.deadline import UNDO_S, within

    CHILDREN.reopen()
    with _ending_signals_unwind(), within(UNDO_S):
        environment = probe(python)
        with ownership.owning(environment):
            return _undo(environment, python, ui, yes)


def _undo(environment: Environment, python: str, ui: Ui, yes: bool) -> int:
    was_interrupted = rollback.interrupted(environment)
    _finish_interrupted_restores(environment, ui)
    if was_interrupted:  # the user asked for exactly this: no second question
        return EXIT_REPAIRED
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
        restored = _restore(way_back)
    if not restored.verified:
        ui.say("Restored, but the distributions differ from the record: " + "; ".join(changes(way_back.freeze, restored.freeze))
               + f". The record stays ({way_back.directory}).", "red")
        return EXIT_NOT_REPAIRED
    ui.say("Restored: the environment's distributions are exactly as recorded before the fix.", "green")
    return EXIT_REPAIRED


def _probe_code() -> str:
    """The target child's own installer markers (child/target_info.py, run without its description), so
    `fix --undo` detects the installer as the doctor does, and where the environment and its packages are."""
    return ("__name__ = 'tfdoctor_probe'  # target_info's description stays unrun: only its functions are wanted\n"
            + source("target_info")
            + "\nanswer = dict(installer_markers(), prefix=sys.prefix, site=getattr(site, 'getsitepackages', list)())\n")


def probe(python: str) -> Environment:
    """Where an interpreter's environment is, without a diagnosis (for the lock and --undo)."""
    try:
        data = child_json(python, _probe_code(), timeout=30.0)
    except FixError as exc:
        raise FixError(f"{python} does not start as a Python interpreter (give the python of the environment): {exc}") from exc
    kind = installers.detect(data).kind  # the doctor's precedence, on the same markers
    return Environment(os.path.abspath(python) if os.sep in python else python, data["prefix"], kind, tuple(data["site"]))
