"""The Python API: light to import, the CLI's verdict, the report in every format."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import tfdoctor
from tfdoctor.results.model import Status

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "macos" / "m1-tf220-metal120-import-fails.json"


def test_import_tfdoctor_imports_no_rich_no_tensorflow_and_no_check_module():
    code = ("import sys, tfdoctor; tfdoctor.__version__; "
            "print(sorted({m.split('.')[0] for m in sys.modules if m.split('.')[0] in ('rich', 'tensorflow', 'typer')}"
            " | {m for m in sys.modules if m.startswith('tfdoctor.checks.')}))")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert run.stdout.strip() == "[]", run.stderr


def test_explain_a_saved_report_by_path_and_as_a_dict():
    by_path = tfdoctor.explain(FIXTURE)
    by_dict = tfdoctor.explain(json.loads(FIXTURE.read_text()))
    assert by_path.results.keys() == by_dict.results.keys()
    assert by_path.results["tensorflow-import"].status is Status.FAIL
    assert (by_path.ok, by_path.exit_code) == (False, 1)
    assert {"tensorflow-import", "metal-plugin"} <= set(by_path.problems)
    assert all(r.status.is_problem for r in by_path.problems.values())


def test_report_formats():
    report = tfdoctor.explain(FIXTURE)
    assert json.loads(report.to_json())["results"] == report.to_dict()["results"]
    markdown = report.to_markdown()
    assert report._repr_markdown_() == markdown
    assert markdown.index("#### Problems") < markdown.index("#### Passed")
    assert "tensorflow-import" in report.to_text() and repr(report).startswith("<tfdoctor.Report problems: exit 1")
    copy = report.to_dict()
    copy["results"].clear()
    assert report.to_dict()["results"]  # to_dict is a copy


def test_strict_counts_warnings():
    document = json.loads(FIXTURE.read_text())
    report = tfdoctor.explain(document, only=["memory"], strict=True)
    assert report.exit_code == (1 if report.results["memory"].status is Status.WARN else 0)


def test_errors_are_doctor_errors():
    with pytest.raises(tfdoctor.DoctorError, match="not a tfdoctor report"):
        tfdoctor.explain({"facts": {}})
    with pytest.raises(tfdoctor.DoctorError, match="unknown check id"):
        tfdoctor.explain(FIXTURE, only=["no-such-check"])
    with pytest.raises(tfdoctor.DoctorError, match="require-gpu"):
        tfdoctor.diagnose(config={"require-gpu": "rocm"})


def test_the_api_redacts_like_the_cli(tmp_path):
    document = json.loads(FIXTURE.read_text())
    home = str(Path.home())
    document["facts"]["python"]["executable"] = f"{home}/envs/tf/bin/python"
    assert home not in tfdoctor.explain(document).to_json()
    assert home in tfdoctor.explain(document, redact=False).to_json()
