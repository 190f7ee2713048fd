"""How far tfdoctor's knowledge reaches (issue 38, build 6): the newest release each generated table holds of
TensorFlow's builds, tensorflow-metal and the companions, and the day the table was read from PyPI (its own
`generated = "YYYY-MM-DD"` stamp, written by tools/refresh_knowledge.py).

An installed release newer than every one the tables hold is outside the knowledge: what its release rows would
say (its Python range, its wheels, its CUDA and cuDNN, the tensorflow-metal that loads into it, the companion
releases made for it) is unknown, not absent. The checks ask `beyond` before they claim something from those rows,
and tensorflow-install says so in one line (`age_line`). Pure lookups of the facts and the tables, so `explain` of
a saved report gives the same line.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Optional

from packaging.version import InvalidVersion, Version

from tfdoctor.facts import Facts, canonical_name, companions, releases, section
from tfdoctor.knowledge import load as knowledge_table


@dataclass(frozen=True)
class BeyondKnowledge:
    """An installed distribution newer than the newest release of it the tables hold."""

    name: str
    installed: str
    newest_known: str
    table: str  # "releases" | "companions"

    def describe(self) -> str:
        if self.name == "tensorflow":  # the line already says where TensorFlow's knowledge ends
            return f"{self.name} {self.installed}"
        return f"{self.name} {self.installed} (the tables end at {self.newest_known})"


def _version(text: object) -> Optional[Version]:
    try:
        return Version(str(text))
    except InvalidVersion:
        return None


@functools.lru_cache(maxsize=None)
def _newest_in_releases() -> dict[str, Version]:
    """distribution -> the newest version releases.toml holds (pre-releases included: the table keeps the ones
    ahead of every final release, so a 2.22.0rc0 it holds is known)."""
    newest: dict[str, Version] = {}
    for row in releases.wheels():
        version = _version(row["version"])
        name = canonical_name(row["distribution"])
        if version is not None and (name not in newest or version > newest[name]):
            newest[name] = version
    return newest


def generated_on(table: str = "releases") -> Optional[str]:
    """The day `table` was read from PyPI ('2026-11-29'), from its own `generated` stamp; None for a table
    written before the stamp existed."""
    stamp = knowledge_table(table).get("generated")
    return str(stamp) if stamp else None


def newest_known(name: str) -> Optional[str]:
    """The newest release of `name` the generated tables hold (releases.toml for TensorFlow's builds and
    tensorflow-metal, companions.toml for the companions); None for a distribution in neither."""
    name = canonical_name(name)
    if name in _newest_in_releases():
        return str(_newest_in_releases()[name])
    if name in companions.COMPANIONS:
        rows = companions.releases(name)
        return rows[0].version if rows else None
    return None


def _beyond_one(name: str, version: object) -> Optional[BeyondKnowledge]:
    name = canonical_name(name)
    installed = _version(version)
    if installed is None:
        return None
    if name in _newest_in_releases():
        newest, table = _newest_in_releases()[name], "releases"
    elif name in companions.COMPANIONS and companions.releases(name):
        newest, table = Version(companions.releases(name)[0].version), "companions"
    else:
        return None
    # a local build of a release the table holds (2.21.0+cpu) is that release, and a dev build of one comes before
    # it; a final release after the table's last pre-release (2.22.0 after 2.22.0rc0) is beyond it
    if Version(installed.public) <= newest:
        return None
    return BeyondKnowledge(name, str(version), str(newest), table)


def beyond(name: str, version: object) -> bool:
    """Is `version` of `name` newer than every release of it the tables hold (so its rows are unknown)?"""
    return _beyond_one(name, version) is not None


def beyond_knowledge(facts: Facts) -> list[BeyondKnowledge]:
    """Every installed distribution (first copy of each name) newer than the tables' newest release of it."""
    seen: set[str] = set()
    found: list[BeyondKnowledge] = []
    for copy in facts.get("distributions") or ():
        name = canonical_name(str(copy.get("name") or ""))
        if not name or name in seen:
            continue
        seen.add(name)
        newer = _beyond_one(name, copy.get("version"))
        if newer is not None:
            found.append(newer)
    return found


def tensorflow_end() -> Optional[str]:
    """Where the knowledge of TensorFlow ends: its newest minor in the release table ('2.21'), or the pre-release
    the table holds beyond it ('2.22.0rc0')."""
    newest = _newest_in_releases().get("tensorflow")
    if newest is None:
        return None
    return str(newest) if newest.is_prerelease else f"{newest.major}.{newest.minor}"


def tensorflow_beyond(facts: Facts) -> Optional[BeyondKnowledge]:
    """The installed TensorFlow build, when it is newer than every release of it the table holds."""
    from tfdoctor.facts.tensorflow_build import tensorflow_distribution

    dist = tensorflow_distribution(facts)
    if dist is not None:
        return _beyond_one(str(dist.get("name") or ""), dist.get("version"))
    version = section(facts, "tensorflow").get("version")
    return _beyond_one("tensorflow", version) if version else None


def age_line(facts: Facts) -> Optional[str]:
    """The one line a report gives when something installed is newer than the knowledge; None otherwise:
    "tfdoctor's knowledge ends at TensorFlow 2.21 (tables of 2026-11-29): tensorflow 2.99.0 is newer; checks that
    need its release rows say unknown"."""
    newer = beyond_knowledge(facts)
    if not newer:
        return None
    date = generated_on()
    ends = f"TensorFlow {tensorflow_end()}" if tensorflow_end() else "its tables"
    when = f" (tables of {date})" if date else ""
    listed = ", ".join(n.describe() for n in newer)
    one = len(newer) == 1
    return (f"tfdoctor's knowledge ends at {ends}{when}: {listed} {'is' if one else 'are'} newer; checks that need "
            f"{'its' if one else 'their'} release rows say unknown")
