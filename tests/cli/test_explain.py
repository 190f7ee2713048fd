"""`tfdoctor explain`: today's checks on a saved report's facts; anything else is refused in one line."""

from __future__ import annotations

import io
import json
import subprocess
import sys

import pytest

from tests.cli_support import LINUX_FACTS, old_report, run_cli, write
from tests.fixtures_support import fixture_id, fixture_paths, load_fixture
from tests.shared_run_support import PLAIN_RUN, shared_doctor_run
from tfdoctor.report.saved import UnreadableReport, parse_report
from tfdoctor.facts import host_system
from tfdoctor.diagnosis.doctor import selected_checks
from tfdoctor.report.run import SCHEMA_VERSION

CHECKS = selected_checks(deep=False)  # what explain runs on a report that holds no --deep workload


# --- refusals: one line, exit 2, nothing on stdout ------------------------------------------------

NOT_REPORTS = {
    "list": ([1, 2], "the top level is a list, not an object"),
    "string": ('"hello"', "the top level is a string"),
    "invalid": ("{not json", "invalid JSON at line 1"),
    "truncated": (json.dumps(old_report(), indent=2)[:200], "looks truncated"),
    "empty": ("", "empty"),
    "binary": (b"\x00\x9f\x92\x96garbage\xff", "not UTF-8"),
    "no-version": ({"facts": {}}, "no schema_version"),
    "number-version": ({"schema_version": 1.0, "facts": {}}, "MAJOR.MINOR"),
    "newer-major": ({"schema_version": "2.0", "facts": {}}, "schema_version 2.0 is not one this tfdoctor reads"),
    "no-facts": ({"schema_version": "1.0"}, "no facts object"),
    "facts-list": ({"schema_version": "1.0", "facts": []}, "facts is a list"),
    "section-type": ({"schema_version": "1.0", "facts": {"host": "Linux"}}, "facts.host is a string"),
    "dist-type": ({"schema_version": "1.0", "facts": {"distributions": ["numpy"]}}, "facts.distributions[0] is a string"),
    "nan": ('{"schema_version": "1.0", "facts": {"memory": {"total_bytes": NaN}}}', "NaN is not valid JSON"),
    "huge-number": ('{"schema_version": "1.0", "facts": {"memory": {"total_bytes": 1e400}}}', "out of range"),
    "deep": ('{"schema_version": "1.0", "facts": {"x": ' + "[" * 100 + "]" * 100 + "}}", "nested deeper"),
    "very-deep": ('{"schema_version": "1.0", "facts": ' + "[" * 200_000, "nested deeper"),
}


@pytest.mark.parametrize("name", sorted(NOT_REPORTS))
def test_not_a_report_exits_2_with_one_line(tmp_path, name):
    content, reason = NOT_REPORTS[name]
    code, out, err = run_cli(["explain", write(tmp_path, content)])
    assert code == 2
    assert out == ""
    assert err.count("\n") == 1 and err.startswith("tfdoctor: error: "), err
    assert reason in err
    assert "Traceback" not in err


def test_missing_file_is_one_line(tmp_path):
    code, out, err = run_cli(["explain", tmp_path / "nope.json"])
    assert (code, out) == (2, "")
    assert err.startswith("tfdoctor: error: cannot read") and err.count("\n") == 1


def test_a_directory_is_one_line(tmp_path):
    code, _, err = run_cli(["explain", tmp_path])
    assert code == 2 and err.startswith("tfdoctor: error: cannot read")


def test_parse_report_is_pure_and_raises_report_error():
    with pytest.raises(UnreadableReport, match="top level is a list"):
        parse_report(b"[]", "x")
    saved = parse_report(json.dumps(old_report()).encode(), "x.json")
    assert saved.tool_version == "0.0.1" and saved.redacted is False


def test_utf16_from_powershell_is_read(tmp_path):
    path = write(tmp_path, json.dumps(old_report()).encode("utf-16"))
    code, out, _ = run_cli(["explain", path, "--json"])
    assert code in (0, 1) and json.loads(out)["source_report"]["tool_version"] == "0.0.1"


def test_lone_surrogates_do_not_break_the_output(tmp_path):
    path = write(tmp_path, '{"schema_version": "1.0", "facts": {"environment": {"TF_X": "\\ud800"}}}')
    for fmt in ("text", "json", "markdown"):
        code, out, err = run_cli(["explain", path, "--format", fmt])
        assert code in (0, 1), err
        out.encode("utf-8")


# --- diagnosis ---------------------------------------------------------------------------------------

def test_old_report_gets_todays_checks_and_missing_facts_skip(tmp_path):
    code, out, err = run_cli(["explain", write(tmp_path, old_report()), "--json"])
    assert code in (0, 1), err
    document = json.loads(out)
    results = {r["id"]: r for r in document["results"]}
    assert list(results) == [c.id for c in CHECKS], "today's registry, in report order"
    assert "retired-check" not in results
    recorded = set(LINUX_FACTS)
    for check in CHECKS:
        applies = not check.platforms or host_system(LINUX_FACTS) in check.platforms
        missing = [n for n in check.needs if n not in recorded]
        if applies and missing:
            assert results[check.id]["status"] == "skip"
            assert results[check.id]["summary"].startswith("not recorded: "), results[check.id]
    assert document["tool"]["version"] != "0.0.1"
    assert document["schema_version"] == SCHEMA_VERSION


def test_any_1x_minor_is_accepted(tmp_path):
    code, _, err = run_cli(["explain", write(tmp_path, old_report(schema_version="1.97"))])
    assert code in (0, 1), err


def test_explained_from_and_the_saved_reports_own_redaction_flag(tmp_path):
    path = write(tmp_path, old_report())
    code, out, _ = run_cli(["explain", path, "--json"])
    document = json.loads(out)
    assert document["redacted"] is True
    assert document["source_report"] == {"path": str(path), "schema_version": "1.0", "tool_version": "0.0.1",
                                         "created_at": "2024-01-01T00:00:00+00:00", "redacted": False}
    assert "saved WITHOUT redaction" in document["explained_from"]
    _, text, _ = run_cli(["explain", path])
    assert "saved WITHOUT redaction" in " ".join(text.split())
    _, markdown, _ = run_cli(["explain", path, "--format", "markdown"])
    assert "saved WITHOUT redaction" in markdown


@pytest.mark.parametrize("fmt", ["text", "json", "markdown"])
def test_a_report_saved_without_redaction_is_redacted_when_explained(tmp_path, fmt):
    path = write(tmp_path, old_report())
    _, out, _ = run_cli(["explain", path, "--format", fmt])
    assert "alice" not in out
    _, raw, _ = run_cli(["explain", path, "--format", fmt, "--no-redact"])
    assert "/home/alice/venv/bin/python" in raw
    assert "Not redacted" in raw or '"redacted": false' in raw


def test_only_skip_output_and_stdin(tmp_path, monkeypatch):
    path = write(tmp_path, old_report())
    first = CHECKS[0].id
    code, out, _ = run_cli(["explain", path, "--json", "--only", first])
    assert [r["id"] for r in json.loads(out)["results"]] == [first]
    _, out, _ = run_cli(["explain", path, "--json", "--skip", first])
    assert first not in [r["id"] for r in json.loads(out)["results"]]
    code, out, err = run_cli(["explain", path, "--only", "no-such-check"])
    assert code == 2 and out == "" and "unknown check id no-such-check" in err
    target = tmp_path / "out.md"
    code, out, err = run_cli(["explain", path, "-f", "markdown", "-o", target])
    assert out == "" and target.read_text(encoding="utf-8").startswith("### tfdoctor")
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(json.dumps(old_report()).encode())))
    code, out, _ = run_cli(["explain", "-", "--json"])
    assert json.loads(out)["source_report"]["path"] == "<stdin>"


def test_exit_code_follows_todays_results(tmp_path):
    path = write(tmp_path, old_report())
    code, out, _ = run_cli(["explain", path, "--json"])
    statuses = {r["status"] for r in json.loads(out)["results"]}
    assert code == (1 if statuses & {"fail", "error"} else 0)
    strict, _, _ = run_cli(["explain", path, "--strict"])
    assert strict == (1 if statuses & {"fail", "error", "warn"} else 0)


def test_explain_output_can_be_explained_again(tmp_path):
    _, out, _ = run_cli(["explain", write(tmp_path, old_report()), "--json"])
    again, out2, err = run_cli(["explain", write(tmp_path, out, "again.json"), "--json"])
    assert again in (0, 1), err
    statuses = lambda text: [(r["id"], r["status"]) for r in json.loads(text)["results"]]  # noqa: E731
    assert statuses(out) == statuses(out2)


def test_explain_of_a_live_json_report_gives_the_same_statuses(tmp_path, tmp_path_factory):
    """A real `python -m tfdoctor --json` run (shared with test_schema), saved, then explained: the same verdicts."""
    saved = tmp_path / "live.json"
    run = shared_doctor_run(PLAIN_RUN, tmp_path_factory)
    assert run.returncode in (0, 1)
    saved.write_text(run.stdout, encoding="utf-8")
    original = json.loads(saved.read_text(encoding="utf-8"))
    code, out, err = run_cli(["explain", saved, "--json"])
    explained = json.loads(out)
    assert [(r["id"], r["status"]) for r in explained["results"]] == \
        [(r["id"], r["status"]) for r in original["results"]]
    assert code == run.returncode
    # and through a real subprocess as well, in text
    text = subprocess.run([sys.executable, "-m", "tfdoctor", "explain", str(saved)], capture_output=True,
                          text=True, timeout=120)
    assert text.returncode == run.returncode and "Traceback" not in text.stderr


@pytest.mark.parametrize("path", fixture_paths(), ids=fixture_id)
def test_fixtures_explain_from_the_command_line(path):
    code, out, err = run_cli(["explain", path, "--json"])
    assert code in (0, 1), err
    got = {r["id"]: r["status"] for r in json.loads(out)["results"]}
    ran = {c.id for c in CHECKS}
    assert got == {cid: status for cid, status in load_fixture(path)["expected"].items() if cid in ran}
