"""Offline experiments (issue 29): when TensorFlow, tf.keras or a companion fails and no check proved
a cause, change one condition at a time in a child of the target interpreter and see what makes it work.

Never in the real environment and never changing it: every trial is a child process
(child/experiments.py) started with other flags, another working directory or another environment; the
user's files are only read (Keras's configuration is ignored by pointing KERAS_HOME at an empty
temporary directory, not by touching keras.json).

Every trial runs from an empty working directory (processes/commands.py neutral_directory), as the TensorFlow
child does: the user's project folder is read by the shadowing check, never run by a trial. One trial
alone runs from the user's working directory, and its record says so: a companion's layer used "as it is",
which shows what the user's own `python` sees there.

The conditions, in order, each tried all at once and then bisected to the culprit(s):
1. isolation: `-I`; then `-s`, no PYTHONPATH;
2. configuration: Keras's configuration file ignored, and every variable that TensorFlow, Keras,
   protobuf, CUDA or the dynamic loader reads (knowledge/experiment_variables.toml, generated from their
   sources) that is set, unset;
3. use: a companion's Keras layer in a tf.keras model, as it is and with TF_USE_LEGACY_KERAS=1 when
   tf-keras is installed.
The first trial that works is the proof; the experiments stop there, or when their time budget is spent.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Optional, Sequence

from tfdoctor.child import source
from tfdoctor.collect.tensorflow import read_result, run_child, signal_name, with_private_temp
from tfdoctor.processes.commands import CHILDREN
from tfdoctor.processes.deadline import bounded

DEFAULT_BUDGET_S = 30.0
MIN_TRIAL_S = 2.0  # less than this left: the trial could not even import TensorFlow, so none is started
KERAS_CONFIG = "keras.json"
LEGACY_KERAS = "TF_USE_LEGACY_KERAS"
# Isolation factors; "isolated" is `-I`, which also ignores every PYTHON* variable and the user site.
# (Reports before issue 35 may name "other-cwd": a trial from another working directory, which every trial now is.)
ISOLATED, NO_USER_SITE, NO_PYTHONPATH = "isolated", "no-user-site", "no-pythonpath"

Progress = Callable[[str, Mapping[str, Any]], None]


@dataclass(frozen=True)
class Change:
    """One condition changed for a trial: a factor's id and what it does to the child's start."""

    id: str
    kind: str  # "isolation", "variable", "keras-config", "set-variable"
    flags: tuple[str, ...] = ()
    unset: tuple[str, ...] = ()
    set: tuple[tuple[str, str], ...] = ()
    keras_home_empty: bool = False

    def describe(self) -> str:
        if self.kind == "variable":
            return f"{self.unset[0]} unset"
        if self.kind == "keras-config":
            return "Keras's configuration file ignored"
        if self.kind == "set-variable":
            return ", ".join(f"{name}={value}" for name, value in self.set)
        return {ISOLATED: "isolated mode (-I)", NO_USER_SITE: "without the user site (-s)",
                NO_PYTHONPATH: "PYTHONPATH unset"}[self.id]


@dataclass
class Budget:
    seconds: float
    started: float = field(default_factory=time.monotonic)

    def left(self) -> float:
        return self.seconds - (time.monotonic() - self.started)


def variable_names() -> list[str]:
    from tfdoctor.knowledge import rows

    return [row["name"] for row in rows("experiment_variables", "variables")]


def keras_config_file(environ: Mapping[str, str]) -> Optional[str]:
    """The keras.json Keras 3 and tf-keras read: $KERAS_HOME/keras.json, else ~/.keras/keras.json."""
    home = environ.get("KERAS_HOME") or os.path.join(environ.get("HOME") or os.path.expanduser("~"), ".keras")
    path = os.path.join(home, KERAS_CONFIG)
    return path if os.path.isfile(path) else None


def keras_config(path: Optional[str]) -> Optional[dict[str, Any]]:
    """The file and what it says (only its small known keys; the backend is what breaks imports)."""
    if path is None:
        return None
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except (OSError, ValueError) as exc:
        return {"path": path, "readable": False, "error": type(exc).__name__}
    data = data if isinstance(data, dict) else {}
    return {"path": path, "readable": True,
            **{key: data[key] for key in ("backend", "image_data_format", "floatx") if isinstance(data.get(key), str)}}


KERAS_DEFAULTS = {"backend": "tensorflow", "floatx": "float32", "image_data_format": "channels_last"}


def default_config(path: Optional[str]) -> bool:
    """No keras.json, or one that says what Keras assumes without it: nothing to ignore."""
    found = keras_config(path)
    return found is None or (found["readable"] and all(found.get(k, v) == v for k, v in KERAS_DEFAULTS.items()))


def user_site_present(python_facts: Mapping[str, Any]) -> bool:
    user_site = python_facts.get("user_site")
    return bool(python_facts.get("user_site_enabled") and user_site and os.path.isdir(user_site)
                and any(True for _ in os.scandir(user_site)))


# The interpreter's own variables that change what an import finds or does, all ignored by -I
# (https://docs.python.org/3/using/cmdline.html#environment-variables): a PYTHONWARNINGS=error turns
# a library's deprecation warning into an import error, PYTHONOPTIMIZE=2 strips the docstrings some read.
IMPORT_CHANGING = ("PYTHONHOME", "PYTHONPLATLIBDIR", "PYTHONUSERBASE", "PYTHONWARNINGS", "PYTHONOPTIMIZE",
                   "PYTHONSAFEPATH", "PYTHONDEVMODE", "PYTHONCASEOK")


def isolation_factors(environ: Mapping[str, str], python_facts: Mapping[str, Any]) -> list[Change]:
    """Only what differs here from an isolated start: a trial that changes nothing proves nothing. The
    working directory is not one: no trial runs there (the shadowing check reads what it holds)."""
    factors = []
    if user_site_present(python_facts):
        factors.append(Change(NO_USER_SITE, "isolation", flags=("-s",)))
    if environ.get("PYTHONPATH"):
        factors.append(Change(NO_PYTHONPATH, "isolation", unset=("PYTHONPATH",)))
    if any(name in environ for name in IMPORT_CHANGING):  # -I ignores these too
        factors.append(Change(ISOLATED, "isolation", flags=("-I",)))
    return factors


def configuration_factors(environ: Mapping[str, str], names: list[str]) -> list[Change]:
    """Keras's configuration file ignored (when there is one), then each variable of the table that is set
    unset; KERAS_HOME only when it holds no keras.json (else ignoring the file is the finer change)."""
    config = keras_config_file(environ)
    factors = [Change("keras-config", "keras-config", keras_home_empty=True)] if not default_config(config) else []
    factors += [Change(f"variable:{name}", "variable", unset=(name,)) for name in names
                if name in environ and not (name == "KERAS_HOME" and config)]
    return factors


class Trials:
    """Runs trials for one goal within the budget and keeps every outcome."""

    def __init__(self, python: str, goal: Mapping[str, Any], budget: Budget, scratch: str,
                 progress: Optional[Progress], environ: Mapping[str, str], working_directory: Optional[str] = None) -> None:
        self.python, self.goal, self.budget, self.scratch = python, dict(goal), budget, scratch
        self.progress, self.environ = progress, environ
        self.working_directory = working_directory  # the user's, for the one trial that shows what they see
        self.keras_home = tempfile.mkdtemp(prefix="keras-home-", dir=scratch)
        self.autograph = os.path.join(scratch, "tfdoctor_autograph_trace.py")  # AutoGraph needs a source file
        with open(self.autograph, "w", encoding="utf-8") as handle:
            handle.write(source("autograph_trace"))
        self.done: list[dict[str, Any]] = []
        self.out_of_time = False

    def run(self, changes: list[Change], as_the_user_sees_it: bool = False) -> Optional[bool]:
        """Works with all these changes at once? None when the budget (or the run's deadline) is spent.
        `as_the_user_sees_it`: from the user's working directory, running what is there as their own
        `python` does (the trial's record says so); every other trial runs from an empty directory."""
        if CHILDREN.interrupted:  # Ctrl-C or SIGTERM killed the last trial: start no other
            raise KeyboardInterrupt
        left = bounded(self.budget.left())
        if left < MIN_TRIAL_S:
            self.out_of_time = True
            return None
        env = with_private_temp({k: v for k, v in self.environ.items() if not any(k in c.unset for c in changes)},
                                self.scratch)
        for change in changes:
            env.update(change.set)
            if change.keras_home_empty:
                env["KERAS_HOME"] = self.keras_home
        flags = tuple(dict.fromkeys(flag for c in changes for flag in c.flags))
        out = os.path.join(self.scratch, f"trial-{len(self.done)}.json")
        config = {"out": out, "goal": self.goal, "autograph": self.autograph}
        argv = [self.python, *flags, "-c", source("experiments"), json.dumps(config)]
        description = " + ".join(c.describe() for c in changes) or "as it is"
        cwd = self.working_directory if as_the_user_sees_it else None
        if cwd is not None:
            description += (f", from your working directory {cwd} (what your own `python` sees there: it runs the "
                            "files of that folder)")
        if self.progress is not None:
            self.progress("experiment", {"index": len(self.done) + 1, "trial": description,
                                         "goal": self.goal.get("kind")})
        fate = run_child(argv, env, left, cwd=cwd)
        result = read_result(out) or {}
        signal_, _ = signal_name(fate.returncode)
        works = bool(result.get("works")) and not fate.timed_out
        self.done.append({"changes": [c.id for c in changes], "description": description, "works": works,
                          "step": result.get("step"), "error": result.get("error"),
                          "signal": None if fate.timed_out else signal_, "timed_out": fate.timed_out,
                          "network": result.get("network") or [], "seconds": fate.duration_s})
        if fate.timed_out:
            self.out_of_time = self.budget.left() < MIN_TRIAL_S
            return None if self.out_of_time else False
        return works

    def culprits(self, factors: list[Change]) -> Optional[list[Change]]:
        """All of `factors` at once first; when that works, bisected to the smallest part that still does.
        None: it does not work even with all of them changed (or time ran out)."""
        if not factors or not self.run(factors):
            return None
        return self._bisect(factors)

    def _bisect(self, factors: list[Change]) -> list[Change]:
        while len(factors) > 1:
            half = len(factors) // 2
            first, second = factors[:half], factors[half:]
            if self.run(first):
                factors = first
            elif not self.out_of_time and self.run(second):
                factors = second
            else:
                return factors  # both halves are needed (or no time to tell): all of them together
        return factors


def run_experiments(python: str, goals: Sequence[Mapping[str, Any]], python_facts: Mapping[str, Any],
                    installed: frozenset[str], budget_s: float = DEFAULT_BUDGET_S,
                    progress: Optional[Progress] = None, environ: Optional[Mapping[str, str]] = None,
                    cwd: Optional[str] = None) -> dict[str, Any]:
    """facts["experiments"]: the trials run for each goal, in order, until one proves a cause."""
    environ = dict(os.environ if environ is None else environ)
    cwd = cwd or os.getcwd()
    budget = Budget(budget_s)
    names = variable_names()
    config_file = keras_config_file(environ)
    section: dict[str, Any] = {"budget_s": budget_s, "goals": [dict(g) for g in goals], "trials": [],
                               "proofs": [], "stopped": "exhausted",
                               "keras_config": keras_config(config_file),
                               "variables_set": {n: environ[n] for n in names if n in environ}}
    with tempfile.TemporaryDirectory(prefix="tfdoctor-experiments-") as scratch:
        for goal in goals:
            trials = Trials(python, goal, budget, scratch, progress, environ, cwd)
            proof = _prove(trials, goal, environ, python_facts, names, installed)
            section["trials"] += [dict(t, goal=goal.get("kind"), module=goal.get("module")) for t in trials.done]
            if proof is not None:
                section["proofs"].append({"goal": dict(goal), **proof})
                section["stopped"] = "proven"
                break
            if trials.out_of_time:
                section["stopped"] = "budget"
                break
    section["seconds"] = round(time.monotonic() - budget.started, 3)
    if progress is not None:
        progress("experiment", {"done": True})
    return section


def _prove(trials: Trials, goal: Mapping[str, Any], environ: Mapping[str, str], python_facts: Mapping[str, Any],
           names: list[str], installed: frozenset[str]) -> Optional[dict[str, Any]]:
    if goal.get("kind") == "use":
        return _prove_use(trials, environ, installed)
    for factors in (isolation_factors(environ, python_facts), configuration_factors(environ, names)):
        found = trials.culprits(factors)
        if found:
            return _proof(found, trials)
        if trials.out_of_time:
            return None
    return None


def _prove_use(trials: Trials, environ: Mapping[str, str], installed: frozenset[str]) -> Optional[dict[str, Any]]:
    """The layer in a model with tf.keras routed to tf-keras (the repair, first: each trial is a whole
    TensorFlow import), then as it is (the failure reproduced) when the budget has room for it."""
    proof = None
    if "tf-keras" in installed and environ.get(LEGACY_KERAS) not in ("1", "true", "True"):
        legacy = Change(f"set-variable:{LEGACY_KERAS}", "set-variable", set=((LEGACY_KERAS, "1"),))
        if trials.run([legacy]):
            proof = _proof([legacy], trials)
            took = float(trials.done[-1]["seconds"] or 0.0)
            if trials.budget.left() < took + MIN_TRIAL_S:
                return proof  # no room to reproduce the failure: the base-class fact stands for it
    as_it_is = trials.run([], as_the_user_sees_it=True)
    if as_it_is is None:
        return proof  # no time left to tell
    if as_it_is:
        return None  # it works as it is: the base classes differ, yet the model takes the layer
    failure = trials.done[-1]
    if proof is not None:
        return {**proof, "failure": failure}
    return {"changes": [], "kind": "use", "description": "fails on use as it is", "failure": failure,
            "trial": len(trials.done) - 1, "works": False}


def _proof(found: list[Change], trials: Trials) -> dict[str, Any]:
    kinds = {c.kind for c in found}
    return {"changes": [c.id for c in found], "kind": kinds.pop() if len(kinds) == 1 else "mixed",
            "description": " + ".join(c.describe() for c in found), "unset": [n for c in found for n in c.unset],
            "set": [list(pair) for c in found for pair in c.set], "flags": [f for c in found for f in c.flags],
            "trial": next(i for i in range(len(trials.done) - 1, -1, -1) if trials.done[i]["works"]), "works": True}


def collect_experiments(python: str, goals: Sequence[Mapping[str, Any]], facts: Mapping[str, Any],
                        budget_s: float, progress: Optional[Progress] = None,
                        environ: Optional[Mapping[str, str]] = None) -> dict[str, Any]:
    """The collector's entry: the facts it needs from the first gathering (the target's site layout,
    the installed distributions), then the experiments."""
    from packaging.utils import canonicalize_name

    installed = frozenset(canonicalize_name(str(d.get("name") or "")) for d in facts.get("distributions") or ()
                          if isinstance(d, Mapping))
    return {"experiments": run_experiments(python, goals, facts.get("python") or {}, installed, budget_s, progress,
                                           environ)}


__all__ = ["collect_experiments", "run_experiments", "DEFAULT_BUDGET_S"]

if __name__ == "__main__":  # pragma: no cover - a maintainer's quick look: python -m tfdoctor.collect.experiments
    print(json.dumps(run_experiments(sys.executable, [{"kind": "import"}], {}, frozenset()), indent=1))
