"""Which installed distributions an import error points into (issue 29): the failing frames of the
traceback, and of every exception it was raised over ("During handling of the above exception...",
"Keras cannot be imported" over the real error), mapped to the distribution whose files hold them, and
the modules the messages name mapped to the distribution that installs them. Pure functions of the facts.

A file belongs to the distribution whose site directory holds it under one of its top-level names (the
heads of its RECORD's paths, or top_level.txt: recorded by child/target_info.py). Frames come from the
child's `frames` (child/tf_child.py `failing_frames`), or from the `File "..."` lines of the traceback
text in older reports.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Optional

from tfdoctor.facts import Facts, canonical_name, section

_FILE_LINE = re.compile(r'^\s*File "([^"]+)", line (\d+)')
# A module named in a message: `optree`, 'typing_extensions', "from 'google.protobuf'" ...
_QUOTED_MODULE = re.compile(r"""[`'"]([A-Za-z_][A-Za-z0-9_]*)(?:\.[A-Za-z0-9_.]*)?[`'"]""")
_PATH_IN_MESSAGE = re.compile(r"\((/[^()]+\.py)\)")


@dataclass(frozen=True)
class Owner:
    """A distribution an error points into, and how: 'frame' (a failing frame is its file, `depth` 0 the
    innermost) or 'message' (a message names its module or one of its files)."""

    name: str
    version: Optional[str]
    how: str
    depth: int
    evidence: str  # the file or the module name


def _error_records(facts: Facts) -> list[Mapping[str, Any]]:
    """The recorded exceptions of the TensorFlow child: the import's, then tf.keras's."""
    tf = section(facts, "tensorflow")
    found = []
    if isinstance(tf.get("exception"), Mapping):
        found.append(tf["exception"])
    keras = tf.get("keras")
    if isinstance(keras, Mapping) and isinstance(keras.get("error"), Mapping) and not keras.get("layer_ok"):
        found.append(keras["error"])
    return found


def frames_of(error: Mapping[str, Any]) -> list[str]:
    """The failing frames' files, innermost first (exceptions raised over others follow their own)."""
    recorded = error.get("frames")
    if isinstance(recorded, list) and recorded:
        return [str(f.get("file")) for f in recorded if isinstance(f, Mapping) and f.get("file")]
    files = [m.group(1) for m in map(_FILE_LINE.match, error.get("traceback") or ()) if m]
    return list(reversed(files))


def _messages(error: Mapping[str, Any]) -> list[str]:
    texts = [str(error.get("message") or "")]
    texts += [str(c.get("message") or "") for c in error.get("causes") or () if isinstance(c, Mapping)]
    return texts


def _owning_table(facts: Facts) -> list[tuple[str, str, Mapping[str, Any]]]:
    """(directory prefix, top-level name, entry) for every recorded distribution with top-level names."""
    table = []
    for entry in facts.get("distributions") or ():
        if not isinstance(entry, Mapping) or not entry.get("location"):
            continue
        for top in entry.get("top_level") or ():
            table.append((os.path.join(str(entry["location"]), str(top)), str(top), entry))
    return table


def owner_of(facts: Facts, path: str, table: Optional[list] = None) -> Optional[Mapping[str, Any]]:
    """The recorded distribution whose files hold `path` (a package directory or a module file)."""
    for prefix, _, entry in table if table is not None else _owning_table(facts):
        if path == prefix + ".py" or path.startswith(prefix + os.sep) or path.startswith(prefix + "."):
            return entry
    return None


def _by_module(table: Iterable[tuple[str, str, Mapping[str, Any]]]) -> dict[str, Mapping[str, Any]]:
    found: dict[str, Mapping[str, Any]] = {}
    for _, top, entry in table:
        found.setdefault(top, entry)
    return found


def module_owners(facts: Facts) -> dict[str, Mapping[str, Any]]:
    """{top-level module name: the recorded distribution that installs it} (the first copy on sys.path)."""
    return _by_module(_owning_table(facts))


def error_owners(facts: Facts, error: Mapping[str, Any]) -> list[Owner]:
    """Distributions the error points into: owners of the failing frames, innermost first, then those
    whose modules or files the messages name. Each distribution once, at its first (strongest) mention."""
    table = _owning_table(facts)
    modules = _by_module(table)
    found: dict[str, Owner] = {}

    def add(entry: Mapping[str, Any], how: str, depth: int, evidence: str) -> None:
        name = canonical_name(str(entry.get("name")))
        found.setdefault(name, Owner(name, entry.get("version"), how, depth, evidence))

    for depth, path in enumerate(frames_of(error)):
        entry = owner_of(facts, path, table)
        if entry is not None:
            add(entry, "frame", depth, path)
    for text in _messages(error):
        for path in _PATH_IN_MESSAGE.findall(text):
            entry = owner_of(facts, path, table)
            if entry is not None:
                add(entry, "message", 0, path)
        for module in _QUOTED_MODULE.findall(text):
            if module in modules:
                add(modules[module], "message", 0, module)
    return list(found.values())


def owners(facts: Facts) -> list[Owner]:
    """The owners of every recorded import or tf.keras error, in that order, each once."""
    seen: dict[str, Owner] = {}
    for error in _error_records(facts):
        for owner in error_owners(facts, error):
            seen.setdefault(owner.name, owner)
    return list(seen.values())


def ties(owner_names: Iterable[str], requirer: str, required: str) -> bool:
    """Does a violated requirement explain an error pointing into these distributions? It does when the
    error points into the requirer (its code meets the wrong release) or into the required one."""
    names = {canonical_name(n) for n in owner_names}
    return canonical_name(requirer) in names or canonical_name(required) in names
