"""The shipped JSON Schema: valid, documents every facts section, and describes what tfdoctor writes."""

from __future__ import annotations

import json

import jsonschema
import pytest

from tests.fixtures_support import fixture_id, fixture_paths, load_fixture
from tests.test_explain import LINUX_FACTS, old_report, run_cli, write
from tfdoctor.facts import SECTIONS
from tfdoctor.report import SCHEMA_VERSION
from tfdoctor.schema import report_schema

SCHEMA = report_schema()
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)
FACTS_VALIDATOR = jsonschema.Draft202012Validator({"$defs": SCHEMA["$defs"], "$ref": "#/$defs/facts"})


def test_schema_is_valid_draft_2020_12():
    jsonschema.Draft202012Validator.check_schema(SCHEMA)


def test_schema_version_matches_the_pattern():
    assert VALIDATOR.evolve(schema=SCHEMA["properties"]["schema_version"]).is_valid(SCHEMA_VERSION)


@pytest.mark.parametrize("name", [*SECTIONS, "system_profiler", "collection"])
def test_every_facts_section_is_documented(name):
    spec = SCHEMA["$defs"]["facts"]["properties"][name]
    assert spec.get("description", "").strip()
    assert spec.get("properties") or spec.get("additionalProperties") or spec.get("items"), "shape, not just a type"


def test_fields_of_the_shared_shapes_are_documented():
    facts = SCHEMA["$defs"]["facts"]["properties"]
    assert {"system", "release", "version", "machine"} <= set(facts["host"]["properties"])
    assert {"sw_vers", "os_release", "proc_version", "glibc", "windows"} <= set(facts["os"]["properties"])
    assert {"smi", "smi_query", "proc_driver_version"} <= set(facts["nvidia"]["properties"])
    assert {"status", "exit_code", "signal", "timed_out", "duration_s", "stderr_tail", "exception", "version",
            "build_info", "devices", "probe"} <= set(facts["tensorflow"]["properties"])
    assert {"executable", "version", "machine", "proc_translated", "in_venv", "conda", "uv_version", "prefix",
            "site_packages"} <= set(facts["python"]["properties"])
    assert {"argv", "status", "exit_code", "stdout", "stderr", "duration_ms"} <= set(
        SCHEMA["$defs"]["command_result"]["properties"])


def test_explain_output_validates(tmp_path):
    code, out, err = run_cli(["explain", write(tmp_path, old_report()), "--json"])
    assert code in (0, 1), err
    VALIDATOR.validate(json.loads(out))


def test_hand_written_facts_validate_and_explain(tmp_path):
    """What a support script would write: the schema's shapes, nothing else."""
    document = {
        "schema_version": "1.0",
        "facts": {
            **LINUX_FACTS,
            "nvidia": {"smi": {"argv": ["nvidia-smi"], "status": "not_found", "exit_code": None, "stdout": "",
                               "stderr": "", "duration_ms": 0.1}, "smi_query": None, "proc_driver_version": None},
            "tensorflow": {"status": "import_error", "exit_code": 1, "signal": None, "timed_out": False,
                           "duration_s": 0.4, "stderr_tail": "ImportError: libcudart.so.12", "version": None,
                           "exception": {"type": "ImportError", "message": "libcudart.so.12"},
                           "build_info": None, "devices": None, "probe": None},
        },
    }
    FACTS_VALIDATOR.validate(document["facts"])
    code, _, err = run_cli(["explain", write(tmp_path, document)])
    assert code in (0, 1), err


@pytest.mark.parametrize("facts", [
    {"host": {"system": 5}},
    {"tensorflow": {"status": "exploded"}},
    {"python": {"proc_translated": 1}},
    {"distributions": [{"name": "numpy"}]},
    {"nvidia": {"smi": {"argv": ["nvidia-smi"], "status": "maybe"}}},
])
def test_the_schema_rejects_wrong_shapes(facts):
    assert not FACTS_VALIDATOR.is_valid(facts)


FIXTURES = fixture_paths()


@pytest.mark.parametrize("path", FIXTURES, ids=[fixture_id(p) for p in FIXTURES])
def test_fixture_facts_follow_the_schema(path):
    FACTS_VALIDATOR.validate(load_fixture(path)["facts"])
