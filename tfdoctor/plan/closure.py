"""Is a plan closed over its own result? (issue 38, build 2)

The checks judge the environment as it is; a plan changes it, and what it installs has needs of its own that
no check saw: tensorflow-probability 0.24 (the release made for TensorFlow 2.16, which replaces 0.25) imports
tf_keras; a TensorFlow moved back for tensorflow-decision-forests leaves a tf-keras made for the newer one.
Pip resolves only the Requires-Dist of what a step installs: it does not revisit what the step leaves in
place, nor know what a release imports without declaring it.

So the releases the environment will hold once the plan ran (the installed ones, the plan's removals and
installs applied, each install's release read from the tables where they can say) are judged again:

- the companion tables (Requires-Dist, or the release's own import-time check): every companion made for the
  plan's TensorFlow;
- Requires-Dist of what the plan leaves in place: a requirement that held before the plan and not after;
- undeclared needs: a release that imports tf_keras (knowledge/tf_keras_users.toml) under a Keras 3 tf.keras
  needs the tf-keras made for that TensorFlow; a module's provider (knowledge/module_providers.toml) at a
  release that still has it;
- the family rules (knowledge/family.toml): what a TensorFlow release's own files need that its
  Requires-Dist admits older releases of (protobuf with `runtime_version` for generated code of 5.26 and later).

Each gap says what would close it (an install requirement), or that nothing does (then the planner makes it a
conflict). Pure functions of a plan's dict and the facts, so a printed plan (a fixture's, a live report's) can be
checked offline exactly as the planner checks its own.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Optional

from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from tfdoctor.knowledge.specifiers import parse_requirement, requirement_name

CLOSURE = "plan"  # the check id of the planner's own intents: what a plan's result lacks
KERAS_3_SINCE = Version("2.16")  # TensorFlow 2.16 made Keras 3 its tf.keras (tf_keras_users.toml's premise)


@dataclass(frozen=True)
class Gap:
    """What the plan's result lacks; `install` closes it, None: nothing in the tables does."""

    distribution: str
    why: str
    install: Optional[str] = None


@dataclass(frozen=True)
class Result:
    """The releases the environment holds once the plan ran."""

    before: Mapping[str, str]  # name -> installed version
    after: Mapping[str, Optional[str]]  # name -> version after the plan (None: the resolver picks within `specifier`)
    specifiers: Mapping[str, SpecifierSet]  # name -> what the plan asks of it (installs only)
    tensorflow: Optional[tuple[str, str]]  # (build, version) the plan ends with
    changed: frozenset[str]  # names the plan installs, replaces or removes

    def kept(self, name: str) -> bool:
        return name not in self.changed and name in self.after


def _requirement(text: str) -> Optional[Requirement]:
    """Parsed once per process (knowledge/specifiers.parse_requirement): asked once per unmet pin and again per
    step, thousands of times when thousands of pins are unmet (issue 36). Shared: read, never changed."""
    return parse_requirement(text)


def _version(text: Any) -> Optional[Version]:
    try:
        return Version(str(text))
    except InvalidVersion:
        return None


def result_of(plan: Mapping[str, Any], facts: Mapping[str, Any]) -> Result:
    """The releases after the plan: removals dropped; each install's release the one pip would pick where the
    tables say (an exact pin; the installed release when it satisfies the step, which pip then keeps; a
    companion's newest release made for the plan's TensorFlow; TensorFlow's newest release the plan's other
    pins admit, releases.toml), else unknown (None)."""
    from tfdoctor.facts import companions, requires_dist as reqs
    from tfdoctor.plan import coexistence

    before = {name: str(entry["version"]) for name, entry in reqs._first_copies(facts).items() if entry.get("version")}
    after: dict[str, Optional[str]] = dict(before)
    changed: set[str] = set()
    steps = [step for step in plan.get("steps") or () if not step.get("manual")]
    for step in steps:
        if step.get("action") == "uninstall":
            for name in step.get("packages") or ():
                after.pop(canonicalize_name(name), None)
                changed.add(canonicalize_name(name))
    environment = reqs.marker_environment(facts)
    pin = reqs.tensorflow_pin(facts)
    installed_tf = pin.partition("==")[2] if pin else None
    wanted = coexistence.plan_requirements(plan, pin)
    tensorflow: Optional[tuple[str, str]] = None
    found = coexistence.tensorflow_of(wanted)
    if found is not None:
        build, _, specifier = found
        fitting, _ = coexistence.fitting_tensorflow(wanted, environment, installed_tf)
        kept = before.get(build)
        if kept is not None and specifier.contains(kept, prereleases=True):
            version: Optional[str] = kept  # pip keeps an installed release the step admits
        else:
            candidates = fitting or coexistence.tensorflow_candidates(build, specifier, environment, installed_tf)
            version = candidates[0] if candidates else None
        if version is not None:
            tensorflow = (build, version)
        if after.get(build) != version:
            changed.add(build)
        after[build] = version
    specifiers: dict[str, SpecifierSet] = {}
    for step in steps:
        if step.get("action") not in ("install", "reinstall"):
            continue
        for text in step.get("packages") or ():
            requirement = _requirement(text)
            if requirement is None or requirement.url:
                continue
            name = canonicalize_name(requirement.name)
            if tensorflow is not None and name == tensorflow[0]:
                continue
            specifier = specifiers.get(name, SpecifierSet()) & requirement.specifier
            specifiers[name] = specifier
            if step.get("action") == "reinstall":
                continue  # as it was
            installed = before.get(name)
            exact = [s.version for s in specifier if s.operator in ("==", "===") and "*" not in s.version]
            if installed is not None and specifier.contains(installed, prereleases=True):
                version = installed
            elif exact:
                version = exact[0]
            else:
                version = _companion_pick(companions, name, specifier, tensorflow, environment)
            if version != installed:
                changed.add(name)
            after[name] = version
    return Result(before, after, specifiers, tensorflow, frozenset(changed))


def _companion_pick(companions: Any, name: str, specifier: SpecifierSet, tensorflow: Optional[tuple[str, str]],
                    environment: Mapping[str, str]) -> Optional[str]:
    """The release of a companion pip installs for `specifier`: the newest the table holds that installs here
    and, where the table says, is made for the plan's TensorFlow; None for anything else."""
    if name not in companions.COMPANIONS:
        return None
    basis = companions.fit_basis(name)
    for release in companions.releases(name):
        if not specifier.contains(release.version, prereleases=True) or not companions._installable(release, environment):
            continue
        if tensorflow is not None and basis is not None \
                and companions._fits(release, basis, tensorflow[1], environment) is False:
            continue
        return release.version
    return None


def gaps(plan: Mapping[str, Any], facts: Mapping[str, Any]) -> list[Gap]:
    """What the plan's result lacks, by the rules in the module's docstring ([] when it is closed)."""
    from tfdoctor.facts import requires_dist as reqs

    result = result_of(plan, facts)
    if result.tensorflow is None:
        return []
    environment = reqs.marker_environment(facts)
    conflicted = {canonicalize_name(str(c.get("distribution") or "")) for c in plan.get("conflicts") or ()}
    found: dict[str, Gap] = {}
    for gap in (*_companions_made_for(result, environment), *_requirements_kept(result, facts, environment),
                *_undeclared_needs(result, environment), *_family_rules(result, environment)):
        if gap.distribution not in conflicted:
            found.setdefault(gap.distribution, gap)
    return list(found.values())


def _companions_made_for(result: Result, environment: Mapping[str, str]) -> Iterable[Gap]:
    from tfdoctor.facts import companions, knowledge_age

    build, tf_version = result.tensorflow or ("", "")
    for name, version in result.after.items():
        if version is None or name not in companions.COMPANIONS or name == build:
            continue
        if companions.made_for(name, version, tf_version, environment) is not False:
            continue
        release = companions.release_for(name, tf_version, environment)
        why = f"{name} {version} is not made for {build} {tf_version}, which this plan ends with"
        # a TensorFlow newer than the tables: a release made for it is unknown, not absent (issue 38, build 6)
        none = ("; the tables end before it, so which release is made for it is not in them"
                if knowledge_age.beyond(build, tf_version) else "; no release is")
        yield Gap(name, why + (f"; {release.version} is" if release else none),
                  f"{name}=={release.version}" if release else None)


def _requirements_kept(result: Result, facts: Mapping[str, Any], environment: Mapping[str, str]) -> Iterable[Gap]:
    """Requires-Dist of a distribution the plan leaves in place, on one it changes: held before, not after."""
    from tfdoctor.facts import companions, requires_dist as reqs

    build, tf_version = result.tensorflow or ("", "")
    for name, entry in reqs._first_copies(facts).items():
        if not result.kept(name) or name == "tfdoctor":
            continue
        for line in entry.get("requires") or ():
            named = requirement_name(str(line))
            if named is None or canonicalize_name(named) not in result.changed:
                continue  # names nothing the plan changes: not parsed (15,199 parses of an empty plan, 5,000 distributions)
            requirement = reqs.parse(str(line))
            if requirement is None or not reqs._applies(requirement, environment, ""):
                continue
            needed = canonicalize_name(requirement.name)
            old, new = result.before.get(needed), result.after.get(needed)
            if needed not in result.after:
                if old is not None:  # removed by the plan, still required by what stays
                    yield Gap(name, f"{name} {entry.get('version')} requires {requirement.name}{requirement.specifier}, "
                                    f"which this plan removes")
                continue
            if new is None or reqs.holds(new, requirement.specifier) is not False \
                    or (old is not None and reqs.holds(old, requirement.specifier) is False):
                continue
            why = f"{name} {entry.get('version')} requires {requirement.name}{requirement.specifier}, and this plan " \
                  f"installs {needed} {new}"
            release = companions.release_for(name, tf_version, environment) if name in companions.COMPANIONS else None
            if release is not None and release.version != entry.get("version"):
                yield Gap(name, f"{why}; {name} {release.version} is made for {build} {tf_version}",
                          f"{name}=={release.version}")
            elif reqs.is_tensorflow_build(needed) or name in companions.COMPANIONS:
                yield Gap(name, why)
            else:
                yield Gap(needed, why, f"{requirement.name}{requirement.specifier}")


@functools.lru_cache(maxsize=1)
def _tf_keras_rows() -> Mapping[str, tuple[Mapping[str, Any], ...]]:
    """tf_keras_users.toml's rows by distribution: read once, so a plan's result is judged in one pass over
    what it holds, not one pass of the table per distribution."""
    from tfdoctor.knowledge import rows

    by_name: dict[str, list[Mapping[str, Any]]] = {}
    for row in rows("tf_keras_users", "release"):
        by_name.setdefault(canonicalize_name(row["distribution"]), []).append(row)
    return {name: tuple(found) for name, found in by_name.items()}


def imports_tf_keras(name: str, version: str) -> Optional[Mapping[str, Any]]:
    """The tf_keras_users row saying this release imports tf_keras (or requires tf-keras outside extras): its own
    row, else the newest older release's (a library that moved to tf_keras stays there); None otherwise."""
    wanted = _version(version)
    if wanted is None:
        return None
    rows = [row for row in _tf_keras_rows().get(name, ()) if _version(row["release"]) is not None and _version(row["release"]) <= wanted]  # type: ignore[operator]
    if not rows:
        return None
    row = max(rows, key=lambda r: _version(r["release"]))  # type: ignore[arg-type,return-value]
    declared = [line for line in row["requires_tf_keras"] if "extra" not in line]
    return row if row["imports_tf_keras"] or declared else None


def _undeclared_needs(result: Result, environment: Mapping[str, str]) -> Iterable[Gap]:
    from tfdoctor.facts import companions
    from tfdoctor.knowledge import rows

    build, tf_version = result.tensorflow or ("", "")
    if (_version(tf_version) or KERAS_3_SINCE) >= KERAS_3_SINCE:
        have = result.after.get("tf-keras")
        for name, version in sorted(result.after.items()):
            row = imports_tf_keras(name, version) if version and name != "tf-keras" else None
            if row is None:
                continue
            if have is None and "tf-keras" in result.after:
                break  # the plan installs tf-keras at a release the resolver picks within its specifier
            if have is not None and companions.made_for("tf-keras", have, tf_version, environment) is not False:
                break
            release = companions.release_for("tf-keras", tf_version, environment)
            why = (f"{name} {version} imports tf_keras ({', '.join(row['imports_tf_keras'][:1]) or 'its Requires-Dist'}),"
                   f" and tf.keras of {build} {tf_version} is Keras 3: it needs the tf-keras made for {tf_version}")
            yield Gap("tf-keras", why + ("" if have is None else f", not tf-keras {have}"),
                      f"tf-keras=={release.version}" if release else None)
            break
    providers = {row["module"]: row for row in rows("module_providers", "providers")}
    for row in rows("module_providers", "importers"):
        name = canonicalize_name(row["distribution"])
        version = result.after.get(name)
        if version is None or not SpecifierSet(row["releases"]).contains(version, prereleases=True):
            continue
        provider = providers.get(row["module"])
        if provider is None:
            continue
        provided_by = Requirement(provider["provided_by"])
        holder = canonicalize_name(provided_by.name)
        if name not in result.changed and holder not in result.changed:
            continue  # as it was before the plan: the checks judged that
        have = result.after.get(holder)
        if have is None and holder in result.specifiers:
            if (result.specifiers[holder] & provided_by.specifier) == result.specifiers[holder]:
                continue
        elif have is not None and provided_by.specifier.contains(have, prereleases=True):
            continue
        yield Gap(holder, f"{name} {version} imports {row['module']} ({row['uses']}), which only {provided_by} has",
                  str(provided_by))


def _family_rules(result: Result, environment: Mapping[str, str]) -> Iterable[Gap]:
    """What the plan's TensorFlow release's own files need of its family beyond its Requires-Dist
    (knowledge/family.toml, curated: releases.toml is generated), for a family member the plan leaves at a release without it."""
    from tfdoctor.knowledge import rows

    build, tf_version = result.tensorflow or ("", "")
    version = _version(tf_version)
    if version is None:
        return
    for row in rows("family", "family"):
        if not SpecifierSet(row["tensorflow"]).contains(version, prereleases=True):
            continue
        needs = Requirement(row["needs"])
        name = canonicalize_name(needs.name)
        have = result.after.get(name)
        if have is None or needs.specifier.contains(have, prereleases=True):
            continue
        yield Gap(name, f"{build} {tf_version}'s {row['what']} needs {needs} ({name} {have} is installed)", str(needs))
