"""Issue 29: an import error no rule explains names its suspects (tfdoctor/facts/import_suspects.py), from a saved
report as from a live run. The error text is the one of ostris/ai-toolkit#262 and pytorch/pytorch#133883 (2024-25,
fixed by upgrading typing_extensions); the frames are Python's own traceback lines."""

from __future__ import annotations

from tfdoctor.facts import import_suspects

from tests.import_support import SITE, TYPE_IS, partial_report


def test_the_module_the_message_names_comes_first_then_the_frames_innermost_first_and_tensorflow_is_kept():
    found = import_suspects.suspects(partial_report(), TYPE_IS, lock_rows=[])
    assert [(s.name, s.version) for s in found] == [("typing-extensions", "4.5.0"), ("optree", "0.14.0"),
                                                    ("keras", "3.8.0")]
    assert found[0].requirement == "typing-extensions>4.5.0"
    assert found[0].how() == "the error names its module 'typing_extensions'"
    assert found[1].how() == f"a failing frame is its file {SITE}/optree/ops.py"


def test_a_recorded_pin_bounds_the_candidate():
    facts = partial_report()
    facts["distributions"][2]["requires"] = ["typing-extensions>=4.6.0"]
    first = import_suspects.suspects(facts, TYPE_IS, lock_rows=[])[0]
    assert first.requirement == "typing-extensions>4.5.0,>=4.6.0"
    assert "inside optree 0.14.0's typing-extensions>=4.6.0" in first.describe()


def test_an_error_inside_tensorflow_alone_has_no_suspect():
    error = {"type": "ImportError", "message": "DLL load failed while importing _pywrap_tensorflow_internal",
             "traceback": [f'  File "{SITE}/tensorflow/python/pywrap_tensorflow.py", line 73, in <module>']}
    assert import_suspects.suspects(partial_report(), error, lock_rows=[]) == []
    assert import_suspects.suspects(partial_report(), None, lock_rows=[]) == []
