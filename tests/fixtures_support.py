"""Loading the machine snapshots in fixtures/ (see fixtures/README.md for their format)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def fixture_paths() -> list[Path]:
    return sorted(FIXTURES.glob("*/*.json"))


def load_fixture(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


def fixture_id(path: Path) -> str:
    return f"{path.parent.name}/{path.stem}"
