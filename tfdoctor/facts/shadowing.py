"""Which module the user's code gets under the names TensorFlow's stack is imported by, and whether a
copy from outside the installation comes first: a tensorflow.py in the project folder, an old NumPy on
PYTHONPATH, a user-site or .pth copy ahead of site-packages; and which module of the standard library a
file of the project folder replaces (a json.py). Pure functions of `python.module_origins` (recorded by
child/target_info.py, which reads the folder's names and imports nothing from it); shared by the
shadowing check and the tensorflow-import check (an import that fails because it imported the wrong copy).
"""

from __future__ import annotations

import ntpath
import posixpath
from dataclasses import dataclass
from typing import Any, Mapping, Optional

from tfdoctor.facts import Facts, section

# Where a module may come from without hiding anything: the installation's own site directories, the
# standard library, and an import hook (an editable install's finder) that the installation put there.
INSTALLED_KINDS = ("site-packages", "stdlib", "finder")
# Never an installation: a file or folder of the project named like the module.
PROJECT_KIND = "working-directory"
# Imported by `import tensorflow` itself (keras only when tf.keras is reached).
IMPORTED_WITH_TENSORFLOW = ("tensorflow", "numpy", "google", "google.protobuf", "ml_dtypes")
# The distribution that installs each module (tensorflow: whichever build owns tensorflow/).
DISTRIBUTION_OF = {"keras": "keras", "numpy": "numpy", "google.protobuf": "protobuf", "google": "protobuf",
                   "ml_dtypes": "ml-dtypes"}
# Modules of the standard library that no library imports: its own test suite ("meant for internal use by
# Python only", https://docs.python.org/3/library/test.html) and its demos. A project's test/ package hides
# nothing the user's code or TensorFlow reaches.
STDLIB_UNUSED = frozenset({"test", "idlelib", "turtledemo", "this", "antigravity", "__hello__", "__phello__"})
# Why a file named like a module of the standard library replaces nothing (recorded by the child).
MASKED_BY = {"builtin": "a built-in module", "frozen": "a frozen module",
             "startup": "imported when Python starts, before any code of the folder runs"}


@dataclass(frozen=True)
class Hiding:
    """A copy of `module` from outside the installation that `import` finds first."""

    module: str  # the name whose copy comes first: 'tensorflow', 'numpy', 'google' (for a google.py)
    imported_as: str  # what code imports: 'google.protobuf' for a google.py that hides it
    origin: str  # the file or package directory imported
    entry: str  # the sys.path entry that holds it ('' is the working directory)
    kind: str  # working-directory | PYTHONPATH | user-site | pth | other
    hidden: tuple[str, ...] = ()  # origins of the installation's own copies further down sys.path
    hidden_entries: tuple[str, ...] = ()  # their sys.path entries (site-packages)
    pth: Optional[str] = None  # kind 'pth': the .pth file that adds the entry
    pythonpath_item: Optional[str] = None  # kind 'PYTHONPATH': the item of the variable that made the entry
    stdlib: bool = False  # the module it replaces is the standard library's

    @property
    def is_package(self) -> bool:
        return _basename(self.origin) in ("__init__.py", "__init__.pyc")

    @property
    def path(self) -> str:
        """What to rename or remove: the package directory, or the module file."""
        return _dirname(self.origin) if self.is_package else self.origin

    def to_dict(self) -> dict[str, Any]:
        found: dict[str, Any] = {"module": self.module, "imported_as": self.imported_as, "origin": self.origin, "entry": self.entry,
                 "kind": self.kind, "hidden": list(self.hidden), "hidden_entries": list(self.hidden_entries), "pth": self.pth,
                 "pythonpath_item": self.pythonpath_item}
        if self.stdlib:
            found["stdlib"] = True
        return found


def _is_windows_path(path: str) -> bool:
    return "\\" in path or (len(path) > 1 and path[1] == ":")


def _dirname(path: str) -> str:
    return (ntpath if _is_windows_path(path) else posixpath).dirname(path)


def _basename(path: str) -> str:
    return (ntpath if _is_windows_path(path) else posixpath).basename(path)


def origins(facts: Facts) -> Optional[Mapping[str, Any]]:
    """The recorded `python.module_origins`, or None (older reports, or a child that could not say)."""
    recorded = section(facts, "python").get("module_origins")
    return recorded if isinstance(recorded, Mapping) and isinstance(recorded.get("modules"), list) else None


def _entry(recorded: Mapping[str, Any], path: Optional[str]) -> Mapping[str, Any]:
    return next((e for e in recorded.get("entries") or () if isinstance(e, Mapping) and e.get("path") == path), {})


def _hiding_of(recorded: Mapping[str, Any], module: Mapping[str, Any]) -> Optional[Hiding]:
    name = str(module.get("module") or "")
    if not module.get("found"):
        # `import google.protobuf` fails when a regular `google` of the project comes first
        parent = module.get("parent") if isinstance(module.get("parent"), Mapping) else None
        if not parent or not parent.get("found") or parent.get("namespace") or parent.get("kind") != PROJECT_KIND:
            return None
        module, imported_as, name = parent, name, name.rpartition(".")[0]
    else:
        imported_as = name
    kind = str(module.get("kind") or "")
    if kind in INSTALLED_KINDS or module.get("namespace") or not module.get("origin"):
        return None
    copies = [c for c in module.get("copies") or ()
              if isinstance(c, Mapping) and c.get("kind") == "site-packages" and c.get("origin")]
    hidden = tuple(str(c["origin"]) for c in copies)
    if kind != PROJECT_KIND and not hidden:
        return None  # an install of its own (pip install --user, --target on PYTHONPATH, an editable install)
    entry = _entry(recorded, module.get("entry"))
    return Hiding(name, imported_as, str(module["origin"]), str(module.get("entry") or ""), kind, hidden,
                  tuple(str(c.get("entry") or "") for c in copies), entry.get("pth"), entry.get("pythonpath_item"))


def hiding(facts: Facts) -> list[Hiding]:
    """Every module a copy from outside the installation hides, in the order they were recorded, then the
    modules of the standard library files of the working directory replace."""
    recorded = origins(facts)
    if recorded is None:
        return []
    found = [_hiding_of(recorded, m) for m in recorded["modules"] if isinstance(m, Mapping)]
    return [h for h in found if h is not None] + stdlib_hiding(recorded)


def _stdlib_shadows(recorded: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return [s for s in recorded.get("stdlib_shadows") or ()
            if isinstance(s, Mapping) and s.get("module") and s.get("origin")]


def stdlib_hiding(recorded: Mapping[str, Any]) -> list[Hiding]:
    """Files of the working directory that `import` loads in place of a module of the standard library (a
    json.py: every `import json` of the user's code, of TensorFlow and of pip run from there gets it)."""
    return [Hiding(str(s["module"]), str(s["module"]), str(s["origin"]), "", PROJECT_KIND,
                   (str(s["stdlib_origin"]),) if s.get("stdlib_origin") else (), (), stdlib=True)
            for s in _stdlib_shadows(recorded) if not s.get("masked_by") and s["module"] not in STDLIB_UNUSED]


def harmless_stdlib_names(recorded: Mapping[str, Any]) -> list[str]:
    """'os.py (imported when Python starts, ...)': files named like a module of the standard library that
    replace nothing, and why."""
    notes = []
    for s in _stdlib_shadows(recorded):
        why = MASKED_BY.get(str(s.get("masked_by"))) if s.get("masked_by") else (
            "a module no library imports" if s["module"] in STDLIB_UNUSED else None)
        if why:
            notes.append(f"{s['origin']} is named like the standard library's {s['module']}, which stays in place: {why}")
    return notes


def where(hiding: Hiding, facts: Facts) -> str:
    """The entry that put the copy first, in words."""
    recorded = origins(facts) or {}
    if hiding.kind == PROJECT_KIND:
        return (f"the working directory {recorded.get('cwd') or '.'} (first on sys.path, as for `python script.py` "
                "run from this folder)")
    if hiding.kind == "PYTHONPATH":
        return f"the PYTHONPATH entry {hiding.pythonpath_item or hiding.entry}"
    if hiding.kind == "user-site":
        return f"the user site {hiding.entry} (before site-packages)"
    if hiding.kind == "pth":
        return f"the sys.path entry {hiding.entry}, added by {hiding.pth}"
    return f"the sys.path entry {hiding.entry} (added by neither PYTHONPATH nor a .pth file)"
