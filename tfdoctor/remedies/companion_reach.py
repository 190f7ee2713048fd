"""Where a companion of TensorFlow can work at all, from the companion table (knowledge/companions.toml, generated
from every release's wheels and METADATA on PyPI): the advice for a companion that fails where no release of it
has a wheel for this platform (TF-DF on Windows: WSL2) or none made for the installed TensorFlow has one
(tensorflow-text 2.18 on Windows), and, where no release is made for the installed
TensorFlow or the report does not say which TensorFlow that is, the TensorFlow its newest release is made for
(tensorflow-io 0.37.1: >=2.16.0,<2.17.0). Advice only: the checks decide the verdicts (issue 29, round 2).
"""

from __future__ import annotations

from typing import Mapping, Optional

from tfdoctor.facts.companions import environment_platform, releases
from tfdoctor.facts.requires_dist import is_tensorflow_build

WSL_URL = "https://learn.microsoft.com/windows/wsl/install"


def covered_platforms(name: str) -> list[str]:
    """The platforms any release of the companion has a wheel for ('any' for pure-Python wheels); [] unknown."""
    return sorted({platform for release in releases(name) for platform in release.platforms})


def no_wheel_here(name: str, environment: Mapping[str, str]) -> Optional[str]:
    """Advice when no release of the companion has a wheel for this platform, else None (also when unknown)."""
    platform = environment_platform(environment)
    covered = covered_platforms(name)
    if platform is None or not covered or "any" in covered or platform in covered:
        return None
    advice = (f"No release of {name} has a wheel for {platform} (its wheels cover {', '.join(covered)}): it cannot "
              "work on this platform, whatever TensorFlow is installed.")
    if platform.startswith("windows") and any(p.startswith("linux") for p in covered):
        advice += f" On Windows, run it in WSL2 (Linux), where {name} and TensorFlow install ({WSL_URL})."
    return advice


def no_wheel_for_tensorflow_here(name: str, tensorflow_version: str, environment: Mapping[str, str]) -> Optional[str]:
    """Advice when releases of the companion are made for this TensorFlow, but none of them has a wheel for this
    platform (tensorflow-text 2.18 on Windows: its last Windows wheel is 2.10), else None (also when unknown)."""
    platform = environment_platform(environment)
    if platform is None:
        return None
    made = [r for r in releases(name) if r.fits(tensorflow_version, environment, via_extras=True)]
    if not made or any(platform in r.platforms or "any" in r.platforms for r in made):
        return None
    covered = sorted({p for r in made for p in r.platforms})
    advice = (f"The releases of {name} made for TensorFlow {tensorflow_version} ({made[-1].version} to "
              f"{made[0].version}) have no wheel for {platform} (they cover {', '.join(covered)}).")
    if platform.startswith("windows") and any(p.startswith("linux") for p in covered):
        advice += f" On Windows, run TensorFlow and {name} in WSL2 (Linux), where both install ({WSL_URL})."
    return advice


def newest_made_for(name: str) -> Optional[str]:
    """'tensorflow-io 0.37.1, its newest release, is made for TensorFlow >=2.16.0,<2.17.0': what its metadata
    names (outside extras, else in its `tensorflow` extra); None when it names no TensorFlow."""
    rows = releases(name)
    if not rows:
        return None
    newest = rows[0]
    lines = [line for line in newest.requires if line.split(";")[0].strip()]
    plain = [line for line in lines if "extra ==" not in line]
    named = [line for line in plain if is_tensorflow_build(_name_of(line))] or [
        line for line in lines if _name_of(line) == "tensorflow" and "extra ==" in line]
    if not named:
        return None
    specifier = named[0].split(";")[0][len(_name_of(named[0])):].strip().strip("()").replace(" ", "")
    if not specifier:
        return None
    return f"{name} {newest.version}, its newest release, is made for TensorFlow {specifier}"


def _name_of(line: str) -> str:
    head = line.split(";")[0].strip()
    for index, char in enumerate(head):
        if not (char.isalnum() or char in "-_."):
            return head[:index].lower().replace("_", "-")
    return head.lower().replace("_", "-")
