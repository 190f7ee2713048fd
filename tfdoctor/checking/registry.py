"""The check registry: each check is a `Check` value declared next to its logic in checks/<name>.py.

A check declares what it needs (fact sections) and where it applies (host systems); the runner
uses those declarations to skip it plainly instead of letting it guess, the doctor collects exactly the
declared sections, and under the tests a check reads nothing else (tfdoctor/checking/view.py).
Its function's docstring documents it: the first paragraph is the README's one-line summary, the rest what
it reads and judges in full (docs/architecture.md); tools/check_tables.py writes both tables from them.
`tfdoctor.checks.MODULES` lists the check modules in report order; that tuple is the registration hook.
"""

from __future__ import annotations

import importlib
import inspect
import re
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping

from tfdoctor.checking.view import ALWAYS_READABLE
from tfdoctor.results.model import Outcome

Facts = Mapping[str, Any]
CheckFunction = Callable[[Facts], Outcome]

_ID_PATTERN = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")


@dataclass(frozen=True)
class Check:
    id: str  # stable kebab-case id, part of the JSON contract
    title: str
    run: CheckFunction
    needs: tuple[str, ...] = ()  # fact sections that must be recorded, else the check skips
    uses: tuple[str, ...] = ()  # sections read when recorded (collected for it), judged without otherwise
    platforms: tuple[str, ...] = ()  # host systems (platform.system()) it applies to; () = all
    tags: tuple[str, ...] = ()
    doc_url: str | None = None
    summary: str = ""  # one line, for the README's table: the docstring's first paragraph
    doc: str = ""  # what it reads and judges, for docs/architecture.md: the docstring's other paragraphs

    def __post_init__(self) -> None:
        if not _ID_PATTERN.match(self.id):
            raise ValueError(f"check id {self.id!r} is not kebab-case")

    @property
    def readable(self) -> frozenset[str]:
        """The fact sections this check may read: its declarations and those every check reads."""
        return ALWAYS_READABLE | frozenset(self.needs) | frozenset(self.uses)


def check(
    id: str,
    title: str,
    *,
    needs: Iterable[str] = (),
    uses: Iterable[str] = (),
    platforms: Iterable[str] = (),
    tags: Iterable[str] = (),
    doc_url: str | None = None,
) -> Callable[[CheckFunction], Check]:
    """Decorator that turns a pure function of the facts into a registered-able `Check`."""

    def wrap(function: CheckFunction) -> Check:
        summary, doc = documentation(function)
        return Check(id, title, function, tuple(needs), tuple(uses), tuple(platforms), tuple(tags), doc_url,
                     summary, doc)

    return wrap


def documentation(function: Callable[..., object]) -> tuple[str, str]:
    """(summary, doc) from a function's docstring, each paragraph one line of Markdown ('' under python -OO,
    which drops docstrings: only the tables' generator reads them)."""
    paragraphs = [" ".join(part.split()) for part in inspect.cleandoc(function.__doc__ or "").split("\n\n")]
    paragraphs = [part for part in paragraphs if part]
    return (paragraphs[0] if paragraphs else "", " ".join(paragraphs[1:]))


class UnknownCheckError(LookupError):
    pass


def all_checks() -> list[Check]:
    """Every registered check, in report order."""
    from tfdoctor.checks import MODULES

    found: list[Check] = []
    for module_name in MODULES:
        module = importlib.import_module(f"tfdoctor.checks.{module_name}")
        found.extend(value for value in vars(module).values() if isinstance(value, Check))
    ids = [c.id for c in found]
    duplicates = {i for i in ids if ids.count(i) > 1}
    if duplicates:
        raise RuntimeError(f"duplicate check ids: {sorted(duplicates)}")
    return found


def split_ids(values: Iterable[str] | None) -> tuple[str, ...]:
    """--only a,b --only c -> ('a', 'b', 'c'): check ids and tags, repeated or comma-separated."""
    return tuple(part.strip() for value in values or () for part in value.split(",") if part.strip())


def select(checks: list[Check], only: Iterable[str] = (), skip: Iterable[str] = ()) -> list[Check]:
    """Filter by id or tag; an unknown name is an error (a typo must not silently check nothing), and so
    is a name in both lists or a --skip that leaves nothing of --only (a run of nothing says "no
    problems found")."""
    only, skip = list(only), list(skip)
    known = {c.id for c in checks} | {t for c in checks for t in c.tags}
    unknown = sorted({name for name in only + skip if name not in known})
    if unknown:
        raise UnknownCheckError(
            f"unknown check id {', '.join(unknown)} (see 'tfdoctor --list')"
        )

    def named(c: Check, names: list[str]) -> bool:
        return c.id in names or any(t in names for t in c.tags)

    both = sorted(set(only) & set(skip))
    if both:
        raise UnknownCheckError(f"{', '.join(both)} named by both --only and --skip: nothing to decide between them")
    chosen = [c for c in checks if not only or named(c, only)]
    left = [c for c in chosen if not named(c, skip)]
    if only and not left:  # '--only dependencies --skip its-tag': a run of nothing is no finding
        raise UnknownCheckError("--skip removes every check --only chose: nothing would run")
    return left
