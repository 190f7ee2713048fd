"""What the target's pip can carry out, and the installer the target has (tfdoctor/environment/installers/).

A pip too old for the wheel tags the environment needs (manylinux_2_27 needs pip 20.3), or no pip at all,
makes the plan bring pip up before its pip steps, so no plan holds a command this environment cannot run.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Optional

from packaging.version import InvalidVersion, Version

from tfdoctor.environment import installers
from tfdoctor.facts import Facts, host_system, section
from tfdoctor.facts.platform import wheel_platform

PIP_20_3_URL = "https://pip.pypa.io/en/stable/news/#v20-3"


@dataclass(frozen=True)
class TagRule:
    """Wheels with a platform tag matching `pattern` install only with pip `pip` or newer."""

    pattern: str
    pip: str
    what: str
    url: str

    def matches(self, tag: str) -> bool:
        return re.search(self.pattern, tag) is not None


# The first pip that installs each kind of platform tag, from the pip changelog and the PEPs that
# define the tags (each PEP names the pip release that implements it).
TAG_RULES = (
    TagRule(r"manylinux_\d+_\d+_", "20.3", "PEP 600 manylinux_x_y tags", PIP_20_3_URL),
    TagRule(r"macosx_(1[1-9]|[2-9]\d)_\d+_", "20.3", "macOS 11+ (Big Sur) tags", PIP_20_3_URL),
    TagRule(r"manylinux2014_", "19.3", "manylinux2014 tags (PEP 599)", "https://peps.python.org/pep-0599/"),
    TagRule(r"manylinux2010_", "19.0", "manylinux2010 tags (PEP 571)", "https://peps.python.org/pep-0571/"),
    TagRule(r"manylinux1_", "8.1", "manylinux1 tags (PEP 513)", "https://peps.python.org/pep-0513/"),
)
# pip 9 is the first to honour a wheel's Requires-Python; older pips install releases the Python cannot run.
REQUIRES_PYTHON_RULE = TagRule(r"$^", "9.0", "Requires-Python metadata", "https://pip.pypa.io/en/stable/news/#v9-0-0")

# The platform tag of TensorFlow's wheels by release, per platform (curated: the metadata of a wheel that
# is not installed is not in the environment). From PyPI's file lists; the 2.21.0 tags also checked with
# pip's own resolver (`pip install --dry-run --platform ... tensorflow==2.21.0`). First row that applies wins.
TENSORFLOW_WHEEL_TAGS = {
    "linux-x86_64": (("2.21", "manylinux_2_27_x86_64", "https://pypi.org/project/tensorflow/2.21.0/#files"),
                     ("2.9", "manylinux2014_x86_64", "https://pypi.org/project/tensorflow/2.20.0/#files"),
                     ("0", "manylinux2010_x86_64", "https://pypi.org/project/tensorflow/2.8.4/#files")),
    "linux-aarch64": (("2.21", "manylinux_2_27_aarch64", "https://pypi.org/project/tensorflow/2.21.0/#files"),
                      ("0", "manylinux2014_aarch64", "https://pypi.org/project/tensorflow/2.20.0/#files")),
    "macos-arm64": (("0", "macosx_12_0_arm64", "https://pypi.org/project/tensorflow/2.21.0/#files"),),
}


def newest_tensorflow_wheel(facts: Facts) -> Optional[tuple[str, str, str]]:
    """(version, platform tag, source) of the newest TensorFlow wheel for the target's platform, Python
    and glibc: what `pip install tensorflow` reaches for (the release platform-support names: both read
    facts/releases.py's newest_tensorflow). None where no tag needs a recent pip."""
    from tfdoctor.facts import releases  # knowledge tables: loaded when asked

    platform = wheel_platform(facts)
    rows = TENSORFLOW_WHEEL_TAGS.get(platform or "")
    python = section(facts, "python").get("version")
    glibc = section(facts, "os").get("glibc") if host_system(facts) == "Linux" else None
    newest = releases.newest_tensorflow(platform, str(python), glibc) if platform and rows and python else None
    if not newest or not rows:
        return None
    version = newest["newest"]
    row = next((r for r in rows if Version(version) >= Version(r[0])), None)
    return (version, row[1], row[2]) if row else None


@dataclass(frozen=True)
class PipNeed:
    """The pip release a distribution's wheel needs, and why."""

    pip: str
    distribution: str  # "tensorflow-cpu 2.21.0", or "tensorflow 2.21.0 (not installed)"
    reason: str  # "cp311-cp311-manylinux_2_27_x86_64: PEP 600 manylinux_x_y tags"
    url: str
    installed: bool


def _version(text: Any) -> Optional[Version]:
    try:
        return Version(str(text))
    except (InvalidVersion, TypeError):
        return None


def wheel_need(name: str, version: str, tags: Iterable[str], requires_python: Optional[str],
               installed: bool = True) -> Optional[PipNeed]:
    """The oldest pip that installs this wheel: a wheel installs when pip knows *any* of its tags."""
    label = f"{name} {version}" + ("" if installed else " (not installed)")
    per_tag: list[PipNeed] = []
    for tag in tags:
        rule = next((r for r in TAG_RULES if r.matches(tag)), None)
        per_tag.append(PipNeed(rule.pip, label, f"{tag}: {rule.what}", rule.url, installed) if rule
                       else PipNeed("0", label, tag, "", installed))
    need = min(per_tag, key=lambda n: Version(n.pip)) if per_tag else None
    if requires_python and (need is None or Version(need.pip) < Version(REQUIRES_PYTHON_RULE.pip)):
        need = PipNeed(REQUIRES_PYTHON_RULE.pip, label, f"Requires-Python {requires_python}: "
                       f"{REQUIRES_PYTHON_RULE.what}", REQUIRES_PYTHON_RULE.url, installed)
    return need if need and need.pip != "0" else None


def pip_needs(facts: Facts) -> list[PipNeed]:
    """What the environment needs of pip, newest need first: the wheel tags and Requires-Python of the
    installed TensorFlow-family wheels (their own WHEEL and METADATA), then the newest TensorFlow
    wheel for this platform (curated; `pip install tensorflow` reaches for it)."""
    wheels = [w for w in section(facts, "installers").get("wheels") or () if isinstance(w, Mapping)]
    needs = [need for w in wheels
             if (need := wheel_need(str(w.get("name") or ""), str(w.get("version") or ""), w.get("tags") or (),
                                    w.get("requires_python")))]
    newest = newest_tensorflow_wheel(facts)
    if newest:
        version, tag, _source = newest  # the fix cites the pip rule; the table row cites PyPI
        need = wheel_need("tensorflow", version, (tag,), None, installed=False)
        if need:
            needs.append(PipNeed(need.pip, f"the newest tensorflow ({version})", need.reason, need.url, False))
    # newest need first; among equals TensorFlow's own, the one a user recognises
    return sorted(needs, key=lambda n: (Version(n.pip), n.distribution.startswith(("tensorflow", "the newest"))),
                  reverse=True)


def pip_version(facts: Facts) -> Optional[str]:
    """The pip `python -m pip` runs in the target, as its metadata says; None when not recorded."""
    value = section(facts, "installers").get("pip")
    return str(value) if value else None


def pip_recorded(facts: Facts) -> bool:
    return "pip" in section(facts, "installers")


def pip_too_old(facts: Facts) -> Optional[PipNeed]:
    """The newest need this target's pip does not meet (None: new enough, or nothing recorded)."""
    have = _version(pip_version(facts))
    if have is None:
        return None
    return next((need for need in pip_needs(facts) if have < Version(need.pip)), None)


@dataclass(frozen=True)
class Installer:
    """The target's installer and what its pip can carry out. It spells nothing: the commands are
    tfdoctor/environment/spell.py's."""

    kind: str  # the registered installer's report value (tfdoctor/environment/installers/)
    python: str  # the target interpreter, as recorded
    windows: bool = False
    # What pip can carry out (from installer_for; the defaults build plain commands): the target's pip
    # is older than `upgrade_pip_to`, or there is no pip module at all.
    upgrade_pip_to: Optional[str] = None
    pip_missing: bool = False

    @property
    def installer(self) -> installers.Installer:
        return installers.named(self.kind)

    @property
    def uses_pip(self) -> bool:
        return self.installer.uses_pip

    @property
    def label(self) -> str:
        return self.installer.label


def installer_for(facts: Facts) -> Installer:
    python = section(facts, "python")
    executable = str(python.get("executable") or "python3")
    windows = host_system(facts) == "Windows"
    too_old = pip_too_old(facts)
    missing = pip_recorded(facts) and pip_version(facts) is None
    return Installer(installers.detect(python).kind, executable, windows, upgrade_pip_to=too_old.pip if too_old else None,
                     pip_missing=missing)
