"""What TensorFlow's own CI tested (issue 29): the pins of `requirements_lock_3_<minor>.txt` at the
installed release's tag, read by tools/refresh_knowledge.py (`--only locks`) into
knowledge/tested_locks.toml (`[[tested]]`: tensorflow, python, name, version, source). A dependency
inside TensorFlow's declared range but older than what its CI tested can break on use rather than on
import (gast 0.2.2 is inside `gast>=0.2.1` for TensorFlow 2.21, and AutoGraph cannot convert Python
control flow with it): it is a suspect, and the tested release is its candidate. Pure; the table is
optional (absent until a maintainer with network access generates it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Optional, Sequence

from tfdoctor.facts import Facts, canonical_name
from tfdoctor.facts.requires_dist import first_copy, marker_environment, tensorflow_pin, version_of

TABLE = "tested_locks"


@dataclass(frozen=True)
class BehindCi:
    name: str
    installed: str
    tested: str
    tensorflow: str
    python: str
    source: str

    def describe(self) -> str:
        return (f"{self.name} {self.installed} is older than the {self.name} {self.tested} TensorFlow {self.tensorflow}'s "
                f"CI tested on Python {self.python}")


def table_rows() -> Sequence[Mapping[str, Any]]:
    from tfdoctor.knowledge import names, rows

    return rows(TABLE, "tested") if TABLE in names() else []


def behind_ci(facts: Facts, rows: Optional[Iterable[Mapping[str, Any]]] = None) -> list[BehindCi]:
    """Installed dependencies older than the release the installed TensorFlow's CI tested with this Python."""
    pin = tensorflow_pin(facts)
    if not pin:
        return []
    tf_version = pin.partition("==")[2]
    python = marker_environment(facts).get("python_version", "")
    found = []
    for row in table_rows() if rows is None else rows:
        if row.get("tensorflow") != tf_version or row.get("python") != python:
            continue
        entry = first_copy(facts, str(row.get("name")))
        installed = version_of(entry.get("version")) if entry else None
        tested = version_of(row.get("version"))
        if entry is not None and installed is not None and tested is not None and installed < tested:
            found.append(BehindCi(canonical_name(str(row["name"])), str(entry["version"]), str(row["version"]),
                                  tf_version, python, str(row.get("source") or "")))
    return found
