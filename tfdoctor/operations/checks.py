"""The checks a door can name: their ids, titles, where they apply and their tags (`--list`, MCP's list_checks),
and the one reading of `--only`/`--skip` lists."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Optional


@dataclass(frozen=True)
class CheckInfo:
    id: str
    title: str
    platforms: tuple[str, ...]  # where it applies, in words ("macOS", "Linux"); () everywhere
    tags: tuple[str, ...]
    doc_url: Optional[str]
    needs: tuple[str, ...] = ()  # the fact sections it judges
    uses: tuple[str, ...] = ()  # the fact sections it reads when they are there
    systems: tuple[str, ...] = ()  # where it applies, as platform.system() says it ("Darwin"); () everywhere


def list_checks() -> list[CheckInfo]:
    """Every check, in report order."""
    from tfdoctor.diagnosis.doctor import selected_checks
    from tfdoctor.facts import PLATFORM_NAMES

    return [CheckInfo(check.id, check.title, tuple(PLATFORM_NAMES.get(p, p) for p in check.platforms),
                      tuple(check.tags), check.doc_url, tuple(check.needs), tuple(check.uses), tuple(check.platforms))
            for check in selected_checks()]


def split_ids(values: Optional[Iterable[str]]) -> tuple[str, ...]:
    """--only a,b --only c -> ('a', 'b', 'c'): check ids and tags, repeated or comma-separated."""
    from tfdoctor.checking.registry import split_ids as split

    return split(values)
