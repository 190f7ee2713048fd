"""CI and tickets: GitHub Actions annotations and job summary, --quiet, Markdown with problems first."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tfdoctor.render import STATUS_SYMBOLS
from tfdoctor.render.github import annotation, escape_data, escape_property

FIXTURE = str(Path(__file__).resolve().parents[2] / "fixtures" / "macos" / "m1-tf220-metal120-import-fails.json")


def tfdoctor(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    full = dict(os.environ)
    full.pop("GITHUB_ACTIONS", None)
    full.pop("GITHUB_STEP_SUMMARY", None)
    full.update(env or {})
    return subprocess.run([sys.executable, "-m", "tfdoctor", *args], capture_output=True, text=True, timeout=120,
                          env=full)


def test_escaping_follows_the_workflow_command_rules():
    assert escape_data("50% done\r\nnext: a,b") == "50%25 done%0D%0Anext: a,b"
    assert escape_property("tfdoctor probe: a,b%") == "tfdoctor probe%3A a%2Cb%25"


def test_one_annotation_line_per_problem():
    line = annotation({"id": "probe", "title": "GPU vs CPU", "status": "warn", "summary": "slow: 2x\nreally",
                       "remediation": {"advice": "Update", "commands": ["pip install x"], "url": None}})
    assert line == "::warning title=tfdoctor probe%3A GPU vs CPU::slow: 2x%0Areally%0AFix: Update%0A$ pip install x"
    assert annotation({"id": "memory", "title": "Memory", "status": "pass", "summary": "ok"}) is None


def test_under_github_actions_the_summary_file_gets_markdown_and_stdout_the_annotations(tmp_path):
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step\n")
    run = tfdoctor("explain", FIXTURE, env={"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(summary)})
    assert run.returncode == 1
    errors = [line for line in run.stdout.splitlines() if line.startswith("::error ")]
    assert [re.match(r"::error title=tfdoctor ([a-z-]+)%3A", line).group(1) for line in errors] == \
        ["tensorflow-import", "metal-plugin"]
    assert "✗  tensorflow-import" in run.stdout  # the normal output too
    text = summary.read_text()
    assert text.startswith("earlier step\n### tfdoctor") and "#### Problems" in text


def test_json_stdout_stays_json_under_github_actions(tmp_path):
    run = tfdoctor("explain", FIXTURE, "--json", env={"GITHUB_ACTIONS": "true"})
    assert run.stdout.lstrip().startswith("{") and "::error" not in run.stdout
    assert "::error title=tfdoctor tensorflow-import" in run.stderr


def test_format_github_without_the_environment():
    run = tfdoctor("explain", FIXTURE, "--format", "github")
    assert "::error title=tfdoctor metal-plugin" in run.stdout and "\x1b" not in run.stdout


def test_quiet_prints_only_the_problems_the_plan_and_the_summary_line():
    run = tfdoctor("explain", FIXTURE, "--quiet")
    symbols = re.escape("".join(STATUS_SYMBOLS.values()))
    ids = [m.group(1) for m in re.finditer(rf"^[{symbols}]\s+([a-z0-9-]+)\s", run.stdout, re.M)]
    assert ids == ["tensorflow-import", "metal-plugin"]
    # what to do stays in a quiet report: the plan, once, after the summary line (the last thing to paste)
    assert run.stdout.count("To fix this environment: 1 step") == 1
    summary, _, plan = run.stdout.partition("problems found:")
    assert "uninstall -y -- tensorflow-metal" in plan and "To fix this environment" in plan
    assert "tfdoctor 0.1.0" not in run.stdout


def test_markdown_opens_with_the_problems_then_passed_then_folded_skips():
    run = tfdoctor("explain", FIXTURE, "--format", "markdown")
    text = run.stdout
    assert text.index("#### Problems") < text.index("#### Passed") < text.index("not applicable or not recorded")
    passed_table = text.split("#### Passed", 1)[1].split("<details>", 1)[0]
    assert "skip" not in passed_table and "nvidia-driver" not in passed_table
    assert re.search(r"<details><summary>\d+ not applicable or not recorded: .*`nvidia-driver`", text)


@pytest.mark.parametrize("shell", ["bash"])
def test_shell_completion_is_typers_own(shell):
    run = tfdoctor("--show-completion", shell, env={"_TYPER_COMPLETE_TEST_DISABLE_SHELL_DETECTION": "1"})
    assert run.returncode == 0 and "complete" in run.stdout
