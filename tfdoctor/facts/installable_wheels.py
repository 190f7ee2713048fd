"""Which TensorFlow wheels install where: ranges of releases with the same wheels from the generated release
table (knowledge/releases.toml, read by facts/releases.py), asked per platform, Python and macOS. Pure lookups.
"""

from __future__ import annotations

import functools
from typing import Any, Iterable, Mapping, Optional

from tfdoctor.facts import releases
from tfdoctor.knowledge.versions import release

Row = Mapping[str, Any]


def within(version: Optional[str], low: Optional[str], high: Optional[str]) -> bool:
    """low <= version <= high, inclusive; a two-part bound ('2.17') covers all of 2.17.x."""
    have = release(version)
    if not have:
        return False
    if low:
        want = release(low)
        width = max(len(have), len(want))
        if have + (0,) * (width - len(have)) < want + (0,) * (width - len(want)):
            return False
    if high:
        top = release(high)
        head = (have + (0,) * len(top))[: len(top)]
        if head > top:
            return False
    return True


def _names(field: str) -> list[str]:
    return field.split()


def wheel_rows(platform: Optional[str], distribution: Optional[str] = None) -> list[Row]:
    """Ranges of releases with the same wheels, from the generated release table (facts/releases.py)."""
    found: list[Row] = []
    for row in releases.wheel_ranges():
        if platform and platform not in _names(row["platform"]):
            continue
        if distribution and distribution not in _names(row["distribution"]):
            continue
        found.append(row)
    return found


def wheel_for(distribution: str, version: Optional[str], platform: Optional[str]) -> Optional[Row]:
    """The release table's row for this wheel. Remembered (a pure lookup in a fixed table): the checks ask about the
    installed TensorFlow once per installed distribution, and each answer scanned the table (issue 36). A version
    of a hand-written report that is no string is looked up afresh."""
    if all(isinstance(part, (str, type(None))) for part in (distribution, version, platform)):
        return _wheel_for(distribution, version, platform)
    return _wheel_for.__wrapped__(distribution, version, platform)


@functools.lru_cache(maxsize=1024)
def _wheel_for(distribution: str, version: Optional[str], platform: Optional[str]) -> Optional[Row]:
    for row in wheel_rows(platform, distribution):
        if within(version, row["version_min"], row["version_max"]):
            return row
    return None


def table_speaks_for(distribution: str, version: Optional[str]) -> bool:
    """Can the release table say that `version` has no wheel? It records every final release, but
    pre-releases only while they are ahead of every final one (tools/refresh_knowledge.py kept_versions):
    an older release candidate (tensorflow 2.16.0rc0, whose macOS arm64 wheels PyPI serves) is simply not
    in it, and its absence proves nothing."""
    from packaging.version import InvalidVersion, Version

    try:
        parsed = Version(str(version))
    except InvalidVersion:
        return False
    if not (parsed.is_prerelease or parsed.is_devrelease):
        return True
    return releases.release_exists(distribution, str(version))


def installable(platform: str, python: Optional[str], macos: Optional[str] = None,
                distributions: Iterable[str] = ("tensorflow", "tensorflow-macos")) -> list[tuple[str, str]]:
    """(distribution, newest version) of every non-prerelease wheel this Python (and macOS) can take,
    newest first; 'tensorflow' before 'tensorflow-macos' at the same version."""
    wanted = list(distributions)
    found: list[tuple[str, str]] = []
    for row in wheel_rows(platform):
        if row["prerelease"] or not within(python, row["python_min"], row["python_max"]):
            continue
        if macos and row["macos_min"] and not within(macos, row["macos_min"], None):
            continue
        for name in _names(row["distribution"]):
            if name in wanted:
                found.append((name, row["newest"]))
    found.sort(key=lambda item: (release(item[1]), -wanted.index(item[0])), reverse=True)
    return found


def newest_installable(platform: str, python: Optional[str], macos: Optional[str] = None,
                       distributions: Iterable[str] = ("tensorflow", "tensorflow-macos")) -> Optional[tuple[str, str]]:
    found = installable(platform, python, macos, distributions)
    return found[0] if found else None


def covers_minor(row: Row, minor: str) -> bool:
    """Does a wheel row's version range include any release of `minor` ('2.13')?"""
    wanted = release(minor)[:2]
    return release(row["version_min"])[:2] <= wanted <= release(row["version_max"])[:2]


def install_name(platform: str, tf_minor: str) -> Optional[str]:
    """Which name installs TensorFlow `tf_minor` on `platform` ('tensorflow-macos' for 2.12 on arm64)."""
    for name in ("tensorflow", "tensorflow-macos"):
        if any(covers_minor(row, tf_minor) for row in wheel_rows(platform, name)):
            return name
    return None
