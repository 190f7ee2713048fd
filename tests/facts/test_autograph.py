"""Issue 29: AutoGraph's conversion failure read from the TensorFlow child's record, and the distributions
the failing code imports from outside TensorFlow ranked as suspects, each with its candidate repair
(tfdoctor/facts/autograph.py); the dependencies check's finding and the candidates `--prove` tries."""

from __future__ import annotations

from tfdoctor.facts import autograph
from tfdoctor.fixer import trials
from tfdoctor.results.model import Status
from tfdoctor.checking.registry import all_checks
from tfdoctor.checking.runner import run_checks
from tests.builders import ENV_PYTHON, ENV_SITE, IMPORTED, TF_221_REQUIRES, tensorflow_environment
from tests.plan_support import argvs, plan_of

GAST_PIN = "gast!=0.5.0,!=0.5.1,!=0.5.2,>=0.2.1"  # tensorflow-cpu 2.21.0's line, as its METADATA writes it
AUTOGRAPH = f"{ENV_SITE}/tensorflow/python/autograph"
# What the child recorded under gast 0.2.2 (tensorflow-cpu 2.21.0, Python 3.11; this machine, 2026-11-26).
CAUSE = ('invalid value for "node": expected "ast.AST", got "<class \'NoneType\'>"; to visit lists of nodes, '
         'use "visit_block" instead')
FAILED = {
    "status": "failed",
    "error": {"type": "tensorflow.python.autograph.impl.api.ConversionError",
              "message": f"converting <function control_flow.<locals>.step at 0x7f>: ValueError: {CAUSE}",
              "causes": [{"type": "ValueError", "message": CAUSE}]},
    "files": [
        {"file": f"{AUTOGRAPH}/impl/api.py", "frames": 5, "imports": ["functools", "inspect", "os", "sys", "tensorflow"]},
        {"file": f"{AUTOGRAPH}/pyct/transformer.py", "frames": 6, "imports": ["collections", "enum", "gast", "tensorflow"]},
        {"file": f"{AUTOGRAPH}/pyct/static_analysis/activity.py", "frames": 4, "imports": ["copy", "weakref", "gast", "tensorflow"]},
        {"file": "/usr/lib/python3.11/ast.py", "frames": 3, "imports": ["sys", "_ast", "contextlib", "enum"]},
        {"file": f"{AUTOGRAPH}/pyct/transpiler.py", "frames": 3, "imports": ["inspect", "threading", "types", "gast", "numpy"]},
    ],
}
GAST = {"name": "gast", "version": "0.2.2", "location": ENV_SITE, "top_level": ["gast"]}
DEPENDENCIES = next(c for c in all_checks() if c.id == "dependencies")


def broken(autograph_record=FAILED, gast=GAST, requires=(*TF_221_REQUIRES, GAST_PIN)):
    return tensorflow_environment(extra=[gast], requires=requires, tensorflow={**IMPORTED, "autograph": autograph_record})


def test_the_distributions_the_failing_code_imports_are_the_suspects_most_frames_first():
    found = autograph.suspects(broken())
    assert [(s.name, s.version, s.frames, len(s.files)) for s in found] == [("gast", "0.2.2", 13, 3), ("numpy", "2.4.6", 3, 1)]
    gast = found[0]
    # newer than installed, inside every requirer's specifier (no tested-lock table here)
    assert gast.requirement == "gast>0.2.2,!=0.5.0,!=0.5.1,!=0.5.2,>=0.2.1" and gast.tested is None
    assert gast.pins == (("tensorflow-cpu", "2.21.0", "!=0.5.0,!=0.5.1,!=0.5.2,>=0.2.1"),)
    assert gast.describe().startswith("gast 0.2.2 (inside tensorflow-cpu 2.21.0's gast!=0.5.0,!=0.5.1,!=0.5.2,>=0.2.1, "
                                      "but the AutoGraph code that fails imports it: transformer.py, activity.py")
    assert autograph.cause(FAILED) == f"ValueError: {CAUSE}"


def test_the_tested_lock_gives_the_candidate_when_the_table_has_it():
    rows = [{"tensorflow": "2.21.0", "python": "3.11", "name": "gast", "version": "0.7.0",
             "source": "https://github.com/tensorflow/tensorflow/blob/v2.21.0/requirements_lock_3_11.txt"}]
    gast = autograph.suspects(broken(), lock_rows=rows)[0]
    assert (gast.requirement, gast.tested) == ("gast==0.7.0", "0.7.0")


def test_tensorflow_the_standard_library_and_a_converted_function_name_no_suspect():
    assert autograph.suspects(broken(autograph_record={"status": "converted"})) == []
    assert autograph.suspects(broken(autograph_record={"status": "unavailable"})) == []
    only_tensorflow = {**FAILED, "files": [f for f in FAILED["files"] if "gast" not in f["imports"] and "numpy" not in f["imports"]]}
    assert autograph.suspects(broken(autograph_record=only_tensorflow)) == []


def test_dependencies_fails_naming_the_suspect_the_proof_and_a_plan_that_keeps_tensorflow():
    facts = broken()
    result = run_checks([DEPENDENCIES], facts)[0]
    assert result.status is Status.FAIL
    assert result.summary.startswith("AutoGraph cannot convert Python control flow") and "suspect gast 0.2.2" in result.summary
    text = "\n".join(result.details)
    assert CAUSE in text and "tfdoctor --prove" in text
    assert argvs(plan_of(facts, [result])) == [[ENV_PYTHON, "-m", "pip", "install", "--", "gast>0.2.2,!=0.5.0,!=0.5.1,!=0.5.2",
                                               "tensorflow-cpu==2.21.0"]]
    found = trials.candidates([result])
    assert [(c.name, c.requirement) for c in found] == [("gast", "gast>0.2.2,!=0.5.0,!=0.5.1,!=0.5.2,>=0.2.1"),
                                                        ("numpy", "numpy>2.4.6,>=1.26.0")]
    assert [s["name"] for s in result.evidence["suspects"]] == ["gast", "numpy"]


def test_a_healthy_conversion_leaves_the_check_passing():
    result = run_checks([DEPENDENCIES], broken(autograph_record={"status": "converted"}, gast={**GAST, "version": "0.7.0"}))[0]
    assert result.status is Status.PASS, result.summary


def test_a_failure_with_no_suspect_still_fails_without_a_repair():
    only_tensorflow = {**FAILED, "files": FAILED["files"][:1]}
    result = run_checks([DEPENDENCIES], broken(autograph_record=only_tensorflow))[0]
    assert result.status is Status.FAIL and "imports no distribution outside TensorFlow" in " ".join(result.details)
    assert result.remediation is None and trials.candidates([result]) == []
