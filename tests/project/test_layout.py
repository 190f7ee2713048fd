"""The tests' own layout (issue 21): every registered check has its test module tests/checks/test_<id>.py
(hyphens as underscores) holding tests, and the shared builders of tests/builders.py (offered by
tests/conftest.py) are declared nowhere else, so a second copy cannot creep back; no test module imports
another (what tests share lives in tests/builders.py or a tests/<subject>_support.py), and the fixtures folder
is named once (tests/fixtures_support.py's FIXTURES)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import tests.builders
import tests.conftest
from tfdoctor.checking.registry import all_checks

TESTS = Path(__file__).resolve().parents[1]
SHARED = tests.builders.__all__


def declared(path: Path) -> set[str]:
    """The names a module binds at its top level (functions, classes, assignments)."""
    names = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    return names


def test_the_shared_builders_are_the_ones_conftest_offers():
    assert set(SHARED) == declared(TESTS / "builders.py") - {"Facts", "__all__"}
    assert {"fixture_facts", "host", "mac", "linux", "distribution", "tensorflow_result", "check_result"} <= set(SHARED)
    assert all(getattr(tests.conftest, name) is getattr(tests.builders, name) for name in SHARED)


@pytest.mark.parametrize("check_id", [c.id for c in all_checks()])
def test_every_check_has_its_own_test_module_with_tests(check_id):
    module = TESTS / "checks" / f"test_{check_id.replace('-', '_')}.py"
    assert module.is_file(), f"{check_id}: no {module.relative_to(TESTS.parent)}"
    assert any(name.startswith("test_") for name in declared(module)), f"{module.name} holds no test"


def test_no_test_module_declares_a_shared_builder_again():
    again = {str(path.relative_to(TESTS)): sorted(declared(path) & set(SHARED))
             for path in TESTS.rglob("*.py") if path.name not in {"builders.py", "conftest.py"}}
    assert {path: names for path, names in again.items() if names} == {}


def imported_modules(path: Path) -> set[str]:
    """Every module a file imports, at any depth (`from tests.x import y` names tests.x and tests.x.y)."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names |= {node.module} | {f"{node.module}.{alias.name}" for alias in node.names}
    return names


def is_test_module(name: str) -> bool:
    return name.startswith("tests.") and name.rsplit(".", 1)[-1].startswith("test_")


def test_no_test_module_imports_another():
    imports = {str(path.relative_to(TESTS)): sorted(n for n in imported_modules(path) if is_test_module(n))
               for path in TESTS.rglob("*.py")}
    assert {path: names for path, names in imports.items() if names} == {}


def test_the_layout_guard_sees_an_import_of_a_test_module(tmp_path):
    module = tmp_path / "test_x.py"
    module.write_text("import tests.cli.test_explain\nfrom tests.checks.test_probe import side\n"
                      "from tests.checks import test_workload\nfrom tests.builders import host\n")
    assert sorted(n for n in imported_modules(module) if is_test_module(n)) == [
        "tests.checks.test_probe", "tests.checks.test_workload", "tests.cli.test_explain"]


def test_the_fixtures_folder_is_named_only_by_fixtures_support():
    again = [str(path.relative_to(TESTS)) for path in TESTS.rglob("*.py")
             if path.name != "fixtures_support.py" and "FIXTURES" in declared(path)]
    assert again == []


def test_every_module_of_the_live_suite_is_marked_live():
    """`pytest -m "not live"` is the fast suite: nothing in tests/live/ may run in it."""
    for path in (TESTS / "live").glob("test_*.py"):
        marks = [node for node in ast.parse(path.read_text(encoding="utf-8")).body
                 if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "pytestmark" for t in node.targets)]
        assert marks and "live" in ast.unparse(marks[0].value), f"{path.name} is not marked live"
