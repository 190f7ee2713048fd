"""One diagnosis, start to end: select checks, gather the facts they need, run them, build a report."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping, Optional

from tfdoctor.checking.registry import Check, all_checks, select
from tfdoctor.checking.runner import run_check, run_checks
from tfdoctor.knowledge import preload as preload_knowledge
from tfdoctor.report.document import CannotRun
from tfdoctor.report.run import RunReport
from tfdoctor.results.model import CheckResult, Status

# progress(event, data): the collectors' events (tfdoctor/collect/options.py) and "result" {"index", "result"}
Progress = Callable[[str, Mapping[str, Any]], None]


@dataclass(frozen=True)
class DoctorOptions:
    python: str = field(default_factory=lambda: sys.executable)
    only: tuple[str, ...] = ()
    skip: tuple[str, ...] = ()
    timeout: float = 60.0
    probe: bool = True
    deep: bool = False  # the workload probe; see CollectOptions.deep
    # offline experiments when TensorFlow, tf.keras or a companion fails with no cause proven (issue 29)
    experiments: bool = True
    experiments_timeout: float = 30.0  # seconds for all of them together
    requirements: Optional[Mapping[str, Any]] = None  # facts.requirements (config.Requirements.to_facts)
    progress: Optional[Progress] = field(default=None, compare=False, repr=False)
    # the environment variables to diagnose under (CollectOptions.environ); None: this process's
    environ: Optional[Mapping[str, str]] = field(default=None, compare=False, repr=False)


# Checks with this tag run only when asked for (--deep, or named in --only): without it a run's time
# and output stay as they were.
ON_REQUEST_TAG = "deep"


def selected_checks(only: tuple[str, ...] = (), skip: tuple[str, ...] = (), deep: bool = True) -> list[Check]:
    from tfdoctor.checking.registry import UnknownCheckError

    try:
        chosen = select(all_checks(), only, skip)
    except UnknownCheckError as exc:
        raise CannotRun(str(exc)) from exc
    if deep:
        return chosen
    return [c for c in chosen if ON_REQUEST_TAG not in c.tags or c.id in only or ON_REQUEST_TAG in only]


def needed_sections(checks: list[Check]) -> frozenset[str]:
    """The fact sections the checks need or read: what the collectors gather for them."""
    return frozenset(name for check in checks for name in (*check.needs, *check.uses))


def validate_python(path: str) -> str:
    if not os.path.isfile(path) or not os.access(path, os.X_OK):
        raise CannotRun(f"--python {path}: not an executable file")
    return path


def diagnose(options: DoctorOptions) -> RunReport:
    from tfdoctor.collect import CollectOptions, TargetUnusableError, gather
    from tfdoctor.processes.deadline import run_s, within

    only = options.only
    if only and options.requirements and "requirements" not in only:
        only = (*only, "requirements")  # requirements set are judged, whatever else --only narrows
    checks = selected_checks(only, options.skip, deep=options.deep)
    if options.progress is not None:
        options.progress("checks", {"ids": [check.id for check in checks]})
    needed = needed_sections(checks)
    collect_options = CollectOptions(
        python=validate_python(options.python),
        timeout=options.timeout,
        probe=options.probe,
        deep=options.deep,
        careful_probe=options.deep or bool((options.requirements or {}).get("min_gflops")),
        sections=needed,
        progress=EarlyResults(checks, options.requirements, options.progress) if options.progress else None,
        environ=options.environ,
    )
    # one deadline for every child of the run (tfdoctor/processes/deadline.py): it ends when --help says it does
    with within(run_s(options.timeout, options.experiments_timeout, options.experiments)):
        try:
            # the checks' knowledge tables are parsed, and the report's planner imported, while the children
            # work, not after them
            facts = gather(collect_options, alongside=_prepare_report)
        except TargetUnusableError as exc:
            raise CannotRun(f"the target interpreter is unusable: {exc}") from exc
        facts = with_requirements(facts, options.requirements)
        results = run_checks(checks, facts)
        if options.experiments:
            facts, results = with_experiments(checks, facts, results, options)
    return RunReport(facts=facts, results=results)


def with_experiments(checks: list[Check], facts: dict[str, Any], results: list, options: DoctorOptions
                     ) -> tuple[dict[str, Any], list]:
    """When a failure of TensorFlow, tf.keras or a companion has no cause proven, the offline experiments
    (collect/experiments.py) run in children and their outcome becomes a fact; the checks then judge again
    (a pure function of the facts, so `explain` of the saved report reaches the same verdict). A healthy
    environment runs none."""
    if not {check.id for check in checks} & set(EXPERIMENT_CHECKS):
        return facts, results
    wanted = experiment_goals(facts, results)
    if not wanted:
        return facts, results
    from tfdoctor.collect.experiments import collect_experiments

    section = collect_experiments(options.python, wanted, facts, options.experiments_timeout, options.progress,
                                  options.environ)
    collection = facts.pop("collection", None)
    facts.update(section)
    if collection is not None:
        facts["collection"] = collection
    return facts, run_checks(checks, facts)


# The checks whose failures experiments can explain.
EXPERIMENT_CHECKS = ("tensorflow-import", "keras", "companions")


def unexplained(result: Optional[CheckResult]) -> bool:
    """A failure whose check asks for no repair: no cause proven ("does not know this error", "nothing in
    the environment's metadata explains it")."""
    return (result is not None and result.status is Status.FAIL
            and not (result.remediation is not None and result.remediation.repairs))


def experiment_goals(facts: Mapping[str, Any], results: Iterable[CheckResult]) -> list[dict[str, Any]]:
    """What the experiments should make work, in order: [{"kind": "import"}], [{"kind": "keras"}],
    {"kind": "companion", "module"}, {"kind": "use", "module", "layer"}: a failure of TensorFlow's import,
    tf.keras or a companion its check left unexplained, or a companion's Keras layer that subclasses another
    Keras than the tf.keras in use (recorded by the TensorFlow child). Empty for a healthy environment."""
    tf = facts.get("tensorflow") or {}
    by_id = {r.check_id: r for r in results}
    if not tf or tf.get("status") == "not_installed":
        return []
    if tf.get("timed_out"):
        # A hang's finding arrives at the timeout: each trial would wait out that timeout again, and only a
        # trial that finishes proves anything; the stack dumped at the kill is the evidence.
        return []
    if not tf.get("imported"):
        namespace = (tf.get("spec") or {}).get("namespace")
        return [{"kind": "import"}] if unexplained(by_id.get("tensorflow-import")) and not namespace else []
    found: list[dict[str, Any]] = []
    keras = tf.get("keras") or {}
    keras_fails = bool(keras) and bool(keras.get("error") or not keras.get("layer_ok"))
    if keras_fails and unexplained(by_id.get("keras")):
        found.append({"kind": "keras"})
    for entry in tf.get("companions") or ():
        module = entry.get("module")
        if entry.get("status") == "failed":
            if unexplained(by_id.get("companions")):
                found.append({"kind": "companion", "module": module})
            continue
        for layer in entry.get("keras_layers") or ():
            if layer.get("tf_keras_layer") is False and not keras_fails:
                found.append({"kind": "use", "module": module, "layer": layer.get("name")})
    return found


def _prepare_report() -> None:
    preload_knowledge()
    from tfdoctor.plan.planner import build_plan  # noqa: F401 - RunReport.plan's, imported when the report is written


def with_requirements(facts: Mapping[str, Any], requirements: Optional[Mapping[str, Any]]) -> dict[str, Any]:
    """The requirements are facts (so `explain` judges a saved report's requirements again); a run
    without any records none, and its report is as before."""
    facts = dict(facts)
    if requirements and any(v is not None for k, v in requirements.items() if k != "source"):
        collection = facts.pop("collection", None)
        facts["requirements"] = dict(requirements)
        if collection is not None:
            facts["collection"] = collection
    return facts


class EarlyResults:
    """For the live display: passes the collectors' progress on, and once every collector but the
    TensorFlow child is done, the results of the checks that do not read TensorFlow's facts
    ("result" events, any order; the display shows them in report order). The report's results are
    computed again on the complete facts at the end; these are only shown early."""

    def __init__(self, checks: list[Check], requirements: Optional[Mapping[str, Any]], progress: Progress) -> None:
        self.checks, self.requirements, self.progress = checks, requirements, progress
        self.done: set[str] = set()

    def __call__(self, event: str, data: Mapping[str, Any]) -> None:
        self.progress(event, data)
        if event != "collected" or set(data.get("pending") or ()) - {"tensorflow"}:
            return
        facts = with_requirements(data.get("facts") or {}, self.requirements)
        for index, check in enumerate(self.checks):
            if check.id in self.done or "tensorflow" in (*check.needs, *check.uses):
                continue
            self.done.add(check.id)
            self.progress("result", {"index": index, "result": run_check(check, facts)})
