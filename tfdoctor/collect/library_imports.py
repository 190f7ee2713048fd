"""What a library's own files import on TensorFlow's side, read statically through its RECORD (issue 38, build 5).

A library that needs tf-keras under Keras 3 but is in no table (retina-face 0.0.17: `import tf_keras` in a function
its package runs at import) or whose new major no longer ships TensorFlow code (transformers 5) is known only by
what its installed files say. The RECORD lists them; each .py file it lists under the library's own site directory
is read as bytes (never imported, never executed) and searched for imports of tf_keras, tensorflow and keras, and of
the few modules of TensorFlow's stack a library may import without declaring them (STACK_MODULES: tensorboard, which
TensorFlow itself required up to 2.20, so keras-tuner 1.4.8 imports it in every trial and declares nothing).
A file that names tf_keras or one of those is parsed (`ast`) to tell a needed import from an optional one: inside a
`try` whose ImportError handler does not raise again, the library works without it.

Only distributions that plausibly matter are read: those whose Requires-Dist names a TensorFlow-family
distribution (any line, extras too) and the libraries the target child records for what they once shipped
(transformers); never TensorFlow's builds or what is released in step with it (keras, tf-keras, tensorboard). Each is read up to MAX_BYTES; the result is
cached by the RECORD's sha256 (and this reader's version) in the user's cache, so a second run reads one RECORD
per library and no source file. I/O is here; the checks read the result from facts["distributions"][i]["imports"].
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
import re
import stat
from pathlib import Path
from typing import Any, Iterable, Mapping, Optional

from tfdoctor.facts import canonical_name
from tfdoctor.facts.requires_dist import FAMILY, is_tensorflow_build

READER_VERSION = 2  # part of the cache key: a changed reading rule reads every library again
MAX_BYTES = 64 * 1024 * 1024  # per library: transformers 4.x is 60 MB of .py files, read once, then cached
MAX_FILES = 20_000
MAX_RECORD_BYTES = 8 * 1024 * 1024
MAX_LINES_KEPT = 5
# Libraries recorded for what an earlier release shipped (tfdoctor/child/target_info.py ALSO_RECORDED), read even
# though their Requires-Dist names no TensorFlow any more.
RECORDED_LIBRARIES = frozenset({"transformers"})
# TensorFlow's builds and what is released in step with it (their code is TensorFlow's own, and large); the doctor's
# own `tensorflow` extra. Companions (tensorflow-hub, -probability, ...) are read: their tables hold some releases only.
NOT_READ = frozenset({"keras", "keras-nightly", "tf-keras", "tf-keras-nightly", "tensorboard", "tb-nightly",
                      "tensorboard-data-server", "ml-dtypes", "tensorflow-io-gcs-filesystem", "tfdoctor"})
# matched at a line stripped of its leading space: a leading \s* is quadratic over a hostile run of spaces
_MAY_NAME_FAMILY = re.compile(r"\A(tensorflow|tf[-_.]|intel[-_.]tensorflow|keras|tensorboard|tb[-_.]nightly|ml[-_.]dtypes)",
                              re.I)
_REQUIREMENT_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")
# Modules of TensorFlow's stack whose needed imports are recorded by line (`stack_modules`), for the checks to judge
# whether anything installed provides them. Only tensorboard: TensorFlow's Requires-Dist carried it up to 2.20, so
# libraries import it without declaring it and break where TensorFlow 2.21 no longer brings it. tf_keras has its own
# fields (a Keras 3 question); tensorflow_hub, _probability, _datasets... are imported by large libraries
# (transformers) in the files of single models, where a missing one breaks that model alone: a finding for every such
# environment would warn healthy ones, so they are left out until an artifact says more.
STACK_MODULES = ("tensorboard",)
_IMPORT = re.compile(rb"^[ \t]*(?:import|from)[ \t]+(tf_keras|tensorflow|keras|tensorboard)\b", re.M)
_SETS_LEGACY = re.compile(rb"environ\[['\"]TF_USE_LEGACY_KERAS['\"]\]\s*=")
_CACHE_NAME = re.compile(r"^[0-9a-f]{64}$")


def wanted(entry: Mapping[str, Any]) -> bool:
    """Is this recorded distribution one whose files are read: not of the TensorFlow family (or the packages its
    import loads), with its metadata's path recorded, and requiring a family distribution or recorded for what it
    once shipped. Cheapest tests first: thousands of recorded distributions pass through here."""
    path = entry.get("metadata_path")
    if not isinstance(path, str) or not path.endswith(".dist-info"):
        return False  # most recorded distributions: only those on TensorFlow's closure carry a path
    name = canonical_name(str(entry.get("name") or ""))  # the child writes it canonical; a saved report may not
    if name not in RECORDED_LIBRARIES and not any(
            _MAY_NAME_FAMILY.match(str(line).lstrip()) and FAMILY.match(canonical_name(_requirement_name(str(line))))
            for line in entry.get("requires") or ()):
        return False
    return bool(name) and name not in NOT_READ and not name.startswith("nvidia-") and not is_tensorflow_build(name)


def _requirement_name(line: str) -> str:
    match = _REQUIREMENT_NAME.match(line)
    return match.group(1) if match else ""


def _read_regular(path: str, limit: int) -> Optional[bytes]:
    """The file's first `limit` bytes, when it is a regular file reached without following a link at its name."""
    try:
        descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    try:
        status = os.fstat(descriptor)
        if not stat.S_ISREG(status.st_mode):
            return None
        wanted_bytes, chunks = min(status.st_size, limit), []
        while wanted_bytes > 0:
            chunk = os.read(descriptor, wanted_bytes)
            if not chunk:
                break
            chunks.append(chunk)
            wanted_bytes -= len(chunk)
        return b"".join(chunks)
    except OSError:
        return None
    finally:
        os.close(descriptor)


def _record_paths(record: bytes) -> list[str]:
    import csv

    text = record.decode("utf-8", "replace")
    return [row[0] for row in csv.reader(text.splitlines()) if row]


class _Site:
    """The library's site directory, and which of its subdirectories stay inside it once links are resolved
    (each directory resolved once: a large library has thousands of files in a few hundred directories)."""

    def __init__(self, site: str) -> None:
        self.site = site.rstrip(os.sep)
        self.real = os.path.realpath(self.site)
        self._directories: dict[str, bool] = {}

    def inside(self, relative: str) -> Optional[str]:
        """The file's path when RECORD's entry stays inside the site directory: never an absolute path, a `..` that
        climbs out (a RECORD is data), or a directory link out of it; the file's own name is opened without
        following a link (_read_regular)."""
        if not relative or os.path.isabs(relative) or relative.startswith(("/", "\\")) or ":" in relative[:3]:
            return None
        joined = os.path.normpath(os.path.join(self.site, relative))
        if not joined.startswith(self.site + os.sep):
            return None
        directory = os.path.dirname(joined)
        if directory not in self._directories:
            real = os.path.realpath(directory)
            self._directories[directory] = real == self.real or real.startswith(self.real + os.sep)
        return joined if self._directories[directory] else None


def _optional_lines(source: bytes) -> set[int]:
    """Lines of `import tf_keras` that sit in a `try` whose ImportError handler goes on without it (no raise):
    the library falls back. Only statements are walked (not the expressions inside them, most of a tree), and a file
    without `try` is not parsed at all. A file that does not parse counts every import as needed."""
    if b"try" not in source:
        return set()
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return set()
    optional: set[int] = set()
    pending: list[tuple[ast.AST, bool]] = [(tree, False)]
    while pending:
        node, guarded = pending.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)) and guarded:
            optional.add(node.lineno)
        falls_back = isinstance(node, ast.Try) and any(
            _catches_import_error(h) and not any(isinstance(n, ast.Raise) for n in ast.walk(h)) for h in node.handlers)
        for name in ("body", "orelse", "finalbody", "handlers"):
            for child in getattr(node, name, None) or ():
                if isinstance(child, (ast.stmt, ast.ExceptHandler)):
                    pending.append((child, guarded or (falls_back and name == "body")))
    return optional


def _catches_import_error(handler: ast.ExceptHandler) -> bool:
    kinds = handler.type
    names = [kinds] if not isinstance(kinds, ast.Tuple) else list(kinds.elts)
    if kinds is None:
        return True
    return any(isinstance(n, ast.Name) and n.id in ("ImportError", "ModuleNotFoundError", "Exception", "BaseException")
               for n in names)


def read_library(metadata_path: str, record: bytes) -> dict[str, Any]:
    """What the .py files a RECORD lists import, read from disk: the lines that need tf_keras ('path:line'), how
    many import it only optionally, how many files import tensorflow or keras, the lines that need each module of
    STACK_MODULES (`stack_modules`, only those with one), whether one sets TF_USE_LEGACY_KERAS, how many files and
    bytes were read, and whether all were (`complete`)."""
    site = _Site(os.path.dirname(os.path.abspath(metadata_path)))
    needs: list[str] = []
    stack: dict[str, list[str]] = {}
    counts = {"tf_keras": 0, "tf_keras_optional": 0, "tensorflow": 0, "keras": 0}
    sets_legacy = False
    files = read = 0
    complete = True
    for relative in _record_paths(record):
        if not relative.endswith(".py") or ".dist-info/" in relative or relative.endswith("/setup.py"):
            continue
        path = site.inside(relative)
        if path is None:
            continue
        if files >= MAX_FILES or read >= MAX_BYTES:
            complete = False
            break
        data = _read_regular(path, MAX_BYTES - read + 1)
        if data is None:
            continue
        files += 1
        read += len(data)
        if read > MAX_BYTES:
            complete = False
        # a substring test first (memchr speed): most files of a large library name neither
        found = {match.group(1).decode() for match in _IMPORT.finditer(data)} if (
            b"keras" in data or b"tensorflow" in data or b"tensorboard" in data) else set()
        sets_legacy = sets_legacy or (b"TF_USE_LEGACY_KERAS" in data and bool(_SETS_LEGACY.search(data)))
        for module in ("tensorflow", "keras"):
            counts[module] += module in found
        named = [module for module in ("tf_keras", *STACK_MODULES) if module in found]
        if not named:
            continue
        optional = _optional_lines(data)
        where = relative.replace(os.sep, "/")
        for module in named:
            lines = [data.count(b"\n", 0, m.start()) + 1 for m in _IMPORT.finditer(data)
                     if m.group(1) == module.encode()]
            needed = [n for n in lines if n not in optional]
            if module == "tf_keras":
                counts["tf_keras" if needed else "tf_keras_optional"] += 1
                needs += [f"{where}:{n}" for n in needed]
            elif needed:
                stack.setdefault(module, []).extend(f"{where}:{n}" for n in needed)
    return {"tf_keras": needs[:MAX_LINES_KEPT], "tf_keras_files": counts["tf_keras"],
            "tf_keras_optional_files": counts["tf_keras_optional"], "tensorflow_files": counts["tensorflow"],
            "keras_files": counts["keras"], "stack_modules": {m: lines[:MAX_LINES_KEPT] for m, lines in stack.items()},
            "sets_legacy_variable": sets_legacy, "files_read": files,
            "bytes_read": read, "complete": complete}


def _cache_root(environ: Mapping[str, str]) -> Optional[Path]:
    from tfdoctor.files.own_files import cache_dir, private_dir

    base = cache_dir(environ)
    try:
        base.parent.mkdir(parents=True, exist_ok=True)
        return private_dir(base / "library-imports", base.parent)
    except OSError:
        return None  # no cache: every run reads the files (correct, only slower)


def _cached(root: Optional[Path], key: str) -> Optional[dict[str, Any]]:
    if root is None:
        return None
    data = _read_regular(str(root / f"{key}.json"), 1024 * 1024)
    try:
        found = json.loads(data) if data else None
    except ValueError:
        return None
    return found if isinstance(found, dict) and found.get("reader") == READER_VERSION else None


def _store(root: Optional[Path], key: str, value: Mapping[str, Any]) -> None:
    """Written beside and renamed over (a reader sees all of it or nothing), never through a link, not synced: a
    cache entry lost in a crash is read again next time."""
    if root is None:
        return
    scratch = root / f".{key}.{os.getpid()}.tmp"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        descriptor = os.open(scratch, flags, 0o600)
        try:
            os.write(descriptor, json.dumps(dict(value), sort_keys=True).encode())
        finally:
            os.close(descriptor)
        os.replace(scratch, root / f"{key}.json")
    except OSError:
        try:
            os.unlink(scratch)
        except OSError:
            pass


def with_imports(distributions: Iterable[Any], environ: Mapping[str, str] = os.environ) -> list[Any]:
    """The recorded distributions, each one worth reading (`wanted`) with an `imports` field: what its own files
    import, read once per RECORD and then from the cache."""
    entries = list(distributions)
    chosen = [e for e in entries if isinstance(e, dict) and wanted(e)]
    if not chosen:
        return entries
    root = _cache_root(environ)
    for entry in chosen:
        record = _read_regular(os.path.join(str(entry["metadata_path"]), "RECORD"), MAX_RECORD_BYTES)
        if not record:
            continue
        digest = hashlib.sha256(record).hexdigest()
        key = hashlib.sha256(f"{READER_VERSION}:{digest}".encode()).hexdigest()
        found = _cached(root, key) if _CACHE_NAME.match(key) else None
        if found is None:
            found = {"reader": READER_VERSION, **read_library(str(entry["metadata_path"]), record)}
            _store(root, key, found)
        imports = {k: v for k, v in found.items() if k != "reader"}
        entry["imports"] = {"record_sha256": digest, **imports}
    return entries
