"""The environment's own declarations: Requires-Dist of the TensorFlow family (and of every installed
distribution that requires one of them) evaluated against what is installed, the way pip would,
with the *target's* marker environment. Pure functions of the facts; shared by the dependencies
check and the tensorflow-import check (an import error tied to the pin that explains it).

Facts read: `distributions` (entries with `requires`, the raw Requires-Dist lines, recorded by
child/target_info.py) and `python.marker_environment` (PEP 508 values as the target sees them; for
older reports rebuilt from the recorded Python and host).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Optional

from packaging.markers import InvalidMarker, UndefinedComparison, UndefinedEnvironmentName
from packaging.requirements import Requirement
from packaging.specifiers import InvalidSpecifier, Specifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from tfdoctor.facts import Facts, build_names, canonical_name, first_copies, host_system, section
from tfdoctor.facts.platform import target_machine
from tfdoctor.knowledge.specifiers import parse_requirement

# The family: TensorFlow's builds and the packages released in step with it. A distribution that
# requires any of these is checked too (tensorflow-text, -io, -datasets, -probability, keras-hub...).
FAMILY = re.compile(r"^(tensorflow(-.+)?|tf-nightly(-.+)?|intel-tensorflow(-.+)?|keras|keras-nightly|tf-keras|"
                    r"tf-keras-nightly|tensorboard|tb-nightly|ml-dtypes)$")
# Extras that count as installed when any library they name is there (issue 11: `and-cuda` counts when
# its nvidia-* libraries are installed); any other extra counts only when everything it names is installed.
CUDA_EXTRAS = ("and-cuda",)

_SYS_PLATFORM = {"Darwin": "darwin", "Linux": "linux", "Windows": "win32"}
MARKER_KEYS = ("python_version", "python_full_version", "sys_platform", "platform_machine", "platform_system",
               "implementation_name", "platform_python_implementation", "os_name", "platform_release",
               "platform_version", "implementation_version")


@dataclass(frozen=True)
class Unmet:
    """One Requires-Dist line of an installed distribution that the environment does not satisfy."""

    requirer: str  # canonical name of the distribution that declares it
    requirer_version: Optional[str]
    requirement: str  # the Requires-Dist line as written
    name: str  # canonical name of the required distribution
    specifier: str  # '' when any version will do
    installed: Optional[str]  # the version installed (first copy on sys.path), None when missing
    top_level: tuple[str, ...] = ()  # top-level modules of the required distribution, when recorded
    extra: Optional[str] = None  # the requirer's extra this line belongs to ('and-cuda'), if any
    provided_by: Optional[str] = None  # another TensorFlow build standing in for a required one (tensorflow-cpu for tensorflow)

    @property
    def missing(self) -> bool:
        return self.installed is None

    @property
    def moves_tensorflow(self) -> bool:
        """Satisfying it means another TensorFlow (version or build) than the installed one."""
        return build_names.is_tensorflow_build(self.name)

    def describe(self) -> str:
        """'protobuf 3.20.3 is outside tensorflow-cpu 2.21.0's protobuf>=5.28.0' (or '... requires x, not installed')."""
        who = f"{self.requirer} {self.requirer_version}" if self.requirer_version else self.requirer
        wanted = f"{self.name}{self.specifier}"
        if self.missing:
            return f"{who} requires {wanted}, which is not installed"
        return f"{self.provided_by or self.name} {self.installed} is outside {who}'s {wanted}"


def is_family(name: str) -> bool:
    return bool(FAMILY.match(canonical_name(name)))


def is_tensorflow_build(name: str) -> bool:
    return build_names.is_tensorflow_build(canonical_name(name))


def marker_environment(facts: Facts) -> dict[str, str]:
    """The PEP 508 marker values of the *target* interpreter: recorded by the target collector, else
    (older reports) rebuilt from the recorded Python version, implementation, machine and host."""
    python = section(facts, "python")
    recorded = python.get("marker_environment")
    if isinstance(recorded, Mapping) and recorded:
        return {key: str(value) for key, value in recorded.items() if value is not None}
    version = str(python.get("version") or "")
    implementation = str(python.get("implementation") or "CPython")
    system = host_system(facts)
    return {
        "python_version": ".".join(version.split(".")[:2]),
        "python_full_version": version,
        "sys_platform": _SYS_PLATFORM.get(system, system.lower()),
        "platform_machine": target_machine(facts),
        "platform_system": system,
        "implementation_name": implementation.lower(),
        "platform_python_implementation": implementation,
        "os_name": "nt" if system == "Windows" else "posix",
        "platform_release": str(section(facts, "host").get("release") or ""),
        "platform_version": "",
        "implementation_version": version,
    }


def _first_copies(facts: Facts) -> Mapping[str, Mapping[str, Any]]:
    """name -> the first recorded copy (the one the target imports: sys.path order); indexed once per run
    (facts.first_copies), read-only."""
    return first_copies(facts)


def first_copy(facts: Facts, name: str) -> Optional[Mapping[str, Any]]:
    """The recorded copy of a distribution that the target imports (first on sys.path)."""
    return _first_copies(facts).get(canonical_name(name))


def parse(line: str) -> Optional[Requirement]:
    """A Requires-Dist line parsed (once per process: knowledge/specifiers.parse_requirement), or None."""
    return parse_requirement(line)


def version_key(text: Any) -> Version:
    """A sort key that never compares None: an unreadable version sorts lowest, as 0."""
    return version_of(text) or Version("0")


def version_of(text: Any) -> Optional[Version]:
    try:
        return Version(str(text))
    except (InvalidVersion, TypeError):
        return None


def series_of(version: Version) -> str:
    """The release series a version belongs to, where an API may change: its major (2.x), or for a 0.x
    release its minor (0.3.x), as semantic versioning reads 0.x minors."""
    return f"{version.major}.x" if version.major else f"0.{version.minor}.x"


def admits_series(specifier: SpecifierSet | str, installed: Optional[str]) -> Optional[bool]:
    """Does the specifier admit any release of the installed version's series (keras<2.14,>=2.13.1 admits 2.x,
    not 3.x; ml-dtypes~=0.3.1 admits 0.3.x, not 0.2.x)? None when either is unreadable.

    The admitted set is a union of intervals whose ends are the clauses' own versions, so testing the series'
    first release and every clause version (and the release just after it) inside the series decides it."""
    version = version_of(installed)
    try:
        spec = SpecifierSet(str(specifier))
    except InvalidSpecifier:
        return None
    if version is None:
        return None

    def same_series(v: Version) -> bool:
        return v.major == version.major and (version.major > 0 or v.minor == version.minor)

    first = Version(f"{version.major}.0.0" if version.major else f"0.{version.minor}.0")
    candidates = {first}
    for clause in spec:
        bound = version_of(clause.version.rstrip(".*"))
        if bound is None:
            continue
        release = (list(bound.release) + [0, 0, 0])[:3]
        candidates |= {bound, Version(f"{release[0]}.{release[1]}.{release[2] + 1}")}
    return any(spec.contains(c, prereleases=True) for c in candidates if same_series(c))


def holds(installed: Optional[str], specifier: SpecifierSet | str) -> Optional[bool]:
    """Does an installed version satisfy a specifier? Pre-releases count (an installed tf-nightly or
    rc satisfies `>=2.20` as pip's resolver accepts an installed one); None when unreadable."""
    version = version_of(installed)
    if version is None:
        return None
    try:
        spec = specifier if isinstance(specifier, SpecifierSet) else SpecifierSet(str(specifier))
    except InvalidSpecifier:
        return None
    return spec.contains(version, prereleases=True)


def _applies(requirement: Requirement, environment: Mapping[str, str], extra: str) -> bool:
    if requirement.marker is None:
        return True
    try:
        return bool(requirement.marker.evaluate({**environment, "extra": extra}))
    except (InvalidMarker, UndefinedComparison, UndefinedEnvironmentName):
        return False  # a marker this environment cannot decide: never blame the user for it


_WRITTEN_SPECIFIER = re.compile(r"^\s*[A-Za-z0-9][A-Za-z0-9._-]*\s*(?:\[[^\]]*\])?\s*\(?([^;@()]*)\)?")


def written_specifier(line: str, requirement: Requirement) -> str:
    """The specifier as the metadata writes it ('<8.0.0,>=6.31.1' stays in that order), without spaces."""
    match = _WRITTEN_SPECIFIER.match(str(line))
    text = re.sub(r"\s+", "", match.group(1)) if match else ""
    try:
        return text if SpecifierSet(text) == requirement.specifier else str(requirement.specifier)
    except InvalidSpecifier:
        return str(requirement.specifier)


def _extra_of(requirement: Requirement) -> Optional[str]:
    match = re.search(r"""extra\s*==\s*['"]([^'"]+)['"]""", str(requirement.marker or ""))
    return canonical_name(match.group(1)) if match else None


def _requirers(copies: Mapping[str, Mapping[str, Any]], environment: Mapping[str, str],
               closure: bool = True) -> list[Mapping[str, Any]]:
    """The family and every distribution that requires one of its members (with recorded Requires-Dist):
    unconditionally, or under an extra evidently installed (transformers[tf] yes, a bare transformers no);
    with `closure`, then every distribution their Requires-Dist reaches (optree, typing-extensions...)."""
    chosen = []
    requested = _requested_extras(copies, environment)
    for name, entry in copies.items():
        requires = entry.get("requires")
        if requires is None:
            continue
        if is_family(name):
            chosen.append(entry)
            continue
        if name == "tfdoctor":
            continue  # the doctor's own `tensorflow` extra is not the user's stack
        parsed = [req for req in map(parse, requires) if req]
        naming = [req for req in parsed if is_family(req.name)]
        if not naming:
            continue
        extras = _active_extras(name, parsed, environment, copies, requested) if any(_extra_of(r) for r in naming) else set()
        if any(_extra_of(req) is None or _extra_of(req) in extras for req in naming):
            chosen.append(entry)
    if closure:
        chosen += _closure(copies, environment, chosen, requested)
    return chosen


def _closure(copies: Mapping[str, Mapping[str, Any]], environment: Mapping[str, str],
             roots: Iterable[Mapping[str, Any]], requested: Optional[Mapping[str, set[str]]] = None) -> list[Mapping[str, Any]]:
    """Every recorded distribution the roots' Requires-Dist reaches, transitively, with markers evaluated
    for the target and only requested extras followed (issue 29: the closure `pip check` judges, on
    TensorFlow's import path). Entries without recorded Requires-Dist end the walk (older reports)."""
    requested = _requested_extras(copies, environment) if requested is None else requested
    seen = {canonical_name(str(entry["name"])) for entry in roots}
    queue = list(roots)
    found: list[Mapping[str, Any]] = []
    while queue:
        entry = queue.pop(0)
        name = canonical_name(str(entry["name"]))
        if name == "tfdoctor":
            continue
        parsed = [req for req in map(parse, entry.get("requires") or ()) if req]
        extras = _active_extras(name, parsed, environment, copies, requested) | requested.get(name, set())
        for requirement in parsed:
            extra = _extra_of(requirement)
            if (extra and extra not in extras) or not _applies(requirement, environment, extra or ""):
                continue
            target = canonical_name(requirement.name)
            reached = copies.get(target)
            if reached is None or target in seen:
                continue
            seen.add(target)
            queue.append(reached)
            if reached.get("requires") is not None:
                found.append(reached)
    return found


def closure_members(facts: Facts) -> list[Mapping[str, Any]]:
    """The distributions outside the family that TensorFlow's (and its dependents') Requires-Dist
    reaches and whose own Requires-Dist is recorded: optree through keras, typing-extensions through it."""
    copies = _first_copies(facts)
    environment = marker_environment(facts)
    roots = _requirers(copies, environment, closure=False)
    return _closure(copies, environment, roots)


def reached_from(facts: Facts, name: str) -> frozenset[str]:
    """`name` and every recorded distribution its Requires-Dist reaches, transitively, markers evaluated for the
    target (what importing it can load: keras -> optree -> typing-extensions). Empty when `name` is not recorded."""
    copies = _first_copies(facts)
    root = copies.get(canonical_name(name))
    if root is None:
        return frozenset()
    reached = _closure(copies, marker_environment(facts), [root])
    return frozenset({canonical_name(name)} | {canonical_name(str(entry["name"])) for entry in reached})


def complete_record(facts: Facts) -> bool:
    """Does `distributions` hold every distribution a requirement names? True for reports of the target
    collector that counts them (python.distribution_count); hand-written fact sets list what they like."""
    return isinstance(section(facts, "python").get("distribution_count"), int)


def requirers(facts: Facts) -> list[Mapping[str, Any]]:
    """The recorded distributions whose Requires-Dist is verified: the family and its dependents."""
    return _requirers(_first_copies(facts), marker_environment(facts))


def declared_names(facts: Facts, name: str) -> Optional[set[str]]:
    """The distributions a recorded distribution's Requires-Dist names for this target (markers
    evaluated, extras left out); None when its Requires-Dist was not recorded (older reports)."""
    entry = _first_copies(facts).get(canonical_name(name))
    if entry is None or entry.get("requires") is None:
        return None
    environment = marker_environment(facts)
    return {canonical_name(req.name) for req in map(parse, entry["requires"])
            if req is not None and not _extra_of(req) and _applies(req, environment, "")}


def declared_pins(facts: Facts, name: str) -> list[tuple[str, Optional[str], str]]:
    """(requirer, its version, specifier as written) for every recorded distribution whose Requires-Dist
    names `name` for this target (markers evaluated, extras left out): what any install of it must keep."""
    environment = marker_environment(facts)
    wanted = canonical_name(name)
    found = []
    for requirer, entry in _first_copies(facts).items():
        for line in entry.get("requires") or ():
            requirement = parse(line)
            if (requirement is not None and canonical_name(requirement.name) == wanted and not _extra_of(requirement)
                    and _applies(requirement, environment, "")):
                found.append((requirer, entry.get("version"), written_specifier(line, requirement)))
    return found


def family_recorded(facts: Facts) -> list[Mapping[str, Any]]:
    """Every recorded TensorFlow-family distribution (with or without Requires-Dist recorded)."""
    return [entry for name, entry in _first_copies(facts).items() if is_family(name)]


def _active_extras(requirer: str, lines: Iterable[Requirement], environment: Mapping[str, str],
                   copies: Mapping[str, Mapping[str, Any]], requested_extras: Mapping[str, set[str]]) -> set[str]:
    """The requirer's extras that are evidently requested (pip records none): another installed
    distribution's Requires-Dist asks for `requirer[extra]`, or, for `and-cuda`, one of its nvidia-*
    libraries is installed. A distribution that happens to share an extra's name is no request:
    tensorflow-io-gcs-filesystem's `tensorflow-cpu` extra is not asked for because tensorflow-cpu
    is installed (issue 17). `requested_extras`: `_requested_extras` of the same copies, computed once by the caller
    (computing it here, once per requirer, made every run quadratic in the number of distributions)."""
    requested = requested_extras.get(canonical_name(requirer), set())
    active = set()
    for requirement in lines:
        extra = _extra_of(requirement)
        if not extra or not _applies(requirement, environment, extra):
            continue
        if extra in requested or (extra in CUDA_EXTRAS and canonical_name(requirement.name) in copies):
            active.add(extra)
    return active


def _requested_extras(copies: Mapping[str, Mapping[str, Any]], environment: Mapping[str, str]) -> dict[str, set[str]]:
    """name -> the extras of it that installed distributions require (`tensorflow[and-cuda]` in a
    Requires-Dist that applies here)."""
    found: dict[str, set[str]] = {}
    for entry in copies.values():
        for requirement in map(parse, entry.get("requires") or ()):
            if requirement is not None and requirement.extras and not _extra_of(requirement) \
                    and _applies(requirement, environment, ""):
                found.setdefault(canonical_name(requirement.name), set()).update(canonical_name(e) for e in requirement.extras)
    return found


def unmet_requirements(facts: Facts, known_missing: Iterable[str] = ()) -> list[Unmet]:
    """Every Requires-Dist line of the family and its dependents that applies to the target (markers,
    active extras) and is not satisfied by what is installed, in recorded order. A partial list's absent
    distributions are not judged, except `known_missing` (canonical names an error says are not installed)."""
    known_missing = set(known_missing)
    environment = marker_environment(facts)
    copies = _first_copies(facts)
    imported_build = _imported_build(copies)
    complete = complete_record(facts)
    requested = _requested_extras(copies, environment)
    found: list[Unmet] = []
    for entry in _requirers(copies, environment):
        requirer = canonical_name(str(entry["name"]))
        lines = [(text, parse(text)) for text in entry.get("requires") or ()]
        parsed = [req for _, req in lines if req]
        extras = _active_extras(requirer, parsed, environment, copies, requested)
        for text, requirement in lines:
            if requirement is None:
                continue
            extra = _extra_of(requirement)
            if extra and extra not in extras:
                continue
            if not _applies(requirement, environment, extra or ""):
                continue
            name = canonical_name(requirement.name)
            if name == requirer:
                continue  # `tensorflow[and-cuda]` style self-references
            installed = copies.get(name)
            provided_by = None
            if installed is None and is_tensorflow_build(name) and not is_tensorflow_build(requirer) \
                    and imported_build is not None and "tensorflow" in (imported_build.get("top_level") or ("tensorflow",)):
                # tensorflow-cpu (or -macos, -intel...) provides the `tensorflow` package a requirer
                # imports: pip would not count it, the import does; judged on its version.
                installed, provided_by = imported_build, canonical_name(str(imported_build["name"]))
            version = str(installed.get("version")) if installed and installed.get("version") else None
            if installed is not None and holds(version, requirement.specifier) is not False:
                continue
            if installed is None and not complete and name not in known_missing:
                continue  # a hand-written or trimmed list: absent is not the same as not installed
            found.append(Unmet(requirer, entry.get("version"), str(text), name, written_specifier(text, requirement), version,
                               tuple((installed or {}).get("top_level") or ()), extra, provided_by))
    return found


def _imported_build(copies: Mapping[str, Mapping[str, Any]]) -> Optional[Mapping[str, Any]]:
    """The TensorFlow build `import tensorflow` loads: the first real one (its files own tensorflow/;
    entries without recorded files count as real), else the first build recorded."""
    builds = [entry for name, entry in copies.items() if is_tensorflow_build(name)]
    real = [entry for entry in builds if "tensorflow" in (entry.get("top_level") or ("tensorflow",))]
    return next(iter(real or builds), None)


def tensorflow_pin(facts: Facts) -> Optional[str]:
    """'tensorflow-cpu==2.21.0': the installed real TensorFlow build, pinned (first on sys.path). A shim (the
    2 kB `tensorflow` 2.13-2.15 on Apple silicon, which only requires tensorflow-macos) is no build: where
    only shims are installed there is none to keep, and installing the shim's real build is no second one."""
    from tfdoctor.facts import tensorflow_distributions  # it reads requirements: imported when asked

    copies = tensorflow_distributions.tensorflow_copies(facts)
    if copies:
        real = next((copy for copy in copies if copy.real), None)
        return f"{canonical_name(real.name)}=={real.version}" if real is not None and real.version else None
    build = _imported_build(_first_copies(facts))
    if build is None or not build.get("version"):
        return None
    return f"{canonical_name(str(build['name']))}=={build['version']}"


def tightest(clauses: list[str]) -> list[str]:
    """The clauses without the lower and upper bounds another clause already implies: ['>=2.0.0',
    '>=1.26.0', '<2.2'] -> ['>=2.0.0', '<2.2']. Order and spelling stay as written."""
    lows, highs = [], []
    for clause in clauses:
        try:
            specifier = Specifier(clause.strip())
        except InvalidSpecifier:
            continue
        bound = version_of(specifier.version)
        if bound is None:
            continue
        if specifier.operator in (">", ">="):
            lows.append(((bound, specifier.operator == ">"), clause))
        elif specifier.operator in ("<", "<="):
            highs.append(((bound, specifier.operator == "<="), clause))
    kept = {max(lows)[1]} if lows else set()
    kept |= {min(highs)[1]} if highs else set()
    implied = {clause for _, clause in (*lows, *highs)} - kept
    return [clause for clause in clauses if clause not in implied]
