"""The Markdown report, as GitHub will render it when pasted into an issue."""

from __future__ import annotations

import json
import re

from tfdoctor.results.model import CheckResult, Remediation, Status
from tfdoctor.render.markdown import GITHUB_BODY_LIMIT, compact_json, escape, render
from tfdoctor.report.run import RunReport

FIX = Remediation("Install the plugin that matches TensorFlow 2.16 (see tensorflow/tensorflow#62860).",
                  ("~/venv/bin/python -m pip install 'tensorflow-metal==1.1.0'",),
                  "https://github.com/tensorflow/tensorflow/issues/62860")
RESULTS = [
    CheckResult("architecture", "Native arm64 Python", Status.PASS, "arm64 Python on Apple M1"),
    CheckResult("metal-plugin", "Metal plugin", Status.FAIL, "Library not loaded: @rpath/libmetal_plugin.dylib",
                ("dlopen(/Users/<user>/venv/x.so): symbol not found | twice",), FIX),
    CheckResult("memory", "Memory", Status.WARN, "8 GiB <user> RAM; swap *heavy*"),
    CheckResult("probe", "GPU probe", Status.SKIP, "not recorded: tensorflow"),
]
FACTS = {"host": {"system": "Darwin", "machine": "arm64"},
         "tensorflow": {"stderr_tail": "a ``` fence and a ```` longer one"},
         "cpu": {"flags": [f"flag{i}" for i in range(60)]}}


def document(**extra) -> dict:
    return {**RunReport(facts=FACTS, results=RESULTS).to_dict(), **extra}


def test_problems_first_then_a_table_of_what_passed_then_the_skips_folded():
    text = render(document())
    problems = [m.group(1) for m in re.finditer(r"^\*\*\S+ .*\*\* \(`([a-z-]+)`\)", text, re.M)]
    assert problems == ["metal-plugin", "memory"]  # report order among the problems
    rows = [line for line in text.splitlines() if line.startswith("| ") and "`" in line]
    assert rows == ["| ✅ `architecture` | arm64 Python on Apple M1 |"]
    assert text.index("#### Problems") < text.index("#### Passed") < text.index("1 not applicable or not recorded")
    assert "- `probe`: not recorded: tensorflow" in text.split("not applicable or not recorded", 1)[1]


def test_problems_carry_their_hints_and_passes_do_not_appear_there():
    text = render(document())
    problems = text.split("#### Problems", 1)[1].split("<details>", 1)[0]
    assert "Metal plugin" in problems and "Memory" in problems and "Native arm64 Python" not in problems
    assert "```sh\n~/venv/bin/python -m pip install 'tensorflow-metal==1.1.0'\n```" in problems
    assert "See: <https://github.com/tensorflow/tensorflow/issues/62860>" in problems


def test_prose_cannot_turn_into_html_tables_mentions_or_references():
    text = render(document())
    assert "\\<user\\>" in text and "<user>" not in text.split("<details>", 1)[0].replace("\\<user\\>", "")
    assert "`@rpath`" in text and "`tensorflow/tensorflow#62860`" in text
    assert "symbol not found \\| twice" in text
    assert "swap \\*heavy\\*" in text


def test_facts_are_folded_in_a_fence_longer_than_any_backtick_run_inside():
    text = render(document())
    folded = text.split("<details><summary>Facts (JSON)</summary>", 1)[1]
    assert folded.rstrip().endswith("</details>")
    body = folded.split("`````json\n", 1)[1].split("\n`````", 1)[0]
    assert json.loads(body) == FACTS


def test_compact_json_is_the_same_data_in_fewer_lines():
    facts = {"distributions": [{"name": f"pkg{i}", "version": "1.0"} for i in range(50)], **FACTS}
    compact = compact_json(facts)
    assert json.loads(compact) == facts
    assert len(compact.splitlines()) < len(json.dumps(facts, indent=2).splitlines()) / 3
    assert max(len(line) for line in compact.splitlines()) <= 120


def test_explained_and_unredacted_reports_say_so():
    text = render(document(explained_from="old.json (tfdoctor 0.0.1 report, schema 1.0, saved WITHOUT redaction)",
                           redacted=False))
    header = text.split("| |", 1)[0]
    assert "Diagnosed again" in header and "saved WITHOUT redaction" in header and "**Not redacted**" in header


def test_too_long_for_github_says_so_instead_of_being_cut():
    big = {**FACTS, "blob": ["x" * 90] * 900}
    text = render({**RunReport(facts=big, results=RESULTS).to_dict()})
    assert len(text) > GITHUB_BODY_LIMIT
    assert text.startswith("> **Too long for one GitHub comment**")
    assert not render(document()).startswith(">")


def test_escape_keeps_one_line():
    assert escape("a\nb\r\nc") == "a b c"
