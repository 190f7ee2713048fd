"""The fresh cases of issue 29 (fixtures/fresh/, and the held-out ones in fixtures/fresh/aside*/) are
well-formed: a public thread as source, an expected block naming real checks and statuses, hints only for
checks it names, and facts in the report schema's shape. Only their form is checked here: diagnosing them is
tools/score_fresh.py's job (the held-out ones are scored by the lead alone)."""

from __future__ import annotations

from urllib.parse import urlparse

import jsonschema
import pytest

from tests.fixtures_support import FIXTURES, HELD_OUT_SETS, SEEN_ROUNDS, fixture_paths, fresh_fixture_paths, load_fixture
from tfdoctor.results.model import Status
from tfdoctor.checking.registry import all_checks
from tfdoctor.schema import report_schema

SCHEMA = report_schema()
FACTS_VALIDATOR = jsonschema.Draft202012Validator({"$defs": SCHEMA["$defs"], "$ref": "#/$defs/facts"})
CHECK_IDS = {c.id for c in all_checks()}
PATHS = fresh_fixture_paths() + [path for folder in HELD_OUT_SETS + SEEN_ROUNDS for path in fresh_fixture_paths(folder)]


def test_nine_rounds_of_cases_ten_held_out_from_each():
    # round 1: 40 cases, 10 held out in aside/; round 2: 20 cases, 10 held out in aside2/;
    # round 3: 20 cases, 10 seen in round3/ and 10 held out in aside3/; rounds 4 to 7: 10 held out each (aside4/,
    # aside5/, aside6/, aside7/); round 5 also has 10 seen cases in round5/; round 6 also has 5 seen cases in round6/;
    # round 7 has 4 seen cases in round7/; round 8 has 7 seen cases in round8/ (threads first posted in 2025-2026)
    # round 9 has none seen: its ten are held out in aside9/
    assert len(fresh_fixture_paths()) == 30 + 10
    assert len(fresh_fixture_paths("aside")) == 10
    assert len(fresh_fixture_paths("aside2")) == 10
    assert len(fresh_fixture_paths("round3")) == 10
    assert len(fresh_fixture_paths("round5")) == 10
    assert len(fresh_fixture_paths("round6")) == 5
    assert len(fresh_fixture_paths("round7")) == 4
    assert len(fresh_fixture_paths("round8")) == 7
    assert len(fresh_fixture_paths("aside3")) == 10
    assert len(fresh_fixture_paths("aside4")) == 10
    assert len(fresh_fixture_paths("aside5")) == 10
    assert len(fresh_fixture_paths("aside6")) == 10
    assert len(fresh_fixture_paths("aside7")) == 10
    assert len([p for p in fresh_fixture_paths("aside8") if p.name.startswith("a-")]) == 5
    assert len([p for p in fresh_fixture_paths("aside8") if p.name.startswith("b-")]) == 5
    # round 9: two helpers at once, five held out each (aside9/, a- and b- files), none seen
    assert len([p for p in fresh_fixture_paths("aside9") if p.name.startswith("a-")]) == 5
    assert len([p for p in fresh_fixture_paths("aside9") if p.name.startswith("b-")]) == 5
    names = [path.name for path in PATHS]
    assert len(names) == len(set(names)), "a case is in one set only"


def test_each_held_out_set_says_how_it_was_drawn():
    # round 1's method sits beside the seen cases (fixtures/fresh/ASIDE.md), later rounds' in their own folder
    # rounds 1-3 drew their held-out ten at random; rounds 4 to 7 held out every case they found, none diagnosed
    method_files = {"aside": FIXTURES / "fresh" / "ASIDE.md",
                    **{name: FIXTURES / "fresh" / name / "ASIDE.md"
                       for name in ("aside2", "aside3", "aside4", "aside5", "aside6", "aside7", "aside8", "aside9")}}
    drawn_whole = {"aside4", "aside5", "aside6", "aside7"}
    assert set(method_files) == set(HELD_OUT_SETS)
    for held_out, method_file in method_files.items():
        if held_out in ("aside8", "aside9"):
            # gathered by two helpers at once (a- and b- files), each writing its own ASIDE-<part>.md
            parts = sorted(method_file.parent.glob("ASIDE-*.md"))
            assert len(parts) == 2, f"{held_out}/ says how it was drawn in ASIDE-a.md and ASIDE-b.md"
            text = "\n".join(path.read_text(encoding="utf-8") for path in parts)
            assert "all 5 found were set aside" in text and "none was diagnosed" in text
            for path in fresh_fixture_paths(held_out):
                assert path.name in text, f"{held_out}/{path.name} is not listed in an ASIDE-*.md"
            continue
        text = method_file.read_text(encoding="utf-8")
        if held_out in drawn_whole:
            assert "all 10 found were set aside" in text and "none was diagnosed" in text
        else:
            assert "random.Random(" in text
        for path in fresh_fixture_paths(held_out):
            assert path.name in text, f"{held_out}/{path.name} is not listed in its ASIDE.md"


def test_the_fixture_tests_and_the_snapshot_leave_the_fresh_cases_out():
    assert not set(fixture_paths()) & set(PATHS)
    assert all(path.relative_to(FIXTURES).parts[0] != "fresh" for path in fixture_paths())


@pytest.mark.parametrize("path", PATHS, ids=[f"{p.parent.name}/{p.stem}" for p in PATHS])
def test_fresh_case_is_well_formed(path):
    fixture = load_fixture(path)
    assert fixture["schema_version"] == "1.0"
    meta = fixture["fixture"]
    assert meta["description"].strip()
    assert meta["sources"], "every case names the thread it comes from"
    for source in meta["sources"]:
        url = urlparse(source.split()[0])
        assert url.scheme == "https" and url.netloc in {"github.com", "developer.apple.com", "stackoverflow.com",
                                                        "discuss.tensorflow.org"}, source
    expected = fixture["expected"]
    assert expected, "the verdict decided from the thread"
    assert set(expected) <= CHECK_IDS
    for status in expected.values():
        Status(status)
    hints = fixture.get("expected_hints") or {}
    assert set(hints) <= set(expected), "a hint belongs to a check whose verdict is expected"
    assert all(needles and all(isinstance(n, str) and n for n in needles) for needles in hints.values())
    errors = sorted(FACTS_VALIDATOR.iter_errors(fixture["facts"]), key=str)
    assert not errors, [e.message for e in errors[:3]]
