"""The fixer for doors other than `tfdoctor fix`'s terminal (the MCP server today; tfdoctor/operations/
later): prove the plan on a throwaway copy and name the proof, then apply exactly that proof.

The command line proves and applies in one run, with the user's yes between. A door that proves in one
call and applies in another needs the proof named (`plan_id`: the interpreter, the plan and the
environment's freeze) so that the apply can refuse when anything moved in between. Both take the
environment's lock (ownership.py), as `tfdoctor fix` does: the copy is made beside the environment,
where a fix starting meanwhile would sweep it away as a leftover, and two appliers would each write a
rollback record. Everything else is the flow's own (flow.py): the copy, the steps, the doctor after them,
the rollback record and the put-back.
"""

from __future__ import annotations

import hashlib
import json
import os
from contextlib import nullcontext
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Optional

from tfdoctor.fixer import flow, ownership
from tfdoctor.fixer.environment import Environment, FixError, freeze


class RecordingUi:
    """The flow's Ui (flow.py) for a door without a terminal: each line kept, redacted, for the door to
    return; each stage handed to `on_stage`; it never asks (the door's own gate, and the proof, stand for
    the user's yes)."""

    def __init__(self, redact: Callable[[str], str], on_stage: Callable[[str], None] = lambda text: None) -> None:
        self.lines: list[str] = []
        self._redact = redact
        self._on_stage = on_stage

    def progress(self, text: str) -> Any:
        self._on_stage(self._redact(text))
        return nullcontext()

    def say(self, text: str, style: str = "") -> None:
        self.lines.append(self._redact(text))

    def plan(self, document: Mapping[str, Any]) -> None:
        pass

    def confirm(self, question: str) -> bool:
        return False

    def can_ask(self) -> bool:
        return False


class Refused(FixError):
    """The proof no longer holds (`reason` "moved") or the environment may not be changed from here
    ("system"): nothing was changed. A door words it in its own terms from `reason`."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


def plan_id(python: str, plan: Any, before: list[str]) -> str:
    """The proof's name: the interpreter, the plan (as its document, unredacted) and the environment's
    freeze. Any change to the environment or the plan after the proof gives another name."""
    blob = json.dumps({"python": os.path.realpath(python), "plan": plan, "freeze": sorted(before)}, sort_keys=True)
    return "plan-" + hashlib.sha256(blob.encode("utf-8", "surrogateescape")).hexdigest()[:20]


@dataclass(frozen=True)
class Proof:
    report: Any  # the doctor's diagnosis of the environment (its plan is what was proven)
    environment: Environment
    before: list[str]  # the environment's freeze
    after: Optional[list[str]]  # the copy's freeze once the plan worked there; None when it did not, or no step ran
    plan_id: Optional[str]  # set when the proof holds
    verdict: str

    @property
    def verified(self) -> bool:
        return self.plan_id is not None

    @property
    def changes(self) -> list[str]:
        return flow.changes(self.before, self.after) if self.after is not None else []


def prove(options: flow.FixOptions, ui: flow.Ui) -> Proof:
    """Diagnose, then run the plan's runnable steps on a throwaway copy and the doctor on the copy, under
    the environment's lock (FixError, naming the holder, when another tfdoctor holds it). The real
    environment is not changed."""
    with ownership.owning(flow.probe(options.python)):
        report = flow.diagnose(options)
        plan = report.plan
        environment = Environment.from_facts(report.facts)
        before = freeze(environment.python)
        steps = list(plan.runnable)
        if plan.conflicts:
            return Proof(report, environment, before, None, None,
                         "The plan cannot be carried out: no install satisfies the conflicting requirements.")
        if not steps:
            failures = [r for r in report.results if r.status.value in ("fail", "error")]
            return Proof(report, environment, before, None, None,
                         "Nothing to fix: no check asks for a change to this environment." if not plan.steps
                         and not failures else "No step tfdoctor can run repairs what is left (manual steps, or "
                         "advice only).")
        try:
            after = flow._verify(steps, environment, options, ui, before,  # noqa: SLF001 - this room's own proof
                                 flow._tensorflow_the_plan_installs(plan), plan=plan)  # noqa: SLF001
        except FixError as exc:
            ui.say(str(exc))
            after = None
    if after is None:
        return Proof(report, environment, before, None, None, "The plan did not work on a copy: nothing was changed.")
    return Proof(report, environment, before, after, plan_id(options.python, plan.to_dict(), before),
                 "Verified on a throwaway copy.")


@dataclass(frozen=True)
class Applied:
    exit_code: int  # flow's: EXIT_REPAIRED, EXIT_SHELL_STEPS_LEFT (applied, checked); EXIT_NOT_REPAIRED (put back)
    before: list[str]
    after: list[str]
    left_to_you: list[str]  # the plan's steps for the user's shell, when applied

    @property
    def applied(self) -> bool:
        return self.exit_code in (flow.EXIT_REPAIRED, flow.EXIT_SHELL_STEPS_LEFT)

    @property
    def changes(self) -> list[str]:
        return flow.changes(self.before, self.after)


def apply_proven(options: flow.FixOptions, proof_id: str, ui: flow.Ui) -> Applied:
    """Apply the plan `prove` named `proof_id`, as `tfdoctor fix --yes` applies it: under the environment's
    lock, an interrupted restore completed first, then the rollback record and snapshot, the steps, the
    doctor on the result, and the snapshot put back if a step or the doctor fails. Refused (nothing
    changed) when the lock is held, when the environment or its plan moved since the proof, and for a
    system or externally managed Python."""
    located = flow.probe(options.python)
    with ownership.owning(located):
        flow._finish_interrupted_restores(located, ui)  # noqa: SLF001 - as fix() does, first
        report = flow.diagnose(options)
        plan = report.plan
        environment = Environment.from_facts(report.facts)
        before = freeze(environment.python)
        if plan_id(options.python, plan.to_dict(), before) != proof_id:
            raise Refused("moved", "the environment or its plan changed since it was proven: prove it again")
        if not environment.isolated:
            raise Refused("system", "a system or externally managed Python is not changed from here: use a virtual "
                          "environment, or run `tfdoctor fix --yes --system` yourself")
        code = flow._apply(list(plan.runnable), environment, options, ui,  # noqa: SLF001 - this room's own apply
                           options.redact(report.to_dict()).get("plan") or {}, plan=plan)
        after = freeze(environment.python)
    left = [step.command for step in plan.manual] if code == flow.EXIT_SHELL_STEPS_LEFT else []
    return Applied(code, before, after, left)
