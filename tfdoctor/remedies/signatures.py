"""The fix a failure signature names (knowledge/signatures.toml, matched by facts/signatures.py), for the
installed TensorFlow: its steps' {placeholders} filled from the facts, installs, uninstalls and exact
reinstalls as repair intents, a fresh environment as the user's commands. Shared by the tensorflow-import,
keras, gpu-visible and probe checks."""

from __future__ import annotations

import re
from typing import Iterable, Mapping

from tfdoctor.environment import installers
from tfdoctor.environment.spell import fresh_environment, spelling_for
from tfdoctor.facts import Facts, section, signatures
from tfdoctor.facts.tensorflow_distributions import real_builds, tensorflow_version
from tfdoctor.knowledge import rows as knowledge_rows
from tfdoctor.knowledge.versions import in_range
from tfdoctor.results.model import Remediation
from tfdoctor.results.repairs import Repair


def _step_applies(step: signatures.FixStep, tf_version: str | None) -> bool:
    if step.when_tensorflow_below or step.when_tensorflow_at_least:
        if not tf_version:
            return False
        return in_range(tf_version, step.when_tensorflow_at_least, step.when_tensorflow_below)
    return True


def placeholders(facts: Facts, groups: Mapping[str, str] | None = None) -> dict[str, str]:
    """Values for the {names} in fix steps: the installed TensorFlow's version and distribution, and the
    named groups of the matched error text ({gencode} and, for a version, {gencode_next_major})."""
    installed = tensorflow_version(facts) or str(section(facts, "tensorflow").get("version") or "")
    values = {"tensorflow_version": installed,
              "tensorflow_distribution": next((copy.name for copy in real_builds(facts)), "tensorflow"),
              "cuda_tensorflow_version": _finds_its_cuda_libraries(installed)}
    for key, value in (groups or {}).items():
        values[key] = value
        major = re.match(r"(\d+)\.\d+", value)
        if major:
            values[f"{key}_next_major"] = str(int(major.group(1)) + 1)
    return values


def _finds_its_cuda_libraries(version: str) -> str:
    """The release to install for TensorFlow's pip CUDA libraries: the installed one, unless a known trap
    says that release cannot find them (2.16.1: its RUNPATH misses them; linux.toml [[traps]])."""
    for trap in knowledge_rows("linux", "traps"):
        if trap["id"].endswith("pip-cuda-not-found") and version in trap.get("tf_versions", ()) and trap.get("fixed_in"):
            return str(trap["fixed_in"])
    return version


def _fill(name: str, values: Mapping[str, str]) -> str | None:
    """The name with its {placeholders} filled; None when one has no value (the step cannot apply)."""
    try:
        filled = name.format_map(values)
    except (KeyError, ValueError, IndexError):
        return None
    return filled if "==" not in filled or not filled.endswith("==") else None


def repairs_for(steps: Iterable[signatures.FixStep], facts: Facts, reason: str,
                groups: Mapping[str, str] | None = None) -> tuple[tuple[Repair, ...], tuple[str, ...]]:
    """(repairs, manual commands) for these fix steps, for the installed TensorFlow: installs, uninstalls and
    exact reinstalls become repair intents the plan carries out; a fresh environment is the user's to make
    (the steps after it belong to that new environment, which the signature's advice says in words)."""
    values = placeholders(facts, groups)
    tf_version = values["tensorflow_version"] or None
    repairs: list[Repair] = []
    for step in steps:
        if not _step_applies(step, tf_version) or (step.otherwise and repairs):
            continue
        filled = [_fill(n, values) for n in step.names]
        if any(n is None for n in filled):
            continue
        names = [n for n in filled if n is not None]
        if step.action == "fresh_environment":
            return tuple(repairs), fresh_environment(spelling_for(facts))
        if step.action == "install":
            repairs.append(Repair.install(*names, reason=reason))
        elif step.action == "uninstall":
            repairs.append(Repair.uninstall(*names, reason=reason))
        elif step.action == "reinstall":
            repairs += installers.reinstall_repairs(facts, names, reason)
    return tuple(repairs), ()


def remediation_for(match: signatures.Match, facts: Facts) -> Remediation:
    signature = match.signature
    repairs, manual = repairs_for(signature.fix, facts, signature.summary, match.groups)
    return Remediation(signature.advice, manual, signature.url, repairs)
