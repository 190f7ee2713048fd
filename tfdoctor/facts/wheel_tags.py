"""What installed wheels declare about the interpreter they were built for (issue 38 item 4): each recorded
distribution's WHEEL `Tag:` lines against the target interpreter's version and ABI. The target collector records
them for the distributions it details that ship an extension module (`distributions[].wheel_tags`); the integrity
child for the TensorFlow family and TensorFlow's own requirements (`installers.wheels`, also in older reports).

A wheel whose every tag names another interpreter or ABI (`cp312-cp312-manylinux_2_27_x86_64` in a Python 3.11
environment) was never installable here by pip: its files came by `pip install --target --python-version`, a copied
site-packages or a renamed wheel, and its extension modules fail at import (`undefined symbol:
_PyObject_ClearManagedDict`). Which (interpreter, ABI) pairs an interpreter accepts is `packaging.tags`' answer,
the one pip itself uses, rather than tag logic written again here. Only the interpreter and ABI are judged: the
platform part (manylinux of another glibc, macOS floors) belongs to the checks that read the platform.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import chain
from typing import Any, Iterable, Mapping, Optional

from packaging import tags as packaging_tags

from tfdoctor.facts import Facts, canonical_name, first_copies, section


@dataclass(frozen=True)
class ForeignBuild:
    """An installed distribution whose WHEEL tags name no interpreter/ABI the target accepts."""

    name: str
    version: str
    tags: tuple[str, ...]
    built_for: str  # 'CPython 3.12'
    runs: str  # 'Python 3.11'
    installer: Optional[str] = None

    @property
    def pin(self) -> str:
        return f"{self.name}=={self.version}"

    def describe(self) -> str:
        """"tensorflow-cpu's files were built for CPython 3.12 (WHEEL tag cp312-cp312-...) but this environment
        runs Python 3.11"."""
        return (f"{self.name}'s files were built for {self.built_for} (WHEEL tag {self.tags[0]}) but this environment "
                f"runs {self.runs}")

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "version": self.version, "tags": list(self.tags), "built_for": self.built_for}


def _version(facts: Facts) -> Optional[tuple[int, int]]:
    parts = str(section(facts, "python").get("version") or "").split(".")
    try:
        return int(parts[0]), int(parts[1])
    except (IndexError, ValueError):
        return None


def accepted(facts: Facts) -> Optional[frozenset[tuple[str, str]]]:
    """The (interpreter, ABI) pairs the target CPython installs wheels for, as packaging.tags lists them for that
    version and ABI (its own cpNN, abi3 of older versions, none; pyNN); None where the report does not say which
    CPython (another implementation, or no version recorded: nothing is judged). A report from before `abiflags`
    was recorded is taken as the default build's ('')."""
    python = section(facts, "python")
    version = _version(facts)
    implementation = str(python.get("implementation") or "CPython")
    if version is None or implementation != "CPython":
        return None
    interpreter = f"cp{version[0]}{version[1]}"
    abi = interpreter + str(python.get("abiflags") or "")
    found = chain(packaging_tags.cpython_tags(version, abis=[abi], platforms=["any"]),
                  packaging_tags.compatible_tags(version, interpreter, platforms=["any"]))
    return frozenset((tag.interpreter, tag.abi) for tag in found)


def _parsed(lines: Iterable[Any]) -> list[packaging_tags.Tag]:
    parsed: list[packaging_tags.Tag] = []
    for line in lines:
        text = str(line).strip()
        if text.count("-") != 2:  # a malformed line (a hand-written report) names nothing
            continue
        parsed.extend(packaging_tags.parse_tag(text))
    return parsed


def built_for(parsed: Iterable[packaging_tags.Tag]) -> str:
    """'CPython 3.12' from cp312 tags ('free-threaded CPython 3.13' for cp313t); the tags themselves otherwise."""
    names = []
    for tag in parsed:
        if tag.interpreter.startswith("cp") and tag.interpreter[2:].isdigit() and len(tag.interpreter) > 3:
            digits = tag.interpreter[2:]
            name = f"CPython {digits[0]}.{digits[1:]}"
            if tag.abi.endswith("t") and tag.abi.startswith("cp"):
                name = "free-threaded " + name
            elif tag.abi.endswith("d") and tag.abi.startswith("cp"):
                name = "a debug " + name
            names.append(name)
        else:
            names.append(f"{tag.interpreter}-{tag.abi}")
    return " or ".join(dict.fromkeys(names)) or "another interpreter"


def runs(facts: Facts) -> str:
    python = section(facts, "python")
    version = ".".join(map(str, _version(facts) or ()))
    flags = str(python.get("abiflags") or "")
    kind = " (free-threaded)" if "t" in flags else " (debug build)" if "d" in flags else ""
    return f"Python {version}{kind}"


def foreign_builds(facts: Facts) -> list[ForeignBuild]:
    """Every recorded distribution whose WHEEL tags all name another interpreter or ABI than the target's, first
    copy on sys.path of each name (the one imported). Distributions conda installed are left out: conda's own
    builds are made for the environment's Python whatever a WHEEL in them says."""
    pairs = accepted(facts)
    if pairs is None:
        return []
    # the integrity child has recorded the TensorFlow family's tags since schema 1.0 (installers.wheels): a report
    # from before distributions[].wheel_tags is judged on those
    wheels = {(canonical_name(str(w.get("name") or "")), str(w.get("version") or "")): w.get("tags")
              for w in section(facts, "installers").get("wheels") or () if isinstance(w, Mapping)}
    found: list[ForeignBuild] = []
    for name, entry in first_copies(facts).items():
        lines = entry.get("wheel_tags")
        if "wheel_tags" not in entry:
            lines = wheels.get((name, str(entry.get("version") or "")))
        if not isinstance(lines, (list, tuple)) or not lines:
            continue
        installer = str(entry.get("installer") or "").strip() or None
        parsed = _parsed(lines)
        if not parsed or installer == "conda" or any((t.interpreter, t.abi) in pairs for t in parsed):
            continue
        found.append(ForeignBuild(name, str(entry.get("version") or ""), tuple(map(str, lines)), built_for(parsed),
                                  runs(facts), installer))
    return found
