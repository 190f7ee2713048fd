"""The command-line contract, through real `python -m tfdoctor` subprocesses."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import jsonschema
import pytest

from tfdoctor import __version__
from tfdoctor.results.model import CheckResult
from tfdoctor.checking.registry import all_checks
from tfdoctor.render import STATUS_SYMBOLS
from tfdoctor.render.markdown import EMOJI
from tfdoctor.report.run import exit_code_for
from tfdoctor.schema import report_schema

CHECK_IDS = [c.id for c in all_checks()]
# memory reads available RAM at the moment of the run: it may differ between two runs
UNSTABLE = "memory"


def tfdoctor(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tfdoctor", *args], capture_output=True, text=True,
                          timeout=timeout, env=None)


def one_error_line(run: subprocess.CompletedProcess) -> str:
    assert run.returncode == 2
    assert run.stdout == ""
    lines = run.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("tfdoctor: error: "), run.stderr
    return lines[0]


def test_version():
    run = tfdoctor("--version")
    assert (run.returncode, run.stdout, run.stderr) == (0, f"tfdoctor {__version__}\n", "")


def test_list_names_every_check_in_report_order():
    run = tfdoctor("--list")
    assert run.returncode == 0
    listed = [line.split()[0] for line in run.stdout.splitlines()]
    assert listed == CHECK_IDS


@pytest.mark.parametrize("args, needle", [
    (["--only", "no-such-check"], "unknown check id no-such-check"),
    (["--skip", "nope,also-nope"], "unknown check id also-nope, nope"),
    (["--format", "yaml"], "yaml"),
    (["--python", "/no/such/python"], "--python /no/such/python"),
    (["explain"], "REPORT.json"),
    (["diff", "only-one.json"], "B.json"),
])
def test_cannot_run_is_one_line_and_exit_2(args, needle):
    assert needle in one_error_line(tfdoctor(*args))


@pytest.fixture(scope="module")
def live():
    """One run per format on this machine (no probe: it is the slow part and measures, not diagnoses)."""
    return {fmt: tfdoctor("--no-probe", "--format", fmt) for fmt in ("json", "text", "markdown")}


def test_json_stdout_is_json_only_and_follows_the_schema(live):
    run = live["json"]
    document = json.loads(run.stdout)  # the whole of stdout, nothing before or after
    jsonschema.Draft202012Validator(report_schema()).validate(document)
    assert [r["id"] for r in document["results"]] == [c for c in CHECK_IDS if c != "workload"], "workload only with --deep"
    assert run.returncode == exit_code_for([CheckResult.from_dict(r) for r in document["results"]])


def _statuses_from_text(text: str) -> dict[str, str]:
    by_symbol = {symbol: status for status, symbol in STATUS_SYMBOLS.items()}
    found = {}
    for line in text.splitlines():
        match = re.match(r"^(\S+)\s+([a-z0-9-]+)\s", line)
        if match and match.group(1) in by_symbol and match.group(2) in CHECK_IDS:
            found[match.group(2)] = by_symbol[match.group(1)]
    return found


def _statuses_from_markdown(text: str) -> dict[str, str]:
    """Problems ('**❌ Title** (`id`)'), the passed table ('| ✅ `id` |'), the folded skips ('- `id`: ')."""
    by_emoji = {emoji: status for status, emoji in EMOJI.items()}
    found = {}
    skipped = text.split("not applicable or not recorded", 1)[1].split("</details>", 1)[0] if \
        "not applicable or not recorded" in text else ""
    for line in text.splitlines():
        problem = re.match(r"^\*\*(\S+) .*\*\* \(`([a-z0-9-]+)`\)", line)
        passed = re.match(r"^\| ✅ `([a-z0-9-]+)` \|", line)
        if problem and problem.group(1) in by_emoji:
            found[problem.group(2)] = by_emoji[problem.group(1)]
        elif passed:
            found[passed.group(1)] = "pass"
    for match in re.finditer(r"^- `([a-z0-9-]+)`: ", skipped, re.M):
        found[match.group(1)] = "skip"
    return found


def test_text_and_markdown_show_the_same_results_as_json(live):
    expected = {r["id"]: r["status"] for r in json.loads(live["json"].stdout)["results"] if r["id"] != UNSTABLE}
    for fmt, parse in (("text", _statuses_from_text), ("markdown", _statuses_from_markdown)):
        got = parse(live[fmt].stdout)
        got.pop(UNSTABLE, None)
        assert got == expected, fmt
        assert live[fmt].returncode == live["json"].returncode


def test_output_file_leaves_stdout_empty(tmp_path):
    target = tmp_path / "report.json"
    run = tfdoctor("--no-probe", "--only", CHECK_IDS[0], "--json", "--output", str(target))
    assert run.returncode in (0, 1) and run.stdout == ""
    assert f"report written to {target}" in run.stderr
    assert [r["id"] for r in json.loads(target.read_text(encoding="utf-8"))["results"]] == [CHECK_IDS[0]]
