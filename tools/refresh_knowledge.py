"""Regenerate tfdoctor/knowledge/releases.toml from PyPI (maintainers only; needs the network).

    .venv/bin/python tools/refresh_knowledge.py            # rewrite the table, print a summary
    .venv/bin/python tools/refresh_knowledge.py --check    # exit 1 when PyPI says something new

For every TensorFlow distribution (and tensorflow-metal) it reads the project's file list from PyPI's
JSON API (https://pypi.org/pypi/<name>/json) and, for one wheel per release and platform, that wheel's
METADATA as PyPI serves it beside the file (PEP 658: <wheel url>.metadata). One row per distribution,
release and platform: the CPython versions with a wheel and their tags, Requires-Python, the glibc or
macOS floor of the platform tag, whether the wheel is a ~2 kB shim (and of what), and the pins that
matter (Requires-Dist of the packages TensorFlow breaks with). The doctor never runs this: it reads
the table, offline. Facts PyPI cannot give (what loads on a Mac, driver minimums, breaking pins that
metadata does not declare) stay in the curated tables (macos.toml, linux.toml).
"""

from __future__ import annotations

import argparse
import concurrent.futures
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
from typing import Any, Iterable, Optional

from packaging.requirements import Requirement
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
        for item, wheel_tags in entries:
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
        "",
    ]
    body = []
    for row in rows:
        body.append("[[wheel]]")
        body.extend(f"{key} = {toml_value(value)}" for key, value in row.items())
        body.append("")
    return "\n".join(head + body)


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare with the table instead of writing it")
    args = parser.parse_args(argv)
    started = time.monotonic()
    rows: list[dict[str, Any]] = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=8) as pool:
        for name, oldest in DISTRIBUTIONS:
            rows.extend(rows_for(name, oldest, pool))
    rows.sort(key=lambda r: (r["distribution"], Version(r["version"]), r["platform"]))
    text = render(rows)
    releases = {(r["distribution"], r["version"]) for r in rows}
    summary = (f"{len(rows)} rows, {len(releases)} releases of {len(DISTRIBUTIONS)} distributions, "
               f"{len(text) // 1024} KiB, {time.monotonic() - started:.1f} s")
    if args.check:
        same = TABLE.exists() and TABLE.read_text(encoding="utf-8") == text
        print(("up to date: " if same else "PyPI differs from the table: ") + summary)
        return 0 if same else 1
    TABLE.write_text(text, encoding="utf-8")
    print(f"wrote {TABLE.relative_to(ROOT)}: {summary}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
