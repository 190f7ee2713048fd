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


# The held-out sets of fresh cases, one per round (each set's ASIDE.md says how it was drawn); only the lead scores them.
HELD_OUT_SETS = ("aside", "aside2", "aside3", "aside4", "aside5", "aside6", "aside7", "aside8", "aside9")
# Later rounds keep their seen cases in a folder of their own (round 3: fixtures/fresh/round3/, round 5: round5/,
# round 6: round6/, round 7: round7/, round 8: round8/).
SEEN_ROUNDS = ("round3", "round5", "round6", "round7", "round8")


def fresh_fixture_paths(held_out: str | None = None) -> list[Path]:
    """The seen fresh cases of rounds 1-2 (fixtures/fresh/*.json), a later round's seen folder
    (fixtures/fresh/<round>/*.json), or one held-out set (fixtures/fresh/<held_out>/*.json)."""
    if held_out is not None and held_out not in HELD_OUT_SETS + SEEN_ROUNDS:
        raise ValueError(f"no fresh set {held_out!r}: {HELD_OUT_SETS + SEEN_ROUNDS}")
    return sorted((FRESH / held_out if held_out else FRESH).glob("*.json"))


def load_fixture(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


def fixture_id(path: Path) -> str:
    return f"{path.parent.name}/{path.stem}"
