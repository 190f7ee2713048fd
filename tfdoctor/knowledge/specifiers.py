"""PEP 440 specifier matching for the pins in the knowledge data ('>=1.26.0,<2.1.0'): `packaging`'s.

An installed pre-release satisfies a range the way pip's resolver accepts an installed one
(`prereleases=True`): a tf-nightly or an rc is judged by its version, not excluded for being one.
"""

from __future__ import annotations

import functools
import re
from typing import Any, Optional

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import InvalidSpecifier, Specifier, SpecifierSet
from packaging.version import InvalidVersion, Version


def satisfies(version: Optional[str], spec: str) -> Optional[bool]:
    """True/False; None when the version or the spec cannot be read (never guess)."""
    if not version:
        return None
    try:
        parsed = Version(str(version))
        specifier = SpecifierSet(spec)
    except (InvalidVersion, InvalidSpecifier):
        return None
    if not len(specifier) or any(_unreadable(clause.operator, clause.version) for clause in specifier):
        return None
    return specifier.contains(parsed, prereleases=True)


def _unreadable(operator: str, bound: str) -> bool:
    """`===` compares strings: a bound that is no version ('===weird') says nothing about releases."""
    if operator != "===":
        return False
    try:
        Version(bound)
    except InvalidVersion:
        return True
    return False


def _bounds(clause: Specifier) -> list[tuple[str, Version, bool]]:
    """('low'|'high', bound, strict) pairs a clause implies; '==X' is both bounds, '~=2.15.0' and
    '==2.15.*' a range."""
    version_text = clause.version
    wildcard = version_text.endswith(".*")
    try:
        version = Version(version_text[:-2] if wildcard else version_text)
    except InvalidVersion:
        return []
    op = clause.operator
    if op in (">", ">="):
        return [("low", version, op == ">")]
    if op in ("<", "<="):
        return [("high", version, op == "<")]
    if op in ("==", "===") and not wildcard:
        return [("low", version, False), ("high", version, False)]
    if op in ("~=", "==") and (op == "~=" or wildcard):
        release = version.release
        prefix = release[:-1] if op == "~=" else release
        if not prefix:
            return [("low", version, False)]
        upper = Version(".".join(map(str, (*prefix[:-1], prefix[-1] + 1))))
        return [("low", version, False), ("high", upper, True)]
    return []


def satisfiable(specifier: SpecifierSet) -> bool:
    """Can any version satisfy every clause together? (bounds and exact pins; `!=` exclusions of a
    pinned version too). Pre-releases count: an installed rc or nightly satisfies an installer."""
    lows: list[Any] = []
    highs: list[Any] = []
    pins = []
    for clause in specifier:
        for side, bound, strict in _bounds(clause):
            (lows if side == "low" else highs).append((bound, strict))
        if clause.operator in ("==", "===") and not clause.version.endswith(".*"):
            pins.append(clause.version)
    for pin in pins:
        if not specifier.contains(pin, prereleases=True):
            return False
    if lows and highs:
        low, low_strict = max(lows, key=lambda b: (b[0], b[1]))
        high, high_strict = min(highs, key=lambda b: (b[0], not b[1]))
        if low > high or (low == high and (low_strict or high_strict)):
            return False
    return True


# The name at the start of a Requires-Dist line, as packaging's tokenizer reads it (its IDENTIFIER after optional
# blanks): a line whose name matters is parsed, the others need not be.
_REQUIREMENT_NAME = re.compile(r"\A[ \t]*(\b[a-zA-Z0-9][a-zA-Z0-9._-]*\b)")


def requirement_name(line: str) -> Optional[str]:
    """The distribution a Requires-Dist line names, read without parsing the line (the name `parse_requirement`
    would give it when the line parses); None when the line starts with no name."""
    match = _REQUIREMENT_NAME.match(str(line))
    return match.group(1) if match else None


@functools.lru_cache(maxsize=65536)
def parse_requirement(line: str) -> Optional[Requirement]:
    """A Requires-Dist line parsed, or None. Parsed once per process: every check, and the server for every stored
    report, reads the same few thousand lines again (issue 36: 15,191 parses of 65 distributions' lines in one run).
    Room for 5,000 distributions' lines and the plan's requirements: a smaller cache, thrashed, parsed them all again
    for each reader.
    The Requirement returned is shared: callers read it, never change it."""
    try:
        return Requirement(str(line))
    except InvalidRequirement:
        return None
