"""An import that fails while no rule and no declaration explains it (issue 29): the distributions the error
names, suspected as an expert suspects them, each with the change that would test it. Pure functions of the
facts, so a saved report (a thread's pasted traceback and `pip list`) names them as a live run does.

The error names distributions three ways, strongest first: the exception's own module
(`google.protobuf.message.DecodeError`), a module its message names ("cannot import name 'TypeIs' from
'typing_extensions'"), and the files of its failing frames, innermost first (facts/import_causes.py maps each
to the installed distribution: RECORD's top-level names when recorded, else the path under site-packages).
TensorFlow's own builds are not suspects: they are what the user keeps. Each suspect's candidate repair is the
release TensorFlow's CI tested when that table has it, else a release newer than the installed one inside every
recorded requirer's specifier; `tfdoctor --prove` and `tfdoctor fix` try them on a clone (fixer/trials.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Optional

from tfdoctor.facts import Facts, canonical_name, import_causes, requires_dist, tested_locks


@dataclass(frozen=True)
class ImportSuspect:
    name: str
    version: str
    named_by: str  # the module name, or 'path:<file>' of a failing frame
    pins: tuple[tuple[str, Optional[str], str], ...]  # (requirer, its version, specifier) naming it
    requirement: str  # the candidate repair
    tested: Optional[str] = None  # the release TensorFlow's CI tested, when the table has it

    def how(self) -> str:
        if self.named_by.startswith("path:"):
            return f"a failing frame is its file {self.named_by[5:]}"
        return f"the error names its module '{self.named_by}'"

    def describe(self) -> str:
        pins = ("inside " + ", ".join(f"{who} {version}'s {self.name}{spec}" if version else f"{who}'s {self.name}{spec}"
                                      for who, version, spec in self.pins)) if self.pins else "no recorded pin names it"
        tested = f"; TensorFlow's CI tested {self.tested}" if self.tested else ""
        return f"{self.name} {self.version} ({self.how()}; {pins}{tested})"

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "version": self.version, "how": self.how(), "requirement": self.requirement}


def suspects(facts: Facts, error: Optional[Mapping[str, Any]],
             lock_rows: Optional[Iterable[Mapping[str, Any]]] = None) -> list[ImportSuspect]:
    """The installed distributions outside TensorFlow's builds that the error names, strongest first."""
    versions: dict[str, str] = {}
    for entry in facts.get("distributions") or ():
        if isinstance(entry, Mapping) and entry.get("name") and entry.get("version"):
            versions.setdefault(canonical_name(str(entry["name"])), str(entry["version"]))
    behind = {b.name: b for b in tested_locks.behind_ci(facts, lock_rows)}
    found = []
    for name, named_by in import_causes.named_with_evidence(facts, error):
        installed = versions.get(name)
        if not installed or requires_dist.is_tensorflow_build(name) or name == "tfdoctor":
            continue
        pins = tuple(requires_dist.declared_pins(facts, name))
        requirement, tested = candidate(name, installed, pins, behind)
        found.append(ImportSuspect(name, installed, named_by, pins, requirement, tested))
    return found


def candidate(name: str, installed: str, pins: Iterable[tuple[str, Optional[str], str]],
              behind: Mapping[str, tested_locks.BehindCi]) -> tuple[str, Optional[str]]:
    """(requirement, tested release) to try for a suspect: the release TensorFlow's CI tested, else one newer
    than the installed release inside every recorded requirer's specifier."""
    if name in behind:
        return f"{name}=={behind[name].tested}", behind[name].tested
    clauses = ([f">{installed}"] if requires_dist.version_of(installed) else []) + [spec for _, _, spec in pins if spec]
    return name + ",".join(dict.fromkeys(clauses)), None


def own_files_failing(facts: Facts, error: Optional[Mapping[str, Any]]) -> list[ImportSuspect]:
    """The TensorFlow builds whose own files the error names (a failing frame in tensorflow/python/..., its
    _pywrap_ module), each with itself at the installed release as the candidate: reinstalled as it was. What
    `suspects` leaves out (the user keeps TensorFlow), tried when nothing else is named."""
    versions: dict[str, str] = {}
    for entry in facts.get("distributions") or ():
        if isinstance(entry, Mapping) and entry.get("name") and entry.get("version"):
            versions.setdefault(canonical_name(str(entry["name"])), str(entry["version"]))
    return [ImportSuspect(name, versions[name], named_by, (), f"{name}=={versions[name]}")
            for name, named_by in import_causes.named_with_evidence(facts, error)
            if requires_dist.is_tensorflow_build(name) and requires_dist.version_of(versions.get(name) or "")]
