"""The check contract: a check reads only the fact sections it declares.

Every check run alone, as `tfdoctor --only <id>` runs it, reaches the full run's verdict on every fixture.

`--only` collects only what the chosen check declares (diagnosis/doctor.needed_sections, through the
collectors that record those sections: collect.chosen_collectors), so a check that reads a section it
does not declare judges without it alone: `cuda-build` declared none and passed, alone, on 8 of the 33
Linux fixtures where the full run fails or warns. The tests read the facts through the view of the
declared sections (tfdoctor/checking/view.py, strict under the tests), and this runs each check on the facts
its declarations collect, from every machine in fixtures/ (the seen fresh cases too: the held-out sets are
the lead's to score), and compares status and summary with the full run's."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

import pytest

from tests.fixtures_support import FIXTURES, SEEN_ROUNDS, fixture_id, fixture_paths, fresh_fixture_paths, load_fixture
from tfdoctor.checking.registry import Check, all_checks
from tfdoctor.checking.runner import run_check, run_checks
from tfdoctor.checking.view import FactsView, UndeclaredFactRead, strict_from_environment
from tfdoctor.collect import chosen_collectors
from tfdoctor.diagnosis.doctor import EXPERIMENT_CHECKS, experiment_goals, needed_sections, selected_checks
from tfdoctor.results.model import Outcome, Status

CHECKS = all_checks()
PATHS = fixture_paths() + fresh_fixture_paths() + [p for r in SEEN_ROUNDS for p in fresh_fixture_paths(r)]


def facts_alone(facts: Mapping[str, Any], check: Check) -> dict[str, Any]:
    """The sections of `facts` a run of `--only <check>` records: those of the collectors its selection
    starts (the always-on ones with them), the run's collection record, the requirements when set (they
    come from the command line, and bring the requirements check into the selection: doctor.diagnose),
    and the experiments' section when an experiment check is selected (doctor.with_experiments); the RECORD
    verification only when declared (collect/integrity.command)."""
    only = (check.id, "requirements") if facts.get("requirements") is not None else (check.id,)
    selected = selected_checks(only)
    sections = needed_sections(selected)
    kept = {name for collector in chosen_collectors(sections) for name in collector.sections}
    kept |= {"collection", "requirements"}
    if "integrity" not in sections:  # the integrity child verifies RECORD only for a check that reads it
        kept.discard("integrity")
    alone = {name: value for name, value in facts.items() if name in kept and name != "experiments"}
    if isinstance(facts.get("experiments"), Mapping):
        experiments = _experiments_alone(facts["experiments"], selected, alone)
        if experiments is not None:
            alone["experiments"] = experiments
    return alone


def _experiments_alone(recorded: Mapping[str, Any], selected: list[Check], facts: dict[str, Any]
                       ) -> Mapping[str, Any] | None:
    """The trials a run of `selected` would have made: doctor.with_experiments asks for those the selected
    checks' own results leave unexplained (a keras failure asks nothing of `--only companions`); None when
    it would ask for none, as the section is then never collected."""
    if not {c.id for c in selected} & set(EXPERIMENT_CHECKS):
        return None
    goals = experiment_goals(facts, run_checks(selected, facts, strict=False))
    wanted = {(goal["kind"], goal.get("module")) for goal in goals}
    if not wanted:
        return None

    def asked(goal: Any) -> bool:
        return isinstance(goal, Mapping) and (goal.get("kind"), goal.get("module")) in wanted

    return {**recorded, "goals": [g for g in recorded.get("goals") or () if asked(g)],
            "proofs": [p for p in recorded.get("proofs") or () if asked(p.get("goal"))],
            "trials": [t for t in recorded.get("trials") or () if asked({"kind": t.get("goal"), "module": t.get("module")})]}


def test_alone_collects_less_than_everything():
    """The restriction is real: a check that declares nothing beyond the always-on sections does not get the
    TensorFlow child's or nvidia-smi's facts (else this test could not fail)."""
    facts = {name: {} for name in ("host", "python", "distributions", "tensorflow", "nvidia", "memory")}
    [install] = [c for c in CHECKS if c.id == "install-integrity"]
    assert set(facts_alone(facts, install)) == {"host", "python", "distributions"}


@pytest.mark.parametrize("check_id", ["cuda-build", "platform-support"])
def test_only_starts_the_collectors_of_what_the_check_reads(check_id):
    """The two checks that flipped alone: `--only` now starts the TensorFlow child and nvidia-smi for them."""
    started = {collector.name for collector in chosen_collectors(needed_sections(selected_checks((check_id,))))}
    assert {"tensorflow", "nvidia"} <= started


def test_alone_a_check_gets_only_the_experiments_its_own_failure_asks_for():
    """doctor.with_experiments asks for trials from the selected checks' results: the keras failure's proof
    reaches `--only keras`, not `--only companions` or `--only tensorflow-import`."""
    facts = load_fixture(FIXTURES / "linux" / "keras-config-missing-backend-proven-by-experiment.json")["facts"]
    with_experiments = {c.id for c in CHECKS if c.id in EXPERIMENT_CHECKS and "experiments" in facts_alone(facts, c)}
    assert with_experiments == {"keras"}


@pytest.mark.parametrize("path", PATHS, ids=[fixture_id(p) for p in PATHS])
def test_each_check_alone_gives_the_full_runs_verdict(path: Path):
    facts = load_fixture(path)["facts"]
    # the full run as a user's: every section there, read unchecked; alone, an undeclared read is an error
    full = {r.check_id: r for r in run_checks(CHECKS, facts, strict=False)}
    differ = {}
    for check in CHECKS:
        alone = run_check(check, facts_alone(facts, check), strict=True)
        whole = full[check.id]
        if (alone.status, alone.summary) != (whole.status, whole.summary):
            differ[check.id] = f"alone {alone.status.value}: {alone.summary} | full {whole.status.value}: {whole.summary}"
    assert not differ, differ


# ------------------------------------------------------------------------------------------- the facts view

def _reader(sections: tuple[str, ...], reads: str, swallow: bool = False) -> Check:
    """A check declaring `sections` that reads `reads` (through a reader that swallows errors, if asked)."""

    def run(facts: Mapping[str, Any]) -> Outcome:
        try:
            found = facts.get(reads)
        except Exception:  # noqa: BLE001 - a careless reader, as the runner must still catch
            if not swallow:
                raise
            found = None
        return Outcome.ok(f"read {found!r}")

    return Check("reader", "Reads one section", run, uses=sections)


FACTS = {"host": {"system": "Linux"}, "python": {"version": "3.12.1"}, "nvidia": {"smi": "gone"}}


@pytest.mark.parametrize("swallow", [False, True], ids=["raised", "swallowed"])
def test_an_undeclared_read_is_an_error_in_the_tests(swallow):
    result = run_check(_reader(("python",), "nvidia", swallow), FACTS, strict=True)
    assert result.status is Status.ERROR
    assert "reads the facts section 'nvidia' it does not declare" in result.summary


def test_a_users_run_reads_undeclared_sections_as_before():
    """Outside the tests an undeclared read gets what the facts hold: the verdict is never an error for it."""
    result = run_check(_reader(("python",), "nvidia"), FACTS, strict=False)
    assert (result.status, result.summary) == (Status.PASS, "read {'smi': 'gone'}")


def test_the_tests_run_strict():
    assert strict_from_environment()
    assert run_check(_reader(("python",), "nvidia"), FACTS).status is Status.ERROR


def test_the_view_is_a_mapping_of_the_declared_sections():
    view = FactsView(FACTS, frozenset({"host", "python", "memory"}), "reader")
    assert view["python"] == {"version": "3.12.1"} and view.get("memory", "absent") == "absent"
    assert "python" in view and "memory" not in view
    assert list(view) == ["host", "python"] and len(view) == 2 and dict(view) == {k: FACTS[k] for k in ("host", "python")}
    for read in (lambda: view["nvidia"], lambda: view.get("nvidia"), lambda: "nvidia" in view):
        with pytest.raises(UndeclaredFactRead):
            read()
    assert view.undeclared == ["nvidia"] * 3
