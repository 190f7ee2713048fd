"""README's two commands are the ones CI runs, and the documented contracts match the code."""

from __future__ import annotations

import re
from pathlib import Path

from tfdoctor import report

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _command_after(heading: str) -> str:
    section = README.split(heading, 1)[1]
    return re.search(r"```sh\n(.+?)\n```", section, re.S).group(1).strip()


def test_ci_runs_the_readme_test_command_verbatim():
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert _command_after("## Run the tests") in ci.splitlines()


def test_readme_documents_the_exit_codes_the_code_uses():
    for code in (report.EXIT_OK, report.EXIT_PROBLEMS, report.EXIT_UNUSABLE, report.EXIT_INTERRUPTED,
                 report.EXIT_TERMINATED):
        assert re.search(rf"^\| `?{code}`? \|", README, re.M), f"exit code {code} not in README's table"
