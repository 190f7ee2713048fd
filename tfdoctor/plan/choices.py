"""Choices as plans (issue 38, build 3).

A companion with no release made for the installed TensorFlow (tensorflow-decision-forests 1.12 beside
TensorFlow 2.21: its newest requires tensorflow==2.19.0) leaves the user a choice the doctor cannot make: keep
TensorFlow and give the companion up, or move TensorFlow to what the companion supports. Each is offered as a
complete plan, closed over its own result like the main one (tfdoctor/plan/closure.py), with what it costs:
what it removes, where TensorFlow moves. `tfdoctor fix --choice N` proves and applies the one chosen.

A choice is offered only when its plan has no conflict left; the main plan stays what the checks asked for.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Iterable, Optional, Sequence

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name

from tfdoctor.facts import Facts
from tfdoctor.plan.closure import CLOSURE
from tfdoctor.results.repairs import Action, Repair

if TYPE_CHECKING:  # the planner calls this module: its Plan and its closed_plan come as arguments, not imports
    from tfdoctor.plan.planner import Plan

PlanOf = Callable[[Sequence[tuple[str, Repair]], Facts], "Plan"]


@dataclass(frozen=True)
class Choice:
    """One repair among several the facts allow: a complete plan, and what it costs (issue 38, build 3)."""

    number: int
    summary: str  # 'keep tensorflow 2.21.0 and uninstall tensorflow-decision-forests'
    removes: tuple[str, ...]  # distributions this choice uninstalls and does not put back
    plan: Plan

    def to_dict(self) -> dict[str, Any]:
        data = self.plan.to_dict()
        data.pop("choices", None)
        return {"number": self.number, "summary": self.summary, "removes": list(self.removes),
                "moves_tensorflow": data.pop("moves_tensorflow"), "plan": data}


def _named(text: str) -> Optional[str]:
    try:
        return canonicalize_name(Requirement(text).name)
    except InvalidRequirement:
        return None


def stranded_companions(plan: "Plan", facts: Facts) -> list[str]:
    """The installed companions no release of which is made for the installed TensorFlow here (by their
    Requires-Dist or their own import check), and the companions the plan leaves in a conflict."""
    from tfdoctor.facts import companions, requires_dist as reqs

    pin = reqs.tensorflow_pin(facts)
    if not pin:
        return []
    installed_tf = pin.partition("==")[2]
    environment = reqs.marker_environment(facts)
    found = []
    for name, entry in reqs._first_copies(facts).items():
        version = entry.get("version")
        if name not in companions.COMPANIONS or reqs.is_tensorflow_build(name) or not version:
            continue
        if companions.made_for(name, str(version), installed_tf, environment) is False \
                and companions.release_for(name, installed_tf, environment) is None:
            found.append(name)
    for conflict in plan.conflicts:
        name = canonicalize_name(conflict.distribution)
        if name in companions.COMPANIONS and not reqs.is_tensorflow_build(name) and reqs.first_copy(facts, name):
            found.append(name)
    return list(dict.fromkeys(found))


def _about(check_id: str, repair: Repair, names: Iterable[str]) -> bool:
    """Does this install intent exist for one of the companions: it installs one, carries one's Requires-Dist, or
    its reason is about one (a check names the distribution it judged first in its reason: the tf-keras that
    tensorflow-decision-forests imports, the TensorFlow it requires)? Intents carry no subject of their own, so
    the reason is read; a choice that drops too much is still proven on a copy before `fix` applies it."""
    names = set(names)
    if repair.action is not Action.INSTALL:
        return False
    if repair.required_by and _named(repair.required_by.split("==")[0]) in names:
        return True
    if {_named(p) for p in repair.packages} & names:
        return True
    return any(f"{name} " in repair.reason for name in names)


def _kept_requirements(stranded: Sequence[str], facts: Facts) -> list[tuple[str, Repair]]:
    """What TensorFlow kept where it is needs that the checks did not ask for: where satisfying a stranded
    companion moves TensorFlow, the dependencies check asks for the move alone (the move brings TensorFlow's
    pins with it), so the installed release's own unmet Requires-Dist (the lines of what stays, on what is
    neither TensorFlow nor a stranded companion) become install intents of the choice that keeps it."""
    from tfdoctor.facts import requires_dist as reqs

    gone = set(stranded)
    return [(CLOSURE, Repair.install(f"{unmet.name}{unmet.specifier}", reason=f"{unmet.describe()} (TensorFlow kept)"))
            for unmet in reqs.unmet_requirements(facts)
            if unmet.requirer not in gone and unmet.name not in gone and not unmet.moves_tensorflow and not unmet.extra]


def choices_for(plan: "Plan", planned: Sequence[tuple[str, Repair]], facts: Facts, closed_plan: PlanOf) -> tuple[Choice, ...]:
    """The complete plans the user can choose from when a companion has no release for the installed
    TensorFlow: keep TensorFlow and uninstall the companion(s); for each, move TensorFlow to what its newest
    installable release supports. () when there is nothing to choose."""
    from tfdoctor.facts import knowledge_age, requires_dist as reqs

    stranded = stranded_companions(plan, facts)
    pin = reqs.tensorflow_pin(facts)
    if not stranded or not pin:
        return ()
    others = [(check_id, repair) for check_id, repair in planned if not _about(check_id, repair, stranded)]
    candidates: list[tuple[str, tuple[str, ...], "Plan"]] = []
    # a TensorFlow newer than the tables: a release of the companion made for it is unknown, not absent (issue 38)
    none = (f"the tables end before it and hold no release of {', '.join(stranded)} made for it"
            if knowledge_age.beyond(*pin.split("==", 1)) else f"no release of {', '.join(stranded)} is made for it")
    keep = closed_plan(others + _kept_requirements(stranded, facts) + [(CLOSURE, Repair.uninstall(
        *stranded, reason=f"keeps {pin.replace('==', ' ')}: {none}"))], facts)
    candidates.append((f"keep {pin.replace('==', ' ')} and uninstall {', '.join(stranded)}", tuple(stranded), keep))
    if not plan.conflicts and plan.moves_tensorflow is not None and plan.runnable:
        # the checks' own plan already moves TensorFlow to what the companions support: that is the choice, as printed
        target = plan.moves_tensorflow.target.replace("==", " ")
        candidates.append((f"move TensorFlow to {target} for {', '.join(stranded)}", (), plan))
    for name in stranded:
        moved = _moving_intents(name, pin, facts)
        if moved is None:
            continue
        intents, target = moved
        if any(summary.startswith("move TensorFlow to ") and summary.split(" for ")[0].endswith(f" {target.split()[-1]}")
               for summary, _, _ in candidates):
            continue  # the checks' own plan moves TensorFlow to that release already (as the build installed)
        plan_moved = closed_plan(others + intents, facts)
        candidates.append((f"move TensorFlow to {target} for {name}", (), plan_moved))
    found: list[Choice] = []
    seen: set[tuple[str, ...]] = set()
    for summary, removes, candidate in candidates:
        commands = tuple(step.command for step in candidate.steps)
        if candidate.conflicts or not candidate.runnable or commands in seen:
            continue
        seen.add(commands)
        found.append(Choice(len(found) + 1, summary, removes, candidate))
    return tuple(found) if len(found) > 1 else ()


def _moving_intents(name: str, pin: str, facts: Facts) -> Optional[tuple[list[tuple[str, Repair]], str]]:
    """(the intents that install the newest release of companion `name` that installs here with the newest
    TensorFlow it supports, 'tensorflow 2.19.0'), or None when the tables name no such pair."""
    from tfdoctor.facts import companions, requires_dist as reqs
    from tfdoctor.plan import coexistence

    environment = reqs.marker_environment(facts)
    installed = Requirement(pin)
    installed_build = canonicalize_name(installed.name)
    basis = companions.fit_basis(name)
    for release in companions.releases(name):
        if not companions._installable(release, environment):
            continue
        build, specifier = installed_build, SpecifierSet()
        if basis == "import_check":
            check = companions.import_check(name, release.version)
            if check is None:
                continue
            specifier = SpecifierSet(check.tensorflow)
        elif basis == "metadata":
            declared = release.tensorflow_requirements(environment)
            if not declared:
                continue
            names = {canonicalize_name(r.name) for r in declared}
            for requirement in declared:
                specifier &= requirement.specifier
            # the build the companion names: another build beside it would leave pip installing the named one too
            if installed_build not in names:
                build = sorted(names)[0]
        else:
            return None
        versions = coexistence.tensorflow_candidates(build, specifier, environment)
        if not versions:
            continue
        target = versions[0]
        why = f"{name} {release.version}, its newest release that installs here, supports {build} {target}"
        intents: list[tuple[str, Repair]] = []
        if build != installed_build:
            intents.append((CLOSURE, Repair.uninstall(installed_build, reason=f"replaced by {build} {target}: {why}")))
        intents += [(CLOSURE, Repair.install(f"{build}=={target}", reason=f"moves TensorFlow: {why}")),
                    (CLOSURE, Repair.install(f"{name}=={release.version}", reason=why))]
        return intents, f"{build} {target}"
    return None

