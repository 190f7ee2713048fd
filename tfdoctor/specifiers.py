"""Just enough PEP 440 specifier matching for the pins in the knowledge data ('>=1.26.0,<2.1.0').

`packaging` is deliberately not a dependency (see versions.py); pins only use plain release numbers
and the operators <, <=, >, >=, ==, ===, != (with a trailing .* on == and !=) and ~=.
"""

from __future__ import annotations

import re
from typing import Optional

from tfdoctor.versions import compare, release

_CLAUSE = re.compile(r"^\s*(===|~=|==|!=|<=|>=|<|>)\s*([0-9][0-9a-zA-Z.*+!-]*)\s*$")


def clause_holds(version: str, operator: str, bound: str) -> bool:
    have = release(version)
    if bound.endswith(".*"):
        prefix = release(bound[:-2])
        same = have[: len(prefix)] == prefix
        return same if operator == "==" else not same
    want = release(bound)
    order = compare(version, bound)
    if operator == "~=":
        # ~=2.15.0 means >=2.15.0, ==2.15.*
        return order >= 0 and have[: len(want) - 1] == want[: len(want) - 1]
    return {
        "==": order == 0,
        "===": order == 0,
        "!=": order != 0,
        "<": order < 0,
        "<=": order <= 0,
        ">": order > 0,
        ">=": order >= 0,
    }[operator]


def satisfies(version: Optional[str], spec: str) -> Optional[bool]:
    """True/False; None when the version or the spec cannot be read (never guess)."""
    if not version or not release(version):
        return None
    clauses = [part for part in spec.split(",") if part.strip()]
    parsed = [_CLAUSE.match(part) for part in clauses]
    if not parsed or any(match is None for match in parsed):
        return None
    return all(clause_holds(version, m.group(1), m.group(2)) for m in parsed if m)
