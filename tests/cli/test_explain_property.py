"""Property: whatever file `explain` is given, it exits 0, 1 or 2, and never with a traceback.

Inputs range from arbitrary bytes through arbitrary JSON to report-shaped documents whose sections
carry the real field names (taken from the shipped schema) with arbitrary values, which is what
reaches deepest into the checks. The CLI runs in-process for speed; a few real subprocess runs
confirm the contract holds for `python -m tfdoctor` too.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.cli_support import run_cli
from tfdoctor.facts import SECTIONS
from tfdoctor.schema import report_schema

FACT_FIELDS = {
    name: sorted((spec.get("properties") or {}))
    for name, spec in report_schema()["$defs"]["facts"]["properties"].items()
}

scalars = (st.none() | st.booleans() | st.integers(min_value=-(2 ** 63), max_value=2 ** 63)
           | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=40)
           | st.sampled_from(["Darwin", "Linux", "Windows", "arm64", "x86_64", "1", "0", "ok", "import_error",
                              "crashed", "2.16.1", "3.12.1", "tensorflow", "tensorflow-metal", "GPU", "CPU"]))
json_values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4)
                           | st.dictionaries(st.text(max_size=12), inner, max_size=4), max_leaves=20)


def section_values(name: str) -> st.SearchStrategy:
    fields = FACT_FIELDS.get(name) or []
    shaped = st.dictionaries(st.sampled_from(fields), json_values, max_size=len(fields)) if fields else st.nothing()
    return st.none() | shaped | json_values | st.lists(shaped | json_values, max_size=3)


facts_strategy = st.fixed_dictionaries(
    {}, optional={name: section_values(name) for name in (*SECTIONS, "system_profiler", "collection")}
)
reports = st.fixed_dictionaries(
    {"schema_version": st.sampled_from(["1.0", "1.5", "2.0", "0.1", "1", "x"]) | json_values, "facts": facts_strategy},
    optional={"tool": json_values, "redacted": json_values, "created_at": json_values, "results": json_values},
)
documents = reports | json_values | st.dictionaries(st.text(max_size=10), json_values)
payloads = (st.binary(max_size=512)
            | documents.map(lambda d: json.dumps(d).encode())
            | documents.map(lambda d: json.dumps(d).encode()).flatmap(
                lambda b: st.integers(0, len(b)).map(lambda cut: b[:cut])))  # truncated files


@pytest.fixture(scope="module")
def report_path(tmp_path_factory):
    return tmp_path_factory.mktemp("property") / "report.json"


def assert_contract(code: int, out: str, err: str, fmt: str) -> None:
    assert code in (0, 1, 2)
    assert "Traceback" not in err and "internal error" not in err, err
    if code == 2:
        assert out == "" and err.startswith("tfdoctor: error: ") and err.count("\n") == 1, err
    else:
        assert err == "", err
        if fmt == "json":
            json.loads(out)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(payload=payloads, fmt=st.sampled_from(["text", "json", "markdown"]))
def test_explain_never_crashes(report_path, payload, fmt):
    report_path.write_bytes(payload)
    assert_contract(*run_cli(["explain", report_path, "--format", fmt, "--verbose"]), fmt)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(document=reports, fmt=st.sampled_from(["text", "json", "markdown"]))
def test_report_shaped_documents_reach_the_checks_and_never_crash(report_path, document, fmt):
    report_path.write_text(json.dumps(document), encoding="utf-8")
    assert_contract(*run_cli(["explain", report_path, "--format", fmt]), fmt)


@pytest.mark.parametrize(
    "payload, expected",
    [
        (b"\x89PNG\r\n\x1a\n\x00\x00", {2}),
        (b"[1, 2, 3]", {2}),
        (b'{"schema_version": "1.0", "facts": {"host": {"system": "Darwin", "machine": "arm64"}', {2}),
        (json.dumps({"schema_version": "1.0", "facts": {"host": {"system": "Darwin", "machine": "arm64"},
                                                        "python": {"version": [], "machine": 7}}}).encode(), {0, 1}),
    ],
)
def test_real_subprocess_runs_keep_the_contract(tmp_path, payload, expected):
    path = tmp_path / "input.json"
    path.write_bytes(payload)
    run = subprocess.run([sys.executable, "-m", "tfdoctor", "explain", str(path), "--json"],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode in expected
    assert "Traceback" not in run.stderr
    if run.returncode == 2:
        assert run.stdout == "" and len(run.stderr.splitlines()) == 1
    else:
        json.loads(run.stdout)
