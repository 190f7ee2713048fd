"""Every repository path that the docs and the code's comments cite exists (issue 36): README.md and docs/*.md
whole, and the comments and docstrings of tfdoctor/, checks/ and tests/. A path is cited from the repository's
root (`tfdoctor/report/run.py`, `tests/cli/`, `checks/keras.py`, `tools/fixture_expect.py`) or from the
package (`processes/commands.py`: its first folder is one of tfdoctor/'s rooms); `tests/fixer_support.run` names
something in a module. Templates (`tests/<floor>/test_<subject>.py`) and paths outside the repository
(`site-packages/...`, `tensorflow/python/...`) are not checked."""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path
from typing import Iterator

ROOT = Path(__file__).resolve().parents[2]
TOP_FOLDERS = ("tfdoctor", "tests", "checks", "tools", "bench")
ROOMS = frozenset(p.name for p in (ROOT / "tfdoctor").iterdir() if p.is_dir() and not p.name.startswith("__"))
# a path of words, dots and dashes; not the tail of a longer path or URL, nor the head of a template or a longer word
CITED = re.compile(r"(?<![\w./-])([A-Za-z_][\w-]*/[\w./-]*\w/?)(?![\w/<*{\[-]|\.[\w/<*{\[-])")
FILE_SUFFIXES = frozenset({"py", "md", "toml", "json", "html", "css", "txt", "sh", "yml", "yaml", "mako", "pyi"})
# files a tool writes when run, cited as such ("when generated"), that no clone holds
GENERATED = frozenset({"tfdoctor/knowledge/tested_locks.toml"})  # tools/refresh_knowledge.py (issue 29)
# the MCP protocol's method names, which read like a path under tools/ (docs/mcp.md, servers/mcp.py)
PROTOCOL_METHODS = frozenset({"tools/list", "tools/call"})


def _texts(path: Path) -> Iterator[str]:
    """A Markdown file whole; a Python file's docstrings and comments (its code's strings are data)."""
    source = path.read_text(encoding="utf-8")
    if path.suffix == ".md":
        yield source
        return
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            docstring = ast.get_docstring(node, clean=False)
            if docstring:
                yield docstring
    yield from (token.string for token in tokenize.generate_tokens(io.StringIO(source).readline)
                if token.type == tokenize.COMMENT)


def _exists(cited: str, root: Path) -> bool:
    if cited.split("/", 1)[0] not in TOP_FOLDERS:
        cited = f"tfdoctor/{cited}"  # a room's path, from the package
    if cited.startswith("tfdoctor/checks/"):
        cited = cited[len("tfdoctor/"):]  # checks/ installs as tfdoctor.checks (pyproject.toml's package-dir)
    if cited.rstrip("/") in GENERATED or (root / cited).exists():
        return True
    folder, _, last = cited.rpartition("/")
    module, dot, names = last.partition(".")  # `module.name` (or `.Class.attribute`): something in module.py
    return bool(dot) and names.split(".")[0] not in FILE_SUFFIXES and (
        (root / folder / f"{module}.py").is_file() or (root / folder / module).is_dir())


def missing_paths(text: str, root: Path = ROOT) -> list[str]:
    """The repository paths `text` cites that do not exist under `root`."""
    found = []
    for match in CITED.finditer(text):
        cited = match.group(1)
        first = cited.split("/", 1)[0]
        if (first in TOP_FOLDERS or first in ROOMS) and cited not in PROTOCOL_METHODS and not _exists(cited, root):
            found.append(cited)
    return found


def _citing_files() -> list[Path]:
    return [*sorted(ROOT.glob("docs/*.md")), ROOT / "README.md",
            *(path for folder in ("tfdoctor", "checks", "tests") for path in sorted((ROOT / folder).rglob("*.py")))]


def test_every_cited_path_exists():
    stale = [f"{path.relative_to(ROOT)}: {cited}" for path in _citing_files() for text in _texts(path)
             for cited in missing_paths(text)]
    assert not stale, "paths cited that do not exist:\n" + "\n".join(stale)


def test_a_made_up_path_is_found_in_a_doc_and_in_a_comment(tmp_path):
    (tmp_path / "tfdoctor" / "report").mkdir(parents=True)
    (tmp_path / "tfdoctor" / "report" / "run.py").write_text("", encoding="utf-8")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "fixer_support.py").write_text("", encoding="utf-8")
    doc = tmp_path / "guide.md"
    doc.write_text("The report is `tfdoctor/report/run.py`; the diff was tfdoctor/diff.py, and the children\n"
                   "started in report/gone.py. See tests/fixer_support.run and tests/<floor>/test_<subject>.py.\n",
                   encoding="utf-8")
    module = tmp_path / "module.py"
    module.write_text('"""Reads tfdoctor/report/run.py."""\n'
                      'PATH = "tools/not_cited.py"  # a string in code is data, not a citation\n'
                      'x = 1  # written by tools/made_up.py, read by report/run.py\n', encoding="utf-8")

    assert [cited for text in _texts(doc) for cited in missing_paths(text, tmp_path)] == [
        "tfdoctor/diff.py", "report/gone.py"]
    assert [cited for text in _texts(module) for cited in missing_paths(text, tmp_path)] == ["tools/made_up.py"]
