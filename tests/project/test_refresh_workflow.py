"""The weekly refresh of the knowledge tables (issue 38, build 6): the scheduled workflow runs the script that
exists, and the script's exit codes are what its documentation says (offline: PyPI is stood in for)."""

from __future__ import annotations

import importlib.util
import re
import urllib.error
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
WORKFLOW = ROOT / ".github" / "workflows" / "refresh-knowledge.yml"
SCRIPT = ROOT / "tools" / "refresh_knowledge.py"


@pytest.fixture(scope="module")
def refresh():
    spec = importlib.util.spec_from_file_location("refresh_knowledge_under_test", SCRIPT)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _workflow() -> dict:
    return yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))


def test_the_workflow_is_weekly_and_can_be_started_by_hand():
    workflow = _workflow()
    triggers = workflow.get("on", workflow.get(True))  # YAML 1.1 reads a bare `on` as true
    assert "workflow_dispatch" in triggers
    (schedule,) = triggers["schedule"]
    minute, hour, day, month, weekday = schedule["cron"].split()
    assert (day, month) == ("*", "*") and re.fullmatch(r"[0-6]", weekday), "once a week"


def test_the_workflow_runs_the_script_that_exists_and_opens_a_pull_request():
    steps = [step for job in _workflow()["jobs"].values() for step in job["steps"]]
    runs = "\n".join(str(step.get("run") or "") for step in steps)
    assert re.search(r"^\s*python tools/refresh_knowledge\.py\b", runs, re.M)
    assert SCRIPT.is_file()
    uses = [str(step["uses"]) for step in steps if step.get("uses")]
    assert any(u.startswith("peter-evans/create-pull-request@") for u in uses)
    for action in uses:  # every action pinned to a major release (or a commit), never a branch
        assert re.fullmatch(r"[\w.-]+/[\w.-]+@(v\d+|[0-9a-f]{40})", action), action
    # a week in which only the stamp changed opens no pull request
    assert "-I '^generated = '" in runs
    assert (_workflow()["permissions"] or {}).get("pull-requests") == "write"


def test_the_exit_codes_are_documented():
    doc = (SCRIPT.read_text(encoding="utf-8").split('"""')[1])
    assert re.search(r"Exit codes: 0 .*; 1 with --check.*; 2 ", " ".join(doc.split()))
    architecture = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    assert "refresh-knowledge.yml" in architecture and "exit 2" in architecture


def test_check_ignores_the_stamp_and_exits_1_on_a_change(refresh, monkeypatch, capsys):
    table = refresh.TABLE.read_text(encoding="utf-8")
    restamped = re.sub(r'^generated = ".*"$', 'generated = "1999-01-01"', table, flags=re.M)
    assert restamped != table, "releases.toml carries its generated stamp"
    monkeypatch.setattr(refresh, "release_table", lambda pool: (restamped, "stood in"))
    assert refresh.main(["--check", "--only", "releases"]) == 0
    changed = restamped.replace('version = "2.4.0"', 'version = "2.4.9"', 1)
    monkeypatch.setattr(refresh, "release_table", lambda pool: (changed, "stood in"))
    assert refresh.main(["--check", "--only", "releases"]) == 1
    assert "PyPI differs from the table: releases.toml" in capsys.readouterr().out


def test_an_unreachable_index_exits_2_and_writes_nothing(refresh, monkeypatch, tmp_path, capsys):
    def unreachable(*args, **kwargs):
        raise urllib.error.URLError("no route to host")

    target = tmp_path / "releases.toml"
    monkeypatch.setattr(refresh, "TABLE", target)
    monkeypatch.setattr(refresh, "fetch", unreachable)
    assert refresh.main(["--only", "releases"]) == 2
    assert not target.exists()
    assert "could not read releases.toml's sources" in capsys.readouterr().err


def test_every_generated_table_is_stamped_by_the_script(refresh):
    assert re.fullmatch(r'generated = "\d{4}-\d{2}-\d{2}"', refresh.stamp())
    for line in (refresh.stamp(), 'generated = "2020-01-01"', "# generated on 2020-01-01"):
        assert refresh.without_date(f"a\n{line}\nb") == "a\nb"
