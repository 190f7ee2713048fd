"""The knowledge's age (issue 38, build 6): a release newer than the generated tables is said in one line, and no
check claims about it what only its release rows could say (a Python range, CUDA and cuDNN, a Metal pairing)."""

from __future__ import annotations

import copy
import json
import re

import pytest
from packaging.version import Version

from tests.fixtures_support import FIXTURES, load_fixture
from tests.stripped_support import diagnosed
from tfdoctor.facts import knowledge_age
from tfdoctor.knowledge import rows as knowledge_rows

NEWER = FIXTURES / "linux" / "tensorflow-2.99-newer-than-the-knowledge.json"
T4 = FIXTURES / "linux" / "t4-driver-580-tensorflow-2.21-and-cuda.json"
METAL = FIXTURES / "macos" / "m1-tf219-metal120-healthy.json"


def _results(document):
    return {r["id"]: r for r in document["results"]}


def _with_version(fixture, name, version):
    fixture = copy.deepcopy(fixture)
    for dist in fixture["facts"]["distributions"]:
        if dist["name"] == name:
            dist["version"] = version
    return fixture


# --- the reader ------------------------------------------------------------------------------------------

def test_a_release_the_tables_hold_is_not_beyond_them():
    newest = knowledge_age.newest_known("tensorflow")
    assert newest is not None
    assert not knowledge_age.beyond("tensorflow", newest)
    assert not knowledge_age.beyond("tensorflow", "2.15.0")
    assert not knowledge_age.beyond("tensorflow", f"{newest}+cpu")  # a local build of a known release
    assert knowledge_age.beyond("tensorflow", "2.99.0")
    assert knowledge_age.beyond("tensorflow-metal", "9.0.0")
    assert knowledge_age.beyond("tf-keras", "2.99.0")
    assert not knowledge_age.beyond("numpy", "99.0")  # no generated table holds numpy's releases
    assert not knowledge_age.beyond("tensorflow", "not a version")


def test_a_final_release_after_the_tables_last_prerelease_is_beyond_them():
    newest = Version(knowledge_age.newest_known("tensorflow") or "0")
    final = Version(newest.base_version)
    assert knowledge_age.beyond("tensorflow", str(final)) == newest.is_prerelease


def test_the_age_comes_from_the_tables_own_stamp():
    """tools/refresh_knowledge.py stamps every table it writes with `generated = "YYYY-MM-DD"`."""
    stamp = knowledge_age.generated_on("releases")
    assert stamp and re.fullmatch(r"\d{4}-\d{2}-\d{2}", stamp)
    assert knowledge_age.generated_on("companions")
    facts = load_fixture(NEWER)["facts"]
    assert f"(tables of {stamp})" in (knowledge_age.age_line(facts) or "")


# --- a TensorFlow 2.99 report ------------------------------------------------------------------------------

def test_a_healthy_environment_newer_than_the_knowledge_gets_no_invented_problem():
    """Before: platform-support failed ("no TensorFlow release has wheels for Python 3.15") and tensorflow-install
    warned ("PyPI has no tensorflow 2.99.0 wheel"), both from tables that end before 2.99."""
    results = _results(diagnosed(load_fixture(NEWER)))
    assert {cid: r["status"] for cid, r in results.items() if r["status"] in ("fail", "warn", "error")} == {}
    assert "up to" not in results["platform-support"]["summary"]
    assert "newer than the release tables" in results["platform-support"]["summary"]


def test_the_report_says_where_the_knowledge_ends_in_one_line():
    results = _results(diagnosed(load_fixture(NEWER)))
    lines = [r["summary"] for r in results.values() if "knowledge ends at" in r["summary"]]
    assert len(lines) == 1 and results["tensorflow-install"]["summary"] == lines[0]
    line = lines[0]
    assert "\n" not in line
    assert f"ends at TensorFlow {knowledge_age.tensorflow_end()}" in line
    assert "tensorflow 2.99.0" in line and "tf-keras 2.99.0" in line and "say unknown" in line


def test_explain_of_the_saved_report_gives_the_same_line(tmp_path):
    """A pure check of the facts: the document written and read back (`tfdoctor explain`) says the same."""
    first = diagnosed(load_fixture(NEWER))
    saved = tmp_path / "report.json"
    saved.write_text(json.dumps(first), encoding="utf-8")
    again = diagnosed(json.loads(saved.read_text(encoding="utf-8")))
    assert _results(again)["tensorflow-install"]["summary"] == _results(first)["tensorflow-install"]["summary"]


def test_no_cuda_or_cudnn_is_claimed_for_a_release_past_the_tables():
    """The linux.toml row of the newest minor (2.22, curated from its release candidate) said "CUDA 12.5, cuDNN
    9.10" of any release of that minor, one the tables do not hold included."""
    newest_minor = max((row["tf"] for row in knowledge_rows("linux", "tf_cuda")), key=Version)
    version = f"{newest_minor}.99"
    assert knowledge_age.beyond("tensorflow", version), "the tables now hold this release: pick a newer one"
    results = _results(diagnosed(_with_version(load_fixture(T4), "tensorflow", version)))
    summary = results["cuda-build"]["summary"]
    assert results["cuda-build"]["status"] == "pass"
    assert "cuDNN 9" not in summary and "CUDA 12" not in summary and "not in the tables" in summary
    assert results["tensorflow-install"]["status"] == "pass"


def test_a_release_the_tables_hold_keeps_its_cuda_and_cudnn():
    results = _results(diagnosed(load_fixture(T4)))
    assert "(CUDA 12.5.1, cuDNN 9.3)" in results["cuda-build"]["summary"]
    assert "knowledge ends" not in results["tensorflow-install"]["summary"]
    assert "TensorFlow up to" in results["platform-support"]["summary"]


@pytest.mark.parametrize("name, version", [("tensorflow", "2.99.0"), ("tensorflow-metal", "9.0.0")])
def test_no_metal_pairing_is_claimed_past_the_tables(name, version):
    """Before: tensorflow-metal 1.2.0 in TensorFlow 2.99 failed ('does not load', from a curated row whose open end
    is written 2.99), and a tensorflow-metal newer than the tables warned with a plan to change it."""
    results = _results(diagnosed(_with_version(load_fixture(METAL), name, version)))
    assert results["metal-plugin"]["status"] == "skip"
    assert "not in the tables" in results["metal-plugin"]["summary"]
    assert not (results["metal-plugin"].get("remediation") or {}).get("repairs")
    assert f"{name} {version}" in results["tensorflow-install"]["summary"]


def test_a_companion_beside_a_tensorflow_past_the_tables_is_not_told_no_release_exists():
    """tensorflow-text 2.21.1 beside TensorFlow 2.99: its own Requires-Dist (the table's row) says it is made for 2.21,
    a fact the tables hold; which release is made for 2.99 is not in them, and the advice says so rather than "no
    release of tensorflow-text is known to be made for tensorflow 2.99.0"."""
    fixture = load_fixture(NEWER)
    fixture["facts"]["distributions"].append({"name": "tensorflow-text", "version": "2.21.1", "top_level": [
        "tensorflow_text"], "requires": ["tensorflow<2.22,>=2.21.0"]})
    fixture["facts"]["tensorflow"] = {"status": "ok", "imported": True, "version": "2.99.0"}
    companions = _results(diagnosed(fixture))["companions"]
    assert companions["status"] == "fail"
    advice = companions["remediation"]["advice"]
    assert "newer than the companion table" in advice and "No release of tensorflow-text is known" not in advice


# --- a companion's own pin beside a TensorFlow past the tables (the dependencies check and the plan) ----------------

PINNED = FIXTURES / "linux" / "tensorflow-2.99-text-pinned-to-2.21.json"
# what only the tables' silence could say of TensorFlow 2.99.0 (before: the dependencies check's advice and repair,
# the plan's conflict and the keep-TensorFlow choice said each)
SILENCE_CLAIMS = ("No release of tensorflow-text is made", "no tensorflow-text release is made",
                  "no release of tensorflow-text is made", "; no release is")


def _said(document) -> str:
    """Every word the document says to the user: results (summary, details, advice, repairs) and the plan."""
    return json.dumps([document["results"], document["plan"]])


def test_a_companions_own_pin_past_the_tables_stands_but_tensorflow_is_not_moved_back():
    """tensorflow-text 2.21.0 declares tensorflow<2.22,>=2.21.0 beside TensorFlow 2.99.0: its own metadata says so, a
    true violated pin; which tensorflow-text release is made for 2.99.0 is not in the tables. Before: "No release of
    tensorflow-text is made for TensorFlow 2.99.0 ... so the plan moves TensorFlow", and the plan's one step
    installed tensorflow<2.22,>=2.21.0."""
    document = diagnosed(load_fixture(PINNED))
    dependencies = _results(document)["dependencies"]
    assert dependencies["status"] == "fail"
    assert dependencies["summary"] == "tensorflow 2.99.0 is outside tensorflow-text 2.21.0's tensorflow<2.22,>=2.21.0"
    advice = dependencies["remediation"]["advice"]
    assert f"The tables end at TensorFlow {knowledge_age.tensorflow_end()}, before 2.99.0" in advice
    assert "install a newer tensorflow-text when one exists (not in the tables" in advice
    assert not dependencies["remediation"].get("repairs"), "no command: the tables name no release to install"
    said = _said(document)
    assert not [claim for claim in SILENCE_CLAIMS if claim in said]
    plan = document["plan"]
    assert plan["moves_tensorflow"] is None
    assert not [step for step in plan["steps"] if "tensorflow<" in step["command"] or "tensorflow==" in step["command"]]


def test_the_move_back_and_the_uninstall_are_the_users_choices():
    plan = diagnosed(load_fixture(PINNED))["plan"]
    choices = {choice["summary"]: choice for choice in plan["choices"]}
    keep = choices.pop("keep tensorflow 2.99.0 and uninstall tensorflow-text")
    assert keep["removes"] == ["tensorflow-text"] and keep["moves_tensorflow"] is None
    reasons = [r["reason"] for step in keep["plan"]["steps"] for r in step["reasons"]]
    assert any("the tables end before it" in reason for reason in reasons)
    [(summary, moved)] = choices.items()
    target = moved["moves_tensorflow"]["to"].partition("==")[2]
    assert summary.startswith("move TensorFlow to tensorflow ") and summary.endswith(" for tensorflow-text")
    assert target and not knowledge_age.beyond("tensorflow", target), "back to a release the tables hold"
    assert Version(target) < Version("2.22")  # inside tensorflow-text 2.21's own pin


def test_a_companion_whose_pin_admits_the_newer_tensorflow_gets_nothing():
    """tensorflow-probability 0.25.0 (tensorflow>=2.16, in its `tf` extra) beside TensorFlow 2.99.0: no finding,
    no step, no choice names it."""
    document = diagnosed(load_fixture(PINNED))
    for result in document["results"]:
        assert "tensorflow-probability" not in json.dumps([result["summary"], result.get("details"),
                                                           result.get("remediation")]), result["id"]
    assert "tensorflow-probability" not in json.dumps(document["plan"])


def test_where_no_release_the_tables_hold_installs_nothing_is_planned():
    """On Python 3.15 no tensorflow-text or TensorFlow the tables hold has a wheel: moving TensorFlow back is no
    choice (before: the plan installed tensorflow<2.22,>=2.21.0, which has no wheel there), and the conflict says
    the tables end rather than that no release exists."""
    fixture = load_fixture(PINNED)
    fixture["facts"]["python"]["version"] = "3.15.0"
    document = diagnosed(fixture)
    assert _results(document)["dependencies"]["status"] == "fail"
    plan = document["plan"]
    assert plan["steps"] == [] and plan["moves_tensorflow"] is None and not plan["choices"]
    [conflict] = plan["conflicts"]
    assert conflict["distribution"] == "tensorflow-text" and "not in them" in conflict["why"]
    assert not [claim for claim in SILENCE_CLAIMS if claim in _said(document)]
