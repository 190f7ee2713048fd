"""The installers, one registry: one precedence for the doctor's facts and `fix --undo`'s live look, the report's
values unchanged, and no module outside the registry that branches on an installer's kind."""

from __future__ import annotations

import ast
import json
import sys
from pathlib import Path

import pytest

from tfdoctor.environment import installers
from tfdoctor.environment.pip import installer_for
from tfdoctor.schema import report_schema

ROOT = Path(__file__).resolve().parents[2]
REGISTRY = ROOT / "tfdoctor" / "environment" / "installers"


@pytest.mark.parametrize("python, expected", [
    ({"uv_version": "0.5.1", "conda": True, "in_venv": True}, "uv"),
    ({"conda": True, "in_venv": True, "externally_managed": True}, "conda"),
    ({"in_venv": True, "externally_managed": True}, "venv"),
    ({"externally_managed": True}, "managed"),
    ({}, "system"),
])
def test_the_one_precedence(python, expected):
    assert installers.detect(python).kind == expected
    assert installer_for({"python": {"executable": "/py", **python}}).kind == expected


def test_the_report_values_are_unchanged_and_the_schema_names_every_one():
    """Saved reports and rollback records hold these strings; the plan's schema enum must list each registered
    kind (a new installer whose value the schema lacks makes every report of it invalid)."""
    assert {"uv", "conda", "venv", "managed", "system"} <= set(installers.KINDS)
    assert len(set(installers.KINDS)) == len(installers.KINDS)
    enum = report_schema()["properties"]["plan"]["properties"]["installer"]["enum"]
    assert sorted(enum) == sorted(installers.KINDS)
    assert installers.REGISTERED[-1].detected({}), "the last installer takes what no other claims"


def test_fix_undo_reads_this_venv_as_the_doctor_would():
    """`fix --undo` looks at a live interpreter without a diagnosis, through the target child's own markers:
    the tests' venv is a venv to it (uv's when uv made it), as to the doctor."""
    from tfdoctor.fixer.flow import probe

    assert sys.prefix != getattr(sys, "base_prefix", sys.prefix)  # the tests run in a venv
    found = probe(sys.executable)
    assert found.kind in ("venv", "uv")
    assert found.kind == installer_for({"python": _described()}).kind


def _described() -> dict:
    import subprocess

    from tfdoctor.child import source

    out = subprocess.run([sys.executable, "-c", source("target_info")], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)["python"]


def _kind_comparisons(path: Path, kinds: set[str], names: set[str]) -> list[str]:
    """Each comparison in `path` (==, !=, in, not in, a match case) of anything with an installer kind's string,
    or with a name that holds one (`"conda"` bound to a module constant counts too)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    bound = set(names)
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and node.value.value in kinds:
            bound |= {t.id for t in node.targets if isinstance(t, ast.Name)}

    def is_kind(node: ast.AST) -> bool:
        if isinstance(node, ast.Constant):
            return node.value in kinds
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            return any(is_kind(e) for e in node.elts)
        if isinstance(node, ast.Attribute):
            return node.attr in {k.upper() for k in kinds} and isinstance(node.value, ast.Name) \
                and node.value.id == "InstallerKind"
        return isinstance(node, ast.Name) and node.id in bound

    where = path.relative_to(ROOT) if ROOT in path.parents else path.name
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare) and any(is_kind(side) for side in [node.left, *node.comparators]):
            found.append(f"{where}:{node.lineno}")
        elif isinstance(node, ast.match_case) and isinstance(node.pattern, ast.MatchValue) and is_kind(node.pattern.value):
            found.append(f"{where}:{node.pattern.lineno}")
    return found


# Files whose comparisons with a kind's string mean something else, each with what it means.
OTHER_MEANINGS = {
    "tfdoctor/scan/find.py": "scan's own sources: where an environment was found (conda's list, a venv walk, ...)",
    # a floor below the installers: the word a distribution's own dist-info INSTALLER file says, not the environment's
    "tfdoctor/facts/wheel_tags.py": "a distribution laid down by conda (its INSTALLER file): conda's builds, not PyPI's wheels",
}


def test_no_module_outside_the_registry_branches_on_an_installer_kind():
    """Every choice that differs by installer is the installer object's (tfdoctor/environment/installers/): a
    comparison with a kind's value elsewhere is a second place a new installer would have to be added."""
    kinds = set(installers.KINDS)
    sources = [p for p in [*(ROOT / "tfdoctor").rglob("*.py"), *(ROOT / "checks").rglob("*.py")]
               if REGISTRY not in p.parents and str(p.relative_to(ROOT)) not in OTHER_MEANINGS]
    found = [where for path in sources for where in _kind_comparisons(path, kinds, set())]
    assert found == []


def test_the_branch_finder_finds_a_branch(tmp_path):
    """The test above can fail: each shape of a branch on a kind is found, and asking the installer is not one."""
    kinds = set(installers.KINDS)
    module = tmp_path / "probe.py"
    for code in ('if spelling.kind == "uv": pass', 'x = kind != InstallerKind.CONDA', 'y = kind in ("venv", "x")',
                 'CONDA = "conda"\nz = manager == CONDA', 'match kind:\n    case "managed":\n        pass'):
        module.write_text(code + "\n", encoding="utf-8")
        assert _kind_comparisons(module, kinds, set()), code
    module.write_text('if spelling.installer.uses_pip: pass\nkind = installers.named("venv").kind\n', encoding="utf-8")
    assert _kind_comparisons(module, kinds, set()) == []
