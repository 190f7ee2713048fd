"""The floors import downwards only (issue 21): no module below the CLI and the API reads a name from the
package's __init__, the API loads only when one of its names is used, and `tfdoctor.explain` is the API
function whatever is imported first."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

import tfdoctor
import tfdoctor._version

ROOT = Path(__file__).resolve().parents[2]
# The top floors, which may use the package's names, and the package's own entry points.
ALLOWED = {"tfdoctor/cli/app.py", "tfdoctor/api.py", "tfdoctor/__init__.py", "tfdoctor/__main__.py"}


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
    assert len(modules) > 50 and ROOT / "checks" / "keras.py" in modules and ROOT / "tfdoctor" / "report.py" in modules
    offenders = {p.relative_to(ROOT).as_posix(): found for p in modules
                 if (found := package_imports(p.read_text(encoding="utf-8")))}
    assert offenders == {}


def run_fresh(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("first", ["tfdoctor.saved_reports", "tfdoctor.report", "tfdoctor.cli.app", "tfdoctor",
                                   "tfdoctor.diff", "tfdoctor.facts", "tfdoctor.api"])
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
        "from tfdoctor.registry import all_checks\n"
        "from tfdoctor.report import RunReport\n"
        "from tfdoctor.runner import run_checks\n"
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
    lower = [ROOT / "tfdoctor" / "planner.py", *(ROOT / "tfdoctor" / "fixer").glob("*.py"),
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
