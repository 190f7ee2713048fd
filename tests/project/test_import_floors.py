"""The floors import downwards only (issues 21 and 26): every module imports from its own floor or a lower one
(FLOORS), no module below the CLI and the API reads a name from the package's __init__, the API loads only
when one of its names is used, and `tfdoctor.explain` is the API function whatever is imported first."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path
from typing import Optional

import pytest

import tfdoctor
import tfdoctor._version

ROOT = Path(__file__).resolve().parents[2]
# The top floors, which may use the package's names, and the package's own entry points.
ALLOWED = {"tfdoctor/cli/app.py", "tfdoctor/api.py", "tfdoctor/__init__.py", "tfdoctor/__main__.py"}


# The floors of the package, lowest first (docs/architecture.md, "The floors"): a module imports only from its
# own floor and the floors below it, lazily or not. Each entry is a module or a package with everything in it;
# `checks/` installs as tfdoctor.checks. A new module or room has no floor until it is placed here.
FLOORS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("knowledge", ("tfdoctor.knowledge",)),  # the tables, and reading versions and specifiers
    ("facts", ("tfdoctor.facts",)),  # pure readers of the facts: nothing above knowledge
    ("results", ("tfdoctor.results", "tfdoctor._version", "tfdoctor.schema")),  # what a check returns
    ("installers", ("tfdoctor.environment",)),  # the installer room: kinds, pip, the one speller
    ("remedies", ("tfdoctor.remedies",)),  # advice shared by checks, built from facts
    ("checks", ("tfdoctor.checks", "tfdoctor.checking")),
    ("plan", ("tfdoctor.plan",)),
    ("report", ("tfdoctor.report",)),
    # Above everything pure: no check, remedy, fact or plan does I/O.
    ("collectors", ("tfdoctor.collect", "tfdoctor.child", "tfdoctor.processes", "tfdoctor.files")),
    # a saved report judged again, two compared: diagnoses without collectors
    ("diagnosis", ("tfdoctor.diagnosis", "tfdoctor.report.saved", "tfdoctor.report.compare")),
    ("render", ("tfdoctor.render",)),
    ("commands", ("tfdoctor.fixer", "tfdoctor.scan", "tfdoctor.posting")),
    # each operation written once with its guards; the doors below only adapt them (tests/project/test_doors.py)
    ("operations", ("tfdoctor.operations",)),
    ("front door", ("tfdoctor.cli", "tfdoctor.api", "tfdoctor.servers", "tfdoctor.__main__", "tfdoctor.source_tree",
                    "tfdoctor")),
)


def floor_of(module: str) -> Optional[int]:
    """The rank in FLOORS of a dotted module name (the longest entry that holds it); the package `tfdoctor`
    holds only itself, so a module nobody placed has none."""
    found = [(len(entry), rank) for rank, (_, entries) in enumerate(FLOORS) for entry in entries
             if module == entry or (entry != "tfdoctor" and module.startswith(entry + "."))]
    return max(found)[1] if found else None


def module_of(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[0] == "checks":
        parts[:1] = ["tfdoctor", "checks"]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(source: str, module: str, is_package: bool = False) -> list[tuple[int, str]]:
    """(line, dotted name) of every tfdoctor module `source` imports, at the top or inside a function:
    `from tfdoctor import facts` names tfdoctor.facts, `from tfdoctor import __version__` the package."""
    found = []
    package = module if is_package else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join([*package.split(".")[: len(package.split(".")) - node.level + 1], *filter(None, [base])])
            if base == "tfdoctor":
                found += [(node.lineno, f"tfdoctor.{a.name}" if floor_of(f"tfdoctor.{a.name}") is not None
                           else "tfdoctor") for a in node.names]
            else:
                found.append((node.lineno, base))
    return [(line, "tfdoctor." + name if name.split(".")[0] == "checks" else name) for line, name in found
            if name.split(".")[0] in ("tfdoctor", "checks")]


def upward_imports(source: str, module: str, is_package: bool = False) -> list[tuple[int, str]]:
    """(line, 'imports X (its floor), above <module's floor>') for each import from a higher floor."""
    mine = floor_of(module)
    assert mine is not None, f"{module} has no floor: place it in FLOORS"
    found = []
    for line, name in imported_modules(source, module, is_package):
        theirs = floor_of(name)
        if theirs is None or theirs > mine:
            where = FLOORS[theirs][0] if theirs is not None else "no floor"
            found.append((line, f"imports {name} ({where}), above its floor ({FLOORS[mine][0]})"))
    return found


def package_modules() -> list[Path]:
    return sorted([*(ROOT / "tfdoctor").rglob("*.py"), *(ROOT / "checks").rglob("*.py")])


@pytest.mark.parametrize("module, source, upward", [
    ("tfdoctor.facts.integrity", "from tfdoctor.results.repairs import Repair", True),
    ("tfdoctor.facts.integrity", "from tfdoctor.facts.platform import wheel_platform", False),
    ("tfdoctor.facts.tensorflow_build", "def f():\n    from tfdoctor.collect.system import detect_wsl", True),
    ("tfdoctor.facts.integrity", "from tfdoctor import model", True),
    ("tfdoctor.facts.integrity", "import tfdoctor.environment.spell", True),
    ("tfdoctor.facts.integrity", "from tfdoctor.knowledge import rows", False),
    ("tfdoctor.remedies.integrity", "from tfdoctor.environment.spell import spelling_for", False),
    ("tfdoctor.remedies.integrity", "from tfdoctor.checks import keras", True),
    ("tfdoctor.checks.keras", "from tfdoctor.remedies import import_causes", False),
    ("tfdoctor.checks.keras", "from tfdoctor.plan.planner import build_plan", True),
    ("tfdoctor.checks.keras", "from checks.probe import x", False),  # a sibling: test_no_check_imports_another_check
    ("tfdoctor.plan.planner", "from tfdoctor.render.text import render", True),
    ("tfdoctor.report.run", "from tfdoctor.collect import gather", True),
    ("tfdoctor.fixer.flow", "from tfdoctor.cli.app import app", True),
    ("tfdoctor.render.text", "from tfdoctor.servers import mcp", True),
    ("tfdoctor.environment.spell", "from . import kinds", False),
    ("tfdoctor.environment.spell", "from ..remedies import arm64", True),
    ("tfdoctor.cli.app", "from tfdoctor import __version__", False),
    ("tfdoctor.diagnosis.doctor", "import os, json", False),
])
def test_an_upward_import_is_recognised(module, source, upward):
    assert bool(upward_imports(source, module)) is upward


def test_every_module_has_a_floor():
    modules = package_modules()
    assert len(modules) > 100 and ROOT / "tfdoctor" / "remedies" / "integrity.py" in modules
    unplaced = [p.relative_to(ROOT).as_posix() for p in modules if floor_of(module_of(p)) is None]
    assert unplaced == [], "place these in FLOORS"


def test_every_module_imports_only_from_its_floor_or_below():
    """facts/ reads only knowledge; remedies/ builds on facts, the intents and the installer room; a check
    uses remedies and facts; nothing below the plan imports the planner, a renderer, the fixer, the servers or
    the CLI; nothing pure imports a collector."""
    offenders = [f"{p.relative_to(ROOT).as_posix()}:{line} {what}" for p in package_modules()
                 for line, what in upward_imports(p.read_text(encoding="utf-8"), module_of(p), p.name == "__init__.py")]
    assert offenders == [], "\n".join(offenders)


def package_imports(source: str) -> list[str]:
    """Each import in `source` that reads the package `tfdoctor` itself: `from tfdoctor import x`,
    `import tfdoctor` or `import tfdoctor.x` (which binds the name `tfdoctor`). `from tfdoctor.x import y`
    and `import tfdoctor.x as y` name the module they need and are not listed."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module == "tfdoctor":
            found.append(f"line {node.lineno}: from tfdoctor import {', '.join(a.name for a in node.names)}")
        elif isinstance(node, ast.Import):
            found += [f"line {node.lineno}: import {a.name}" for a in node.names
                      if a.name == "tfdoctor" or (a.name.startswith("tfdoctor.") and a.asname is None)]
    return found


def lower_floor_modules() -> list[Path]:
    paths = [*(ROOT / "tfdoctor").rglob("*.py"), *(ROOT / "checks").rglob("*.py")]
    return sorted(p for p in paths if p.relative_to(ROOT).as_posix() not in ALLOWED)


@pytest.mark.parametrize("source, expected", [
    ("from tfdoctor import knowledge", 1),
    ("def f():\n    from tfdoctor import __version__, versions", 1),
    ("import tfdoctor", 1),
    ("import tfdoctor.knowledge", 1),
    ("import os, tfdoctor.facts as facts", 0),
    ("from tfdoctor.knowledge import rows", 0),
    ("from tfdoctor._version import __version__", 0),
    ("from . import x", 0),
])
def test_package_imports_are_recognised(source, expected):
    assert len(package_imports(source)) == expected


def test_no_lower_floor_imports_the_package():
    modules = lower_floor_modules()
    assert len(modules) > 50 and ROOT / "checks" / "keras.py" in modules and ROOT / "tfdoctor" / "report" / "run.py" in modules
    offenders = {p.relative_to(ROOT).as_posix(): found for p in modules
                 if (found := package_imports(p.read_text(encoding="utf-8")))}
    assert offenders == {}


def run_fresh(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("first", ["tfdoctor.report.saved", "tfdoctor.report.run", "tfdoctor.cli.app", "tfdoctor",
                                   "tfdoctor.report.compare", "tfdoctor.facts", "tfdoctor.api"])
def test_explain_is_the_api_function_whatever_is_imported_first(first):
    done = run_fresh(f"import {first}\nimport tfdoctor, inspect\nassert inspect.isfunction(tfdoctor.explain)\n"
                     "from tfdoctor import explain, Report\n"
                     "assert explain.__module__ == 'tfdoctor.api' and Report.__module__ == 'tfdoctor.api'")
    assert done.returncode == 0, done.stderr


def test_lower_floors_do_not_load_the_api():
    """Facts, checks on a fixture and the report: a whole diagnosis of recorded facts, and no tfdoctor.api."""
    done = run_fresh(
        "import json, sys\n"
        "import tfdoctor.facts\n"
        "from tfdoctor.checking.registry import all_checks\n"
        "from tfdoctor.report.run import RunReport\n"
        "from tfdoctor.checking.runner import run_checks\n"
        "facts = json.load(open('fixtures/linux/colab-t4-driver-550-tensorflow-2.19.json'))['facts']\n"
        "document = RunReport(facts, run_checks(all_checks(), facts)).to_dict()\n"
        "assert len(document['results']) > 10, document['results']\n"
        "print(json.dumps(sorted(name for name in sys.modules if name.startswith('tfdoctor'))))")
    assert done.returncode == 0, done.stderr
    loaded = json.loads(done.stdout)
    assert "tfdoctor.checks.keras" in loaded and "tfdoctor.facts" in loaded
    assert "tfdoctor.api" not in loaded


def test_the_package_names_resolve_lazily_and_only_those():
    assert set(tfdoctor.__all__) <= set(dir(tfdoctor))
    assert tfdoctor.__version__ is tfdoctor._version.__version__
    with pytest.raises(AttributeError, match="no_such_name"):
        tfdoctor.no_such_name  # noqa: B018


def test_the_version_has_one_source():
    if sys.version_info >= (3, 11):
        import tomllib
    else:
        import tomli as tomllib
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "version" not in project["project"] and "version" in project["project"]["dynamic"]
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "tfdoctor._version.__version__"}


def test_no_check_imports_another_check():
    """A reader two checks share belongs in facts/ (docs/architecture.md), never in a check another imports."""
    offenders = {}
    for path in sorted((ROOT / "checks").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([node.module or ""] if isinstance(node, ast.ImportFrom) and node.level == 0
                     else [a.name for a in node.names] if isinstance(node, ast.Import) else [])
            if isinstance(node, ast.ImportFrom) and node.module == "tfdoctor.checks":
                names = [f"tfdoctor.checks.{a.name}" for a in node.names]
            found = [n for n in names if n.startswith(("tfdoctor.checks.", "checks."))]
            if found:
                offenders.setdefault(path.name, []).extend(found)
    assert offenders == {}


def test_the_speller_is_not_read_from_a_renderer():
    """The planner, the fixer, facts/ and checks/ take commands from tfdoctor/environment/spell.py; none imports
    tfdoctor.render (what a user pastes and what `tfdoctor fix` runs come from one speller)."""
    lower = [ROOT / "tfdoctor" / "plan" / "planner.py", *(ROOT / "tfdoctor" / "fixer").glob("*.py"),
             *(ROOT / "tfdoctor" / "facts").glob("*.py"), *(ROOT / "checks").glob("*.py"),
             *(ROOT / "tfdoctor" / "environment").glob("*.py")]
    offenders = {}
    for path in lower:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([node.module or ""] if isinstance(node, ast.ImportFrom)
                     else [a.name for a in node.names] if isinstance(node, ast.Import) else [])
            if any(n == "tfdoctor.render" or n.startswith("tfdoctor.render.") for n in names):
                offenders.setdefault(path.relative_to(ROOT).as_posix(), []).extend(names)
    assert offenders == {}


def test_the_package_and_the_plain_cli_never_import_the_mcp_sdk_or_the_servers():
    """Issue 27: `tfdoctor mcp` is an optional extra; `import tfdoctor`, the API and the plain CLI's
    commands load neither the SDK (mcp, mcp_types, its anyio/starlette stack) nor tfdoctor.servers."""
    done = run_fresh(
        "import sys\n"
        "import tfdoctor\n"
        "tfdoctor.explain, tfdoctor.diagnose\n"
        "from tfdoctor.cli.entry import run_command_line\n"
        "assert run_command_line(['--list']) == 0\n"
        "assert run_command_line(['--version']) == 0\n"
        "assert run_command_line(['explain', 'fixtures/linux/colab-t4-driver-550-tensorflow-2.19.json', '-q']) in (0, 1)\n"
        "heavy = ('mcp', 'mcp_types', 'anyio', 'starlette', 'uvicorn', 'sse_starlette')\n"
        "loaded = sorted(m for m in sys.modules if m.split('.')[0] in heavy or m.startswith('tfdoctor.servers'))\n"
        "assert not loaded, loaded\n")
    assert done.returncode == 0, done.stderr


# What a door may import of the package (issue 36): the operations, the report document, the renderers, the version,
# and its own room. Everything else (the doctor, the fixer, the collectors, the saved-report reader) is reached only
# through an operation, so that each guard is written once.
DOOR_MAY_IMPORT = ("tfdoctor._version", "tfdoctor.operations", "tfdoctor.report.document", "tfdoctor.render")


@pytest.mark.parametrize("door, room", [("tfdoctor/servers/mcp.py", "tfdoctor.servers")])
def test_a_door_imports_only_the_operations_the_report_document_and_the_renderers(door, room):
    path = ROOT / door
    allowed = (*DOOR_MAY_IMPORT, room)
    imported = imported_modules(path.read_text(encoding="utf-8"), module_of(path))
    offenders = [f"{door}:{line} imports {name}" for line, name in imported
                 if not any(name == prefix or name.startswith(prefix + ".") for prefix in allowed)]
    assert imported and offenders == [], "\n".join(offenders)
