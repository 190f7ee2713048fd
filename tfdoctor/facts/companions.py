"""TensorFlow's companions (tf-keras, tensorflow-text, tensorflow-io, ...) and which TensorFlow each of
their releases declares it needs, read from tfdoctor/knowledge/companions.toml (generated from every
wheel's METADATA on PyPI by tools/refresh_knowledge.py). Pure lookups, offline: the newest release of a
companion made for the installed TensorFlow, and whether an installed release was.

"Made for" is what the release's own Requires-Dist says: its lines naming a TensorFlow build whose
markers apply and that belong to no extra. Any build name counts (a release requiring `tensorflow`
is made for a `tensorflow-cpu` of that version: the installed build provides the `tensorflow` package).
A companion whose newest release declares no such line (keras, tensorboard, tensorflow-probability...)
gets no answer: see `declares_tensorflow`.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Mapping, Optional

from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from tfdoctor.facts import canonical_name
from tfdoctor.facts.requires_dist import _applies, _extra_of, holds, is_tensorflow_build, parse, version_of
from tfdoctor.knowledge import rows as knowledge_rows

COMPANIONS: tuple[str, ...] = (
    "tf-keras", "tensorflow-text", "tensorflow-io", "tensorflow-io-gcs-filesystem", "tensorflow-probability",
    "tensorflow-decision-forests", "tensorflow-hub", "tensorflow-addons", "tensorflow-model-optimization",
    "tensorflow-serving-api", "tensorflow-estimator", "tensorboard", "keras",
)

# Companions TensorFlow's own Requires-Dist names, with the range it accepts (tensorflow-io-gcs-filesystem>=0.23.1,
# tensorboard, keras; tensorflow-estimator up to 2.15: https://pypi.org/project/tensorflow/#files, METADATA): TensorFlow's declaration of them
# decides, so the TensorFlow pins in their own extras (tensorflow-io-gcs-filesystem 0.37.1's
# `tensorflow<2.17,>=2.16 ; extra == 'tensorflow'`) are never read as the TensorFlow they are made for.
DECLARED_BY_TENSORFLOW: tuple[str, ...] = ("tensorflow-io-gcs-filesystem", "tensorboard", "keras", "tensorflow-estimator")

# marker values -> the table's platform names (tools/refresh_knowledge.py wheel_platforms)
_SYSTEMS = {"linux": "linux", "darwin": "macos", "win32": "windows"}
_MACHINES = {"x86_64": "x86_64", "amd64": "x86_64", "arm64": "arm64", "aarch64": "arm64", "i386": "x86",
             "i686": "x86", "x86": "x86"}
_INTERPRETERS = {"cp": "cpython", "pp": "pypy"}


def environment_platform(environment: Mapping[str, str]) -> Optional[str]:
    """'linux-x86_64', 'macos-arm64', 'windows-x86_64'... for PEP 508 marker values; None when they
    do not say (no sys_platform or platform_machine recorded, or a system the table never names)."""
    system = _SYSTEMS.get(environment.get("sys_platform", ""))
    machine = _MACHINES.get(environment.get("platform_machine", "").lower())
    if not system or not machine:
        return None
    if machine == "arm64" and system == "linux":
        machine = "aarch64"  # manylinux tags say aarch64 where macOS and Windows say arm64
    return f"{system}-{machine}"


def _python_of(environment: Mapping[str, str]) -> Optional[tuple[int, int]]:
    text = environment.get("python_version") or ".".join(environment.get("python_full_version", "").split(".")[:2])
    match = re.fullmatch(r"(\d+)\.(\d+)", text)
    return (int(match.group(1)), int(match.group(2))) if match else None


def _wheel_installs(wheel: str, platform: str, python: tuple[int, int], implementation: str) -> bool:
    """Would pip take this wheel ('cp311-cp311-linux-x86_64', 'cp39-abi3-macos-arm64', 'py3-none-any')
    for that interpreter and platform? The tag rules of pip's compatible tags, glibc/macOS floors aside."""
    interpreter, abi, wheel_platform = wheel.split("-", 2)
    if wheel_platform not in ("any", platform):
        return False
    match = re.fullmatch(r"([a-z]+)(\d)(\d*)", interpreter)
    if not match:
        return False
    kind, major, minor = match.group(1), int(match.group(2)), int(match.group(3)) if match.group(3) else None
    if major != python[0]:
        return False
    if kind == "py":  # py3 any 3.x; py38 Python 3.8 and later
        return minor is None or minor <= python[1]
    if _INTERPRETERS.get(kind) != implementation:
        return False
    return minor == python[1] or (abi == "abi3" and minor is not None and minor <= python[1])


@dataclass(frozen=True)
class CompanionRelease:
    """One release of a companion as its wheels' METADATA declare it (a release whose wheels declare
    another TensorFlow build per platform is one CompanionRelease per variant, each with its platforms)."""

    name: str
    version: str
    requires: tuple[str, ...]  # every Requires-Dist line as written
    requires_python: Optional[str]
    platforms: tuple[str, ...]  # 'any', 'linux-x86_64', 'macos-arm64'...
    source: str
    wheels: tuple[str, ...] = ()  # interpreter-abi-platform of every wheel: 'cp311-cp311-linux-x86_64'
    uploaded: str = ""  # the day the release reached PyPI

    @functools.cached_property
    def _lines(self) -> tuple[Requirement, ...]:  # parsed once (cached_property writes past frozen)
        return tuple(requirement for requirement in map(parse, self.requires) if requirement is not None)

    def _applying(self, environment: Mapping[str, str]) -> list[Requirement]:
        # extra "" : a line of any extra (`extra == "tensorflow"`) does not apply, as pip reads it
        return [requirement for requirement in self._lines if _applies(requirement, environment, "")]

    def tensorflow_requirements(self, environment: Mapping[str, str]) -> list[Requirement]:
        """The applying, extra-free Requires-Dist lines naming a TensorFlow build."""
        return [r for r in self._applying(environment) if is_tensorflow_build(r.name)]

    def other_requirements(self, environment: Mapping[str, str]) -> list[Requirement]:
        """The applying, extra-free Requires-Dist lines naming anything else (what a `--no-deps`
        install of this release needs first)."""
        return [r for r in self._applying(environment) if not is_tensorflow_build(r.name)]

    def extra_tensorflow_requirements(self, environment: Mapping[str, str]) -> dict[str, list[Requirement]]:
        """extra -> its lines naming a TensorFlow build ({'tensorflow-cpu': [tensorflow-cpu<2.17,>=2.16]}
        for tensorflow-io 0.37.1): what the release asks for only when that extra is requested."""
        found: dict[str, list[Requirement]] = {}
        for requirement in self._lines:
            extra = _extra_of(requirement)
            if extra and is_tensorflow_build(requirement.name) and _applies(requirement, environment, extra):
                found.setdefault(extra, []).append(requirement)
        return found

    def declares_tensorflow(self, via_extras: bool = False) -> bool:
        """Does any line (in any environment) name a TensorFlow build: outside extras, or with
        `via_extras` inside one too?"""
        return any(is_tensorflow_build(r.name) and (via_extras or not _extra_of(r)) for r in self._lines)

    def admits_python(self, environment: Mapping[str, str]) -> Optional[bool]:
        """Does Requires-Python admit environment['python_full_version']? None when not recorded."""
        if not self.requires_python:
            return True
        version = environment.get("python_full_version")
        return holds(version, SpecifierSet(self.requires_python)) if version else None

    def installs_on(self, environment: Mapping[str, str]) -> Optional[bool]:
        """Is there a wheel for this interpreter and platform? None when the environment does not say."""
        platform, python = environment_platform(environment), _python_of(environment)
        if platform is not None and python is None:
            # the Python is not recorded, but a release with no wheel for this platform at all installs on none
            on_platform = any(wheel.split("-", 2)[2] in ("any", platform) for wheel in self.wheels)
            return None if on_platform or not self.wheels else False
        if platform is None or python is None:
            return None
        implementation = environment.get("implementation_name") or "cpython"
        return any(_wheel_installs(wheel, platform, python, implementation) for wheel in self.wheels)

    def fits(self, tensorflow_version: str, environment: Mapping[str, str], via_extras: bool = False) -> Optional[bool]:
        """Is it made for that TensorFlow here: every applying TensorFlow line holds (and, with
        `via_extras`, where no line outside extras names one, every line of one of its extras holds)?
        None when it declares no TensorFlow for this environment."""
        declared = self.tensorflow_requirements(environment)
        if declared:
            return all(holds(tensorflow_version, r.specifier) for r in declared)
        if via_extras:
            extras = self.extra_tensorflow_requirements(environment).values()
            if extras:
                return any(all(holds(tensorflow_version, r.specifier) for r in lines) for lines in extras)
        return None


@functools.lru_cache(maxsize=None)
def _table() -> dict[str, tuple[CompanionRelease, ...]]:
    """name -> its releases, newest first (read once)."""
    table: dict[str, list[CompanionRelease]] = {}
    for row in knowledge_rows("companions", "release"):
        release = CompanionRelease(
            name=canonical_name(row["name"]), version=row["version"], requires=tuple(row["requires"]),
            requires_python=row["requires_python"] or None, platforms=tuple(row["platforms"]),
            source=row["source"], wheels=tuple(row["wheels"]), uploaded=row.get("uploaded", ""))
        table.setdefault(release.name, []).append(release)
    return {name: tuple(sorted(rows, key=lambda r: Version(r.version), reverse=True)) for name, rows in table.items()}


def releases(name: str) -> list[CompanionRelease]:
    """Every recorded release of a companion, newest first (a release with per-platform variants
    appears once per variant); [] for a name the table does not hold."""
    return list(_table().get(canonical_name(name), ()))


def declares_tensorflow(name: str, via_extras: bool = False) -> bool:
    """Does the companion's newest release name a TensorFlow build in its Requires-Dist (outside
    extras, or with `via_extras` inside one too)? False: its metadata does not say which TensorFlow it
    needs (older releases that did say are history: keras 2.4 required `tensorflow`, any version)."""
    rows = releases(name)
    newest = [r for r in rows if r.version == rows[0].version]
    return any(r.declares_tensorflow(via_extras) for r in newest)


@dataclass(frozen=True)
class ImportCheck:
    """A curated floor: the release refuses, at import, a TensorFlow outside `tensorflow` (its source)."""

    name: str
    version: str
    tensorflow: str  # a specifier: '>=2.18'
    source: str


@functools.lru_cache(maxsize=None)
def _import_checks() -> dict[tuple[str, Version], ImportCheck]:
    checks = {}
    for row in knowledge_rows("companions_curated", "import_check"):
        check = ImportCheck(canonical_name(row["name"]), row["version"], row["tensorflow"], row["source"])
        checks[(check.name, Version(check.version))] = check
    return checks


def import_check(name: str, version: str) -> Optional[ImportCheck]:
    """The curated import check of a companion release (tensorflow-probability's), if recorded."""
    wanted = version_of(version)
    return _import_checks().get((canonical_name(name), wanted)) if wanted else None


def fit_basis(name: str, via_extras: bool = False) -> Optional[str]:
    """What says which TensorFlow a companion's releases are made for: 'metadata' (their Requires-Dist,
    extras aside), 'import_check' (curated floors, for a companion whose metadata names none),
    'extras' (with `via_extras`: Requires-Dist lines of extras), None (nothing: no answer is given)."""
    if declares_tensorflow(name):
        return "metadata"
    if any(key[0] == canonical_name(name) for key in _import_checks()):
        return "import_check"
    return "extras" if via_extras and declares_tensorflow(name, via_extras=True) else None


def _fits(release: CompanionRelease, basis: str, tensorflow_version: str,
          environment: Mapping[str, str]) -> Optional[bool]:
    if basis == "import_check":
        check = import_check(release.name, release.version)
        return holds(tensorflow_version, check.tensorflow) if check else None
    return release.fits(tensorflow_version, environment, via_extras=basis == "extras")


def _installable(release: CompanionRelease, environment: Mapping[str, str]) -> bool:
    return release.installs_on(environment) is not False and release.admits_python(environment) is not False


def release_for(name: str, tensorflow_version: str, environment: Mapping[str, str],
                via_extras: bool = False) -> Optional[CompanionRelease]:
    """The newest release of `name` made for `tensorflow_version` (by `fit_basis`) that installs here (a
    wheel for the interpreter and platform, Requires-Python admitting it); None where none exists or
    nothing says which TensorFlow the companion needs. Releases declaring nothing are passed over
    (tf-keras 2.15.0 declares nothing; 2.15.1 requires tensorflow<2.16,>=2.15). By an import check, the
    newest release whose floor the TensorFlow clears."""
    basis = fit_basis(name, via_extras)
    if basis is None:
        return None
    for release in releases(name):
        if _installable(release, environment) and _fits(release, basis, tensorflow_version, environment):
            return release
    return None


def made_for(name: str, version: str, tensorflow_version: str, environment: Mapping[str, str],
             via_extras: bool = False) -> Optional[bool]:
    """Does the installed release `version` of `name` declare a fit with `tensorflow_version` here?
    None when the release (or its variant for this platform) is not in the table or declares nothing.
    By an import check: False below its floor (the import fails), None above it (a floor is no range)."""
    basis = fit_basis(name, via_extras)
    wanted = version_of(version)
    variants = [r for r in releases(name) if Version(r.version) == wanted]
    matching = [r for r in variants if r.installs_on(environment) is not False] if len(variants) > 1 else variants
    if basis is None or not matching:
        return None
    fit = _fits(matching[0], basis, tensorflow_version, environment)
    return None if basis == "import_check" and fit else fit
