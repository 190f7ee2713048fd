"""`tfdoctor diff A B`: versions, platform and verdicts that differ between two reports."""

from __future__ import annotations

import copy
import json

import pytest

from tests.cli_support import run_cli, write
from tfdoctor.operations.explain import compare as comparing


def compare(a, b):
    """The operation `tfdoctor diff` runs, on two reports' bytes, unredacted."""
    return dict(comparing(a, b, redact=False).document)
from tfdoctor.results.model import Outcome
from tfdoctor.checking.registry import check

WORKS = {
    "schema_version": "1.0",
    "tool": {"name": "tfdoctor", "version": "0.1.0"},
    "redacted": False,
    "facts": {
        "host": {"system": "Darwin", "release": "23.2.0", "version": "", "machine": "arm64"},
        "os": {"sw_vers": "ProductName:\t\tmacOS\nProductVersion:\t\t14.2.1\nBuildVersion:\t\t23C71\n"},
        "python": {"executable": "/Users/alice/venv/bin/python", "version": "3.11.7", "machine": "arm64",
                   "implementation": "CPython", "proc_translated": "0", "in_venv": True},
        "distributions": [{"name": "tensorflow", "version": "2.16.2"}, {"name": "tensorflow-metal", "version": "1.1.0"},
                          {"name": "numpy", "version": "1.26.4"}],
        "environment": {"TF_CPP_MIN_LOG_LEVEL": "2"},
        "tensorflow": {"status": "ok", "version": "2.16.2",
                       "devices": [{"name": "/physical_device:CPU:0", "device_type": "CPU"},
                                   {"name": "/physical_device:GPU:0", "device_type": "GPU"}]},
    },
}


def broken() -> dict:
    document = copy.deepcopy(WORKS)
    facts = document["facts"]
    facts["python"].update(executable="/Users/bob/miniforge3/bin/python", version="3.12.1", machine="x86_64",
                           proc_translated="1")
    facts["distributions"] = [{"name": "tensorflow", "version": "2.16.2"}, {"name": "tensorflow", "version": "2.15.0"},
                              {"name": "numpy", "version": "2.0.0"}]
    facts["tensorflow"] = {"status": "crashed", "signal": "SIGILL", "version": None, "devices": None}
    del facts["environment"]
    return document


def _rows(document):
    return {(d["section"], d["field"]): (d["a"], d["b"]) for d in document["differences"]}


def test_differences_name_versions_platform_and_packages():
    document = compare(json.dumps(WORKS).encode(), json.dumps(broken()).encode())
    rows = _rows(document)
    assert rows[("python", "Python")] == ("3.11.7", "3.12.1")
    assert rows[("python", "Python architecture")] == ("arm64", "x86_64")
    assert rows[("python", "Rosetta")] == ("native", "translated (Rosetta)")
    assert rows[("tensorflow", "TensorFlow import")] == ("ok", "crashed")
    assert rows[("tensorflow", "Devices")] == ("CPU × 1, GPU × 1", None)
    assert rows[("packages", "tensorflow")] == ("2.16.2", "2.16.2 + 2.15.0")
    assert rows[("packages", "tensorflow-metal")] == ("1.1.0", "not installed")
    assert rows[("packages", "numpy")] == ("1.26.4", "2.0.0")
    # a section one side lacks entirely is one row, not one per variable
    assert rows[("environment", "(recorded)")] == ("1 recorded", None)
    assert ("platform", "Operating system") not in rows, "same macOS on both"
    assert document["identical"] is False


def test_identical_reports_exit_0_and_different_ones_exit_1(tmp_path):
    a = write(tmp_path, WORKS, "a.json")
    code, out, _ = run_cli(["diff", a, a])
    assert code == 0 and "No differences" in out
    code, out, _ = run_cli(["diff", a, write(tmp_path, broken(), "b.json")])
    assert code == 1 and "3.12.1" in out


@pytest.mark.parametrize("fmt", ["text", "json", "markdown"])
def test_every_format_shows_the_differences_redacted(tmp_path, fmt):
    a, b = write(tmp_path, WORKS, "a.json"), write(tmp_path, broken(), "b.json")
    code, out, err = run_cli(["diff", a, b, "--format", fmt])
    assert code == 1, err
    for needle in ("3.11.7", "3.12.1", "2.15.0", "crashed"):
        assert needle in out
    assert "alice" not in out and "bob" not in out
    _, raw, _ = run_cli(["diff", a, b, "--format", fmt, "--no-redact"])
    assert "/Users/alice/venv/bin/python" in raw.replace("\\_", "_")
    if fmt == "json":
        document = json.loads(out)
        assert document["redacted"] is True and json.loads(raw)["redacted"] is False
        assert document["reports"]["a"]["redacted"] is False
    else:
        assert "Not redacted" in raw


def test_not_a_report_is_refused_in_one_line(tmp_path):
    a = write(tmp_path, WORKS, "a.json")
    code, out, err = run_cli(["diff", a, write(tmp_path, "[]", "b.json")])
    assert code == 2 and out == "" and err.count("\n") == 1 and "b.json" in err


@check("uses-python-version", "Fake check: Python version", needs=("python",))
def _python_version(facts):
    version = facts["python"].get("version", "")
    return Outcome.ok("old enough") if version.startswith("3.11") else Outcome.fail(f"Python {version}")


def test_verdicts_are_todays_checks_on_both_reports(monkeypatch):
    monkeypatch.setattr("tfdoctor.diagnosis.doctor.all_checks", lambda: [_python_version])
    document = compare(json.dumps(WORKS).encode(), json.dumps(broken()).encode())
    assert document["checks"] == [{"id": "uses-python-version", "title": "Fake check: Python version", "a": "pass",
                                   "b": "fail", "a_summary": "old enough", "b_summary": "Python 3.12.1"}]
    from tfdoctor.render.diff import render_markdown, render_text

    assert "pass → fail" in render_text(document)
    assert "| `uses-python-version` | ✅ pass: old enough | ❌ fail: Python 3.12.1 |" in render_markdown(document)
