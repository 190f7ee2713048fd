"""The shipped JSON Schema: valid, documents every facts section, and describes what tfdoctor writes."""

from __future__ import annotations

import json

import jsonschema
import pytest

from tests.fixtures_support import fixture_id, fixture_paths, load_fixture
from tests.builders import probe_facts, probe_side
from tests.cli_support import LINUX_FACTS, old_report, run_cli, write
from tests.shared_run_support import PLAIN_RUN, shared_doctor_run
from tfdoctor.facts import SECTIONS
from tfdoctor.report.run import SCHEMA_VERSION
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


@pytest.mark.parametrize("path", fixture_paths(), ids=fixture_id)
def test_fixture_facts_follow_the_schema(path):
    FACTS_VALIDATOR.validate(load_fixture(path)["facts"])


# ------------------------------------------------------------------ every recorded field is documented
# Collectors add fields in minor versions; the schema's `properties` is where support engineers (and
# `tfdoctor explain` users writing facts by hand) learn what each one means. These tests keep the two in
# step one level deep: section.field, and for list sections the fields of their items.

def schema_at(pointer: str) -> dict:
    """The node a local JSON pointer ('#/$defs/facts') names in the shipped schema."""
    assert pointer.startswith("#/"), f"only local references are expected: {pointer}"
    node = SCHEMA
    for part in pointer[2:].split("/"):
        node = node[part.replace("~1", "/").replace("~0", "~")]
    return node


def applicable(node: dict):
    """node and every schema that applies beside it: its $ref target and its allOf/anyOf/oneOf branches."""
    yield node
    if "$ref" in node:
        yield from applicable(schema_at(node["$ref"]))
    for keyword in ("allOf", "anyOf", "oneOf"):
        for branch in node.get(keyword, ()):
            yield from applicable(branch)


def documented_fields(node: dict) -> set[str] | None:
    """The field names documented for an object at node; None for a map (additionalProperties gives the
    shape of every value, as for sysctl or environment), where any name is documented."""
    names: set[str] = set()
    for schema in applicable(node):
        if isinstance(schema.get("additionalProperties"), dict):
            return None
        names |= set(schema.get("properties", {}))
    return names


def field_schema(node: dict, name: str) -> dict:
    """The merged view of what documents field `name` of an object at node (one schema per branch)."""
    return {"allOf": [s["properties"][name] for s in applicable(node) if name in s.get("properties", {})]}


def item_schema(node: dict) -> dict:
    return {"allOf": [s["items"] for s in applicable(node) if isinstance(s.get("items"), dict)]}


def undocumented(facts: dict) -> list[str]:
    """'section', 'section.field' and 'section[].field' names recorded in facts but absent from the schema."""
    facts_node = schema_at("#/$defs/facts")
    sections = documented_fields(facts_node)
    missing: list[str] = []
    for name, value in facts.items():
        if sections is not None and name not in sections:
            missing.append(name)
            continue
        node = field_schema(facts_node, name)
        if isinstance(value, dict):
            records, prefix = [value], name
        elif isinstance(value, list):  # distributions: the fields of its items
            records, node, prefix = [v for v in value if isinstance(v, dict)], item_schema(node), f"{name}[]"
        else:
            continue
        fields = documented_fields(node)
        if fields is not None:
            missing.extend(f"{prefix}.{key}" for key in sorted({k for record in records for k in record} - fields))
    return missing


def test_the_walker_finds_undocumented_fields_and_leaves_maps_alone():
    facts = {
        "tensorflow": {"status": "ok", "brand_new": 1},
        "distributions": [{"name": "numpy", "version": "2.0", "also_new": []}],
        "nvidia": {"smi": None},
        "sysctl": {"hw.anything.at.all": "1"},
        "environment": {"ANY_NAME": "x"},
        "a_new_section": {},
    }
    assert undocumented(facts) == ["tensorflow.brand_new", "distributions[].also_new", "a_new_section"]


def test_the_walker_follows_refs_into_defs():
    assert documented_fields(field_schema(schema_at("#/$defs/facts")["properties"]["nvidia"], "smi")) >= {
        "argv", "status", "exit_code", "stdout", "stderr", "duration_ms"}
    assert "tensorflow" in documented_fields(SCHEMA["properties"]["facts"])


@pytest.fixture(scope="module")
def live_facts(tmp_path_factory) -> dict:
    """The facts of one `python -m tfdoctor --json --no-probe` run on this machine (shared with test_explain)."""
    run = shared_doctor_run(PLAIN_RUN, tmp_path_factory)
    assert run.returncode in (0, 1)
    return json.loads(run.stdout)["facts"]


def test_every_field_of_a_live_run_is_documented(live_facts):
    assert undocumented(live_facts) == []


@pytest.mark.parametrize("path", fixture_paths(), ids=fixture_id)
def test_every_fixture_field_is_documented(path):
    assert undocumented(load_fixture(path)["facts"]) == []


def test_a_hand_written_probe_is_documented_and_validates():
    """The probe as tests/builders.py writes it by hand: every field it uses has a schema entry."""
    facts = probe_facts(probe_side("GPU", 5000.0), probe_side("CPU", 400.0))
    FACTS_VALIDATOR.validate(facts)
    probe = field_schema(schema_at("#/$defs/facts")["properties"]["tensorflow"], "probe")
    assert set(facts["tensorflow"]["probe"]) <= documented_fields(probe)
    for kind in ("gpu", "cpu"):
        assert set(facts["tensorflow"]["probe"]["sides"][kind]) <= documented_fields(schema_at("#/$defs/probe_side"))
    assert not FACTS_VALIDATOR.is_valid({"tensorflow": {"probe": {"sides": {"gpu": {"kind": "TPU"}}}}})
