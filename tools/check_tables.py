"""Write the README's and docs/architecture.md's check tables from the checks' own metadata.

Each check documents itself beside its code (checks/<name>.py): its function's docstring gives the one-line
summary (README) and what it reads and judges in full (docs), its declarations the fact sections it reads
and its platforms where it applies (tfdoctor/checking/registry.py). The tables are written here, not by
hand, so they cannot drift from the checks; tests/project/test_check_tables.py fails when they differ.

    python tools/check_tables.py          # rewrite both tables in place
    python tools/check_tables.py --check  # exit 1 (and say which file) when either is not what it would write
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from tfdoctor.checking.registry import Check, all_checks
from tfdoctor.facts import PLATFORM_NAMES

ROOT = Path(__file__).resolve().parent.parent


def where(check: Check) -> str:
    return ", ".join(PLATFORM_NAMES.get(p, p) for p in check.platforms) or "all"


def sections_read(check: Check) -> str:
    """'needs `tensorflow`; uses `python`, `distributions`': what `--only` collects for the check."""
    parts = []
    if check.needs:
        parts.append("needs " + ", ".join(f"`{name}`" for name in check.needs))
    if check.uses:
        parts.append("uses " + ", ".join(f"`{name}`" for name in check.uses))
    return "; ".join(parts) or "`host` only"


def _row(*cells: str) -> str:
    for cell in cells:
        if not cell or "|" in cell or "\n" in cell:
            raise ValueError(f"a table cell must be one non-empty line without '|': {cell!r}")
    return "| " + " | ".join(cells) + " |"


def readme_table(checks: list[Check]) -> list[str]:
    return ["| id | what it checks | where |", "| --- | --- | --- |",
            *(_row(f"`{c.id}`", c.summary, where(c)) for c in checks)]


def docs_table(checks: list[Check]) -> list[str]:
    return ["| id | what it checks | where | facts it reads |", "| --- | --- | --- | --- |",
            *(_row(f"`{c.id}`", c.doc, where(c), sections_read(c)) for c in checks)]


@dataclass(frozen=True)
class Table:
    path: Path
    heading: str  # the section holding the table: its first table is the one written
    lines: Callable[[list[Check]], list[str]]


TABLES = (
    Table(ROOT / "README.md", "## Checks", readme_table),
    Table(ROOT / "docs" / "architecture.md", "### What each check looks at", docs_table),
)


def rewritten(text: str, table: Table, checks: list[Check]) -> str:
    """`text` with the first table under `table.heading` (before the next heading) replaced."""
    lines = text.split("\n")
    try:
        start = lines.index(table.heading)
    except ValueError:
        raise ValueError(f"{table.path.name}: no line {table.heading!r}") from None
    first = next((n for n in range(start + 1, len(lines)) if lines[n].startswith(("|", "#"))), None)
    if first is None or not lines[first].startswith("|"):
        raise ValueError(f"{table.path.name}: no table under {table.heading!r}")
    end = first
    while end < len(lines) and lines[end].startswith("|"):
        end += 1
    return "\n".join([*lines[:first], *table.lines(checks), *lines[end:]])


def main(argv: list[str]) -> int:
    checks = all_checks()
    stale = []
    for table in TABLES:
        text = table.path.read_text(encoding="utf-8")
        wanted = rewritten(text, table, checks)
        if wanted == text:
            continue
        if "--check" in argv:
            stale.append(table.path.relative_to(ROOT).as_posix())
        else:
            table.path.write_text(wanted, encoding="utf-8")
    for path in stale:
        print(f"{path}: its check table is not the checks' own (run python tools/check_tables.py)", file=sys.stderr)
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
