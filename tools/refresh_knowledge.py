"""Regenerate tfdoctor/knowledge/releases.toml and companions.toml from PyPI (maintainers only; needs
the network).

    .venv/bin/python tools/refresh_knowledge.py                     # rewrite every table, print summaries
    .venv/bin/python tools/refresh_knowledge.py --only companions   # one table (releases | companions |
                                                                    # tf-keras-users | build-info | import-checks)
    .venv/bin/python tools/refresh_knowledge.py --check             # exit 1 when PyPI says something new

Exit codes: 0 the tables were written (or, with --check, are up to date); 1 with --check, PyPI says
something the tables do not (the scheduled workflow, .github/workflows/refresh-knowledge.yml, then opens a
pull request); 2 a usage error, or PyPI (or GitHub, for the locks) could not be read: nothing was written
for the table being read. Each table carries `generated = "YYYY-MM-DD"`, the day it was read, which
--check ignores and the doctor reports as its knowledge's age.

For every TensorFlow distribution (and tensorflow-metal) it reads the project's file list from PyPI's
JSON API (https://pypi.org/pypi/<name>/json) and, for one wheel per release and platform, that wheel's
METADATA as PyPI serves it beside the file (PEP 658: <wheel url>.metadata). One row per distribution,
release and platform: the CPython versions with a wheel and their tags, Requires-Python, the glibc or
macOS floor of the platform tag, whether the wheel is a ~2 kB shim (and of what), and the pins that
matter (Requires-Dist of the packages TensorFlow breaks with). The doctor never runs this: it reads
the table, offline. Facts PyPI cannot give (what loads on a Mac, driver minimums, breaking pins that
metadata does not declare) stay in the curated tables (macos.toml, linux.toml).

companions.toml: for every final, non-yanked release with a wheel of the packages released in step with
TensorFlow (COMPANIONS), the Requires-Dist and Requires-Python of every wheel's METADATA (one row per
release and distinct METADATA: a few releases declare another TensorFlow build per platform), and which
interpreters and platforms its wheels cover; the doctor picks from it, offline, the companion release
made for the installed TensorFlow.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import datetime
import email.parser
import io
import json
import re
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
import zipfile
from pathlib import Path
from typing import Any, Iterable, Mapping, Optional

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.tags import Tag
from packaging.utils import canonicalize_name, parse_wheel_filename
from packaging.version import InvalidVersion, Version

ROOT = Path(__file__).resolve().parent.parent
TABLE = ROOT / "tfdoctor" / "knowledge" / "releases.toml"
JSON_API = "https://pypi.org/pypi/{name}/json"

# (distribution, oldest release kept). TensorFlow before 2.4 predates every check's knowledge.
DISTRIBUTIONS = (
    ("tensorflow", "2.4.0"),
    ("tensorflow-cpu", "2.4.0"),
    ("tensorflow-gpu", "2.4.0"),
    ("tensorflow-macos", "2.5.0"),
    ("tensorflow-intel", "2.10.0"),
    ("tensorflow-cpu-aws", "2.9.0"),
    ("tensorflow-aarch64", "2.7.0"),
    ("tensorflow-metal", "0.1.0"),
)
# Requirements worth recording: the packages whose pins break TensorFlow, and the shim targets.
PINNED = {"numpy", "keras", "tf-keras", "protobuf", "ml-dtypes", "h5py", "tensorboard", "typing-extensions",
          "tensorflow", "tensorflow-macos", "tensorflow-intel", "tensorflow-cpu-aws", "tensorflow-cpu"}
MARKER_ENVIRONMENTS = {
    "macos-arm64": {"platform_system": "Darwin", "sys_platform": "darwin", "platform_machine": "arm64"},
    "macos-x86_64": {"platform_system": "Darwin", "sys_platform": "darwin", "platform_machine": "x86_64"},
    "linux-x86_64": {"platform_system": "Linux", "sys_platform": "linux", "platform_machine": "x86_64"},
    "linux-aarch64": {"platform_system": "Linux", "sys_platform": "linux", "platform_machine": "aarch64"},
    "windows-x86_64": {"platform_system": "Windows", "sys_platform": "win32", "platform_machine": "AMD64"},
}
SHIM_BYTES = 100_000  # a shim wheel is ~2 kB; the smallest real one (tensorflow-metal) ~1 MB
SOURCE = "https://pypi.org/project/{name}/{version}/#files"


def fetch(url: str, attempts: int = 3) -> bytes:
    for attempt in range(attempts):
        try:
            with urllib.request.urlopen(url, timeout=60) as response:
                return response.read()
        except urllib.error.HTTPError as error:
            if error.code == 404 or attempt == attempts - 1:
                raise
            time.sleep(1 + attempt)
        except OSError:
            if attempt == attempts - 1:
                raise
            time.sleep(1 + attempt)
    raise AssertionError("unreachable")


def platform_of(tag: str) -> Optional[str]:
    if tag.startswith("macosx_"):
        return "macos-arm64" if tag.endswith("_arm64") else "macos-x86_64" if tag.endswith("_x86_64") else None
    if tag.startswith(("manylinux", "linux_")):
        return "linux-x86_64" if tag.endswith("_x86_64") else "linux-aarch64" if tag.endswith("_aarch64") else None
    return "windows-x86_64" if tag == "win_amd64" else None


def floor_of(tag: str) -> str:
    """The oldest glibc (manylinux) or macOS a platform tag accepts; '' where the tag says none."""
    legacy = {"manylinux1": "2.5", "manylinux2010": "2.12", "manylinux2014": "2.17"}
    for name, glibc in legacy.items():
        if tag.startswith(name + "_"):
            return glibc
    match = re.match(r"(?:manylinux|macosx)_(\d+)_(\d+)_", tag)
    return f"{match.group(1)}.{match.group(2)}" if match else ""


def python_of(tag: str) -> Optional[str]:
    match = re.fullmatch(r"cp(\d)(\d+)", tag)
    return f"{match.group(1)}.{match.group(2)}" if match else None


def kept_versions(releases: dict[str, list], oldest: str) -> list[Version]:
    versions = []
    for text, files in releases.items():
        try:
            version = Version(text)
        except InvalidVersion:
            continue
        if version >= Version(oldest) and any(f["packagetype"] == "bdist_wheel" for f in files):
            versions.append(version)
    finals = [v for v in versions if not v.is_prerelease and not v.is_devrelease]
    newest_final = max(finals) if finals else None
    # prereleases only while they are ahead of every final release (the next release, not history)
    return sorted(v for v in versions if v in finals or (newest_final is None or v > newest_final))


class RangeFile(io.RawIOBase):
    """A remote wheel read with HTTP range requests, so zipfile fetches only the central directory
    and METADATA (~1.5 MB of a 200-500 MB TensorFlow wheel), the way pip's lazy wheel does."""

    def __init__(self, url: str, size: int):
        super().__init__()
        self.url, self.size, self.position = url, size, 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self.position

    def seek(self, offset: int, whence: int = 0) -> int:
        base = {0: 0, 1: self.position, 2: self.size}[whence]
        self.position = base + offset
        return self.position

    def read(self, size: int = -1) -> bytes:
        if size is None or size < 0:
            size = self.size - self.position
        if size == 0 or self.position >= self.size:
            return b""
        end = min(self.size, self.position + size) - 1
        request = urllib.request.Request(self.url, headers={"Range": f"bytes={self.position}-{end}"})
        with urllib.request.urlopen(request, timeout=120) as response:
            data = response.read()
        self.position += len(data)
        return data


def parse_metadata(raw: bytes) -> email.message.Message:
    return email.parser.BytesParser().parsebytes(raw, headersonly=True)


def metadata_of(api: str, items: list[dict], lazy: bool) -> Optional[email.message.Message]:
    """The METADATA of the newest of these wheels that PyPI serves beside the file (PEP 658); with
    `lazy`, else read out of the smallest wheel itself. None when neither works."""
    for item in sorted(items, key=lambda i: i.get("upload_time_iso_8601") or "", reverse=True):
        if not (item.get("core-metadata") or item.get("data-dist-info-metadata")):
            continue
        try:
            return parse_metadata(fetch(urllib.parse.urljoin(api, item["url"]) + ".metadata"))
        except urllib.error.HTTPError:
            continue
    if not lazy:
        return None
    item = min(items, key=lambda i: i["size"])
    try:
        with zipfile.ZipFile(RangeFile(urllib.parse.urljoin(api, item["url"]), item["size"])) as wheel:
            name = next(n for n in wheel.namelist() if n.endswith(".dist-info/METADATA") and n.count("/") == 1)
            return parse_metadata(wheel.read(name))
    except (OSError, zipfile.BadZipFile, StopIteration):
        return None


def pins(requires: Iterable[str]) -> tuple[list[str], list[str]]:
    """(the pins that matter, the and-cuda extra) from Requires-Dist, as written in the metadata."""
    kept, cuda = [], []
    for text in requires:
        requirement = Requirement(text)
        marker = str(requirement.marker or "")
        if "extra" in marker:
            if 'extra == "and-cuda"' in marker:
                cuda.append(f"{requirement.name}{requirement.specifier}")
            continue
        if canonicalize_name(requirement.name) in PINNED:
            kept.append(text.strip())
    return kept, sorted(cuda)


def rows_for(name: str, oldest: str, pool: concurrent.futures.Executor) -> list[dict[str, Any]]:
    api = JSON_API.format(name=name)
    project = json.loads(fetch(api))
    jobs = []
    for version in kept_versions(project["releases"], oldest):
        files = [f for f in project["releases"][str(version)] if f["packagetype"] == "bdist_wheel"]
        by_platform: dict[str, list[tuple[dict, Any]]] = {}
        for item in files:
            _, _, _, tags = parse_wheel_filename(item["filename"])
            platforms = {platform_of(t.platform) for t in tags} - {None}
            for platform in platforms:
                by_platform.setdefault(platform, []).append((item, tags))
        for platform, entries in sorted(by_platform.items()):
            jobs.append((version, platform, entries))

    def build(job) -> dict[str, Any]:
        version, platform, entries = job
        pythons, tags, floors = set(), set(), []
        for _item, wheel_tags in entries:
            own = [t for t in wheel_tags if platform_of(t.platform) == platform]
            pythons.update(filter(None, (python_of(t.interpreter) for t in own)))
            tags.update(f"{t.interpreter}-{t.platform}" for t in own)
            file_floors = [floor_of(t.platform) for t in own if floor_of(t.platform)]
            if file_floors:
                floors.append(min(file_floors, key=lambda f: tuple(map(int, f.split(".")))))
        newest_item = max((item for item, _ in entries), key=lambda i: i.get("upload_time_iso_8601") or "")
        small = max(item["size"] for item, _ in entries) < SHIM_BYTES
        # a shim's METADATA is its whole content: read it out of the 2 kB wheel when PyPI serves none
        metadata = metadata_of(api, [item for item, _ in entries], lazy=small)
        requires = metadata.get_all("Requires-Dist") or [] if metadata else []
        kept, cuda = pins(requires)
        shim_of = ""
        if small:
            # the target whose marker holds on this platform (tensorflow 2.13 arm64 -> tensorflow-macos);
            # tensorflow-macos 2.15.1 on arm64 names only itself: recorded as such, it installs no TensorFlow
            environment = MARKER_ENVIRONMENTS[platform]
            targets = [canonicalize_name(Requirement(r).name) for r in kept
                       if Requirement(r).marker and Requirement(r).marker.evaluate(environment)
                       and canonicalize_name(Requirement(r).name).startswith("tensorflow")]
            shim_of = targets[0] if targets else ""
        return {
            "distribution": name,
            "version": str(version),
            "platform": platform,
            "pythons": sorted(pythons, key=lambda p: tuple(map(int, p.split(".")))),
            "tags": sorted(tags),
            "floor": max(floors, key=lambda f: tuple(map(int, f.split(".")))) if floors else "",
            "requires_python": (metadata.get("Requires-Python") if metadata else None) or "",
            "kind": "shim" if small else "real",
            "shim_of": shim_of,
            "prerelease": version.is_prerelease,
            "yanked": all(item.get("yanked") for item, _ in entries),
            "uploaded": (newest_item.get("upload_time_iso_8601") or "")[:10],
            "pins": kept,
            "and_cuda": cuda if platform == "linux-x86_64" else [],
            "pins_from": platform if metadata else "",
            "source": SOURCE.format(name=name, version=version),
            "verified": True,
            "_files": [item for item, _ in entries],
        }

    rows = list(pool.map(build, jobs))
    if name != "tensorflow-metal":  # its Requires-Dist (wheel, six) pins nothing TensorFlow needs
        unread = {}
        for row in rows:
            if row["kind"] == "real":
                unread.setdefault(row["version"], []).append(row)
        # a release with no METADATA read yet; and every Linux x86_64 wheel, whose and-cuda extra no
        # other platform's METADATA declares
        unread = {v: rs for v, rs in unread.items() if not any(r["pins_from"] for r in rs)}
        for row in rows:
            if row["kind"] == "real" and row["platform"] == "linux-x86_64" and not row["pins_from"]:
                unread[row["version"]] = [row]

        def read_one(release_rows: list[dict[str, Any]]) -> None:
            row = min(release_rows, key=lambda r: min(f["size"] for f in r["_files"]))
            metadata = metadata_of(api, row["_files"], lazy=True)
            if metadata:
                row["pins"], cuda = pins(metadata.get_all("Requires-Dist") or [])
                row["and_cuda"] = cuda if row["platform"] == "linux-x86_64" else []
                row["requires_python"] = metadata.get("Requires-Python") or ""
                row["pins_from"] = row["platform"]

        list(pool.map(read_one, unread.values()))
    for row in rows:
        del row["_files"]
    return borrow_pins(rows)


def borrow_pins(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Where PyPI serves no METADATA for a platform's wheels, a real wheel takes the pins of a real
    wheel of the same release whose METADATA was read (`pins_from` names that platform; the pins of
    one release agree across platforms except for shims and markers). Shims never borrow."""
    read = {}
    for row in rows:
        if row["pins_from"] and row["kind"] == "real":
            read.setdefault(row["version"], row)
    for row in rows:
        donor = read.get(row["version"])
        if not row["pins_from"] and row["kind"] == "real" and donor:
            row["pins"], row["pins_from"] = list(donor["pins"]), donor["platform"]
            row["requires_python"] = row["requires_python"] or donor["requires_python"]
    return rows


def toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    return json.dumps(value)  # a JSON string is a valid TOML basic string


def array_of_tables(table: str, rows: list[dict[str, Any]]) -> list[str]:
    lines = []
    for row in rows:
        lines.append(f"[[{table}]]")
        lines.extend(f"{key} = {toml_value(value)}" for key, value in row.items())
        lines.append("")
    return lines


def render(rows: list[dict[str, Any]]) -> str:
    head = [
        "# GENERATED by tools/refresh_knowledge.py from PyPI: do not edit by hand, run the script.",
        "# One row per distribution, release and platform (macos-arm64 | macos-x86_64 | linux-x86_64 |",
        "# linux-aarch64 | windows-x86_64), read from the PyPI file list and the METADATA PyPI serves for",
        "# the newest wheel of that platform (PEP 658).",
        "#   pythons: CPython versions with a wheel; tags: interpreter-platform tags of those wheels.",
        "#   floor: the glibc (manylinux tag) or macOS (macosx tag) the wheels need at least; '' = no floor.",
        "#   kind: 'shim' = a wheel under 100 kB that only depends on `shim_of` (no tensorflow/ files).",
        "#   pins: Requires-Dist (no extras) of the packages whose versions break TensorFlow, verbatim;",
        "#   and_cuda: the and-cuda extra of the Linux x86_64 wheel. prerelease / yanked as PyPI says.",
        "#   pins_from: the platform whose wheel METADATA gave the pins (another one's when PyPI serves",
        "#   none for this platform; '' = none read: pins and shim_of unknown, not absent).",
        stamp(),
        "",
    ]
    return "\n".join(head + array_of_tables("wheel", rows))


# --- companions.toml ---------------------------------------------------------------------------------

COMPANION_TABLE = ROOT / "tfdoctor" / "knowledge" / "companions.toml"
COMPANIONS = ("tf-keras", "tensorflow-text", "tensorflow-io", "tensorflow-io-gcs-filesystem",
              "tensorflow-probability", "tensorflow-decision-forests", "tensorflow-hub", "tensorflow-addons",
              "tensorflow-model-optimization", "tensorflow-serving-api", "tensorflow-estimator", "tensorboard",
              "keras")
# TensorFlow 2.0.0 reached PyPI on 2019-09-30; companion releases uploaded before were made for TF 1.x
# (and the table is a third of the size without them).
COMPANION_OLDEST_UPLOAD = "2019-09-30"
COMPANION_SOURCE = "https://pypi.org/project/{name}/{version}/"
GENERATED_ON = "# generated on "  # the old header line (a comment), which --check still ignores
GENERATED = "generated = "  # the stamp line --check ignores: when the table was read, which the doctor reports


def stamp() -> str:
    """`generated = "YYYY-MM-DD"` (UTC): a top-level key of the table, so the doctor can say how old its
    knowledge is (tfdoctor/facts/knowledge_age.py) from the table itself."""
    return f'{GENERATED}"{datetime.datetime.now(datetime.timezone.utc).date().isoformat()}"'
_MACHINES = {"x86_64": "x86_64", "amd64": "x86_64", "intel": "x86_64", "universal": "x86_64", "arm64": "arm64",
             "aarch64": "aarch64", "i686": "x86", "32": "x86"}


def wheel_platforms(tag: str) -> list[str]:
    """A wheel platform tag as the table names platforms: 'any', 'linux-x86_64', 'linux-aarch64',
    'musllinux-x86_64', 'macos-x86_64', 'macos-arm64' (universal2: both), 'windows-x86_64'..."""
    if tag == "any":
        return ["any"]
    patterns = ((r"macosx_\d+_\d+_(.+)", "macos"), (r"(?:manylinux_\d+_\d+|manylinux\d*|linux)_(.+)", "linux"),
                (r"musllinux_\d+_\d+_(.+)", "musllinux"), (r"win_?(.*)", "windows"))
    for pattern, system in patterns:
        match = re.fullmatch(pattern, tag)
        if match:
            arch = match.group(1) or "x86"  # 'win32'
            if arch == "universal2":
                return ["macos-arm64", "macos-x86_64"]
            return [f"{system}-{_MACHINES.get(arch, arch)}"]
    return [tag]


def wheel_keys(tags: Iterable[Tag]) -> set[str]:
    """'cp311-cp311-linux-x86_64', 'py3-none-any': the interpreter and ABI tags as written, the platform
    as the table names it (the glibc/macOS floor left out: releases.toml records TensorFlow's)."""
    return {f"{t.interpreter}-{t.abi}-{platform}" for t in tags for platform in wheel_platforms(t.platform)}


def _requirement_key(lines: list[str], requires_python: str) -> tuple[frozenset[str], str]:
    """Two METADATA declare the same when their lines parse to the same requirements (the same line is
    written 'tensorflow (<2.16,>=2.15.0)' in one wheel and 'tensorflow <2.16,>=2.15.0' in another)."""
    return frozenset(str(Requirement(line)) for line in lines), str(SpecifierSet(requires_python))


def _invalid_line(lines: list[str], requires_python: str) -> str:
    """The first Requires-Dist line (or Requires-Python) that packaging cannot parse, quoted; '' if none."""
    for line in lines:
        try:
            Requirement(line)
        except InvalidRequirement:
            return f"Requires-Dist {line!r}"
    try:
        SpecifierSet(requires_python)
    except InvalidSpecifier:
        return f"Requires-Python {requires_python!r}"
    return ""


def companion_rows(name: str, pool: concurrent.futures.Executor) -> tuple[list[dict[str, Any]], list[str]]:
    """(rows, what was left out and why) for one companion."""
    api = JSON_API.format(name=name)
    project = json.loads(fetch(api))
    left_out: dict[str, list[str]] = {}
    jobs = []
    for text, files in project["releases"].items():
        try:
            version = Version(text)
        except InvalidVersion:
            continue
        wheels = [f for f in files if f["packagetype"] == "bdist_wheel" and not f.get("yanked")]
        uploaded = min((f.get("upload_time_iso_8601") or "" for f in files), default="")
        if version.is_prerelease or version.is_devrelease or not wheels or uploaded < COMPANION_OLDEST_UPLOAD:
            continue
        jobs.extend((version, uploaded[:10], item) for item in wheels)

    def read(job):
        version, uploaded, item = job
        # once more when a read fails after fetch()'s retries (a connection dropped mid range read); then
        # stop rather than write a table that silently lacks a wheel
        metadata = metadata_of(api, [item], lazy=True) or metadata_of(api, [item], lazy=True)
        if metadata is None:
            raise RuntimeError(f"no METADATA for {item['filename']}; run again")
        return version, uploaded, item, metadata

    by_release: dict[Version, list[tuple[str, dict, Any]]] = {}
    for version, uploaded, item, metadata in pool.map(read, jobs):
        by_release.setdefault(version, []).append((uploaded, item, metadata))
    rows = []
    for version in sorted(by_release, reverse=True):
        entries = by_release[version]
        variants: dict[tuple, list[tuple[dict, Any]]] = {}
        invalid = ""
        for _, item, metadata in entries:
            lines = [line.strip() for line in metadata.get_all("Requires-Dist") or []]
            requires_python = (metadata.get("Requires-Python") or "").strip()
            invalid = invalid or _invalid_line(lines, requires_python)
            if not invalid:
                variants.setdefault(_requirement_key(lines, requires_python), []).append((item, metadata))
        if invalid:
            # pip >= 24.1 ignores a release whose metadata packaging cannot parse ("Remove support for legacy
            # versions and dependency specifiers", https://pip.pypa.io/en/stable/news/#v24-1): no plan can use it
            left_out.setdefault(f"{name}: {invalid}, which packaging cannot parse (pip >= 24.1 ignores such "
                                f"releases)", []).append(str(version))
            continue
        release_rows = []
        for members in variants.values():
            keys = set().union(*(wheel_keys(parse_wheel_filename(item["filename"])[3]) for item, _ in members))
            # the lines as the newest wheel of this variant writes them
            _, metadata = max(members, key=lambda m: m[0].get("upload_time_iso_8601") or "")
            release_rows.append({
                "name": name,
                "version": str(version),
                "uploaded": entries[0][0],
                "requires_python": (metadata.get("Requires-Python") or "").strip(),
                "requires": [line.strip() for line in metadata.get_all("Requires-Dist") or []],
                "platforms": sorted({key.split("-", 2)[2] for key in keys}),
                "wheels": sorted(keys),
                "source": COMPANION_SOURCE.format(name=name, version=version),
                "verified": True,
            })
        rows.extend(sorted(release_rows, key=lambda row: row["wheels"]))  # the same order on every run
    return rows, [f"{reason}: {', '.join(reversed(versions))}" for reason, versions in left_out.items()]


def render_companions(rows: list[dict[str, Any]], left_out: list[str], generated_on: str) -> str:
    head = [
        "# GENERATED by tools/refresh_knowledge.py (`--only companions`) from PyPI: do not edit by hand, run the",
        "# script. Read from PyPI's JSON API file lists (https://pypi.org/pypi/<name>/json) and the METADATA of",
        "# every wheel (PEP 658, else read out of the wheel with range requests).",
        f'{GENERATED}"{generated_on}"',
        "# One [[release]] per companion release and distinct METADATA, newest first per companion (a release",
        "# whose wheels declare another TensorFlow build per platform has one row per variant).",
        "#   requires: every Requires-Dist line as written (extras and markers included).",
        "#   requires_python: Requires-Python as written; '' = none declared.",
        "#   platforms: what the wheels cover: any | linux-x86_64 | linux-aarch64 | macos-x86_64 | macos-arm64 |",
        "#   windows-x86_64 ...; wheels: interpreter-abi-platform of every wheel (py3-none-any, cp311-cp311-...).",
        "# Left out: pre-releases, yanked files, releases without a wheel, releases uploaded before",
        f"# {COMPANION_OLDEST_UPLOAD} (TensorFlow 2.0.0's release day: made for TensorFlow 1.x){':' if left_out else '.'}",
        *(f"#   {reason}" for reason in left_out),
        "",
    ]
    return "\n".join(head + array_of_tables("release", rows))


def companion_table(pool: concurrent.futures.Executor) -> tuple[str, str]:
    """(the text of companions.toml, a summary)."""
    rows: list[dict[str, Any]] = []
    left_out: list[str] = []
    for name in COMPANIONS:
        own_rows, own_left_out = companion_rows(name, pool)
        rows.extend(own_rows)
        left_out.extend(own_left_out)
    today = datetime.datetime.now(datetime.timezone.utc).date().isoformat()
    text = render_companions(rows, left_out, today)
    releases = {(r["name"], r["version"]) for r in rows}
    return text, f"{len(rows)} rows, {len(releases)} releases of {len(COMPANIONS)} companions, {len(left_out)} left out"


def without_date(text: str) -> str:
    return "\n".join(line for line in text.splitlines() if not line.startswith((GENERATED, GENERATED_ON)))


def release_table(pool: concurrent.futures.Executor) -> tuple[str, str]:
    """(the text of releases.toml, a summary)."""
    rows: list[dict[str, Any]] = []
    for name, oldest in DISTRIBUTIONS:
        rows.extend(rows_for(name, oldest, pool))
    rows.sort(key=lambda r: (r["distribution"], Version(r["version"]), r["platform"]))
    releases = {(r["distribution"], r["version"]) for r in rows}
    return render(rows), f"{len(rows)} rows, {len(releases)} releases of {len(DISTRIBUTIONS)} distributions"


# --- tested_locks.toml (issue 29) -------------------------------------------------------------------
# What each TensorFlow release's CI tested, per Python: the `requirements_lock_3_*.txt` at the release tag
# (pip-compile output: `name==version \` then `# via` lines naming who required it). Only the packages on
# TensorFlow's import path are kept: its own Requires-Dist names and, through the lock's `# via` lines,
# what those require (optree via keras).

LOCK_TABLE = ROOT / "tfdoctor" / "knowledge" / "tested_locks.toml"
LOCK_URL = "https://raw.githubusercontent.com/tensorflow/tensorflow/v{version}/requirements_lock_3_{minor}.txt"
LOCK_PAGE = "https://github.com/tensorflow/tensorflow/blob/v{version}/requirements_lock_3_{minor}.txt"
LOCK_PYTHONS = (9, 10, 11, 12, 13)
LOCK_OLDEST = "2.17.0"  # the locks moved to the repository's root with 2.17
_LOCK_PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[^\]]*\])?==([^\s;\\]+)")
_LOCK_VIA = re.compile(r"^\s*#\s+(?:via\s+)?(-r \S+|[A-Za-z0-9][A-Za-z0-9._-]*)\s*$")


def parse_lock(text: str) -> dict[str, tuple[str, set[str]]]:
    """canonical name -> (version, the names its `# via` lines give) of a pip-compile lock."""
    found: dict[str, tuple[str, set[str]]] = {}
    current: Optional[str] = None
    for line in text.splitlines():
        pin = _LOCK_PIN.match(line)
        if pin:
            current = str(canonicalize_name(pin.group(1)))
            found[current] = (pin.group(2), set())
            continue
        via = _LOCK_VIA.match(line)
        if via and current and not via.group(1).startswith("-r") and via.group(1) != "via":
            found[current][1].add(str(canonicalize_name(via.group(1))))
    return found


def on_import_path(lock: dict[str, tuple[str, set[str]]], roots: Iterable[str]) -> dict[str, str]:
    """The lock's pins that TensorFlow's Requires-Dist names (`roots`) or that a kept one requires."""
    kept = {str(canonicalize_name(r)) for r in roots} & set(lock)
    grew = True
    while grew:
        grew = False
        for name, (_, via) in lock.items():
            if name not in kept and via & kept:
                kept.add(name)
                grew = True
    return {name: lock[name][0] for name in sorted(kept)}


def lock_rows(version: str, minor: int, text: str, roots: Iterable[str]) -> list[dict[str, Any]]:
    source = LOCK_PAGE.format(version=version, minor=minor)
    return [{"tensorflow": version, "python": f"3.{minor}", "name": name, "version": pinned, "source": source}
            for name, pinned in on_import_path(parse_lock(text), roots).items()]


def render_locks(rows: list[dict[str, Any]]) -> str:
    head = ["# Generated by tools/refresh_knowledge.py --only locks: what each TensorFlow release's CI tested",
            "# (requirements_lock_3_*.txt at the release tag), only the packages on TensorFlow's import path.",
            stamp(), ""]
    return "\n".join(head + array_of_tables("tested", rows)) + "\n"


def lock_table(pool: concurrent.futures.Executor, locks_from: Optional[Path] = None) -> tuple[str, str]:
    """(the text of tested_locks.toml, a summary). The locks come from GitHub at each tag, or from
    `locks_from/<version>/requirements_lock_3_<minor>.txt` (a maintainer's copy, same files)."""
    import tomllib

    wheels = tomllib.loads(TABLE.read_text(encoding="utf-8")).get("wheel", [])
    versions = sorted({r["version"] for r in wheels if r.get("distribution") == "tensorflow"
                       and Version(r["version"]) >= Version(LOCK_OLDEST) and not Version(r["version"]).is_prerelease},
                      key=Version)

    def requires_dist(version: str) -> list[str]:
        """TensorFlow's own Requires-Dist names at that release (PyPI's JSON API for the release)."""
        info = json.loads(fetch(f"https://pypi.org/pypi/tensorflow/{version}/json")).get("info") or {}
        return [Requirement(line).name for line in info.get("requires_dist") or () if _parses(line)]

    roots = dict(zip(versions, pool.map(requires_dist, versions)))

    def one(version: str, minor: int) -> list[dict[str, Any]]:
        if locks_from is not None:
            path = locks_from / version / f"requirements_lock_3_{minor}.txt"
            text = path.read_text(encoding="utf-8") if path.exists() else None
        else:
            try:
                text = fetch(LOCK_URL.format(version=version, minor=minor)).decode("utf-8")
            except urllib.error.HTTPError:
                text = None  # no lock for that Python at that tag
        return lock_rows(version, minor, text, roots.get(version) or ()) if text else []

    jobs = [pool.submit(one, version, minor) for version in versions for minor in LOCK_PYTHONS]
    rows = [row for job in jobs for row in job.result()]
    return render_locks(rows), f"{len(rows)} rows, {len({r['tensorflow'] for r in rows})} releases"


def _parses(line: str) -> bool:
    try:
        Requirement(line)
        return True
    except InvalidRequirement:
        return False

# ------------------------------------------------------------------ libraries that need tf-keras (issue 29)
# tf_keras_users.toml: which releases of these libraries import tf_keras (Keras 2) themselves, read from the
# .py files of one wheel per release (the newest N final releases): under Keras 3 (TensorFlow 2.16+) they
# need tf-keras installed, and their layers are Keras 2 layers. Read from the wheel's own files, never from
# a description; each row cites the wheel's PyPI URL and the lines that import it.
TF_KERAS_USERS = ("tensorflow-hub", "tensorflow-model-optimization", "tensorflow-probability",
                  "tensorflow-decision-forests", "tensorflow-recommenders", "transformers", "tf-models-official",
                  "tf-agents", "tensorflowjs", "tensorflow-gnn", "deepface")
TF_KERAS_USERS_TABLE = ROOT / "tfdoctor" / "knowledge" / "tf_keras_users.toml"
TF_KERAS_USER_RELEASES = 4  # the newest final releases of each
# ... and the newest release of each minor series uploaded since TensorFlow 2.16 (Keras 3 as tf.keras) came out,
# so an older installed release finds its own series' row (transformers 4.x imports tf_keras, 5.x has no TF)
KERAS_3_SINCE = "2024-03-01"
TF_KERAS_USER_SERIES = 40
WHOLE_WHEEL_BYTES = 30_000_000  # below this, one download; above, HTTP ranges for the .py files only
SIMPLE_API = "https://pypi.org/simple/{name}/"
_IMPORTS_TF_KERAS = re.compile(r"^\s*(?:import tf_keras\b|from tf_keras\b)")
_SETS_LEGACY = re.compile(r"environ\[['\"]TF_USE_LEGACY_KERAS['\"]\]\s*=")


def simple_files(name: str) -> list[dict[str, Any]]:
    """The project's files from PyPI's simple API (JSON, PEP 691): filename, url, size, yanked."""
    request = urllib.request.Request(SIMPLE_API.format(name=name),
                                     headers={"Accept": "application/vnd.pypi.simple.v1+json"})
    with urllib.request.urlopen(request, timeout=60) as response:
        return json.loads(response.read())["files"]


def _wheel_preference(filename: str) -> tuple[int, int]:
    """Pure-Python wheels first, then CPython 3.11 manylinux x86_64, then the rest (one wheel says it all:
    the .py files are the same on every platform)."""
    return (0 if filename.endswith("-none-any.whl") else 1 if "cp311" in filename and "manylinux" in filename
            and "x86_64" in filename else 2, 0)


def releases_to_read(by_version: Mapping[Version, list[dict[str, Any]]], newest: int, since: str,
                     series_most: int) -> list[Version]:
    """The newest `newest` releases, and the newest release of each minor series uploaded since `since` (at most
    `series_most` series), newest first: an older installed release then finds its own series' row."""
    ordered = sorted(by_version, reverse=True)
    series: dict[tuple[int, ...], Version] = {}
    for version in ordered:
        uploaded = min(str(i.get("upload-time") or "") for i in by_version[version])
        if uploaded >= since:
            # a 0.0.x library (deepface) has no minor series: each release is its own
            key = version.release[:2] if any(version.release[:2]) else version.release[:3]
            series.setdefault(key, version)
    return sorted(set(ordered[:newest]) | set(sorted(series.values(), reverse=True)[:series_most]), reverse=True)


def tf_keras_rows(name: str) -> list[dict[str, Any]]:
    by_version: dict[Version, list[dict[str, Any]]] = {}
    for item in simple_files(name):
        if not item["filename"].endswith(".whl") or item.get("yanked"):
            continue
        try:
            version = parse_wheel_filename(item["filename"])[1]
        except Exception:  # an invalid wheel name on PyPI: not ours to read
            continue
        if not version.is_prerelease and not version.is_devrelease:
            by_version.setdefault(version, []).append(item)
    rows = []
    for version in releases_to_read(by_version, TF_KERAS_USER_RELEASES, KERAS_3_SINCE, TF_KERAS_USER_SERIES):
        item = min(by_version[version], key=lambda i: _wheel_preference(i["filename"]))
        size = item.get("size") or 0
        source = RangeFile(item["url"], size) if size > WHOLE_WHEEL_BYTES else io.BytesIO(fetch(item["url"]))
        imports, sets_legacy, requires = [], False, []
        with zipfile.ZipFile(source) as wheel:
            for member in wheel.namelist():
                if member.endswith(".dist-info/METADATA"):
                    metadata = parse_metadata(wheel.read(member))
                    requires = [line for line in metadata.get_all("Requires-Dist") or []
                                if canonicalize_name(Requirement(line).name) == "tf-keras"]
                if not member.endswith(".py") or "_test" in member or "/testing/" in member or "/tests/" in member:
                    continue
                for number, line in enumerate(wheel.read(member).decode("utf-8", "replace").splitlines(), 1):
                    if _IMPORTS_TF_KERAS.match(line):
                        imports.append(f"{member}:{number}")
                    sets_legacy = sets_legacy or bool(_SETS_LEGACY.search(line))
        rows.append({"distribution": name, "release": str(version), "imports_tf_keras": imports[:5],
                     "import_count": len(imports), "requires_tf_keras": requires, "sets_legacy_variable": sets_legacy,
                     "wheel": item["filename"], "source": item["url"], "verified": True})
    return rows


def tf_keras_users_table(pool: concurrent.futures.Executor) -> tuple[str, str]:
    """(the text of tf_keras_users.toml, a summary)."""
    rows = [row for rows in pool.map(tf_keras_rows, TF_KERAS_USERS) for row in rows]
    head = [
        "# GENERATED by tools/refresh_knowledge.py (`--only tf-keras-users`) from the wheels on PyPI: do not edit by",
        "# hand, run the script. One row per release (the newest few of each library, and the newest of each minor",
        "# series since TensorFlow 2.16 made Keras 3 its tf.keras): the lines of its own .py",
        "# files that import tf_keras (Keras 2), its Requires-Dist naming tf-keras, and whether it sets",
        "# TF_USE_LEGACY_KERAS itself. A release that imports tf_keras needs tf-keras under Keras 3 (TensorFlow",
        "# 2.16+); its layers are Keras 2 layers, which a Keras 3 tf.keras model does not take.",
        stamp(),
        "",
    ]
    users = sorted({r["distribution"] for r in rows if r["imports_tf_keras"]})
    return ("\n".join(head + array_of_tables("release", rows)),
            f"{len(rows)} releases of {len(TF_KERAS_USERS)} libraries; importing tf_keras: {', '.join(users)}")


# ------------------------------------------------------------------ companions' import-time checks (issue 29)
# companion_import_checks.toml: what a companion release checks about TensorFlow when it is imported, read from
# its wheel's own source (its METADATA names no TensorFlow, or not the one it checks): tensorflow-probability's
# _ensure_tf_install raises below required_tensorflow_version; tensorflow-addons warns outside
# INCLUSIVE_MIN_TF_VERSION..EXCLUSIVE_MAX_TF_VERSION; tensorflow-decision-forests warns unless tf.__version__ is
# one of compatible_tf_versions.
IMPORT_CHECKS_TABLE = ROOT / "tfdoctor" / "knowledge" / "companion_import_checks.toml"
IMPORT_CHECK_RELEASES = 6
# ... and the newest of each minor series since 2022 (TF-DF 1.x, TFP 0.19+, addons 0.19+), for older installs
IMPORT_CHECKS_SINCE = "2022-01-01"
IMPORT_CHECK_SERIES = 20
IMPORT_CHECKS = {
    # distribution: (files to read, how the release enforces it)
    "tensorflow-probability": (("tensorflow_probability/python/__init__.py", "tensorflow_probability/__init__.py"), "raises"),
    "tensorflow-addons": (("tensorflow_addons/version.py",), "warns"),
    "tensorflow-decision-forests": (("tensorflow_decision_forests/__init__.py",), "warns"),
}
_ASSIGNED = re.compile(r"^\s*(required_tensorflow_version|INCLUSIVE_MIN_TF_VERSION|EXCLUSIVE_MAX_TF_VERSION|"
                       r"compatible_tf_versions)\s*=\s*(.+?)\s*(?:#.*)?$")


def import_check_rows(name: str) -> list[dict[str, Any]]:
    import ast

    members, enforced = IMPORT_CHECKS[name]
    by_version: dict[Version, list[dict[str, Any]]] = {}
    for item in simple_files(name):
        if item["filename"].endswith(".whl") and not item.get("yanked"):
            version = parse_wheel_filename(item["filename"])[1]
            if not version.is_prerelease and not version.is_devrelease:
                by_version.setdefault(version, []).append(item)
    rows = []
    for version in releases_to_read(by_version, IMPORT_CHECK_RELEASES, IMPORT_CHECKS_SINCE, IMPORT_CHECK_SERIES):
        item = min(by_version[version], key=lambda i: _wheel_preference(i["filename"]))
        size = item.get("size") or 0
        source = RangeFile(item["url"], size) if size > WHOLE_WHEEL_BYTES else io.BytesIO(fetch(item["url"]))
        found: dict[str, Any] = {}
        where = ""
        with zipfile.ZipFile(source) as wheel:
            names = set(wheel.namelist())
            for member in (m for m in members if m in names):
                for number, line in enumerate(wheel.read(member).decode("utf-8", "replace").splitlines(), 1):
                    match = _ASSIGNED.match(line)
                    if match and match.group(1) not in found:
                        found[match.group(1)] = ast.literal_eval(match.group(2))
                        where = where or f"{member}:{number}"
                if found:
                    break
        if not found:
            continue
        any_of = [str(v) for v in found.get("compatible_tf_versions") or ()]
        clauses = []
        if "required_tensorflow_version" in found:
            clauses.append(f">={found['required_tensorflow_version']}")
        if "INCLUSIVE_MIN_TF_VERSION" in found:
            clauses.append(f">={found['INCLUSIVE_MIN_TF_VERSION']}")
        if "EXCLUSIVE_MAX_TF_VERSION" in found:
            clauses.append(f"<{found['EXCLUSIVE_MAX_TF_VERSION']}")
        rows.append({"distribution": name, "release": str(version), "tensorflow": ",".join(clauses), "any_of": any_of,
                     "enforced": enforced, "read_at": where, "wheel": item["filename"], "source": item["url"],
                     "verified": True})
    return rows


def import_checks_table(pool: concurrent.futures.Executor) -> tuple[str, str]:
    """(the text of companion_import_checks.toml, a summary)."""
    rows = [row for rows in pool.map(import_check_rows, IMPORT_CHECKS) for row in rows]
    head = [
        "# GENERATED by tools/refresh_knowledge.py (`--only import-checks`) from the wheels on PyPI: do not edit by hand,",
        "# run the script. What a companion release checks about TensorFlow when imported, read from its own source",
        "# (`read_at`: file:line in the wheel). tensorflow: the specifier it accepts; any_of: the tf.__version__ values",
        "# it accepts (tensorflow-decision-forests); enforced: raises (the import fails) or warns.",
        stamp(),
        "",
    ]
    return "\n".join(head + array_of_tables("import_check", rows)), f"{len(rows)} releases of {len(IMPORT_CHECKS)} companions"


# ------------------------------------------------------------------ each Linux wheel's build_info (issue 29)
# build_info.toml: tensorflow/python/platform/build_info.py of one Linux x86_64 `tensorflow` wheel per release
# (what tf.sysconfig.get_build_info() returns), read with HTTP ranges (~2 MB of a 600 MB wheel): the CUDA and
# cuDNN the build was made with and cuda_compute_capabilities (sm_XY: native kernels, compute_XY: PTX the
# driver can JIT). The checks read it where the TensorFlow child did not record build_info (a saved report,
# an import that failed).
BUILD_INFO_TABLE = ROOT / "tfdoctor" / "knowledge" / "build_info.toml"
BUILD_INFO_OLDEST = "2.4.0"
BUILD_INFO_MEMBER = "tensorflow/python/platform/build_info.py"


def _build_info_of(text: str) -> dict[str, Any]:
    """The OrderedDict literal of a build_info.py, read without running it."""
    import ast

    tree = ast.parse(text)
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "build_info" for t in node.targets):
            call = node.value
            if isinstance(call, ast.Call) and call.args:
                return dict(ast.literal_eval(call.args[0]))
    return {}


def build_info_rows(pool: concurrent.futures.Executor) -> list[dict[str, Any]]:
    files = simple_files("tensorflow")
    by_version: dict[Version, list[dict[str, Any]]] = {}
    for item in files:
        name = item["filename"]
        if not name.endswith(".whl") or item.get("yanked") or "manylinux" not in name or "x86_64" not in name:
            continue
        version = parse_wheel_filename(name)[1]
        if version >= Version(BUILD_INFO_OLDEST):
            by_version.setdefault(version, []).append(item)
    kept = kept_versions({str(v): [{"packagetype": "bdist_wheel"}] for v in by_version}, BUILD_INFO_OLDEST)

    def read(version: Version) -> dict[str, Any]:
        item = min(by_version[version], key=lambda i: i.get("size") or 0)
        with zipfile.ZipFile(RangeFile(item["url"], item["size"])) as wheel:
            info = _build_info_of(wheel.read(BUILD_INFO_MEMBER).decode("utf-8"))
        capabilities = [str(c) for c in info.get("cuda_compute_capabilities") or ()]
        return {"tensorflow": str(version), "platform": "linux-x86_64",
                "is_cuda_build": bool(info.get("is_cuda_build")),
                "cuda_version": str(info.get("cuda_version") or ""), "cudnn_version": str(info.get("cudnn_version") or ""),
                "cuda_compute_capabilities": capabilities,
                "native": [c.replace("compute_", "sm_") for c in capabilities],
                "ptx": [c for c in capabilities if c.startswith("compute_")],
                "keys": sorted(info), "wheel": item["filename"], "source": item["url"], "verified": True}

    return sorted(pool.map(read, kept), key=lambda r: Version(r["tensorflow"]))


def build_info_table(pool: concurrent.futures.Executor) -> tuple[str, str]:
    """(the text of build_info.toml, a summary)."""
    rows = build_info_rows(pool)
    head = [
        "# GENERATED by tools/refresh_knowledge.py (`--only build-info`) from the wheels on PyPI: do not edit by hand,",
        "# run the script. One row per `tensorflow` release with a Linux x86_64 wheel: its",
        "# tensorflow/python/platform/build_info.py as the wheel ships it (read with HTTP ranges).",
        "#   cuda_compute_capabilities: as written. TensorFlow's .bazelrc: sm_XY builds kernels (SASS) for XY only,",
        "#   compute_XY builds SASS and PTX for XY. native: the architectures with kernels (both kinds; they run on",
        "#   later minors of the same major); ptx: the compute_XY entries (PTX the driver JIT-compiles on a newer GPU).",
        "#   Empty where the build says nothing (2.22.0rc0 dropped the CUDA keys: `keys` lists what is there).",
        stamp(),
        "",
    ]
    return "\n".join(head + array_of_tables("build", rows)), f"{len(rows)} releases"


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare with the tables instead of writing them")
    parser.add_argument("--only", choices=("releases", "companions", "tf-keras-users", "build-info", "import-checks",
                                           "locks"), help="one table (default: all)")
    parser.add_argument("--locks-from", type=Path, help="read the TensorFlow locks from this folder, not GitHub")
    args = parser.parse_args(argv)
    tables = {"releases": (TABLE, release_table), "companions": (COMPANION_TABLE, companion_table),
              "tf-keras-users": (TF_KERAS_USERS_TABLE, tf_keras_users_table),
              "build-info": (BUILD_INFO_TABLE, build_info_table),
              "import-checks": (IMPORT_CHECKS_TABLE, import_checks_table),
              "locks": (LOCK_TABLE, lambda pool: lock_table(pool, args.locks_from))}
    status = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=8) as pool:
        for key, (path, build) in tables.items():
            if args.only and key != args.only:
                continue
            started = time.monotonic()
            try:
                text, summary = build(pool)
            except (OSError, ValueError) as error:  # urllib's errors are OSErrors; a broken answer a ValueError
                print(f"could not read {path.name}'s sources: {error}", file=sys.stderr)
                return 2
            summary += f", {len(text) // 1024} KiB, {time.monotonic() - started:.1f} s"
            if args.check:
                same = path.exists() and without_date(path.read_text(encoding="utf-8")) == without_date(text)
                print(("up to date: " if same else "PyPI differs from the table: ") + f"{path.name}: {summary}")
                status = status or (0 if same else 1)
                continue
            path.write_text(text, encoding="utf-8")
            print(f"wrote {path.relative_to(ROOT)}: {summary}")
    return status


if __name__ == "__main__":
    sys.exit(main())
