"""The one TensorFlow release table (tfdoctor/knowledge/releases.toml, generated from PyPI by
tools/refresh_knowledge.py), read the ways the checks ask it: ranges of releases with the same wheels
per distribution and platform (tensorflow-install, macos-version, metal-plugin, architecture), one
row per TensorFlow minor (requirements), and "the newest TensorFlow this Python gets on this platform"
(`tensorflow_minors`, `newest_tensorflow`: platform-support and the installer check both ask it here,
so they name the same release). Pure lookups, computed once.
"""

from __future__ import annotations

import functools
from typing import Any, Mapping

from packaging.version import Version

from tfdoctor.knowledge import rows as knowledge_rows
from tfdoctor.knowledge.versions import compare, release

Row = Mapping[str, Any]


def _py_key(python: str) -> tuple[int, ...]:
    return tuple(int(p) for p in python.split("."))


@functools.lru_cache(maxsize=None)
def wheels() -> tuple[Row, ...]:
    """Every generated row (distribution, release, platform), yanked releases left out."""
    return tuple(row for row in knowledge_rows("releases", "wheel") if not row["yanked"])


def _shape(row: Row) -> tuple:
    pythons = sorted(row["pythons"], key=_py_key)
    return (pythons[0] if pythons else "", pythons[-1] if pythons else "", row["floor"], row["kind"],
            row["shim_of"], row["prerelease"])


@functools.lru_cache(maxsize=None)
def wheel_ranges() -> tuple[dict[str, Any], ...]:
    """Consecutive releases of one distribution on one platform with the same Python range, floor
    and kind, merged: {'distribution', 'platform', 'version_min', 'version_max', 'newest',
    'python_min', 'python_max', 'macos_min', 'glibc_min', 'kind', 'shim_of', 'prerelease', 'source'}."""
    ordered = sorted(wheels(), key=lambda r: (r["distribution"], r["platform"], Version(r["version"])))
    ranges: list[dict[str, Any]] = []
    for row in ordered:
        last = ranges[-1] if ranges else None
        if last and (last["distribution"], last["platform"]) == (row["distribution"], row["platform"]) \
                and last["_shape"] == _shape(row):
            last["version_max"] = last["newest"] = row["version"]
            continue
        python_min, python_max, floor, kind, shim_of, prerelease = _shape(row)
        macos = row["platform"].startswith("macos")
        ranges.append({
            "distribution": row["distribution"], "platform": row["platform"],
            "version_min": row["version"], "version_max": row["version"], "newest": row["version"],
            "python_min": python_min, "python_max": python_max,
            "macos_min": floor if macos else "", "glibc_min": floor if row["platform"].startswith("linux") else "",
            "kind": kind, "shim_of": shim_of, "prerelease": prerelease,
            "source": f"https://pypi.org/project/{row['distribution']}/#files", "verified": True,
            "_shape": _shape(row),
        })
    for item in ranges:
        del item["_shape"]
    return tuple(ranges)


def _minor(version: str) -> str:
    return ".".join(version.split(".")[:2])


@functools.lru_cache(maxsize=None)
def minor_rows() -> tuple[dict[str, Any], ...]:
    """One row per TensorFlow minor (the newest release of `tensorflow` in it, final before
    prerelease): {'tf', 'python_min', 'python_max', 'glibc_min', 'linux_aarch64' ('cpu' | 'none'),
    'macos_x86_64', 'macos_arm64', 'prerelease', 'source', 'verified'}, oldest first."""
    by_minor: dict[str, dict[str, list[Row]]] = {}
    for row in wheels():
        if row["distribution"] == "tensorflow":
            by_minor.setdefault(_minor(row["version"]), {}).setdefault(row["version"], []).append(row)
    result = []
    for minor in sorted(by_minor, key=_py_key):
        releases = by_minor[minor]
        newest = max(releases, key=lambda v: (not Version(v).is_prerelease, Version(v)))
        platforms = {row["platform"]: row for row in releases[newest]}
        anywhere = {p for rows in releases.values() for p in (r["platform"] for r in rows)}
        reference = platforms.get("linux-x86_64") or next(iter(platforms.values()))
        pythons = sorted(reference["pythons"], key=_py_key)
        result.append({
            "tf": minor,
            "python_min": pythons[0], "python_max": pythons[-1],
            "glibc_min": (platforms.get("linux-x86_64") or {}).get("floor", ""),
            "linux_aarch64": "cpu" if "linux-aarch64" in anywhere else "none",
            "macos_x86_64": "macos-x86_64" in anywhere,
            "macos_arm64": "macos-arm64" in anywhere,
            "prerelease": Version(newest).is_prerelease,
            "newest": newest,
            "source": f"https://pypi.org/project/tensorflow/{newest}/#files",
            "verified": True,
        })
    return tuple(result)


def release_exists(distribution: str, version: str) -> bool:
    """Is `version` ('2.17.1', or a minor '2.17') a release of `distribution` in the table?"""
    wanted = version.count(".") == 1
    return any(row["distribution"] == distribution
               and (_minor(row["version"]) == version if wanted else Version(row["version"]) == Version(version))
               for row in wheels())


def _minor_of(python: str) -> str:
    return ".".join(python.split(".")[:2])


@functools.lru_cache(maxsize=None)
def tensorflow_minors(platform: str, python: str | None = None, glibc: str | None = None) -> tuple[dict[str, Any], ...]:
    """Per TensorFlow minor, oldest first, the newest release of `tensorflow` with a wheel for `platform`
    that this Python (any, when None) can install, and on Linux this glibc (any, when None):
    {'tf', 'newest', 'python_min', 'python_max', 'glibc_min', 'prerelease', 'source'}. Judged release by
    release: 2.11.0 has wheels for Python 3.7 and 2.11.1 has none, so Python 3.7 gets 2.11, not 2.10."""
    wanted = _minor_of(python) if python else None
    linux = platform.startswith("linux")
    by_minor: dict[str, Row] = {}
    for row in wheels():
        if row["distribution"] != "tensorflow" or row["platform"] != platform:
            continue
        if wanted and wanted not in row["pythons"]:
            continue
        if linux and release(glibc) and row["floor"] and compare(glibc, row["floor"]) < 0:
            continue
        minor = _minor(row["version"])
        best = by_minor.get(minor)
        if best is None or _release_order(row) > _release_order(best):
            by_minor[minor] = row
    result = []
    for minor in sorted(by_minor, key=_py_key):
        row = by_minor[minor]
        pythons = sorted(row["pythons"], key=_py_key)
        result.append({
            "tf": minor, "newest": row["version"],
            "python_min": pythons[0] if pythons else "", "python_max": pythons[-1] if pythons else "",
            "glibc_min": row["floor"] if linux else "",
            "prerelease": Version(row["version"]).is_prerelease,
            "source": row["source"],
        })
    return tuple(result)


def _release_order(row: Row) -> tuple[bool, Version]:
    version = Version(row["version"])
    return (not version.is_prerelease, version)  # a final release before a pre-release of the same minor


def newest_tensorflow(platform: str, python: str | None, glibc: str | None = None) -> dict[str, Any] | None:
    """The newest final TensorFlow release this Python (and glibc) gets on `platform`, as a row of
    `tensorflow_minors`; None when there is none."""
    final = [row for row in tensorflow_minors(platform, python, glibc) if not row["prerelease"]]
    return final[-1] if final else None
