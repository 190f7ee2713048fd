"""Missing, altered and shared files repaired (the reader is facts/integrity.py): reinstall exactly what RECORD
says is damaged, as it was, through the installer that put it there; of distributions that install the same
files, uninstall all and install one again; files built for another Python (facts/wheel_tags.py) reinstalled at the
same release for this one. Shared by install-integrity, tensorflow-install and tensorflow-import."""

from __future__ import annotations

from typing import Optional

from tfdoctor.environment import installers
from tfdoctor.facts import Facts, canonical_name, integrity, requires_dist as reqs, tensorflow_distributions
from tfdoctor.facts.integrity import FileProblem
from tfdoctor.facts.platform import wheel_platform
from tfdoctor.facts.wheel_tags import ForeignBuild
from tfdoctor.results.model import Remediation
from tfdoctor.results.repairs import Repair

REINSTALL_URL = "https://pip.pypa.io/en/stable/cli/pip_install/#cmdoption-force-reinstall"
CONDA_REINSTALL_URL = "https://docs.conda.io/projects/conda/en/latest/commands/install.html"


def reinstall_fix(facts: Facts, found: list[FileProblem]) -> Optional[Remediation]:
    """The repair for missing or altered files: reinstall exactly those distributions at their installed
    versions, without touching their dependencies. Shared by install-integrity and tensorflow-import.
    Distributions that share files with another are left out: reinstalling one overwrites the other's
    again (clash_fix keeps one of them)."""
    damaged = [p for p in found if p.distribution not in integrity.clashing(found)]
    requirements = integrity.affected_requirements(damaged)
    if not requirements:
        return None
    # What conda installed, conda reinstalls: pip would lay its files over conda's package and leave
    # conda's record of it wrong. The rest goes through the environment's own installer.
    repairs = installers.reinstall_repairs(facts, requirements, lambda pins: _damage(damaged, pins))
    by_owner = any(repair.manager for repair in repairs)
    names = ", ".join(requirements)
    return Remediation(f"Reinstall {names} as it was (same version, dependencies untouched): the files RECORD "
                       "lists come back.", url=CONDA_REINSTALL_URL if by_owner and len(repairs) == 1 else REINSTALL_URL,
                       repairs=repairs)


def _damage(found: list[FileProblem], requirements: list[str]) -> str:
    """'tensorflow-cpu 2.21.0: tensorflow/libtensorflow_framework.so.2 is missing (RECORD)', per distribution."""
    firsts = {p.requirement: p for p in reversed(found)}
    return "; ".join(f"{r.replace('==', ' ')}: {firsts[r].describe()} (RECORD)" for r in requirements if r in firsts)


def kept_of(facts: Facts, group: set[str], found: list[FileProblem]) -> Optional[str]:
    """'name==version' of the one distribution of a clash to install again: for TensorFlow builds the one
    tensorflow-install keeps (newest, under the name that installs it here); otherwise the one whose
    shared files are intact, the one installed last."""
    versions = {canonical_name(str(e.get("name") or "")): str(e.get("version") or "") or None
                for e in integrity.verified_distributions(facts)}
    members = sorted(group)
    if all(reqs.is_tensorflow_build(name) for name in members):
        return tensorflow_distributions.build_to_keep(wheel_platform(facts),
                                                      [(name, versions.get(name)) for name in members])
    overwritten = {p.distribution for p in found if p.clash}
    winner = next((name for name in members if name not in overwritten and versions.get(name)), None)
    return f"{winner}=={versions[winner]}" if winner else None


def clash_fix(facts: Facts, found: list[FileProblem], advice: str, url: Optional[str] = None) -> Remediation:
    """Distributions that share files: uninstall all of them and install one again (a reinstall of either
    alone brings the clash back)."""
    repairs = []
    for group in integrity.clash_groups(found):
        names = ", ".join(sorted(group))
        kept = kept_of(facts, group, found)
        repairs.append(Repair.uninstall(*sorted(group), reason=f"{names} install the same files: the last one "
                                        "installed overwrote the other's"))
        if kept:
            repairs.append(Repair.install(kept, reason=f"{names} install the same files: only one of them is "
                                          f"installed again, {kept.replace('==', ' ')}"))
    return Remediation(advice, url=url, repairs=tuple(repairs))


def this_python_fix(found: list[ForeignBuild]) -> Optional[Remediation]:
    """Files built for another Python: the same releases reinstalled, `--force-reinstall --no-deps`. The installer
    runs under this environment's Python, so it picks each release's wheel for this interpreter, removes the
    foreign files its RECORD lists and leaves the dependencies as they are (each foreign one is a finding of its
    own, in the same step)."""
    if not found:
        return None
    pins = [build.pin for build in found if build.version]
    if not pins:
        return None
    return Remediation(f"Reinstall {', '.join(p.replace('==', ' ') for p in pins)} for {found[0].runs}: the same "
                       "release, dependencies untouched; the installer of this environment picks the wheel built "
                       "for its Python.", url=REINSTALL_URL,
                       repairs=(Repair.reinstall(*pins, reason="; ".join(build.describe() for build in found)),))
