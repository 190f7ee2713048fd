"""Trials (issue 29): the suspect distributions of a report, each with the release that would repair it,
tried on throwaway clones of the environment: one at a time in rank order, then all together. The smallest
change after which `import tensorflow`, a tf.keras layer, a traced `tf.function` with Python control flow
and the user's failing imports all work is the proof. `tfdoctor fix` applies a proof when the plan has
nothing runnable; `tfdoctor --prove` runs the same trials and applies nothing. Both need the package index.

Candidates are a pure function of the report (`candidates`): the dependencies check's violated pins tied
to the error first (the suspect and the specifier its requirer declares), then the other violated pins,
then every failing check's `candidates` evidence: suspects inside every pin (a release that breaks AutoGraph:
the tested or a newer one; the distributions an import error no rule explains names; a distribution "reinstalled
as it was" when the failing file is TensorFlow's own or its WHEEL names another Python).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping, Optional, Sequence

from tfdoctor.results.repairs import Action

# What must work after a trial: the import, a Keras layer built and called, an AutoGraph-converted
# function with Python control flow traced once, and the user's failing imports (argv).
TRIAL_SCRIPT = r"""
import importlib, sys
import tensorflow as tf
layer = tf.keras.layers.Dense(2)
assert tuple(layer(tf.ones((1, 3))).shape) == (1, 2)
@tf.function
def branch(x):
    if tf.reduce_sum(x) > 0:
        return x + 1
    return x - 1
assert float(tf.reduce_sum(branch(tf.ones(3)))) == 6.0
for name in sys.argv[1:]:
    importlib.import_module(name)
print("trial-ok", tf.__version__)
"""
TRIAL_TIMEOUT_S = 300.0


@dataclass(frozen=True)
class Candidate:
    """One change to try: install `requirement` (TensorFlow pinned where it is), or with `reinstall` lay the
    installed release `name==version` down again (`--force-reinstall --no-deps`: files built for another Python,
    an unknown error inside TensorFlow's own files), which an install of the installed version would not do."""

    name: str
    requirement: str
    why: str
    reinstall: bool = False


@dataclass
class Trial:
    candidates: tuple[Candidate, ...]
    works: bool
    seconds: float
    output: str = ""

    @property
    def change(self) -> str:
        return " ".join(f"{c.requirement} (reinstalled)" if c.reinstall else c.requirement for c in self.candidates)


@dataclass
class Proof:
    trials: list[Trial] = field(default_factory=list)
    out_of_time: bool = False  # the operation's deadline passed before every trial was run

    @property
    def proven(self) -> Optional[Trial]:
        """The smallest working change: the first single candidate that works, else all of them together."""
        return next((t for t in self.trials if t.works), None)


def candidates(results: Iterable[Any]) -> list[Candidate]:
    """Ranked candidates. First the dependencies check's (failing or warning): its violated pins, those the error
    points into first, then its candidates for suspects inside every pin (a release that breaks AutoGraph). Then
    every other failing check's `candidates` evidence (an import error no rule explains: the distributions it
    names, tensorflow-import). Each distribution once, at its first rank."""
    found: dict[str, Candidate] = {}
    flagged = [r for r in results if getattr(r, "status", None) is not None and r.status.value in ("fail", "warn")]
    for result in sorted(flagged, key=lambda r: r.check_id != "dependencies"):
        evidence = result.evidence or {}
        if result.check_id == "dependencies":
            for candidate in _violated_pins(evidence):
                found.setdefault(candidate.name, candidate)
        elif result.status.value != "fail":
            continue
        for item in evidence.get("candidates") or ():
            if isinstance(item, Mapping) and item.get("requirement") and str(item.get("name")) not in found:
                found[str(item["name"])] = Candidate(str(item["name"]), str(item["requirement"]), str(item.get("why") or ""),
                                                     item.get("reinstall") is True)
    return list(found.values())


def screened(found: Sequence[Candidate], tensorflow_pin: Optional[str] = None
             ) -> tuple[list[Candidate], Optional[str], list[str]]:
    """(the candidates pip may be given, the TensorFlow pin if it may be, a line for each refused word). A
    candidate is read from the environment's metadata (a distribution named `-rhttp://host/req` that owns
    the failing file): only a plain requirement is ever an installer's argument (environment/spell.py)."""
    from tfdoctor.environment.spell import refusal

    kept, lines = [], []
    for candidate in found:
        why = refusal(Action.REINSTALL if candidate.reinstall else Action.INSTALL, candidate.requirement)
        if why is None:
            kept.append(candidate)
        else:
            lines.append(f"refused candidate {candidate.requirement!r}: {why}; read from the environment's metadata, "
                         "it is tried on no copy and passed to no installer")
    why_not_pinned = refusal(Action.INSTALL, tensorflow_pin) if tensorflow_pin else None
    if why_not_pinned is not None:
        lines.append(f"refused TensorFlow's pin {tensorflow_pin!r}: {why_not_pinned}; the trials do not pin it")
        tensorflow_pin = None
    return kept, tensorflow_pin, lines


def _violated_pins(evidence: Mapping[str, Any]) -> list[Candidate]:
    """The dependencies check's unmet pins as candidates, those the error points into first; two requirers of
    one distribution make one candidate with both specifiers."""
    suspects = {s.get("name") for s in evidence.get("suspects") or () if isinstance(s, Mapping)}
    found: dict[str, Candidate] = {}
    unmet = [u for u in evidence.get("unmet") or () if isinstance(u, Mapping)]
    unmet.sort(key=lambda u: not ({u.get("requirer"), u.get("name")} & suspects))
    for item in unmet:
        name, specifier = str(item.get("name")), item.get("specifier") or ""
        if name in found:
            merged = f"{found[name].requirement},{specifier}" if specifier else found[name].requirement
            found[name] = Candidate(name, merged, found[name].why)
        else:
            found[name] = Candidate(name, f"{name}{specifier}", f"{item.get('requirer')} requires {name}{specifier}")
    return list(found.values())


def _install_argv(kind: str, python: str, requirements: Sequence[str], action: Action = Action.INSTALL) -> list[str]:
    from tfdoctor.environment.spell import POSIX, Spelling, argv

    return argv(Spelling(kind, python, POSIX), action, tuple(requirements))


def _trial_argvs(kind: str, python: str, group: Sequence[Candidate], tensorflow_pin: Optional[str]) -> list[list[str]]:
    """The installer commands of one trial: the reinstalls as they were first, then one install of the others with
    TensorFlow pinned (none when every candidate is a reinstall: the pin would only restate what is there)."""
    reinstalls = [c.requirement for c in group if c.reinstall]
    installs = [c.requirement for c in group if not c.reinstall]
    argvs = [_install_argv(kind, python, reinstalls, Action.REINSTALL)] if reinstalls else []
    if installs:
        argvs.append(_install_argv(kind, python, installs + ([tensorflow_pin] if tensorflow_pin else [])))
    return argvs


def run_trials(environment: Any, found: Sequence[Candidate], tensorflow_pin: Optional[str], imports: Sequence[str] = (),
               say: Any = None, timeout: float = TRIAL_TIMEOUT_S, prelude: Sequence[Any] = ()) -> Proof:
    """Each candidate alone on its own clone, in order, stopping at the first that works; then all of them
    together. `prelude`: plan steps every trial needs first (a RECORD-less distribution's metadata removed).
    Clones are removed whatever happens; the environment itself is never touched."""
    from tfdoctor.environment.spell import POSIX, Spelling
    from tfdoctor.fixer.environment import clone, remove, run_step
    from tfdoctor.processes.deadline import passed

    proof = Proof()
    groups = [(c,) for c in found] + ([tuple(found)] if len(found) > 1 else [])
    for group in groups:
        if passed():  # the operation's deadline (fix, --prove): no trial is started after it
            proof.out_of_time = True
            if say is not None:
                say(f"trial: {' '.join(c.requirement for c in group)} not tried: the deadline has passed")
            break
        started = time.monotonic()
        copy = clone(environment)
        try:
            for before in prelude:
                run_step(before.argv(Spelling(environment.kind, copy.python, POSIX), copy.prefix), timeout)
            steps = []
            for command in _trial_argvs(environment.kind, copy.python, group, tensorflow_pin):
                steps.append(run_step(command, timeout))
                if steps[-1]["status"] != "ok":
                    break
            output = "\n".join((step["stdout"] + step["stderr"]).strip() for step in steps)
            works = False
            if all(step["status"] == "ok" for step in steps):
                # a file, not `-c`: AutoGraph converts only functions whose source it can read
                script = Path(copy.prefix) / "tfdoctor-trial.py"
                script.write_text(TRIAL_SCRIPT, encoding="utf-8")
                tried = run_step([copy.python, str(script), *imports], timeout)
                output = (tried["stdout"] + tried["stderr"]).strip()
                works = tried["status"] == "ok" and "trial-ok" in tried["stdout"]
            trial = Trial(group, works, time.monotonic() - started, "\n".join(output.splitlines()[-6:]))
        finally:
            remove(copy.prefix)
        proof.trials.append(trial)
        if say is not None:
            say(f"trial: {trial.change} on a copy -> {'works' if trial.works else 'still broken'} "
                f"({trial.seconds:.0f} s)")
        if trial.works:
            break
    return proof


def describe(proof: Proof) -> list[str]:
    """Lines for the user: each trial and, when one worked, the proven cause."""
    lines = [f"  {t.change}: {'works' if t.works else 'still broken'} ({t.seconds:.0f} s)" for t in proof.trials]
    proven = proof.proven
    if proven is not None:
        lines.append("proven by experiment: " + "; ".join(c.why for c in proven.candidates)
                     + f" (installing {proven.change} on a copy makes TensorFlow, tf.keras and tf.function work)")
    elif proof.trials:
        lines.append("no candidate made TensorFlow work on a copy")
    if proven is None and proof.out_of_time:
        lines.append("the deadline passed before every candidate was tried")
    return lines


def prove_report(report: Any, say: Any) -> Optional[Proof]:
    """`tfdoctor --prove`: the report's candidates tried on copies of its environment; nothing applied."""
    from tfdoctor.facts.requires_dist import tensorflow_pin
    from tfdoctor.fixer.environment import Environment

    found, pin, refused = screened(candidates(report.results), tensorflow_pin(report.facts))
    for line in refused:
        say(f"--prove: {line}")
    if not found:
        say("--prove: no suspect to try (" + ("every candidate was refused" if refused else
                                              "nothing in the report points at a distribution") + ").")
        return None
    environment = Environment.from_facts(report.facts)
    if environment.installer.fix_refusal:
        say(f"--prove: nothing tried: {environment.installer.fix_refusal}.")
        return None
    say("--prove: trying " + ", ".join(c.requirement for c in found) + " on throwaway copies of the environment "
        "(this uses the package index, as `tfdoctor fix --dry-run` does; the environment is not changed)")
    from tfdoctor.processes.deadline import PROVE_S, within

    prelude = [step for step in report.plan.steps if step.action is Action.REMOVE_METADATA]
    with within(PROVE_S):
        proof = run_trials(environment, found, pin, say=say, prelude=prelude)
    for line in describe(proof):
        say(line)
    return proof


def proven_steps(report: Any, environment: Any, steps: Sequence[Any], say: Any) -> Optional[list[Any]]:
    """`tfdoctor fix`: when the report names suspects, the smallest proven change as the steps to apply
    (the plan's metadata removals first, then one install with TensorFlow pinned); None to keep the plan."""
    from dataclasses import replace

    from tfdoctor.environment.spell import command, spelling_for
    from tfdoctor.facts.requires_dist import tensorflow_pin
    from tfdoctor.plan.planner import Step

    if not any((r.evidence or {}).get("suspects") for r in report.results if r.check_id == "dependencies"):
        return None
    found, pin, refused = screened(candidates(report.results), tensorflow_pin(report.facts))
    for line in refused:
        say(line)
    if not found:
        return None
    prelude = [step for step in steps if step.action is Action.REMOVE_METADATA]
    proof = run_trials(environment, found, pin, say=say, prelude=prelude)
    proven = proof.proven
    for line in describe(proof):
        say(line)
    if proven is None:
        return None
    spelling = spelling_for(report.facts)
    changes = []
    reinstalls = tuple(c.requirement for c in proven.candidates if c.reinstall)
    if reinstalls:
        changes.append((Action.REINSTALL, reinstalls))
    installs = tuple(c.requirement for c in proven.candidates if not c.reinstall)
    if installs:
        changes.append((Action.INSTALL, installs + ((pin,) if pin else ())))
    return [replace(step, number=n) for n, step in enumerate(prelude, 1)] + [
        Step(len(prelude) + n, action, command(spelling, action, packages), packages)
        for n, (action, packages) in enumerate(changes, 1)]
