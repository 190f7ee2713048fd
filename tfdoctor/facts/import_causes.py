"""An import error tied to its cause in the environment's own declarations.

When `import tensorflow` (or tf.keras) raises, the error text and its traceback name modules: the frame
that raised lives in some installed distribution (ml_dtypes, google.protobuf, h5py, ...), the message
names a module ("cannot import name 'runtime_version' from 'google.protobuf'") or a native library
("libtensorflow_framework.so.2: cannot open shared object file"). This module maps those names to
installed distributions and asks the shared readers whether the environment explains the error:
a Requires-Dist pin the installed version violates (facts/requires_dist.py, the dependencies check), a
file RECORD lists that is missing or altered (facts/integrity.py, the install-integrity check), or files built for
another Python (WHEEL tags: facts/wheel_tags.py, the tensorflow-install check).
Pure functions of the facts; the cause in words with its repair is remedies/import_causes.py's, shared by the
tensorflow-import and keras checks.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Optional

from tfdoctor.facts import Facts, canonical_name, integrity, requires_dist, wheel_tags

_FRAME = re.compile(r'File "([^"]+)"')
# A name starts where a run of its characters starts (not at every \b inside 'a.a.a...'): an error text
# comes from a saved report too, and a pattern tried at every dot of a long run is quadratic.
_NO_MODULE = re.compile(r"No module named '([\w.]+)'")
_MESSAGE_MODULES = (
    _NO_MODULE,
    re.compile(r"cannot import name '\w+' from '([\w.]+)'"),
    re.compile(r"module '([\w.]+)' has no attribute"),
    re.compile(r"(?<![\w.])([\w.]+) failed to import"),
)
_LIBRARY = re.compile(r"(?<![\w.+-])([\w.+-]+\.(?:so(?:\.\d+)*|dylib|dll|pyd))(?::|,|\)|\s)")
_TYPE_MODULE = re.compile(r"^([a-z_][\w]*(?:\.[a-z_]\w*)+)\.[A-Z]\w*$")


@dataclass(frozen=True)
class Explaining:
    """What in the environment's own declarations may explain an import error (empty: nothing does)."""

    damaged: tuple[integrity.FileProblem, ...]  # missing or altered files of what the error names (RECORD)
    unmet: tuple[requires_dist.Unmet, ...]  # every unmet pin whose repair keeps TensorFlow where it is
    named_unmet: tuple[requires_dist.Unmet, ...]  # those of a distribution the error names
    # installed distributions built for another interpreter (WHEEL tags), those the error names first
    foreign: tuple[wheel_tags.ForeignBuild, ...] = ()
    named_foreign: tuple[wheel_tags.ForeignBuild, ...] = ()


def error_texts(error: Optional[Mapping[str, Any]]) -> list[str]:
    """'type: message' of an exception recorded by the child, its causes, and its traceback lines."""
    if not error:
        return []
    texts = [f"{error.get('type')}: {error.get('message')}"]
    texts += [f"{c.get('type')}: {c.get('message')}" for c in error.get("causes") or ()]
    texts += [str(line) for line in error.get("traceback") or ()]
    return texts


def named_modules(error: Optional[Mapping[str, Any]]) -> list[str]:
    """Dotted module names the error names, innermost first: the exception's own module, names in the
    messages, then the files of the traceback (as paths)."""
    if not error:
        return []
    found: list[str] = []
    for kind in [error.get("type")] + [c.get("type") for c in error.get("causes") or ()]:
        match = _TYPE_MODULE.match(str(kind or ""))
        if match:
            found.append(match.group(1))
    for text in error_texts(error)[: 1 + len(error.get("causes") or ())]:
        for pattern in _MESSAGE_MODULES:
            found += pattern.findall(text)
    frames = [m.group(1) for line in error.get("traceback") or () for m in [_FRAME.search(str(line))] if m]
    found += [f"path:{path}" for path in reversed(frames)]
    return list(dict.fromkeys(found))


def named_libraries(error: Optional[Mapping[str, Any]], extra_text: str = "") -> list[str]:
    """Native library file names the error text names (libtensorflow_framework.so.2, ...)."""
    text = "\n".join(error_texts(error)[: 1 + len((error or {}).get("causes") or ())]) + "\n" + extra_text
    return list(dict.fromkeys(_LIBRARY.findall(text + "\n")))


def _distribution_index(facts: Facts) -> tuple[dict[str, list[str]], list[tuple[str, str]]]:
    """top-level module -> canonical names of the distributions installing it; (location, name) pairs."""
    tops: dict[str, list[str]] = {}
    locations: list[tuple[str, str]] = []
    for entry in facts.get("distributions") or ():
        if not isinstance(entry, Mapping) or not entry.get("name"):
            continue
        name = canonical_name(str(entry["name"]))
        names = list(entry.get("top_level") or ()) or [name.replace("-", "_")]
        for top in names:
            tops.setdefault(str(top), []).append(name)
        if entry.get("location"):
            locations.append((str(entry["location"]).rstrip("/\\"), name))
    return tops, locations


def _module_of_path(path: str, locations: Iterable[tuple[str, str]]) -> Optional[str]:
    """'…/site-packages/google/protobuf/descriptor.py' -> 'google.protobuf.descriptor'."""
    normal = path.replace("\\", "/")
    for location, _ in locations:
        base = location.replace("\\", "/") + "/"
        if normal.startswith(base):
            relative = normal[len(base):]
            break
    else:
        marker = next((m for m in ("/site-packages/", "/dist-packages/") if m in normal), None)
        if marker is None:
            return None
        relative = normal.split(marker, 1)[1]
    parts = relative.split("/")
    if parts[-1].startswith("__init__."):
        parts = parts[:-1]
    elif "." in parts[-1]:
        parts[-1] = parts[-1].split(".", 1)[0]
    return ".".join(p for p in parts if p) or None


def distribution_of(module: str, tops: Mapping[str, list[str]]) -> Optional[str]:
    """The installed distribution a dotted module belongs to ('google.protobuf' -> 'protobuf')."""
    parts = module.split(".")
    candidates = tops.get(parts[0]) or []
    if len(candidates) > 1 and len(parts) > 1:  # a namespace such as google: protobuf, googleapis-common-protos
        exact = [c for c in candidates if parts[1].replace("_", "-") in c]
        candidates = exact or candidates
    if candidates:
        return candidates[0]
    guess = canonical_name(parts[0])
    return guess if guess in {n for names in tops.values() for n in names} else None


def named_with_evidence(facts: Facts, error: Optional[Mapping[str, Any]]) -> list[tuple[str, str]]:
    """(installed distribution, what names it: a module name or 'path:<file>') for each distribution the error
    names, innermost first (the one that raised comes first), each once."""
    tops, locations = _distribution_index(facts)
    found: dict[str, str] = {}
    for named in named_modules(error):
        module = _module_of_path(named[5:], locations) or "" if named.startswith("path:") else named
        name = distribution_of(module, tops) if module else None
        if name:
            found.setdefault(name, named)
    return list(found.items())


def named_distributions(facts: Facts, error: Optional[Mapping[str, Any]]) -> list[str]:
    """Installed distributions the error names, innermost first (the one that raised comes first)."""
    return [name for name, _ in named_with_evidence(facts, error)]


def _integrity_problems(facts: Facts, names: list[str], libraries: list[str]) -> list[integrity.FileProblem]:
    found = [p for p in (integrity.problem_for_library(facts, lib) for lib in libraries) if p]
    for name in names:
        found += integrity.problems(facts, name)
    return list(dict.fromkeys(found))


_IMPORT_LINE = re.compile(r"^\s*(?:-*>\s*\d+\s+)?(?:import|from)\s+([A-Za-z_][\w.]*)")
# top-level modules whose distribution is not named like them (only those TensorFlow's own pins name)
_MODULE_DISTRIBUTION = {"google": "protobuf", "absl": "absl-py", "grpc": "grpcio", "pasta": "google-pasta"}


def missing_modules(error: Optional[Mapping[str, Any]]) -> list[str]:
    """The modules a ModuleNotFoundError says are not installed: its message ("No module named 'ml_dtypes'"),
    or, where a pasted traceback lost the message, the import on its innermost line."""
    if not error or ("ModuleNotFound" not in str(error.get("type") or "")
                     and "No module named" not in str(error.get("message") or "")):
        return []
    named = _NO_MODULE.findall(str(error.get("message") or ""))
    if not named and error.get("traceback"):
        last = _IMPORT_LINE.match(str(list(error["traceback"])[-1]))
        named = [last.group(1)] if last else []
    return named


def missing_distributions(error: Optional[Mapping[str, Any]]) -> list[str]:
    """Canonical names of the distributions that provide the missing modules ('ml_dtypes' -> 'ml-dtypes')."""
    names = []
    for module in missing_modules(error):
        top = module.split(".")[0]
        names.append(canonical_name(_MODULE_DISTRIBUTION.get(top, top)))
    return list(dict.fromkeys(names))


def what_explains(facts: Facts, error: Optional[Mapping[str, Any]], extra_text: str = "") -> Explaining:
    """Missing or altered files of a distribution the error names (or of the library it could not open), when
    the integrity collector ran; every unmet pin that keeps TensorFlow where it is, and those of a distribution
    the error names."""
    names = named_distributions(facts, error)
    libraries = named_libraries(error, extra_text)
    damaged = _integrity_problems(facts, names, libraries) if integrity.recorded(facts) else []
    # a module the error says is not installed is missing even from a list that names only some distributions
    absent = missing_distributions(error)
    unmet = [u for u in requires_dist.unmet_requirements(facts, known_missing=absent) if not u.moves_tensorflow]
    named_unmet = [u for u in unmet if u.name in names or u.name in absent
                   or (u.top_level and any(t in names for t in u.top_level))]
    foreign = wheel_tags.foreign_builds(facts)
    named_foreign = [build for build in foreign if build.name in names]
    return Explaining(tuple(damaged), tuple(unmet), tuple(named_unmet), tuple(foreign), tuple(named_foreign))
