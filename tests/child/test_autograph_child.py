"""Issue 29: the TensorFlow child's AutoGraph conversion (child/autograph_trace.py) with a fake TensorFlow whose
converter fails the way TensorFlow 2.21's does under gast 0.2.2: a ValueError raised in TensorFlow's own file,
which imports a library from outside TensorFlow, wrapped in a ConversionError. No frame is the library's, so
only the imports of the failing files name it."""

from __future__ import annotations

from pathlib import Path

from tests import fakes

MINE = ("--only", "tensorflow-import,dependencies", "--no-probe", "--no-experiments")
CONVERTER = '''import collections
import astlike


class ConversionError(Exception):
    pass


def visit(node):
    if not isinstance(node, astlike.AST):
        raise ValueError('invalid value for "node": expected "ast.AST", got "%s"' % type(node))


def to_graph(function):
    try:
        visit(None)
    except ValueError as exc:
        raise ConversionError("converting %r: ValueError: %s" % (function, exc))
'''
FAKE_AUTOGRAPH = '''
class _AutoGraph(object):
    @staticmethod
    def to_graph(function):
        from tensorflow import converter
        return converter.to_graph(function)


autograph = _AutoGraph()
'''


def _fake(root: Path, converter: str | None) -> Path:
    body = (fakes.HERE / "functional_tensorflow.py").read_text(encoding="utf-8")
    fakes.install(root, body + (FAKE_AUTOGRAPH if converter else ""))
    if converter:  # TensorFlow declares the library (only declared ones and their closure are recorded)
        metadata = root / "tensorflow-2.99.0.dist-info" / "METADATA"
        metadata.write_text(metadata.read_text(encoding="utf-8") + "Requires-Dist: astlike>=0.2.1\n", encoding="utf-8")
        (root / "tensorflow" / "converter.py").write_text(converter, encoding="utf-8")
        (root / "astlike").mkdir()
        (root / "astlike" / "__init__.py").write_text("class AST(object):\n    pass\n", encoding="utf-8")
        dist = root / "astlike-0.2.2.dist-info"
        dist.mkdir()
        (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: astlike\nVersion: 0.2.2\n", encoding="utf-8")
        (dist / "top_level.txt").write_text("astlike\n", encoding="utf-8")
        (dist / "RECORD").write_text("astlike/__init__.py,,\nastlike-0.2.2.dist-info/RECORD,,\n", encoding="utf-8")
    return root


def test_a_failing_conversion_records_the_files_and_their_imports_and_names_the_suspect(tmp_path):
    run = fakes.run_doctor(_fake(tmp_path, CONVERTER), *MINE)
    recorded = run.tensorflow["autograph"]
    assert recorded["status"] == "failed", run.stderr[-2000:]
    assert recorded["error"]["type"].endswith("ConversionError")
    assert recorded["error"]["causes"][0]["type"] == "ValueError"
    converter = next(f for f in recorded["files"] if f["file"].endswith("converter.py"))
    assert converter["imports"] == ["collections", "astlike"] and converter["frames"] >= 2
    assert not any("autograph_trace" in f["file"] for f in recorded["files"])  # the doctor's own file is left out
    dependencies = run.result("dependencies")
    assert dependencies["status"] == "fail" and "suspect astlike 0.2.2" in dependencies["summary"]
    assert dependencies["evidence"]["candidates"][0]["requirement"] == "astlike>0.2.2,>=0.2.1"


def test_a_tensorflow_without_to_graph_is_not_a_failure(tmp_path):
    run = fakes.run_doctor(_fake(tmp_path, None), *MINE)
    assert run.tensorflow["autograph"] == {"status": "unavailable"}, run.stderr[-2000:]
    assert run.result("dependencies")["status"] != "fail"
