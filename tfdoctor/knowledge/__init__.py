"""Knowledge data: version facts with a source for every row, in TOML files beside this module.

Convention (tested in tests/knowledge/test_knowledge.py): each file is a set of arrays of tables; every row has
`source` (at least one public https:// URL, never a local path) and `verified` (true when read from
the artefact itself or an official table, false for a single report or an inference). Checks read
rows; they never hard-code a version fact. releases.toml and companions.toml are generated from PyPI by
tools/refresh_knowledge.py (never at run time); the other files are curated by hand.
"""

from __future__ import annotations

import functools
from importlib import resources
from typing import Any

# tomli rather than the standard library's tomllib, which is its pure-Python copy: tomli's compiled wheels parse the
# tables 3-4x faster (pyproject.toml); where only its pure wheel installs, the two are the same code
import tomli


def names() -> list[str]:
    return sorted(p.name[:-5] for p in resources.files(__name__).iterdir() if p.name.endswith(".toml"))


@functools.lru_cache(maxsize=None)
def load(name: str) -> dict[str, Any]:
    """The parsed data file `name`.toml (read once; callers must not mutate it)."""
    text = resources.files(__name__).joinpath(f"{name}.toml").read_text(encoding="utf-8")
    return tomli.loads(text)


# Read only when a companion (tensorflow-hub, tf-keras, ...) is installed: 194 KiB a run needs rarely.
ON_DEMAND = frozenset({"companions"})


def preload() -> None:
    """Parse the tables the checks read (all but ON_DEMAND) into load's cache: called on a thread while
    the collectors' children run, so the checks that follow find them parsed. A broken table is left
    for the check that reads it to report."""
    for name in names():
        if name not in ON_DEMAND:
            try:
                load(name)
            except Exception:  # noqa: BLE001 - reported by the check that reads it, not here
                pass


def rows(name: str, table: str) -> list[dict[str, Any]]:
    return list(load(name).get(table, ()))
