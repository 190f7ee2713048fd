"""Install integrity, read from the `integrity` facts section (pure; no I/O).

The integrity collector (tfdoctor/collect/integrity.py, child tfdoctor/child/integrity.py) verifies the
TensorFlow-family distributions against their RECORD: each listed file exists with its recorded size,
and the native libraries' sha256 within a time budget. It records, per distribution, counts of what was
verified and only the files that are missing or altered. This module answers questions about that
record for the checks: install-integrity reports it; tensorflow-import ties a "cannot open shared
object file" to the file that RECORD says is missing. Their repairs (reinstall as it was; keep one of a
clash) are remedies/integrity.py's.

Section shape (documented in schema/report.schema.json):
  integrity.budget_s, integrity.elapsed_s, integrity.hash_stopped
  integrity.distributions[]: name, version, location, installer, metadata ("dist-info" | "egg-info"),
      record (bool), listed, size_checked, exists_checked, unverifiable, outside,
      native_files, native_bytes, hashed_files, hashed_bytes,
      problems[]: {path, problem ("missing" | "size" | "hash"), expected_size, size, outside, also_in},
      problems_total
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass
from typing import Any, Mapping, Optional

from tfdoctor.facts import Facts, canonical_name

MISSING = "missing"
SIZE = "size"
HASH = "hash"


@dataclass(frozen=True)
class FileProblem:
    """One file of a distribution that is not as its RECORD says."""

    distribution: str  # canonical name, e.g. "tensorflow-cpu"
    version: str
    path: str  # as written in RECORD, relative to the distribution's location
    problem: str  # MISSING | SIZE | HASH
    expected_size: Optional[int] = None
    size: Optional[int] = None
    outside: bool = False  # outside the distribution's location ('../../../bin/x'): scripts, data
    also_in: tuple[str, ...] = ()  # other installed distributions whose RECORD lists the same file
    installer: Optional[str] = None  # the distribution's INSTALLER file: "pip", "uv", "conda", ...

    @property
    def clash(self) -> bool:
        """Two distributions own this file: the last one installed overwrote it (not a damaged install)."""
        return bool(self.also_in)

    @property
    def basename(self) -> str:
        return posixpath.basename(self.path.replace("\\", "/"))

    @property
    def requirement(self) -> str:
        """The exact distribution and version to reinstall: 'tensorflow-cpu==2.21.0'."""
        return f"{self.distribution}=={self.version}"

    def describe(self) -> str:
        if self.problem == MISSING:
            return f"{self.path} is missing"
        if self.problem == SIZE:
            return f"{self.path} has {self.size} bytes, RECORD says {self.expected_size}"
        return f"{self.path} does not match its recorded sha256"


def recorded(facts: Facts) -> bool:
    return isinstance(facts.get("integrity"), Mapping)


def verified_distributions(facts: Facts) -> list[Mapping[str, Any]]:
    """Every distribution entry the collector wrote (with or without a RECORD)."""
    section = facts.get("integrity")
    if not isinstance(section, Mapping):
        return []
    return [d for d in section.get("distributions") or () if isinstance(d, Mapping)]


def problems(facts: Facts, distribution: Optional[str] = None) -> list[FileProblem]:
    """Missing or altered files, of every verified distribution or of one (by any spelling of its name)."""
    wanted = canonical_name(distribution) if distribution else None
    found: list[FileProblem] = []
    for entry in verified_distributions(facts):
        name = canonical_name(str(entry.get("name") or ""))
        if wanted and name != wanted:
            continue
        for item in entry.get("problems") or ():
            found.append(FileProblem(name, str(entry.get("version") or ""), str(item.get("path") or ""),
                                     str(item.get("problem") or MISSING), item.get("expected_size"), item.get("size"),
                                     bool(item.get("outside")), tuple(item.get("also_in") or ()),
                                     str(entry.get("installer") or "").strip() or None))
    return found


def problem_for_library(facts: Facts, library: str) -> Optional[FileProblem]:
    """The recorded problem of a native library named in an error text, matched by its file name
    ('libtensorflow_framework.so.2', or a path ending in it); None when RECORD shows no such problem."""
    wanted = posixpath.basename(library.replace("\\", "/").strip())
    if not wanted:
        return None
    for problem in problems(facts):
        if problem.basename == wanted:
            return problem
    return None


def unverifiable(facts: Facts) -> list[Mapping[str, Any]]:
    """Entries the collector could not verify: no RECORD (egg-info, conda, a hand copy)."""
    return [d for d in verified_distributions(facts) if not d.get("record")]


def clashing(found: list[FileProblem]) -> set[str]:
    """Names of the distributions that share a damaged file with another installed distribution."""
    return {p.distribution for p in found if p.clash} | {canonical_name(n) for p in found for n in p.also_in}


def affected_requirements(found: list[FileProblem]) -> list[str]:
    """One 'name==version' per affected distribution, in first-seen order."""
    seen: list[str] = []
    for problem in found:
        if problem.requirement not in seen:
            seen.append(problem.requirement)
    return seen


def installed_by(facts: Facts, name: str) -> Optional[str]:
    """The distribution's INSTALLER ("pip", "conda", "uv"), as the integrity collector read it."""
    wanted = canonical_name(name)
    for entry in verified_distributions(facts):
        if canonical_name(str(entry.get("name") or "")) == wanted:
            return str(entry.get("installer") or "").strip() or None
    return None


def clash_groups(found: list[FileProblem]) -> list[set[str]]:
    """Distributions that install the same files, each set one clash (tensorflow and tensorflow-cpu)."""
    groups: list[set[str]] = []
    for problem in found:
        if not problem.clash:
            continue
        group = {problem.distribution} | {canonical_name(n) for n in problem.also_in}
        for other in [g for g in groups if g & group]:
            groups.remove(other)
            group |= other
        groups.append(group)
    return groups
