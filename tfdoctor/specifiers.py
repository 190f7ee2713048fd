"""PEP 440 specifier matching for the pins in the knowledge data ('>=1.26.0,<2.1.0'): `packaging`'s.

An installed pre-release satisfies a range the way pip's resolver accepts an installed one
(`prereleases=True`): a tf-nightly or an rc is judged by its version, not excluded for being one.
"""

from __future__ import annotations

from typing import Optional

from packaging.specifiers import InvalidSpecifier, SpecifierSet
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
