"""The server's fast report validator (fastjsonschema on the schema translated to draft 7) reaches
jsonschema's verdict (draft 2020-12, the reference) on real reports and on every one-leaf mutation of them,
the tuples that `prefixItems` describes included."""

from __future__ import annotations

import copy
import json
from typing import Any, Iterator

import pytest
from jsonschema import Draft202012Validator

from tests.server_support import fixture_report
from tfdoctor.schema import report_schema
from tfdoctor.servers.team.validation import as_draft_7, report_validator

REPORTS = ("linux/companions-built-for-older-tensorflow-beside-tensorflow-cpu-2.21",  # has stages tuples
           "macos/m1-numpy-c-api-0x10-vs-0xf")
STRANGER = {str: 7, int: "7", float: "x", bool: "yes", type(None): [], list: {}, dict: []}


def leaves(value: Any, path: tuple = ()) -> Iterator[tuple]:
    if isinstance(value, dict):
        for key, item in value.items():
            yield from leaves(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value[:2]):
            yield from leaves(item, (*path, index))
        yield path + ("extra",)
    yield path


def mutated(document: dict, path: tuple) -> dict:
    copied = copy.deepcopy(document)
    parent = copied
    for step in path[:-1]:
        parent = parent[step]
    last = path[-1] if path else None
    if last == "extra":
        parent.append(["stage", "not seconds", 3] if parent and isinstance(parent[0], list) else 7)
    elif path:
        parent[last] = STRANGER[type(parent[last])]
    return copied


@pytest.fixture(scope="module")
def reference():
    return Draft202012Validator(report_schema())


@pytest.mark.parametrize("name", REPORTS)
def test_the_fast_validator_agrees_with_jsonschema_on_every_one_leaf_mutation(name, reference):
    document = fixture_report(name)
    fast = report_validator()
    assert fast(document) is None and reference.is_valid(document)
    paths = list(leaves(document))
    disagreements, refused, tuples = [], 0, 0
    for path in paths:
        candidate = mutated(document, path)
        expected = reference.is_valid(candidate)
        refused += not expected
        tuples += "stages" in path and not expected
        if (fast(candidate) is None) != expected:
            disagreements.append("/".join(map(str, path)))
    assert disagreements == []
    assert refused > 50  # the mutations do reach what the schema constrains
    if "companions" in name:
        assert tuples > 0  # a stage tuple [name, seconds] broken: prefixItems, translated


def test_prefix_items_becomes_draft_7_tuple_items():
    schema = {"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "array",
              "prefixItems": [{"type": "string"}, {"type": "number"}], "items": False}
    assert as_draft_7(schema) == {"$schema": "http://json-schema.org/draft-07/schema#", "type": "array",
                                  "items": [{"type": "string"}, {"type": "number"}], "additionalItems": False}
    assert json.dumps(as_draft_7(report_schema())).count("prefixItems") == 0
