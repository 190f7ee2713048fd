"""The registry, the runner's isolation of broken checks, the renderers and the exit-code contract."""

from __future__ import annotations

import json

import pytest

from tfdoctor.results.model import CheckResult, Outcome, Remediation, Status
from tfdoctor.checking.registry import Check, UnknownCheckError, all_checks, check, select
from tfdoctor.render.formats import Look, output_format
from tfdoctor.render.text import render as render_text
from tfdoctor.report.run import EXIT_OK, EXIT_PROBLEMS, RunReport, exit_code_for
from tfdoctor.checking.runner import run_checks

MISSION_CHECKS = {"architecture", "tensorflow-install", "tensorflow-import", "metal-plugin", "gpu-visible",
                  "memory", "probe"}


def test_registry_has_every_mission_check_once():
    ids = [c.id for c in all_checks()]
    assert MISSION_CHECKS <= set(ids)
    assert len(ids) == len(set(ids))


def test_ids_must_be_kebab_case():
    with pytest.raises(ValueError):
        Check("Not_Kebab", "x", lambda facts: Outcome.ok("x"))


def test_select_by_id_and_tag_and_rejects_unknown():
    a = Check("a-check", "A", lambda f: Outcome.ok("a"), tags=("gpu",))
    b = Check("b-check", "B", lambda f: Outcome.ok("b"))
    assert select([a, b], only=["gpu"]) == [a]
    assert select([a, b], skip=["a-check"]) == [b]
    with pytest.raises(UnknownCheckError, match="nope"):
        select([a, b], only=["nope"])


@check("boom", "Raises")
def _raising(facts):
    raise KeyError("no such fact")


@check("fine", "Passes")
def _passing(facts):
    return Outcome.ok("all good")


@check("needs-tf", "Needs TensorFlow facts", needs=("tensorflow",))
def _needs_tf(facts):
    return Outcome.ok("unreachable without facts")


@check("mac-only", "macOS only", platforms=("Darwin",))
def _mac_only(facts):
    return Outcome.fail("should never run on Linux")


LINUX = {"host": {"system": "Linux", "machine": "x86_64"}}


def test_a_raising_check_becomes_error_and_the_rest_still_run():
    results = run_checks([_raising, _passing], LINUX)
    assert [r.status for r in results] == [Status.ERROR, Status.PASS]
    assert "KeyError" in results[0].summary and "no such fact" in results[0].summary


def test_missing_facts_and_other_platforms_skip_with_reason():
    needs, mac = run_checks([_needs_tf, _mac_only], LINUX)
    assert needs.status is Status.SKIP and needs.summary == "not recorded: tensorflow"
    assert mac.status is Status.SKIP and "macOS" in mac.summary and "Linux" in mac.summary


@pytest.mark.parametrize("fmt", ["text", "json", "markdown"])
def test_error_results_show_in_every_format(fmt):
    document = RunReport(facts=LINUX, results=run_checks([_raising, _passing], LINUX)).to_dict()
    out = output_format(fmt).report(document, Look())
    if fmt == "json":
        statuses = {r["id"]: r["status"] for r in json.loads(out)["results"]}
        assert statuses == {"boom": "error", "fine": "pass"}
    else:
        assert "boom" in out and "KeyError" in out and "fine" in out
        assert "1 crashed" in out


def _result(status: Status) -> CheckResult:
    return CheckResult("x", "X", status, "s")


@pytest.mark.parametrize(
    "statuses, strict, code",
    [
        ([Status.PASS, Status.SKIP], False, EXIT_OK),
        ([Status.PASS, Status.WARN], False, EXIT_OK),
        ([Status.PASS, Status.WARN], True, EXIT_PROBLEMS),
        ([Status.FAIL], False, EXIT_PROBLEMS),
        ([Status.ERROR], False, EXIT_PROBLEMS),
    ],
)
def test_exit_code_contract(statuses, strict, code):
    assert exit_code_for([_result(s) for s in statuses], strict) == code


def test_text_renderer_puts_the_hint_under_a_problem_and_no_colour_when_asked():
    fix = Remediation("Reinstall it.", ("python -m pip install x",), "https://example.org/fix")
    result = CheckResult("demo", "Demo", Status.FAIL, "it is broken", ("detail one",), fix)
    document = RunReport(facts=LINUX, results=[result]).to_dict()
    out = render_text(document, color=False)
    lines = out.splitlines()
    row = next(i for i, line in enumerate(lines) if "demo" in line)
    assert "✗" in lines[row] and "it is broken" in lines[row]
    below = "\n".join(lines[row + 1:])
    assert "Reinstall it." in below and "$ python -m pip install x" in below and "https://example.org/fix" in below
    assert "\x1b[" not in out
    assert "problems found" in out
