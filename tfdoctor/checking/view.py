"""The facts as one check may read them: only the sections it declares (the check contract).

A check declares the fact sections it reads (`needs`, `uses`); the doctor collects exactly those
(diagnosis/doctor.needed_sections), so a read of anything else is a read of something `--only <check>`
never collects: the check would judge one way in a full run and another alone. `FactsView` makes the
declaration true by refusing such a read.

It refuses only where asked (`TFDOCTOR_STRICT_FACTS=1`, which the test suite sets: tests/__init__.py).
A user's run gets the facts as they are, so a declaration the tests have not caught yet never turns a
verdict into an error; the tests run every check on every fixture, alone and in the full run, through
this view (tests/core/test_check_contract.py).
"""

from __future__ import annotations

import os
from typing import Any, Iterator, Mapping

# Read by every check without declaring it: the host is where the runner judges a check's platforms,
# and the collection record (durations, errors) is metadata of the run, not a fact about the machine.
ALWAYS_READABLE = frozenset({"host", "collection"})

STRICT_ENVIRONMENT_VARIABLE = "TFDOCTOR_STRICT_FACTS"


def strict_from_environment(environ: Mapping[str, str] = os.environ) -> bool:
    """Whether this process refuses undeclared reads: the test suite's switch (see the module's docstring)."""
    return environ.get(STRICT_ENVIRONMENT_VARIABLE) == "1"


class UndeclaredFactRead(Exception):
    """A check read a fact section it does not declare. Not a KeyError: `Mapping.get` and the facts
    readers' own `except KeyError` would take it for an absent section and go on."""

    def __init__(self, check_id: str, section: str) -> None:
        super().__init__(f"check {check_id} reads the facts section {section!r} it does not declare "
                         f"(add it to its needs or uses)")
        self.check_id, self.section = check_id, section


class FactsView(Mapping[str, Any]):
    """A read-only Mapping over the declared sections of the facts; reading (`[]`, `get`, `in`) any
    other raises `UndeclaredFactRead`. Iteration, `len` and the Mapping mixins (keys, items, `dict(view)`)
    see only the declared sections that are recorded. Every refused read is also kept in `undeclared`,
    so one that a reader swallows (`except Exception`) is still found by the runner."""

    __slots__ = ("_facts", "_readable", "_check_id", "undeclared")

    def __init__(self, facts: Mapping[str, Any], readable: frozenset[str], check_id: str) -> None:
        self._facts, self._readable, self._check_id = facts, readable, check_id
        self.undeclared: list[str] = []

    def _allow(self, key: object) -> None:
        if key not in self._readable:
            self.undeclared.append(str(key))
            raise UndeclaredFactRead(self._check_id, str(key))

    def __getitem__(self, key: str) -> Any:
        self._allow(key)
        return self._facts[key]

    def get(self, key: str, default: Any = None) -> Any:
        self._allow(key)
        return self._facts.get(key, default)

    def __contains__(self, key: object) -> bool:
        self._allow(key)
        return key in self._facts

    def __iter__(self) -> Iterator[str]:
        return (key for key in self._facts if key in self._readable)

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def __repr__(self) -> str:
        return f"FactsView({self._check_id}: {sorted(self)})"
