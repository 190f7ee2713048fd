"""One plan from every repair a run's checks asked for.

The checks each see one problem; the planner sees them all and makes one ordered plan that, pasted in
order, repairs the environment:

1. bring the installer up first (pip too old for the wheels, or no pip at all);
2. uninstall (a second TensorFlow build, a plugin that cannot load), each copy once;
3. reinstall damaged distributions exactly as they were (conda's with conda, the rest with pip),
   dependencies untouched;
4. one resolver step: every install requirement, specifiers of one distribution intersected
   (`packaging`), extras joined, and the installed TensorFlow pinned where it is, unless a repair
   needs it to move (then the plan says from what, to what and why);
5. companions whose release requires a TensorFlow build other than the installed one (`tensorflow`
   beside `tensorflow-cpu`) installed `--no-deps` after their other requirements joined step 4,
   so no second build lands in site-packages/tensorflow/;
6. what only the user's shell or project can do (set or unset a variable, rename a file that hides
   a module): shown, marked manual, never run by `tfdoctor fix`.

A manual step that stops a copy from hiding a module (a tensorflow.py in the project folder, an old
NumPy on PYTHONPATH: Repair.unhides) holds back steps 1-5: an install into the environment would be
defeated by the copy that still comes first, and the other checks judged the environment with it in
the way. The plan then holds only the manual steps and says to run the doctor again after them.

What no install can satisfy (two requirers wanting disjoint versions, a repair asking for a second
TensorFlow build) is a conflict naming both sides, never a command.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Optional, Sequence

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.utils import canonicalize_name

from tfdoctor.environment.spell import POSIX, Spelling, Unspellable, argv, command, refusal, spelling_for
from tfdoctor.facts import Facts
from tfdoctor.knowledge.specifiers import satisfiable
from tfdoctor.plan.closure import CLOSURE
from tfdoctor.results.model import CheckResult, Status
from tfdoctor.results.repairs import Action, Repair

if TYPE_CHECKING:
    from tfdoctor.plan.choices import Choice

PLANNED = (Status.WARN, Status.FAIL, Status.ERROR)
MANUAL = (Action.SET_ENV, Action.UNSET_ENV, Action.RENAME)
SCREENED = (Action.INSTALL, Action.REINSTALL, Action.UNINSTALL, Action.REMOVE_METADATA)  # their words reach an installer
KEEP_TENSORFLOW = "keeps TensorFlow where it is (the resolver may not move it to satisfy the rest)"


@dataclass(frozen=True)
class Reason:
    check: str
    reason: str

    def to_dict(self) -> dict[str, str]:
        return {"check": self.check, "reason": self.reason}


@dataclass(frozen=True)
class Step:
    number: int
    action: Action
    command: str
    packages: tuple[str, ...] = ()
    reasons: tuple[Reason, ...] = ()
    no_deps: bool = False
    manual: bool = False  # the user's shell or project: shown, not run by `tfdoctor fix`
    pre: bool = False
    manager: Optional[str] = None
    prefix: Optional[str] = None
    missing: bool = False
    variable: Optional[str] = None  # set-env / unset-env: the variable (`tfdoctor fix` proves the plan with it done)
    value: Optional[str] = None  # set-env: its value

    def argv(self, spelling: Spelling, prefix: Optional[str] = None) -> list[str]:
        """The step for `tfdoctor fix` to run in the environment `spelling` names (the real one or its
        throwaway clone); `prefix`, the clone's, replaces the real environment's in a conda step."""
        return argv(spelling, self.action, self.packages, no_deps=self.no_deps, pre=self.pre, manager=self.manager,
                    prefix=(prefix or self.prefix) if self.prefix else None, missing=self.missing)

    def to_dict(self) -> dict[str, Any]:
        data = {"number": self.number, "action": self.action.value, "command": self.command,
                "packages": list(self.packages), "no_deps": self.no_deps, "manual": self.manual,
                "reasons": [r.to_dict() for r in self.reasons]}
        data.update({key: getattr(self, key) for key in ("pre", "manager", "prefix", "missing") if getattr(self, key)})
        data.update({key: getattr(self, key) for key in ("variable", "value") if getattr(self, key) is not None})
        return data


@dataclass(frozen=True)
class Conflict:
    """Requirements no single install satisfies; `wants` names each side (check, requirement, why)."""

    distribution: str
    wants: tuple[tuple[str, str, str], ...]
    why: str
    choices: tuple[str, ...] = ()  # what the user can do instead, when the facts allow no plan

    def to_dict(self) -> dict[str, Any]:
        data = {"distribution": self.distribution, "why": self.why,
                "wants": [{"check": c, "requirement": r, "reason": why} for c, r, why in self.wants]}
        if self.choices:
            data["choices"] = list(self.choices)
        return data


@dataclass(frozen=True)
class TensorFlowMove:
    source: str  # 'tensorflow-cpu==2.21.0'
    target: str  # the requirement that replaces it
    why: str

    def to_dict(self) -> dict[str, str]:
        return {"from": self.source, "to": self.target, "why": self.why}


@dataclass(frozen=True)
class Plan:
    steps: tuple[Step, ...] = ()
    conflicts: tuple[Conflict, ...] = ()
    moves_tensorflow: Optional[TensorFlowMove] = None
    installer: str = "venv"  # the registered installer's report value (tfdoctor/environment/installers/)
    shell: str = POSIX
    notes: tuple[str, ...] = ()
    choices: tuple["Choice", ...] = ()  # complete plans the user picks from (`tfdoctor fix --choice N`)

    @property
    def runnable(self) -> tuple[Step, ...]:
        return tuple(step for step in self.steps if not step.manual)

    @property
    def manual(self) -> tuple[Step, ...]:
        return tuple(step for step in self.steps if step.manual)

    def environment_after(self, environ: Mapping[str, str]) -> dict[str, str]:
        """`environ` as the user's shell has it once the plan's variable steps are done, in order (export,
        unset): what `tfdoctor fix` proves the plan with, since it cannot set the user's shell variables."""
        after = dict(environ)
        for step in self.steps:
            if step.action is Action.SET_ENV and step.variable:
                after[step.variable] = step.value or ""
            elif step.action is Action.UNSET_ENV and step.variable:
                after.pop(step.variable, None)
        return after

    def steps_for(self, check_id: str) -> list[int]:
        return [step.number for step in self.steps if any(r.check == check_id for r in step.reasons)]

    def to_dict(self) -> dict[str, Any]:
        return {"installer": str(self.installer), "shell": self.shell,
                "steps": [step.to_dict() for step in self.steps],
                "conflicts": [c.to_dict() for c in self.conflicts],
                "moves_tensorflow": self.moves_tensorflow.to_dict() if self.moves_tensorflow else None,
                "notes": list(self.notes), "choices": [choice.to_dict() for choice in self.choices]}

    def choice(self, number: int) -> Optional["Choice"]:
        return next((choice for choice in self.choices if choice.number == number), None)


# --- requirements, merged ---------------------------------------------------------------------------

@dataclass
class _Wanted:
    """Everything the plan asks of one distribution in one install step."""

    name: str
    spelled: str  # the name as first written
    extras: list[str] = field(default_factory=list)
    clauses: list[str] = field(default_factory=list)
    url: Optional[str] = None
    who: list[tuple[str, str, str]] = field(default_factory=list)  # (check, requirement, reason)

    def add(self, requirement: Requirement, check: str, written: str, reason: str) -> None:
        self.extras += [e for e in sorted(requirement.extras) if e not in self.extras]
        for clause in _clauses(written, requirement):
            if clause not in self.clauses:
                self.clauses.append(clause)
        self.url = self.url or requirement.url
        self.who.append((check, written, reason))

    @property
    def specifier(self) -> SpecifierSet:
        return SpecifierSet(",".join(self.clauses))

    def requirement(self) -> str:
        extras = f"[{','.join(self.extras)}]" if self.extras else ""
        if self.url:
            return f"{self.spelled}{extras} @ {self.url}"
        return f"{self.spelled}{extras}{','.join(_tightest(self.clauses))}"


def _clauses(written: str, requirement: Requirement) -> list[str]:
    """The requirement's clauses as the check wrote them ('<8.0.0,>=6.31.1' stays in that order)."""
    from tfdoctor.facts.requires_dist import written_specifier

    text = written_specifier(written, requirement)
    return [c.strip() for c in text.split(",") if c.strip()]


def _tightest(clauses: list[str]) -> list[str]:
    from tfdoctor.facts.requires_dist import tightest

    return tightest(clauses)


# --- the plan ---------------------------------------------------------------------------------------

def _planned(results: Iterable[CheckResult]) -> list[tuple[str, Repair]]:
    found = []
    for result in results:
        if result.status in PLANNED and result.remediation:
            found += [(result.check_id, repair) for repair in result.remediation.repairs]
    return found


class _Builder:
    """Collects the steps in plan order, numbering them at the end. The last guard before the speller: a
    package word that is no plain requirement (read from metadata somewhere upstream: a distribution named
    `-rhttp://host/req`, a version `1.0; rm -rf ~`) leaves the step and is said in `refused`."""

    def __init__(self, spelling: Spelling) -> None:
        self.spelling = spelling
        self.steps: list[dict[str, Any]] = []
        self.refused: list[str] = []
        self.unspelled: list[str] = []

    def add(self, action: Action, packages: Sequence[str], reasons: Sequence[Reason], **how: Any) -> None:
        if action in SCREENED:
            screened = [word for word in packages if self.screen(action, word, reasons)]
            if not screened:
                return
            packages = tuple(screened)
        try:
            line = command(self.spelling, action, packages, **how)
        except Unspellable as exc:  # the installer has no command that does what the step asks: said, not spelled
            asked = ", ".join(dict.fromkeys(r.check for r in reasons if r.check))
            self.unspelled.append(f"no {self.spelling.installer.label} command for {action.value} "
                                  f"{' '.join(packages)}{f' (asked by {asked})' if asked else ''}: {exc}")
            return
        kept = {key: how[key] for key in ("no_deps", "pre", "manager", "prefix", "missing") if how.get(key)}
        if action in (Action.SET_ENV, Action.UNSET_ENV):
            kept.update(variable=how.get("variable"), value=how.get("value") if action is Action.SET_ENV else None)
        self.steps.append({"action": action, "command": line, "packages": tuple(packages),
                           "reasons": tuple(dict.fromkeys(reasons)), "manual": action in MANUAL, **kept})

    def build(self) -> tuple[Step, ...]:
        return tuple(Step(number, **step) for number, step in enumerate(self.steps, 1))

    def screen(self, action: Action, word: str, reasons: Sequence[Reason] = ()) -> bool:
        """Whether `word` may be spelled for `action`; if not, the plan says what it refused and for whom."""
        why = refusal(action, word)
        if why is not None:
            asked = ", ".join(dict.fromkeys(r.check for r in reasons if r.check))
            self.refused.append(refused_line(word, why, asked))
        return why is None


def refused_line(word: str, why: str, asked: str = "") -> str:
    """The plan's note for a word it will not pass to an installer (repr: a newline or a quote stays visible)."""
    return (f"refused {word!r}{f' (asked by {asked})' if asked else ''}: {why}; read from the environment's "
            "metadata, it is passed to no installer and written in no command")


CLOSURE_ROUNDS = 6  # each round adds what the last plan's result lacks; a chain longer than this is no plan


def build_plan(results: Sequence[CheckResult], facts: Facts, *, with_choices: bool = True) -> Plan:
    """The run's one plan: every repair of a warn/fail/error result, merged and ordered, then closed over its
    own result (tfdoctor/plan/closure.py); with the user's choices as complete plans where the facts allow more
    than one repair (tfdoctor/plan/choices.py)."""
    if not any(result.status in PLANNED for result in results):
        # nothing warned or failed: the plan is empty, and no closure or choice of it reads the tables (a run
        # without the TensorFlow checks spent ~90 ms loading the companion table to find no gap; bench/bench.py)
        return _plan_once((), facts)
    plan = closed_plan(_planned(results), facts)
    if with_choices:
        from tfdoctor.plan.choices import choices_for

        found = choices_for(plan, _planned(results), facts, closed_plan)
        if found:
            plan = replace(plan, choices=found)
    return plan


def closed_plan(planned: Sequence[tuple[str, Repair]], facts: Facts) -> Plan:
    """The plan of these intents, planned again with what its result lacks (each gap an install intent of the
    planner's own, `CLOSURE`) until nothing changes; a gap nothing closes is a conflict (issue 38, build 2)."""
    from tfdoctor.plan import closure

    planned = list(planned)
    plan = _plan_once(planned, facts)
    asked: set[str] = set()
    open_gaps: list[closure.Gap] = []
    for _ in range(CLOSURE_ROUNDS):
        open_gaps = closure.gaps(plan.to_dict(), facts)
        new = [gap for gap in open_gaps if gap.install and gap.install not in asked]
        if not new:
            break
        asked.update(gap.install for gap in new if gap.install)
        planned += [(CLOSURE, Repair.install(gap.install, reason=gap.why)) for gap in new if gap.install]
        plan = _plan_once(planned, facts)
    else:
        open_gaps = closure.gaps(plan.to_dict(), facts)
    left = [gap for gap in open_gaps if not gap.install or gap.install in asked]
    if left:
        conflicts = plan.conflicts + tuple(
            Conflict(gap.distribution, ((CLOSURE, gap.install or gap.distribution, gap.why),),
                     f"after this plan, {gap.why}", (f"keep TensorFlow and uninstall {gap.distribution} if nothing needs it",
                                                     f"move TensorFlow to a release {gap.distribution} supports"))
            for gap in left if gap.distribution not in {c.distribution for c in plan.conflicts})
        plan = replace(plan, conflicts=conflicts)
    return plan


def _plan_once(planned: Sequence[tuple[str, Repair]], facts: Facts) -> Plan:
    """One plan of these intents, merged and ordered (not yet checked against its own result)."""
    from tfdoctor.environment.pip import installer_for
    from tfdoctor.facts import requires_dist as reqs

    spelling = spelling_for(facts)
    if not planned:
        return Plan(installer=spelling.kind, shell=spelling.shell)
    builder = _Builder(spelling)
    planned = _screened(planned, builder)
    conflicts: list[Conflict] = []
    notes: list[str] = []
    hidden = list(dict.fromkeys(module for _, repair in planned for module in repair.unhides))
    if hidden:
        held = [repair for _, repair in planned if repair.action not in MANUAL]
        planned = [(check_id, repair) for check_id, repair in planned if repair.action in MANUAL]
        if held:
            notes.append(f"{len(held)} install/uninstall repair(s) held back: another copy of {', '.join(hidden)} "
                         f"comes first on sys.path, so they would not reach the code that imports it. Do the "
                         f"manual steps, then run tfdoctor again for the rest.")
    by_action: dict[Action, list[tuple[str, Repair]]] = {}
    for check_id, repair in planned:
        by_action.setdefault(repair.action, []).append((check_id, repair))

    uninstalled: dict[str, tuple[int, list[Reason]]] = {}
    for check_id, repair in by_action.get(Action.UNINSTALL, ()):
        for name in repair.packages:
            copies, reasons = uninstalled.get(canonicalize_name(name), (0, []))
            uninstalled[canonicalize_name(name)] = (max(copies, repair.copies), reasons + [Reason(check_id, repair.reason)])

    reinstalls: dict[tuple[Optional[str], Optional[str]], dict[str, list[Reason]]] = {}
    for check_id, repair in by_action.get(Action.REINSTALL, ()):
        group = reinstalls.setdefault((repair.manager, repair.prefix), {})
        for pin in repair.packages:
            if _name_of(pin) not in uninstalled:  # removed anyway: nothing to lay down again
                group.setdefault(pin, []).append(Reason(check_id, repair.reason))

    installs = _without_replaced_requirements(facts, by_action.get(Action.INSTALL, ()), uninstalled, notes)
    resolver, no_deps, pre = _merge_installs(installs, conflicts)
    tf_pin = reqs.tensorflow_pin(facts)
    if tf_pin and not builder.screen(Action.INSTALL, tf_pin):
        tf_pin = None  # a TensorFlow whose metadata is no requirement is pinned nowhere
    move = _keep_tensorflow(resolver, tf_pin, uninstalled, conflicts, _cannot_import(facts))
    _companions_fit_tensorflow(facts, resolver, no_deps, tf_pin if not move else None, conflicts, notes)
    _companions_without_second_build(facts, resolver, no_deps, tf_pin if not move else None, uninstalled, notes)
    if resolver and tf_pin and not move and not any(reqs.is_tensorflow_build(w.name) for w in resolver.values()):
        pin_req = Requirement(tf_pin)
        wanted = resolver.setdefault(canonicalize_name(pin_req.name), _Wanted(canonicalize_name(pin_req.name), pin_req.name))
        wanted.add(pin_req, "", tf_pin, KEEP_TENSORFLOW)

    installer = installer_for(facts)
    # pip steps: every step but a reinstall its recording installer (conda) does itself
    runs_pip = spelling.installer.uses_pip and bool(resolver or no_deps or uninstalled
                                                    or any(manager is None for manager, _ in reinstalls))
    asked = by_action.get(Action.UPGRADE_INSTALLER, ())
    missing = installer.pip_missing or any(r.missing for _, r in asked)
    if spelling.installer.uses_pip and (asked or (runs_pip and (installer.upgrade_pip_to or missing))):
        reasons = [Reason(c, r.reason) for c, r in asked] or [
            Reason("installer", "pip must be able to install the wheels the other steps need")]
        if missing:
            builder.add(Action.UPGRADE_INSTALLER, ("pip",), reasons, missing=True)
        builder.add(Action.UPGRADE_INSTALLER, ("pip",), reasons)

    _remove_record_less(builder, facts, resolver, no_deps, uninstalled, reinstalls, spelling)
    if uninstalled:  # one command for all; a name with more copies on sys.path gets more calls below
        builder.add(Action.UNINSTALL, tuple(uninstalled), [r for _, reasons in uninstalled.values() for r in reasons])
    for name, (copies, reasons) in uninstalled.items():
        for _ in range(copies - 1):  # another copy further down sys.path: pip removes one per call
            builder.add(Action.UNINSTALL, (name,), reasons)

    for (manager, prefix), pins in sorted(reinstalls.items(), key=lambda item: item[0][0] is None):
        if pins:
            builder.add(Action.REINSTALL, tuple(pins), [r for rs in pins.values() for r in rs],
                        manager=manager, prefix=prefix)

    if resolver:
        builder.add(Action.INSTALL, tuple(w.requirement() for w in resolver.values()),
                    [Reason(c, why) for w in resolver.values() for c, _, why in w.who if c], pre=pre)
    if no_deps:
        builder.add(Action.INSTALL, tuple(w.requirement() for w in no_deps.values()),
                    [Reason(c, why) for w in no_deps.values() for c, _, why in w.who if c], no_deps=True, pre=pre)

    for action in MANUAL:
        # one step per distinct change: two checks that both want CUDA_VISIBLE_DEVICES unset share it
        manual: dict[tuple[Optional[str], ...], list[Reason]] = {}
        for check_id, repair in by_action.get(action, ()):
            what = (repair.variable, repair.value, repair.path, repair.new_path)
            manual.setdefault(what, []).append(Reason(check_id, repair.reason))
        for (variable, value, path, new_path), reasons in manual.items():
            builder.add(action, (), reasons, variable=variable, value=value, path=path, new_path=new_path)

    notes += builder.refused + builder.unspelled
    return Plan(builder.build(), tuple(conflicts), move, spelling.kind, spelling.shell, tuple(dict.fromkeys(notes)))


def _screened(planned: Sequence[tuple[str, Repair]], builder: _Builder) -> list[tuple[str, Repair]]:
    """The intents with every package word an installer may take; the others are refused (said in the plan's
    notes), and an intent left with none is dropped. Before any merging, so a refused word neither joins a
    step nor hides as a 'conflict'."""
    kept = []
    for check_id, repair in planned:
        if repair.action in SCREENED:
            words = tuple(w for w in repair.packages if builder.screen(repair.action, w, (Reason(check_id, ""),)))
            if not words:
                continue
            repair = replace(repair, packages=words)
        kept.append((check_id, repair))
    return kept


def _remove_record_less(builder: _Builder, facts: Facts, resolver: Mapping[str, _Wanted],
                        no_deps: Mapping[str, _Wanted], uninstalled: Mapping[str, Any],
                        reinstalls: Mapping[tuple[Optional[str], Optional[str]], Mapping[str, Any]],
                        spelling: Spelling) -> None:
    """Issue 29: a distribution without RECORD that the plan replaces or removes has its metadata removed
    first (pip cannot uninstall it; uv would leave it behind). Not where the environment keeps its own records
    (conda-meta), whose dist-infos without RECORD are its installer's."""
    from tfdoctor.facts import record_less

    if spelling.installer.keeps_records:
        return
    wanted: dict[str, Optional[str]] = {name: str(w.specifier) for name, w in {**resolver, **no_deps}.items()}
    asked: dict[str, list[str]] = {name: [c for c, _, _ in w.who if c] for name, w in {**resolver, **no_deps}.items()}
    for name, (_, reasons) in uninstalled.items():
        wanted[name] = None
        asked[name] = [r.check for r in reasons]
    for (manager, _), pins in reinstalls.items():
        for pin, reasons in pins.items() if manager is None else ():
            wanted[_name_of(pin)] = None
            asked[_name_of(pin)] = [r.check for r in reasons]
    for entry in record_less.replaced(facts, wanted):
        name = canonicalize_name(str(entry["name"]))
        builder.add(Action.REMOVE_METADATA, (f"{name}=={entry['version']}",),
                    [Reason(check, record_less.reason(entry)) for check in dict.fromkeys(asked.get(name) or ["plan"])])


def _name_of(requirement: str) -> str:
    try:
        return canonicalize_name(Requirement(requirement).name)
    except InvalidRequirement:
        return canonicalize_name(requirement.split("=")[0])


def _without_replaced_requirements(facts: Facts, installs: Sequence[tuple[str, Repair]],
                                   uninstalled: Mapping[str, Any], notes: list[str]) -> list[tuple[str, Repair]]:
    """The install intents without those that carry a requirement of a release the same plan replaces or
    removes (issue 29): once tensorflow-text 2.21.1 replaces 2.15.0, 2.15.0's Requires-Dist (tensorflow-hub)
    no longer applies. The new release's own requirements are its installer's to resolve (the companion
    table's, for a --no-deps install), never carried over from the old one."""
    from tfdoctor.facts import requires_dist as reqs

    def replaced_by(intents: Iterable[tuple[str, Repair]]) -> dict[str, str]:
        """'name==version' installed -> what replaces it ('uninstalled', or the requirement that excludes it)."""
        found: dict[str, str] = {}
        for name in uninstalled:
            entry = reqs.first_copy(facts, name)
            if entry and entry.get("version"):
                found[f"{name}=={entry['version']}"] = "uninstalled"
        for _, repair in intents:
            for written in repair.packages:
                try:
                    requirement = Requirement(written)
                except InvalidRequirement:
                    continue
                name = canonicalize_name(requirement.name)
                entry = reqs.first_copy(facts, name) or {}
                version = entry.get("version")
                if version and reqs.holds(str(version), requirement.specifier) is False:
                    found.setdefault(f"{name}=={version}", written)
        return found

    carried = [(check_id, repair) for check_id, repair in installs if repair.required_by]
    if not carried:
        return list(installs)
    primary = [(check_id, repair) for check_id, repair in installs if not repair.required_by]
    replaced = replaced_by(primary)
    while True:  # a carried intent that is kept may replace a release too; grows until nothing new is replaced
        kept = [(check_id, repair) for check_id, repair in carried if repair.required_by not in replaced]
        grown = {**replaced_by(kept), **replaced}
        if grown.keys() == replaced.keys():
            break
        replaced = grown
    for _check_id, repair in carried:
        if repair.required_by in replaced:
            old = repair.required_by.replace("==", " ")
            how = "removes" if replaced[repair.required_by] == "uninstalled" else f"replaces ({replaced[repair.required_by]})"
            notes.append(f"{', '.join(repair.packages)} left out: a requirement of {old}, which this plan {how}.")
    return [(check_id, repair) for check_id, repair in installs
            if not repair.required_by or repair.required_by not in replaced]


def _merge_installs(installs: Iterable[tuple[str, Repair]], conflicts: list[Conflict]
                    ) -> tuple[dict[str, _Wanted], dict[str, _Wanted], bool]:
    """(the resolver step's requirements, the --no-deps step's, pre-releases wanted), each distribution
    once with its specifiers intersected; a distribution whose wants cannot meet becomes a conflict."""
    resolver: dict[str, _Wanted] = {}
    no_deps: dict[str, _Wanted] = {}
    pre = False
    for check_id, repair in installs:
        pre = pre or repair.pre
        target = no_deps if repair.no_deps else resolver
        for written in repair.packages:
            try:
                requirement = Requirement(written)
            except InvalidRequirement:
                continue  # a check's typo must not become a command
            name: str = canonicalize_name(requirement.name)
            target.setdefault(name, _Wanted(name, requirement.name)).add(requirement, check_id, written, repair.reason)
    for name in [n for n in no_deps if n in resolver]:
        # one distribution wanted both ways: the resolver's requirement must admit the exact no-deps one
        resolver[name].who += no_deps[name].who
        resolver[name].clauses += [c for c in no_deps.pop(name).clauses if c not in resolver[name].clauses]
    for group in (resolver, no_deps):
        for name in list(group):
            try:
                ok = satisfiable(group[name].specifier)
            except InvalidSpecifier:
                ok = False
            if not ok:
                wanted = group.pop(name)
                conflicts.append(Conflict(name, tuple(wanted.who),
                                          f"no {name} release satisfies {' and '.join(r for _, r, _ in wanted.who)} together"))
    return resolver, no_deps, pre


def _cannot_import(facts: Facts) -> bool:
    """Did the child find the installed TensorFlow unable to import (an error, a crash, a hang)?"""
    tf = facts.get("tensorflow")
    return isinstance(tf, Mapping) and tf.get("imported") is False and tf.get("status") not in (None, "not_installed")


def _keep_tensorflow(resolver: dict[str, _Wanted], tf_pin: Optional[str], uninstalled: dict[str, Any],
                     conflicts: list[Conflict], broken: bool = False) -> Optional[TensorFlowMove]:
    """TensorFlow stays where it is unless a repair names a TensorFlow that the installed one is not;
    then the plan says so. Installing another build without removing the installed one would put two
    builds in one site-packages/tensorflow/: a conflict, never a command, unless the installed build
    cannot import (`broken`): then there is nothing to keep, and the plan replaces it (uninstall, install)."""
    from tfdoctor.facts import requires_dist as reqs

    if not tf_pin:
        return None
    installed = Requirement(tf_pin)
    name, version = canonicalize_name(installed.name), next(iter(installed.specifier)).version
    for wanted in list(resolver.values()):
        if not reqs.is_tensorflow_build(wanted.name):
            continue
        why = "; ".join(dict.fromkeys(reason for _, _, reason in wanted.who))
        if wanted.name != name:
            if name in uninstalled:
                return TensorFlowMove(tf_pin, wanted.requirement(), why)
            if broken:
                uninstalled[name] = (1, [Reason(c, f"{tf_pin} cannot be imported; {wanted.requirement()} replaces it")
                                         for c, _, _ in wanted.who if c])
                return TensorFlowMove(tf_pin, wanted.requirement(), f"{tf_pin} cannot be imported; {why}")
            resolver.pop(wanted.name)
            conflicts.append(Conflict(wanted.name, tuple(wanted.who) + (("", tf_pin, "installed"),),
                                      f"installing {wanted.requirement()} beside {tf_pin} would put two TensorFlow "
                                      f"builds in one site-packages/tensorflow/ (uninstall {name} first)"))
            continue
        if not wanted.specifier.contains(version, prereleases=True):
            return TensorFlowMove(tf_pin, wanted.requirement(), why)
    return None


def _companions_without_second_build(facts: Facts, resolver: dict[str, _Wanted], no_deps: dict[str, _Wanted],
                                     tf_pin: Optional[str], uninstalled: Mapping[str, Any], notes: list[str]) -> None:
    """A companion release that requires `tensorflow` while `tensorflow-cpu` (or -macos, -intel...)
    provides the package: pip would add the `tensorflow` distribution beside it. Install that release
    --no-deps and put its other requirements into the resolver step instead. The same for a companion
    that requires such a companion (tensorflow-hub requires tf-keras, which requires `tensorflow`): pip
    resolves the dependencies of what it installs, installed or not, so it too goes --no-deps. Repeated
    until no companion in the resolver step leads to another build."""
    from tfdoctor.facts import requires_dist as reqs

    if not tf_pin:
        return
    from tfdoctor.facts import companions

    build = canonicalize_name(Requirement(tf_pin).name)
    tf_version = next(iter(Requirement(tf_pin).specifier)).version
    environment = reqs.marker_environment(facts)
    leads: dict[str, Optional[str]] = {}  # companion -> the other build its closure requires (None: none)

    def other_build(name: str, spec: SpecifierSet, seen: frozenset[str]) -> Optional[str]:
        if name in leads:
            return leads[name]
        release = _chosen_release(companions, name, spec, tf_version, environment)
        found: Optional[str] = None
        if release is not None:
            builds = {canonicalize_name(r.name) for r in release.tensorflow_requirements(environment)}
            found = next(iter(sorted(builds - {build})), None) if builds and build not in builds else None
            for other in release.other_requirements(environment):
                other_name = canonicalize_name(other.name)
                if found is None and other_name in companions.COMPANIONS and other_name not in seen:
                    found = other_build(other_name, other.specifier, seen | {name})
        leads[name] = found
        return found

    moved = True
    while moved:
        moved = False
        for name in [n for n in resolver if n in companions.COMPANIONS]:
            wanted = resolver[name]
            second = other_build(name, wanted.specifier, frozenset())
            release = _chosen_release(companions, name, wanted.specifier, tf_version, environment)
            if second is None or release is None:
                continue
            resolver.pop(name)
            exact = Requirement(f"{wanted.spelled}=={release.version}")
            target = no_deps.setdefault(name, _Wanted(name, wanted.spelled))
            for check_id, _, reason in wanted.who:
                target.add(exact, check_id, str(exact), reason)
            for other in release.other_requirements(environment):
                other_name = canonicalize_name(other.name)
                if other_name in uninstalled or other_name in no_deps:
                    continue
                resolver.setdefault(other_name, _Wanted(other_name, other.name)).add(
                    other, "", str(other), f"required by {name} {release.version}")
            notes.append(f"{name} {release.version} leads to {second}, which {build} provides under another name: "
                         f"it is installed --no-deps after its other requirements, so pip adds no second TensorFlow "
                         f"build.")
            moved = True


def _companions_fit_tensorflow(facts: Facts, resolver: dict[str, _Wanted], no_deps: dict[str, _Wanted],
                               tf_pin: Optional[str], conflicts: list[Conflict], notes: list[str]) -> None:
    """No plan pairs pins that cannot coexist (tfdoctor/plan/coexistence.py): a companion requirement that no
    release made for the plan's TensorFlow satisfies (tf-keras~=2.16.0 beside tensorflow==2.19.*, a check
    that reasoned from another TensorFlow than the one the plan ends with) is corrected to the release made
    for it; where none is, the companion leaves the plan as a conflict with the user's choices."""
    import tfdoctor.plan.coexistence as coexistence
    from tfdoctor.facts import companions, requires_dist as reqs

    environment = reqs.marker_environment(facts)
    installed = tf_pin.partition("==")[2] if tf_pin else None

    def wanted() -> list[str]:
        texts = [w.requirement() for group in (resolver, no_deps) for w in group.values() if not w.url]
        if tf_pin and not any(reqs.is_tensorflow_build(name) for name in resolver):
            texts.append(tf_pin)
        return texts

    found = coexistence.tensorflow_of(wanted())
    clashes = coexistence.clashes(wanted(), environment, installed)
    if not clashes or found is None:
        return
    build, tf_written, tf_specifier = found
    candidates = coexistence.tensorflow_candidates(build, tf_specifier, environment, installed)
    target = candidates[0] if candidates else installed
    for clash in clashes:
        group = resolver if clash.distribution in resolver else no_deps if clash.distribution in no_deps else None
        if group is None or clash.distribution not in companions.COMPANIONS or target is None:
            continue
        release = companions.release_for(clash.distribution, target, environment)
        current = group[clash.distribution]
        if release is not None:
            current.clauses = [f"=={release.version}"]
            notes.append(f"{clash.requirement} corrected to {clash.distribution}=={release.version}: {clash.why}; "
                         f"{release.version} is the release made for {build} {target}.")
            continue
        group.pop(clash.distribution)
        conflicts.append(Conflict(clash.distribution, tuple(current.who) + (("", tf_written, "TensorFlow in this plan"),),
                                  f"no {clash.distribution} release is made for {build} {target} ({clash.why})",
                                  (f"keep {build} {target} and uninstall {clash.distribution} if nothing needs it",
                                   f"keep {clash.distribution} in an environment of its own with a TensorFlow it "
                                   f"supports")))
    for clash in coexistence.clashes(wanted(), environment, installed):
        # what is left is no companion's release: a pin of TensorFlow's own (numpy<2 beside numpy>=2)
        for group in (resolver, no_deps):
            clashing = group.pop(clash.distribution, None)
            if clashing is not None:
                conflicts.append(Conflict(clash.distribution, tuple(clashing.who) + (("", tf_written, "TensorFlow in this plan"),),
                                          clash.why, (f"keep {tf_written} and let it choose {clash.distribution}",
                                                      f"keep {clash.requirement} with a TensorFlow release that admits it")))


def _chosen_release(companions: Any, name: str, specifier: SpecifierSet, tf_version: str,
                    environment: Mapping[str, str]) -> Any:
    """The companion release the resolver step would install: the newest release made for the installed
    TensorFlow that the step's specifier admits."""
    for release in companions.releases(name):
        if not specifier.contains(release.version, prereleases=True) or release.installs_on(environment) is False \
                or release.admits_python(environment) is False:
            continue
        requirements = release.tensorflow_requirements(environment)
        if all(r.specifier.contains(tf_version, prereleases=True) for r in requirements):
            return release
    return None
