"""Modules that hide the installed ones: what `import tensorflow` (numpy, keras, google.protobuf,
ml_dtypes) gets in the user's code, located the way the import system looks, from the folder the
doctor runs in; and files of that folder that replace a module of the standard library (a json.py,
which every `import json` there gets: the user's code, TensorFlow's, pip's). Found by reading names on
disk: the doctor never imports from the project folder.

A tensorflow.py (or numpy.py, keras/, google.py) in the project folder comes first on sys.path for
`python script.py` run there: the user sees `module 'tensorflow' has no attribute 'constant'` while
the installation is fine. A PYTHONPATH entry, a user-site copy or a .pth line ahead of site-packages
hides the installed copy the same way, and an install into the environment would not reach the code
either: the fix is a step in the user's shell or project (rename the file, drop the PYTHONPATH entry
and the shell line that sets it, PYTHONNOUSERSITE=1, disable the .pth file), and the plan holds its
install steps back until it is done (Repair.unhides).
"""

from __future__ import annotations

from typing import Any, Mapping, Optional

from tfdoctor.checking.registry import check
from tfdoctor.facts import Facts, canonical_name, host_system, shadowing
from tfdoctor.facts.shadowing import PROJECT_KIND, Hiding
from tfdoctor.results.model import Outcome, Remediation
from tfdoctor.results.repairs import Repair

PYTHON_PATH_DOCS = "https://docs.python.org/3/library/sys_path_init.html"
RENAMED_PREFIX = "my_"


def _installed_copy(facts: Facts, hiding: Hiding) -> str:
    """'numpy 2.1.3 in site-packages' for the copy it hides, 'the standard library's json', or 'the
    installed tensorflow'."""
    if hiding.stdlib:
        return f"the standard library's {hiding.module}"
    for entry in hiding.hidden_entries:
        installed = installed_at(facts, hiding.module, entry)
        if installed:
            return f"{installed} in site-packages"
    return f"the installed {hiding.imported_as}"


def _summary(facts: Facts, hiding: Hiding) -> str:
    installed = installed_at(facts, hiding.module, hiding.entry)
    what = hiding.origin + (f" ({installed})" if installed else "")
    instead = f", not {_installed_copy(facts, hiding)}" if hiding.hidden or hiding.kind == PROJECT_KIND else ""
    verb = "fails: it finds" if hiding.imported_as != hiding.module else "imports"
    return f"`import {hiding.imported_as}` {verb} {what} from {shadowing.where(hiding, facts)}{instead}"


def _renamed(path: str) -> str:
    head, _, tail = path.replace("\\", "/").rpartition("/")
    renamed = f"{head}/{RENAMED_PREFIX}{tail}" if head or path.startswith("/") else f"{RENAMED_PREFIX}{tail}"
    return renamed.replace("/", "\\") if "\\" in path else renamed


def _pythonpath_repair(facts: Facts, hidings: list[Hiding], recorded: Mapping[str, Any]) -> Optional[Repair]:
    """PYTHONPATH without the entries that hide: set to what remains, or unset when nothing does."""
    if not hidings:
        return None
    separator = path_separator(facts)
    drop = {h.pythonpath_item for h in hidings if h.pythonpath_item}
    items = [item for item in str(recorded.get("pythonpath") or "").split(separator) if item]
    remaining = [item for item in items if item not in drop]
    modules = tuple(dict.fromkeys(h.imported_as for h in hidings))
    reason = (f"PYTHONPATH puts {', '.join(sorted(drop)) or 'an entry'} ahead of site-packages, hiding the "
              f"installed {', '.join(modules)}")
    if remaining:
        return Repair.set_env("PYTHONPATH", separator.join(remaining), reason, unhides=modules)
    return Repair.unset_env("PYTHONPATH", reason, unhides=modules)


def _shell_advice(recorded: Mapping[str, Any]) -> str:
    lines = [line for line in recorded.get("shell_lines") or () if isinstance(line, Mapping)]
    if lines:
        where = "; ".join(f"{line.get('file')} line {line.get('line')} (`{line.get('text')}`)" for line in lines[:3])
        return f"PYTHONPATH is set in {where}: change that line too, or every new shell sets it again."
    return ("Change it where it is set too (a shell start-up file, the IDE's run configuration, a .env file), "
            "or it comes back.")


def _remediation(facts: Facts, hidings: list[Hiding]) -> Remediation:
    recorded = shadowing.origins(facts) or {}
    advice: list[str] = []
    repairs: list[Repair] = []
    for hiding in (h for h in hidings if h.kind == PROJECT_KIND):
        new_path = _renamed(hiding.path)
        instead = (f"the standard library's {hiding.imported_as} (for your code, TensorFlow and pip run from there)"
                   if hiding.stdlib else "the installed package")
        advice.append(f"Rename {hiding.path} (and the imports of it in your code): Python puts the folder a script "
                      f"runs from first on sys.path, so `import {hiding.imported_as}` finds that file instead of "
                      f"{instead}.")
        whose = "the standard library's" if hiding.stdlib else "the installed"
        repairs.append(Repair.rename(hiding.path, new_path, f"{hiding.path} hides {whose} "
                                     f"{hiding.imported_as} from code run in {recorded.get('cwd') or 'this folder'}",
                                     unhides=(hiding.imported_as,)))
    on_pythonpath = [h for h in hidings if h.kind == "PYTHONPATH"]
    repair = _pythonpath_repair(facts, on_pythonpath, recorded)
    if repair is not None:
        entries = ", ".join(dict.fromkeys(h.pythonpath_item or h.entry for h in on_pythonpath))
        advice.append(f"Remove {entries} from PYTHONPATH. {_shell_advice(recorded)}")
        repairs.append(repair)
    in_user_site = [h for h in hidings if h.kind == "user-site"]
    if in_user_site:
        modules = tuple(dict.fromkeys(h.imported_as for h in in_user_site))
        advice.append(f"Keep the user site out of this environment with PYTHONNOUSERSITE=1 (set it where you set "
                      f"up the environment), or remove the user-site copy of {', '.join(modules)} from "
                      f"{in_user_site[0].entry}.")
        repairs.append(Repair.set_env("PYTHONNOUSERSITE", "1", f"the user site {in_user_site[0].entry} hides the "
                                      f"installed {', '.join(modules)}", unhides=modules))
    for pth in dict.fromkeys(h.pth for h in hidings if h.kind == "pth" and h.pth):
        from_it = [h for h in hidings if h.pth == pth]
        modules = tuple(dict.fromkeys(h.imported_as for h in from_it))
        advice.append(f"{pth} adds {from_it[0].entry} ahead of site-packages: delete that line, or uninstall the "
                      f"distribution that wrote the file; renaming the file off .pth disables it whole.")
        repairs.append(Repair.rename(pth, pth + ".disabled", f"{pth} puts {from_it[0].entry} first, hiding the "
                                     f"installed {', '.join(modules)}", unhides=modules))
    for hiding in (h for h in hidings if h.kind == "other"):
        advice.append(f"Something other than PYTHONPATH or a .pth file (sitecustomize, an IDE, the code itself) puts "
                      f"{hiding.entry} on sys.path ahead of site-packages: remove it there.")
    return Remediation(" ".join(advice), (), PYTHON_PATH_DOCS, tuple(repairs))


def _installed_notes(recorded: Mapping[str, Any]) -> list[str]:
    """Modules from outside site-packages that hide nothing (a user-site or --target install, an editable one),
    and files named like a module of the standard library that replace nothing."""
    notes = shadowing.harmless_stdlib_names(recorded)
    for module in recorded.get("modules") or ():
        if not isinstance(module, Mapping) or not module.get("found"):
            continue
        kind = module.get("kind")
        if kind not in ("site-packages", "stdlib", PROJECT_KIND) and not module.get("namespace"):
            by = f" ({module.get('finder')})" if module.get("finder") else ""
            notes.append(f"{module.get('module')} comes from {kind}{by}: {module.get('origin')}, hiding no other copy")
    return notes


@check("shadowing", "Modules your code imports come from this installation", needs=("python",),
       uses=("distributions",), tags=("install",))
def shadowing_check(facts: Facts) -> Outcome:
    """no `tensorflow.py`, `numpy/` or `PYTHONPATH` entry hides the installed modules from your code, no `json.py` the
    standard library's (read, never run)

    what `import tensorflow` (and `keras`, `numpy`, `google.protobuf`, `ml_dtypes`) gets in your code, run from the
    folder the doctor runs in: located as the import system looks, without importing; a copy from outside the
    installation that comes first (a `tensorflow.py` or `numpy/` in the project folder, a `PYTHONPATH` entry, a
    user-site copy or a `.pth` line ahead of site-packages) fails, naming the file and the entry that put it first,
    with the step that fixes it (rename the file; drop the entry from `PYTHONPATH` and the shell line that sets it;
    `PYTHONNOUSERSITE=1`; disable the `.pth` file); so does a file or package of the project folder named like a
    module of the standard library (`json.py`, `struct.py`, `email/`: the target's `sys.stdlib_module_names`, or on
    Python 3.9 the names its standard library directories hold) that `import` would load in its place, found by
    reading the folder's names (a built-in or frozen module, one imported when Python starts, and the standard
    library's own `test` and demos are replaced by nothing: a note); while such a copy hides a module the plan holds
    its install steps back (an install would not reach your code)
    """
    recorded = shadowing.origins(facts)
    if recorded is None:
        error = (facts.get("python") or {}).get("module_origins")
        if isinstance(error, Mapping) and error.get("error"):
            return Outcome.skip(f"where modules come from could not be found out: {error['error']}")
        return Outcome.skip("where the modules come from was not recorded in this report")
    hidings = shadowing.hiding(facts)
    evidence: dict[str, Any] = {
        "cwd": recorded.get("cwd"),
        "modules": {str(m.get("module")): m.get("kind") for m in recorded["modules"] if isinstance(m, Mapping)},
        "hiding": [h.to_dict() for h in hidings],
    }
    if not hidings:
        found = [str(m.get("module")) for m in recorded["modules"] if isinstance(m, Mapping) and m.get("found")]
        missing = [str(m.get("module")) for m in recorded["modules"] if isinstance(m, Mapping) and not m.get("found")]
        summary = (f"{', '.join(found)} come from this installation, run from {recorded.get('cwd')}"
                   if found else "none of tensorflow, keras, numpy, google.protobuf, ml_dtypes is installed")
        details = _installed_notes(recorded) + ([f"not installed: {', '.join(missing)}"] if missing and found else [])
        return Outcome.ok(summary, *details, **evidence)
    first, rest = hidings[0], hidings[1:]
    details = [f"Also: {_summary(facts, h)}" for h in rest]
    for hiding in hidings:
        if hiding.hidden:
            details.append(f"hidden: {', '.join(hiding.hidden)}")
    fix = _remediation(facts, hidings)
    if any(repair.unhides for repair in fix.repairs):
        details.append("An install into this environment would not change what these imports get: the plan holds "
                       "its install steps back until the copies above are out of the way.")
    return Outcome.fail(_summary(facts, first), *details, fix=fix, **evidence)


def installed_at(facts: Facts, module: str, location: str) -> Optional[str]:
    """'numpy 2.1.3': the distribution installed at a sys.path entry that provides `module`, from its
    metadata; None when none is recorded there."""
    wanted = shadowing.DISTRIBUTION_OF.get(module)
    place = location or "."
    for entry in facts.get("distributions") or ():
        if not isinstance(entry, Mapping) or str(entry.get("location") or "") != place:
            continue
        name = canonical_name(str(entry.get("name") or ""))
        if name == wanted or (wanted is None and module in (entry.get("top_level") or ())):
            return f"{name} {entry.get('version')}" if entry.get("version") else name
    return None


def path_separator(facts: Facts) -> str:
    return ";" if host_system(facts) == "Windows" else ":"
