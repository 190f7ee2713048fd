"""Loading the machine snapshots in fixtures/ (see fixtures/README.md for their format)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


# fixtures/fresh/ holds cases gathered to measure the doctor (issue 29, part 6): their expectations
# are a score, not a contract, so the fixture tests and the verdict snapshot leave them out.
FRESH = FIXTURES / "fresh"


def fixture_paths() -> list[Path]:
    return sorted(path for path in FIXTURES.glob("*/*.json") if path.parent != FRESH)


def fresh_fixture_paths(aside: bool = False) -> list[Path]:
    """The fresh cases (fixtures/fresh/*.json), or the held-out ones (fixtures/fresh/aside/*.json)."""
    return sorted((FRESH / "aside" if aside else FRESH).glob("*.json"))


def load_fixture(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


def fixture_id(path: Path) -> str:
    return f"{path.parent.name}/{path.stem}"
