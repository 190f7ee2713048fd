"""Exact commands for the installer the user actually has: pip in a venv, conda/mamba, uv, system.

Hints name commands for the *target* interpreter (`<python> -m pip ...`), so a user with several
Pythons runs the fix where the problem is. Paths are redacted with the rest of the report.

An installer also knows what it can carry out: a pip too old for the wheel tags the environment needs
(manylinux_2_27 needs pip 20.3), or no pip at all, makes every install command it builds bring pip up
first, so no check prints an install command that this environment cannot run.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Optional

from packaging.version import InvalidVersion, Version

from tfdoctor.facts import Facts, host_system, section

MANAGED_VENV = "~/.venvs/tf"

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
    from tfdoctor.facts import releases, tensorflow_distributions  # knowledge tables: loaded when asked

    platform = tensorflow_distributions.platform_key(facts)
    rows = TENSORFLOW_WHEEL_TAGS.get(platform or "")
    python = section(facts, "python").get("version")
    glibc = section(facts, "os").get("glibc") if host_system(facts) == "Linux" else None
    newest = releases.newest_tensorflow(platform, str(python), glibc) if rows and python else None
    if not newest:
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
    kind: str  # "uv" | "conda" | "venv" | "system" | "managed" (PEP 668: pip refuses to install)
    python: str  # the target interpreter, as recorded
    windows: bool = False
    # What pip can carry out (from installer_for; the defaults build plain commands): the target's pip
    # is older than `upgrade_pip_to`, or there is no pip module at all.
    upgrade_pip_to: Optional[str] = None
    pip_missing: bool = False

    @property
    def uses_pip(self) -> bool:
        """Install commands run the target's own pip (uv brings its own resolver and installer)."""
        return self.kind in ("conda", "venv", "system")

    def prepare_pip(self) -> Optional[str]:
        """The command that makes the target's pip able to run this installer's install commands."""
        if not self.uses_pip:
            return None
        upgrade = f"{self._python()} -m pip install --upgrade pip"
        if self.pip_missing:
            return f"{self._python()} -m ensurepip --upgrade && {upgrade}"
        return upgrade if self.upgrade_pip_to else None

    def _prepared(self, command: str) -> str:
        first = self.prepare_pip()
        return f"{first} && {command}" if first else command

    def _quote(self, requirement: str) -> str:
        if not any(ch in requirement for ch in "<>=!~*[; "):
            return requirement
        return f'"{requirement}"' if self.windows else f"'{requirement}'"

    def _python(self) -> str:
        return self._quote_path(self.python)

    def install(self, *requirements: str) -> str:
        reqs = " ".join(self._quote(r) for r in requirements)
        if self.kind == "uv":
            return f"uv pip install --python {self._python()} {reqs}"
        if self.kind == "managed":
            # Homebrew's and Debian's Pythons are externally managed: pip refuses to install into
            # them ("externally-managed-environment"), so the working command is a venv of their own.
            return f"{self._python()} -m venv {MANAGED_VENV} && {MANAGED_VENV}/bin/python -m pip install {reqs}"
        return self._prepared(f"{self._python()} -m pip install {reqs}")

    def uninstall(self, *names: str) -> str:
        if self.kind == "uv":
            return f"uv pip uninstall --python {self._python()} {' '.join(names)}"
        if self.kind == "managed":
            # only reachable for packages forced in with the same flag; pip refuses otherwise
            return f"{self._python()} -m pip uninstall --break-system-packages -y {' '.join(names)}"
        uninstall = f"{self._python()} -m pip uninstall -y {' '.join(names)}"
        # any pip uninstalls; only a missing one must come first
        return f"{self._python()} -m ensurepip --upgrade && {uninstall}" if self.pip_missing and self.uses_pip else uninstall

    def reinstall(self, *requirements: str) -> str:
        """Force a clean reinstall (after two packages wrote the same files)."""
        reqs = " ".join(self._quote(r) for r in requirements)
        if self.kind == "uv":
            return f"uv pip install --python {self._python()} --reinstall {reqs}"
        if self.kind == "managed":
            return self.install(*requirements)
        return self._prepared(f"{self._python()} -m pip install --force-reinstall --no-deps {reqs}")

    def conda_reinstall(self, prefix: Optional[str], *requirements: str) -> str:
        """Force conda to lay down its own packages again ('name==version' becomes conda's 'name=version'),
        dependencies untouched; into the target's prefix when it is known."""
        specs = " ".join(self._quote(r.replace("==", "=", 1)) for r in requirements)
        where = f"-p {self._quote_path(prefix)} " if prefix else ""
        return f"conda install {where}--force-reinstall --no-deps -y {specs}"

    def _quote_path(self, path: str) -> str:
        return f'"{path}"' if " " in path else path

    @property
    def label(self) -> str:
        return {
            "uv": "uv-managed environment",
            "conda": "conda environment",
            "venv": "virtual environment",
            "system": "system Python",
            "managed": "externally managed system Python (Homebrew, Debian)",
        }[self.kind]

    def fresh_environment(self, python_version: str = "3.12") -> tuple[str, ...]:
        """Commands that create a clean environment of the same kind and activate it."""
        if self.kind == "conda":
            return (
                f"conda create -n tf python={python_version} -y",
                "conda activate tf",
            )
        if self.kind == "uv":
            return (f"uv venv --python {python_version} ~/.venvs/tf", "source ~/.venvs/tf/bin/activate")
        if self.windows:
            return (f"py -{python_version} -m venv %USERPROFILE%\\tf-venv", "%USERPROFILE%\\tf-venv\\Scripts\\activate")
        return (f"python{python_version} -m venv ~/.venvs/tf", "source ~/.venvs/tf/bin/activate")


def installer_for(facts: Facts) -> Installer:
    python = section(facts, "python")
    executable = str(python.get("executable") or "python3")
    windows = host_system(facts) == "Windows"
    if python.get("uv_version"):
        kind = "uv"
    elif python.get("conda"):
        kind = "conda"
    elif python.get("in_venv"):
        kind = "venv"
    elif python.get("externally_managed"):
        kind = "managed"
    else:
        kind = "system"
    too_old = pip_too_old(facts)
    missing = pip_recorded(facts) and pip_version(facts) is None
    return Installer(kind, executable, windows, upgrade_pip_to=too_old.pip if too_old else None, pip_missing=missing)
