"""verify, apply, undo: `tfdoctor fix`'s operations. The plan is proven on a throwaway copy before the environment
is touched; applying writes a rollback record first and puts the snapshot back when anything fails; undo puts the
last snapshot back. Each holds the environment's lock (fixer/ownership.py) and its deadline (processes/deadline.py)
for its whole run, whichever door asked: the command line, an assistant over MCP, or the Python API.

`fix` is the command line's whole interactive run (prove, show, ask, apply); `verify` and the detached apply and
undo are the same steps for a door that asks between them (MCP): the apply and the undo then run in a process of
their own that finishes even if the door goes away, and `settle` tells how earlier ones ended."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Collection, Optional

# flow's exit codes: 0 repaired (or nothing to repair), 1 not repaired (as it was), 2 cannot run, 3 shell steps left
from tfdoctor.fixer.flow import EXIT_CANNOT_RUN, EXIT_NOT_REPAIRED, EXIT_REPAIRED, EXIT_SHELL_STEPS_LEFT, Ui  # noqa: F401
from tfdoctor.operations.common import CannotRun, interpreter, redactor, text_redactor


@dataclass(frozen=True)
class FixRequest:
    python: Optional[str] = None
    only: tuple[str, ...] = ()
    skip: tuple[str, ...] = ()
    yes: bool = False
    system: bool = False
    dry_run: bool = False
    timeout: float = 60.0  # each TensorFlow import of the diagnoses
    redact: bool = True
    absolute_python: bool = False
    choice: Optional[int] = None  # the report's choice N (a complete plan of its own) instead of its plan

    def options(self) -> Any:
        from tfdoctor.fixer.flow import FixOptions

        return FixOptions(interpreter(self.python, absolute=self.absolute_python), self.only, self.skip, self.yes,
                          self.system, self.dry_run, self.timeout, redact=redactor(self.redact), choice=self.choice)


def _guarded(work: Any) -> Any:
    from tfdoctor.fixer.environment import FixError

    try:
        return work()
    except FixError as exc:
        raise CannotRun(str(exc)) from None


def fix(request: FixRequest, ui: Ui) -> int:
    """Diagnose, prove the plan on a copy, show it, ask (`ui.confirm`, unless `yes`), apply: the exit code."""
    from tfdoctor.fixer import flow

    options = request.options()
    return int(_guarded(lambda: flow.fix(options, ui)))


def undo(python: Optional[str], ui: Ui, yes: bool = False) -> int:
    """Put the last fix's snapshot back (asking first unless `yes`): the exit code."""
    from tfdoctor.fixer import flow

    target = interpreter(python)
    return int(_guarded(lambda: flow.undo(target, ui, yes)))


def verify(request: FixRequest, ui: Ui) -> Any:
    """Prove the plan on a throwaway copy without changing the environment: a fixer.proven.Proof (its plan_id names
    what `apply` may apply while the environment and its plan stay as proven)."""
    from tfdoctor.fixer.proven import prove

    options = request.options()
    return _guarded(lambda: prove(options, ui))


def recording_ui(redact: bool, on_stage: Any = lambda text: None) -> Any:
    """A Ui that records what the fixer says instead of printing it (for a door that answers afterwards)."""
    from tfdoctor.fixer.proven import RecordingUi

    return RecordingUi(text_redactor(redact), on_stage)


def apply_job(python: str, deadline_s: float, plan_id: str, only: Collection[str] = (), skip: Collection[str] = (),
              timeout: float = 60.0) -> Any:
    """A detached apply of the plan `verify` proved as `plan_id` (run it with `run_detached`)."""
    from tfdoctor.fixer import detached

    return detached.Job("apply", python, deadline_s, plan_id, list(only), list(skip), timeout)


def undo_job(python: str, deadline_s: float) -> Any:
    """A detached undo (run it with `run_detached`)."""
    from tfdoctor.fixer import detached

    return detached.Job("undo", interpreter(python), deadline_s)


def run_detached(job: Any, started: Any = lambda process: None) -> dict[str, Any]:
    """Start the job in a process of its own (its own session, under the environment's lock) and wait for its
    record: how it ended. It finishes even if this process goes away; then `settle` tells it."""
    from tfdoctor.fixer import detached

    return detached.run(job, started=started)


def forget(job: Any) -> None:
    """The job's record was told: remove it."""
    from tfdoctor.fixer import detached

    detached.forget(job)


class StillRunning(CannotRun):
    """An apply or undo of the environment still runs past the wait: the message says which and where."""


def settle(python: str, wait_s: float, skip: Collection[str] = ()) -> list[dict[str, Any]]:
    """Wait (at most `wait_s`) for any detached apply or undo of this environment still running, then how each
    earlier one ended, once. StillRunning when one is still running at the end."""
    from tfdoctor.fixer import detached

    try:
        return detached.settle(python, wait_s, skip=skip)
    except detached.StillRunning as exc:
        raise StillRunning(str(exc)) from None


def environment_key(python: str) -> str:
    """One name per environment (a hash, as its path would leak the home), from its interpreter's path without
    running it: what a door keeps per environment (MCP's reports and proofs), as the detached jobs are kept."""
    from tfdoctor.fixer import detached

    return detached.environment_key(python)


def describe(record: dict[str, Any]) -> str:
    from tfdoctor.fixer import detached

    return detached.describe(record)


def prove_suspects(diagnosis: Any, say: Any, redact: bool = True) -> Any:
    """`--prove`: each suspect's candidate repair tried on a throwaway copy of the environment (uses the package
    index; the environment is not changed), within its deadline; `say` gets each line, redacted as asked (a
    candidate's name and an installer's words are what the environment says)."""
    from tfdoctor.fixer.trials import prove_report

    shown = text_redactor(redact)
    return prove_report(diagnosis.run, lambda line: say(shown(line)))
