"""One core, many doors (issue 36): the CLI, the API, the MCP server and the team server call the operations
(tfdoctor/operations/) and read the report document (tfdoctor/report/document.py); none reaches past them into
the rooms below, and none imports another door. Checked on every import a door makes, at module level or inside
a function (imports under `if TYPE_CHECKING:` are for annotations only and never run)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "tfdoctor"

# Each door: its modules, and the room it may import freely (its own).
DOORS = {
    "cli": (["cli", "__main__.py"], ("tfdoctor.cli",)),
    "api": (["api.py"], ("tfdoctor.api",)),
    "mcp": (["servers/mcp.py"], ("tfdoctor.servers.mcp",)),
    "team server": (["servers/team"], ("tfdoctor.servers.team",)),
}
# What every door may use: the operations, the report document, the renderers (they format a document for a
# door), the version, and the doctor's own-file writes (private files: a server's token, an output file).
SHARED = ("tfdoctor.operations", "tfdoctor.report.document", "tfdoctor.render", "tfdoctor._version",
          "tfdoctor.files")
# A command that starts another door's server: `tfdoctor serve` and `tfdoctor mcp` import the server they start,
# inside the command, so the plain CLI never loads those stacks (tests/project/test_server_isolation.py).
STARTS_A_SERVER = {
    ("cli/team.py", "tfdoctor.servers.team.serve"),
    ("cli/extras.py", "tfdoctor.servers.mcp"),
}


def _modules(parts: list[str]) -> list[Path]:
    found: list[Path] = []
    for part in parts:
        path = PACKAGE / part
        found += [path] if path.is_file() else sorted(path.rglob("*.py"))
    return found


def _imports(path: Path) -> list[tuple[int, str]]:
    """(line, module) of every tfdoctor import that runs, wherever it is in the file."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    annotations_only: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            annotations_only.update(id(inner) for inner in ast.walk(node))
    found = []
    for node in ast.walk(tree):
        if id(node) in annotations_only:
            continue
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module and node.module.startswith("tfdoctor"):
            if node.module == "tfdoctor":  # `from tfdoctor import x` names tfdoctor.x
                found += [(node.lineno, f"tfdoctor.{alias.name}") for alias in node.names]
            else:
                found.append((node.lineno, node.module))
        elif isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names if alias.name.startswith("tfdoctor")]
    return found


def _allowed(module: str, own: tuple[str, ...], relative: str) -> bool:
    def under(prefixes: tuple[str, ...]) -> bool:
        return any(module == p or module.startswith(p + ".") for p in prefixes)

    return under(own) or under(SHARED) or (relative, module) in STARTS_A_SERVER


@pytest.mark.parametrize("door", sorted(DOORS))
def test_a_door_calls_only_the_operations_and_the_report_document(door):
    parts, own = DOORS[door]
    outside = []
    for path in _modules(parts):
        relative = path.relative_to(PACKAGE).as_posix()
        outside += [f"tfdoctor/{relative}:{line} imports {module}" for line, module in _imports(path)
                    if not _allowed(module, own, relative)]
    assert not outside, "\n".join(outside)


def test_the_check_finds_a_door_reaching_into_a_room(tmp_path):
    """The rule is not vacuous: an import of the fixer, at module level or in a function, is found."""
    door = tmp_path / "door.py"
    door.write_text("from tfdoctor.operations import fix\n"
                    "def f():\n    from tfdoctor.fixer.flow import fix\n"
                    "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from tfdoctor.facts import section\n")
    found = [module for _, module in _imports(door)]
    assert found == ["tfdoctor.operations", "tfdoctor.fixer.flow"]
    assert not _allowed("tfdoctor.fixer.flow", ("tfdoctor.cli",), "cli/x.py")
    assert _allowed("tfdoctor.operations.fix", ("tfdoctor.cli",), "cli/x.py")


def test_the_verdict_is_computed_in_one_place():
    """Worst-status logic lives in report/document.py's Verdict; no door or renderer ranks statuses itself."""
    rankers = []
    for path in sorted(PACKAGE.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        if path.name == "document.py" and path.parent.name == "report":
            continue
        for needle in ('("error", "fail", "warn", "pass"', "def exit_code_for", "def worst_status("):
            if needle in text and "Verdict" not in text.split(needle)[1].split("\ndef ")[0]:
                rankers.append(f"{path.relative_to(PACKAGE.parent)}: {needle}")
    assert not rankers, "\n".join(rankers)
