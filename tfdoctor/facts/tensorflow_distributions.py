"""The installed TensorFlow distributions of the target, read statically (no import): which names,
which are real builds and which are ~2 kB shims, which TensorFlow version `import tensorflow` gets,
and where tensorflow-metal's plugin library sits. Pure functions of the facts.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass
from typing import Any, Mapping, Optional

from tfdoctor.facts import Facts, canonical_name, copies_by_name, installable_wheels, section
from tfdoctor.facts.platform import wheel_platform
from tfdoctor.knowledge import rows as knowledge_rows
from tfdoctor.knowledge.specifiers import parse_requirement
from tfdoctor.knowledge.versions import release

METAL = "tensorflow-metal"
METAL_LIBRARY = "libmetal_plugin.dylib"

@dataclass(frozen=True)
class TFCopy:
    name: str
    version: Optional[str]
    location: Optional[str]
    real: bool
    shim_of: Optional[str]
    basis: str  # how real/shim was decided: "files", "knowledge", "requires", "assumed"

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "version": self.version, "location": self.location,
                "kind": "real" if self.real else "shim", "shim_of": self.shim_of, "basis": self.basis}


def _shim_target_from_requires(entry: Mapping[str, Any], names: list[str]) -> Optional[str]:
    """A shim requires its real build under a platform marker ('tensorflow-macos==2.15.0; platform_system ==
    "Darwin" and platform_machine == "arm64"'), never under an extra."""
    for line in entry.get("requires") or ():
        requirement = parse_requirement(str(line))
        if requirement is None or requirement.marker is None or "extra" in str(requirement.marker):
            continue
        target = canonical_name(requirement.name)
        if target in names and target != canonical_name(str(entry.get("name") or "")):
            return target
    return None


def classify(entry: Mapping[str, Any], platform: Optional[str]) -> TFCopy:
    name = canonical_name(str(entry.get("name") or ""))
    version = entry.get("version")
    names = tensorflow_distribution_names()
    top_level = entry.get("top_level")
    row = installable_wheels.wheel_for(name, version, platform) if platform else None
    if top_level:  # the files themselves: a real build owns tensorflow/
        real = "tensorflow" in top_level
        target = None if real else (row["shim_of"] if row and row["shim_of"] else _shim_target_from_requires(entry, names))
        return TFCopy(name, version, entry.get("location"), real, target, "files")
    if row:
        real = row["kind"] == "real"
        return TFCopy(name, version, entry.get("location"), real, row["shim_of"] or None, "knowledge")
    target = _shim_target_from_requires(entry, names)
    if target:
        return TFCopy(name, version, entry.get("location"), False, target, "requires")
    return TFCopy(name, version, entry.get("location"), True, None, "assumed")


def tensorflow_copies(facts: Facts) -> list[TFCopy]:
    """Every installed TensorFlow distribution, in sys.path order (as recorded)."""
    index = copies_by_name(facts)  # a lookup per TensorFlow name, not a scan of every distribution (issue 36)
    recorded = sorted((copy for name in set(tensorflow_distribution_names()) for copy in index.get(name, ())),
                      key=lambda copy: copy[0])
    platform = wheel_platform(facts)
    return [classify(entry, platform) for _, entry in recorded]


def real_builds(facts: Facts) -> list[TFCopy]:
    return [copy for copy in tensorflow_copies(facts) if copy.real]


def tensorflow_version(facts: Facts) -> Optional[str]:
    """The version `import tensorflow` loads: the first real build on the path (else a shim's)."""
    copies = tensorflow_copies(facts)
    for copy in copies:
        if copy.real and copy.version:
            return copy.version
    for copy in copies:
        if copy.version:
            return copy.version
    return None


def installed(facts: Facts, name: str) -> list[Mapping[str, Any]]:
    return [entry for _, entry in copies_by_name(facts).get(canonical_name(name), ())]


def first_version(facts: Facts, name: str) -> Optional[str]:
    copies = installed(facts, name)
    return copies[0].get("version") if copies else None


def _norm(path: str) -> str:
    return posixpath.normpath(str(path).replace("\\", "/")).rstrip("/")


def metal_plugin_dirs(facts: Facts) -> list[dict[str, Any]]:
    """Every directory holding libmetal_plugin.dylib that TensorFlow would load, from the directory
    scan (python.tensorflow_plugin_dirs) and the tensorflow-metal records; with each copy's header."""
    found: dict[str, dict[str, Any]] = {}
    for record in section(facts, "python").get("tensorflow_plugin_dirs") or ():
        for item in record.get("files") or ():
            if item.get("name") == METAL_LIBRARY:
                found[_norm(record["path"])] = {"path": record["path"], "header_hex": item.get("header_hex"),
                                                 "version": None}
    # TensorFlow also loads the library a TF_PLUGGABLE_DEVICE_LIBRARY_PATH names (its __init__.py:
    # https://github.com/tensorflow/tensorflow/blob/v2.21.0/tensorflow/api_template.__init__.py).
    extra = str(section(facts, "environment").get("TF_PLUGGABLE_DEVICE_LIBRARY_PATH") or "")
    for item in filter(None, extra.split(":")):
        if item.endswith(METAL_LIBRARY):
            directory = _norm(posixpath.dirname(item))
            found.setdefault(directory, {"path": directory, "header_hex": None, "version": None,
                                         "via": "TF_PLUGGABLE_DEVICE_LIBRARY_PATH"})
    for entry in installed(facts, METAL):
        libraries = [p for p in entry.get("plugin_libraries") or () if str(p).endswith(METAL_LIBRARY)]
        if not libraries and entry.get("location"):
            libraries = [posixpath.join(str(entry["location"]), "tensorflow-plugins", METAL_LIBRARY)]
        for library in libraries:
            directory = _norm(posixpath.dirname(str(library).replace("\\", "/")))
            record = found.setdefault(directory, {"path": directory, "header_hex": None, "version": None})
            record["version"] = entry.get("version")
    return list(found.values())


def build_to_keep(platform: Optional[str], builds: list[tuple[str, Optional[str]]]) -> Optional[str]:
    """'tensorflow==2.16.1': of several real TensorFlow builds writing one site-packages/tensorflow/, the one
    to install again after removing them all: the newest version, under the name that installs that
    version on this platform (tensorflow-macos for 2.9-2.12 on Apple silicon). Shared by tensorflow-install
    and install-integrity, so their repairs agree."""
    versioned = [(name, version) for name, version in builds if version]
    if not versioned:
        return None
    name, version = max(versioned, key=lambda build: release(build[1]))
    if canonical_name(name).startswith("tf-nightly"):
        return f"{name}=={version}"  # a nightly exists only under its own name: 'tensorflow' has no dev builds
    parts = release(version)[:2]
    wanted = installable_wheels.install_name(platform, ".".join(map(str, parts))) if platform and len(parts) == 2 else None
    return f"{wanted or name}=={version}"


def tensorflow_distribution_names() -> list[str]:
    return [row["name"] for row in knowledge_rows("macos", "tensorflow_distribution")]
