"""Are the TensorFlow-family files on disk what their RECORD says was installed?

A deleted or truncated file inside site-packages/tensorflow (a disk cleaner, an interrupted copy, two
distributions writing the same directory, a hand edit) breaks `import tensorflow` with an error that
names the symptom, not the cause. RECORD, written by the installer, lists every file with its size and
sha256: the integrity child checks every listed file's size and the native libraries' sha256 within a
time budget (tfdoctor/child/integrity.py), and records only the files that differ.

Verdicts: fail for a missing or altered file inside a distribution (the repair reinstalls exactly that
distribution at its version, dependencies untouched); warn when only files outside site-packages (the
console scripts in bin/) are missing; pass otherwise, saying what was verified and what was not
(hashing stopped by the budget, egg-info and conda installs without RECORD: "cannot verify").
"""

from __future__ import annotations

from typing import Any, Mapping

from tfdoctor.checking.registry import Facts, check
from tfdoctor.environment import installers
from tfdoctor.facts import integrity
from tfdoctor.remedies.integrity import clash_fix, reinstall_fix
from tfdoctor.results.findings import Findings
from tfdoctor.results.model import Outcome

TENSORFLOW_PREFIXES = ("tensorflow", "tf-nightly", "intel-tensorflow")
CLASH_URL = "https://github.com/openvinotoolkit/openvino_notebooks/pull/2793"
SHOWN = 4  # files named per distribution in the details; the rest are counted


def _mib(value: Any) -> str:
    return f"{(value or 0) / 1024 ** 2:.0f} MiB"


def _why_unverifiable(entry: Mapping[str, Any]) -> str:
    if entry.get("metadata") == "egg-info":
        return "an egg-info install (no RECORD)"
    owner = installers.recorded_by(entry.get("installer"))
    if owner is not None:
        return f"installed by {owner.records} (no RECORD)"
    return "no RECORD"


def _coverage(entries: list[Mapping[str, Any]], section: Mapping[str, Any]) -> str:
    files = sum(int(e.get("size_checked") or 0) + int(e.get("exists_checked") or 0) for e in entries)
    native = sum(int(e.get("native_files") or 0) for e in entries)
    hashed = sum(int(e.get("hashed_files") or 0) for e in entries)
    native_bytes = sum(int(e.get("native_bytes") or 0) for e in entries)
    hashed_bytes = sum(int(e.get("hashed_bytes") or 0) for e in entries)
    text = (f"{files} files of {len(entries)} distributions checked against RECORD; sha256 of {hashed} of "
            f"{native} native libraries ({_mib(hashed_bytes)} of {_mib(native_bytes)})")
    if section.get("hash_stopped"):
        text += f", the {section.get('budget_s')} s hashing budget stopped the rest (sizes still checked)"
    return text


def _by_distribution(found: list[integrity.FileProblem]) -> dict[str, list[integrity.FileProblem]]:
    grouped: dict[str, list[integrity.FileProblem]] = {}
    for problem in found:
        grouped.setdefault(problem.requirement, []).append(problem)
    return grouped


def _totals(facts: Facts) -> dict[str, int]:
    return {f"{e.get('name')}=={e.get('version')}": int(e.get("problems_total") or 0)
            for e in integrity.verified_distributions(facts)}


@check(
    "install-integrity",
    "Installed files match RECORD",
    needs=("integrity",),
    uses=("python",),
    tags=("install",),
    doc_url="https://packaging.python.org/en/latest/specifications/recording-installed-packages/",
)
def install_integrity(facts: Facts) -> Outcome:
    """TensorFlow's files on disk match their RECORD (sizes, library hashes)

    the TensorFlow-family files on disk against their RECORD (the installer's own list): every file's size, sha256
    of the native libraries within a time budget; a missing or altered file fails with a reinstall of exactly that
    distribution and version (`--force-reinstall --no-deps`); files two distributions install are named as a clash,
    repaired by uninstalling both and installing one (for TensorFlow builds the one tensorflow-install keeps; never
    a reinstall that would bring it back); egg-info and conda installs without RECORD: "cannot verify"
    """
    section = facts.get("integrity") or {}
    entries = integrity.verified_distributions(facts)
    if not entries:
        return Outcome.skip("no TensorFlow-family distribution installed to verify")
    verified = [e for e in entries if e.get("record")]
    unverifiable = integrity.unverifiable(facts)
    found = integrity.problems(facts)
    totals = _totals(facts)
    findings = Findings()
    sharing = integrity.clashing(found)
    clashes = [p for p in found if p.distribution in sharing]  # the clash explains all their damage
    inside = [p for p in found if not p.outside and p.distribution not in sharing]
    outside = [p for p in found if p.outside and p.distribution not in sharing]
    for requirement, items in _by_distribution(inside).items():
        count = totals.get(requirement) or len(items)
        named = [p.describe() for p in items[:SHOWN]]
        more = count - len(named)
        findings.fail(f"{requirement.replace('==', ' ')}: {count} installed file{'s' if count != 1 else ''} "
                      f"missing or altered ({items[0].describe()})",
                      *[f"{requirement}: {line}" for line in named[1:]],
                      *([f"{requirement}: {more} more not named"] if more > 0 else []),
                      fix=reinstall_fix(facts, inside))
    if outside:
        findings.warn(f"{len(outside)} installed script or data file{'s' if len(outside) != 1 else ''} outside "
                      f"site-packages missing ({outside[0].describe()})",
                      *[f"{p.requirement}: {p.describe()}" for p in outside[1:SHOWN]],
                      fix=reinstall_fix(facts, outside))
    if clashes:
        shared = [p for p in clashes if p.clash]
        findings.fail(f"{', '.join(sorted(sharing))} install the same files: the last one installed overwrote the "
                      f"other's ({shared[0].requirement.replace('==', ' ')}: {shared[0].describe()})",
                      *[f"{p.requirement}: {p.describe()}" + (f", also installed by {', '.join(p.also_in)}" if p.clash else "")
                        for p in clashes[:SHOWN]],
                      fix=clash_fix(facts, clashes, "Keep one of these distributions: uninstall both and "
                                              "install one again (for TensorFlow builds the one tensorflow-install "
                                              "keeps). Reinstalling either one alone brings the clash back.",
                                              CLASH_URL))
    for entry in unverifiable:
        findings.note(f"cannot verify {entry.get('name')} {entry.get('version')}: {_why_unverifiable(entry)}")
    coverage = _coverage(verified, section)
    tensorflow_unverifiable = [e for e in unverifiable if str(e.get("name") or "").startswith(TENSORFLOW_PREFIXES)]
    summary = (f"cannot verify {tensorflow_unverifiable[0].get('name')} ({_why_unverifiable(tensorflow_unverifiable[0])}); "
               f"the other files match RECORD" if tensorflow_unverifiable else "installed files match RECORD")
    evidence = {"distributions": len(entries), "unverifiable": [e.get("name") for e in unverifiable],
                "hash_stopped": bool(section.get("hash_stopped")),
                "files": [{"distribution": p.requirement, "path": p.path, "problem": p.problem} for p in found[:10]]}
    outcome = findings.outcome(summary, coverage, **evidence)
    if outcome.status.is_problem:
        return Outcome(outcome.status, outcome.summary, (*outcome.details, coverage), outcome.remediation,
                       outcome.evidence)
    return outcome
