"""Can a plan's pins be installed together? An offline resolver check (issue 29, part 4).

A plan is one resolver step (and a --no-deps step) of requirements, with TensorFlow pinned where it is or
moved. Pins that no release satisfies together must never be printed: `tf-keras~=2.16.0` beside
`tensorflow==2.19.*` cannot install (every tf-keras 2.16 requires tensorflow<2.17). This module answers,
from the generated tables only (no index):

- which releases of the TensorFlow build the plan admits on this platform and Python (releases.toml);
- for each such release, whether its own Requires-Dist (the pins releases.toml records) meets the plan's
  other requirements;
- for each companion the plan installs, whether one of its releases the plan admits is made for that
  TensorFlow (companions.toml Requires-Dist, or the release's own import-time check where its metadata
  names no TensorFlow: companions_curated.toml).

A companion whose table cannot say (keras, tensorboard: no TensorFlow in their metadata) is never held
against a plan. Pure functions of the requirements and the target's marker environment.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Mapping, Optional, Sequence

from packaging.requirements import Requirement
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from tfdoctor.knowledge.specifiers import parse_requirement


@dataclass(frozen=True)
class Clash:
    """Requirements of one plan that no release satisfies together."""

    distribution: str  # the companion (or pinned dependency) that cannot meet TensorFlow
    requirement: str  # as the plan writes it: 'tf-keras~=2.16.0'
    tensorflow: str  # the plan's TensorFlow: 'tensorflow==2.19.*'
    why: str


def _requirement(text: str) -> Optional[Requirement]:
    """Parsed once per process (knowledge/specifiers.parse_requirement): asked once per unmet pin and again per
    step, thousands of times when thousands of pins are unmet (issue 36). Shared: read, never changed."""
    return parse_requirement(text)


def _platform(environment: Mapping[str, str]) -> Optional[str]:
    from tfdoctor.facts.companions import environment_platform

    return environment_platform(environment)


def tensorflow_candidates(build: str, specifier: SpecifierSet, environment: Mapping[str, str],
                          installed: Optional[str] = None) -> list[str]:
    """Releases of `build` the specifier admits that have a wheel for this platform and Python (releases.toml),
    newest first. A build the table does not list (tf-nightly), or a specifier only the installed release
    meets (a pre-release kept where it is), gives the installed release when the specifier admits it."""
    from tfdoctor.facts import releases

    platform, python = _platform(environment), environment.get("python_version")
    name = canonicalize_name(build)
    # pre-releases only where the specifier names one (as pip picks without --pre; packaging's own default for
    # an empty specifier has changed between its releases, so it is said here)
    pre = any(getattr(version_of(clause.version), "is_prerelease", False) for clause in specifier)
    found, known = [], set()
    for row in releases.wheels():
        if row["distribution"] != name:
            continue
        known.add(row["version"])
        if platform and row["platform"] != platform:
            continue
        if python and row["pythons"] and python not in row["pythons"]:
            continue
        if specifier.contains(row["version"], prereleases=pre) and row["version"] not in found:
            found.append(row["version"])
    # the installed release where the table cannot say (a nightly, a release it does not list); one it lists
    # without a wheel for this Python is no candidate (a 2.18 beside Python 3.13 is what has to move)
    if installed and installed not in found and installed not in known and specifier.contains(installed, prereleases=True):
        found.append(installed)
    return sorted(found, key=Version, reverse=True)


def tensorflow_pins(build: str, version: str, environment: Mapping[str, str]) -> list[Requirement]:
    """The pins release `version` of `build` declares for this platform (releases.toml `pins`: its
    Requires-Dist on the packages TensorFlow breaks with), markers evaluated for the target."""
    from tfdoctor.facts import releases
    from tfdoctor.facts.requires_dist import _applies

    platform = _platform(environment)
    for row in releases.wheels():
        if row["distribution"] == canonicalize_name(build) and row["version"] == version \
                and (platform is None or row["platform"] == platform):
            lines = [_requirement(line) for line in row.get("pins") or ()]
            return [line for line in lines if line is not None and _applies(line, environment, "")]
    return []


def companion_admits(name: str, specifier: SpecifierSet, tf_version: str,
                     environment: Mapping[str, str]) -> Optional[bool]:
    """Is a release of companion `name` that `specifier` admits, installable here, made for `tf_version`?
    None when the tables cannot say (no TensorFlow in its metadata and no import check recorded, or no
    release the specifier admits is recorded)."""
    from tfdoctor.facts import companions

    basis = companions.fit_basis(name)
    if basis is None:
        return None
    admitted = [r for r in companions.releases(name) if specifier.contains(r.version, prereleases=True)
                and r.installs_on(environment) is not False and r.admits_python(environment) is not False]
    if not admitted:
        return None
    answers = [companions._fits(r, basis, tf_version, environment) for r in admitted]
    if any(answers):
        return True
    return False if any(answer is False for answer in answers) else None


def _specifiers(requirements: Iterable[str]) -> dict[str, tuple[str, SpecifierSet]]:
    """name -> (the requirement as written, its specifier); one distribution's clauses joined."""
    joined: dict[str, tuple[str, SpecifierSet]] = {}
    for text in requirements:
        requirement = _requirement(text)
        if requirement is None or requirement.url:
            continue
        name = canonicalize_name(requirement.name)
        if name in joined:
            written, specifier = joined[name]
            joined[name] = (f"{written},{requirement.specifier}", specifier & requirement.specifier)
        else:
            joined[name] = (text, requirement.specifier)
    return joined


def _meets(pin: Requirement, specifier: SpecifierSet) -> bool:
    from tfdoctor.knowledge.specifiers import satisfiable

    try:
        return satisfiable(SpecifierSet(",".join(str(s) for s in (*pin.specifier, *specifier))))
    except InvalidSpecifier:
        return True


def tensorflow_of(requirements: Iterable[str]) -> Optional[tuple[str, str, SpecifierSet]]:
    """(build, requirement as written, specifier) of the TensorFlow build among the requirements."""
    from tfdoctor.facts.requires_dist import is_tensorflow_build

    for name, (written, specifier) in _specifiers(requirements).items():
        if is_tensorflow_build(name):
            return name, written, specifier
    return None


def fitting_tensorflow(requirements: Sequence[str], environment: Mapping[str, str],
                       installed: Optional[str] = None) -> tuple[list[str], list[Clash]]:
    """(the releases of the plan's TensorFlow with which every other requirement can install, newest first;
    the clashes when there is none). A plan without a TensorFlow build, or whose TensorFlow the tables do
    not list, gives ([], []): nothing to hold against it."""
    from tfdoctor.facts import companions

    found = tensorflow_of(requirements)
    if found is None:
        return [], []
    build, tf_written, tf_specifier = found
    candidates = tensorflow_candidates(build, tf_specifier, environment, installed)
    if not candidates:
        return [], []
    others = {name: value for name, value in _specifiers(requirements).items() if name != build}
    per_candidate: dict[str, list[Clash]] = {}
    for version in candidates:
        clashes = []
        for pin in tensorflow_pins(build, version, environment):
            wanted = others.get(canonicalize_name(pin.name))
            if wanted is not None and not _meets(pin, wanted[1]):
                clashes.append(Clash(canonicalize_name(pin.name), wanted[0], tf_written,
                                     f"{build} {version} requires {pin}"))
        for name, (written, specifier) in others.items():
            if name in companions.COMPANIONS and companion_admits(name, specifier, version, environment) is False:
                clashes.append(Clash(name, written, tf_written,
                                     f"no {name} release that {written} admits is made for {build} {version}"))
        per_candidate[version] = clashes
    fitting = [v for v in candidates if not per_candidate[v]]
    if fitting:
        return fitting, []
    return [], per_candidate[candidates[0]]


def clashes(requirements: Sequence[str], environment: Mapping[str, str],
            installed: Optional[str] = None) -> list[Clash]:
    """The pins of a plan that no release satisfies together ([] when they can install)."""
    return fitting_tensorflow(requirements, environment, installed)[1]


def plan_requirements(plan_dict: Mapping, installed_pin: Optional[str]) -> list[str]:
    """Every requirement a printed plan installs (its install steps, resolver and --no-deps alike), plus the
    installed TensorFlow pin when the plan neither installs nor uninstalls a TensorFlow build."""
    from tfdoctor.facts.requires_dist import is_tensorflow_build

    installs = [p for step in plan_dict.get("steps") or () if step.get("action") == "install"
                for p in step.get("packages") or ()]
    removed = {canonicalize_name(p) for step in plan_dict.get("steps") or () if step.get("action") == "uninstall"
               for p in step.get("packages") or ()}
    has_build = any(is_tensorflow_build(canonicalize_name(r.name)) for r in map(_requirement, installs) if r)
    if installed_pin and not has_build:
        pinned = _requirement(installed_pin)
        if pinned is not None and canonicalize_name(pinned.name) not in removed:
            installs.append(installed_pin)
    return installs


def version_of(text: str) -> Optional[Version]:
    try:
        return Version(text)
    except InvalidVersion:
        return None
