"""Hostile saved reports, through the command line: facts holding terminal escape sequences, C1
controls, newlines that start GitHub workflow commands, and a megabyte of strings built to make a
careless pattern backtrack. `explain` in every format and `diff` in every format must finish, print no
control character and, for GitHub, run no workflow command but the doctor's own annotations.

The last test sweeps every pattern that reads a report's text (tests/attack/sweep.py) on ~100 KB
adversarial strings and fails on one whose time grows faster than its input.
"""

from __future__ import annotations

import json
import os
import queue
import re
import runpy
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BENCH = runpy.run_path(str(ROOT / "bench" / "bench_hostile.py"), run_name="bench_hostile")
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")  # tab and newline allowed
SCREEN = "\x1b[2J\x1b[H\x1b]0;owned-title\x07\x1b[?1049h\x9b31m\x9d0;c1-title\x9c\x1bc"
COMMANDS = ("\n::add-mask::masked\n::error file=setup.py,line=1::pwned\n   ::warning::indented\n"
            "##[add-mask]old-style\r::notice::after-cr\n::set-output name=x::y")
HOSTILE = SCREEN + COMMANDS
SIZE = 1_000_000
BOUND_S = 60  # a generous bound; bench/bench_hostile.py holds the 2 s goal


def _split_lines(text: str) -> list[str]:
    return re.split(r"\r\n|\r|\n", text)  # how the runner reads a step's output


def _command(line: str) -> tuple[str, str] | None:
    """(command, data) if the Actions runner would read `line` as a workflow command: `::name props::data`
    after leading blanks, or the older `##[name props]data` anywhere in the line."""
    stripped = line.lstrip()
    if stripped.startswith("::"):
        end = stripped.find("::", 2)
        if end > 2:
            return stripped[2:end].split(" ", 1)[0], stripped[end + 2:]
    start = line.find("##[")
    if start >= 0 and "]" in line[start:]:
        info, _, data = line[start + 3:].partition("]")
        return info.split(" ", 1)[0], data
    return None


def commands_run(output: str) -> list[str]:
    """The lines the runner runs as commands, honouring ::stop-commands::TOKEN ... ::TOKEN::."""
    run, token = [], None
    for line in _split_lines(output):
        found = _command(line)
        if found is None:
            continue
        name, data = found
        if token is not None:
            if name.lower() == token.lower():
                token = None
            continue
        if name == "stop-commands":
            token = data
            continue
        run.append(line)
    return run


DOCTORS_OWN = re.compile(r"^::(error|warning) title=tfdoctor [a-z0-9-]+%3A [^:]*::")


def test_the_runner_model_sees_what_an_attacker_plants():
    assert commands_run("ok\n::add-mask::x\nfine ##[error]y\n  ::warning::z") == [
        "::add-mask::x", "fine ##[error]y", "  ::warning::z"]
    assert commands_run("::stop-commands::t1\n::add-mask::x\n##[error]y\n::t1::\n::add-mask::z") == ["::add-mask::z"]


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    """A (a real machine) and B (1 MB of adversarial strings, and the planted sequences in the facts
    the header, the checks and diff print)."""
    a, b = BENCH["hostile_report"](SIZE)
    facts = b["facts"]
    facts["host"]["machine"] += HOSTILE
    facts["python"]["executable"] = "/opt/py" + HOSTILE + facts["python"]["executable"]
    facts["python"]["version"] = "3.11.7" + HOSTILE
    facts["environment"]["TF_PLANTED"] = HOSTILE
    facts["distributions"][0]["version"] = "1.0" + HOSTILE
    facts["tensorflow"]["exception"] = {"type": "ImportError", "message": "libfoo.so: cannot open" + HOSTILE}
    directory = tmp_path_factory.mktemp("hostile")
    paths = directory / "a.json", directory / "b.json"
    for path, document in zip(paths, (a, b)):
        path.write_text(json.dumps(document), encoding="utf-8")
    assert 0.9 * SIZE <= paths[1].stat().st_size < 2 * SIZE  # about a megabyte
    return paths


def tfdoctor(*args: str, github_actions: bool = False) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")}
    if github_actions:
        env["GITHUB_ACTIONS"] = "true"
    started = time.monotonic()
    run = subprocess.run([sys.executable, "-m", "tfdoctor", *args], capture_output=True, text=True,
                         encoding="utf-8", timeout=BOUND_S * 3, env=env)
    assert time.monotonic() - started < BOUND_S, f"tfdoctor {args[0]} took longer than {BOUND_S} s"
    assert run.returncode in (0, 1), run.stderr[-2000:]
    return run


def _no_control_characters(run: subprocess.CompletedProcess) -> None:
    for stream in (run.stdout, run.stderr):
        found = CONTROL.findall(stream)
        assert not found, sorted(set(found))
    assert "owned-title" not in run.stdout and "c1-title" not in run.stdout  # the sequences went whole


@pytest.mark.parametrize("fmt", ["text", "markdown", "github"])
def test_explain_prints_no_control_character(reports, fmt):
    run = tfdoctor("explain", str(reports[1]), "--format", fmt, "-v", "--no-redact")
    _no_control_characters(run)


@pytest.mark.parametrize("fmt", ["text", "markdown", "github"])
def test_diff_prints_no_control_character(reports, fmt):
    run = tfdoctor("diff", str(reports[0]), str(reports[1]), "--format", fmt, "--no-redact")
    _no_control_characters(run)
    assert "TF_PLANTED" in run.stdout  # the planted variable is shown, cleaned


@pytest.mark.parametrize("command", ["explain", "diff"])
def test_json_escapes_every_control_character_and_keeps_the_data(reports, command):
    args = [command, str(reports[1])] if command == "explain" else [command, str(reports[0]), str(reports[1])]
    run = tfdoctor(*args, "--json", "--no-redact")
    assert not CONTROL.search(run.stdout.replace("\n", ""))
    assert "##[" not in run.stdout and "\\u009b" in run.stdout and "\\u001b" in run.stdout
    document = json.loads(run.stdout)  # for machines the data is kept as it was
    if command == "explain":
        assert document["facts"]["environment"]["TF_PLANTED"] == HOSTILE
    else:
        assert {"section": "environment", "field": "TF_PLANTED", "a": "not set", "b": HOSTILE} in document["differences"]


@pytest.mark.parametrize("args", [("explain", "--format", "github"), ("explain", "--format", "github", "-v"),
                                  ("explain", "--format", "github", "--quiet"), ("diff", "--format", "github")])
def test_github_output_runs_only_the_doctors_annotations(reports, args):
    files = [str(reports[1])] if args[0] == "explain" else [str(reports[0]), str(reports[1])]
    run = tfdoctor(args[0], *files, *args[1:], "--no-redact")
    assert "::add-mask::masked" in run.stdout  # the planted line is there, but inert
    commands = commands_run(run.stdout) + commands_run(run.stderr)
    foreign = [line for line in commands if not DOCTORS_OWN.match(line)]
    assert not foreign, foreign[:5]
    if args[0] == "explain":
        assert commands, "the doctor's own annotations are still there"


def test_text_under_github_actions_runs_only_the_doctors_annotations(reports):
    for args in (("explain", str(reports[1])), ("diff", str(reports[0]), str(reports[1]))):
        run = tfdoctor(*args, "--no-redact", github_actions=True)
        foreign = [line for line in commands_run(run.stdout) + commands_run(run.stderr) if not DOCTORS_OWN.match(line)]
        assert not foreign, foreign[:5]


def test_an_annotation_carries_untrusted_text_only_escaped():
    from tfdoctor.render.github import annotation

    line = annotation({"id": "tensorflow-import", "title": "Imports: a,b", "status": "fail",
                       "summary": "x" + COMMANDS, "remediation": {"advice": "50% \r\n::add-mask::y", "commands": []}})
    assert "\n" not in line and "\r" not in line
    assert commands_run(line) == [line] and DOCTORS_OWN.match(line)
    assert "title=tfdoctor tensorflow-import%3A Imports%3A a%2Cb::" in line and "50%25 %0A::add-mask::y" in line  # CR is cleaned away first


# --- every pattern that reads a report's text runs in linear time ---------------------------------

SWEEP_SIZE = 100_000
PATTERN_BOUND_S = 5.0  # all the adversarial strings of one pattern; linear ones take well under 1 s
GROWTH_BOUND = 10  # time on strings 4x longer: about 4 when linear, about 16 when quadratic
LINE_TIMEOUT_S = 60  # a pattern the sweep is stuck in


def test_every_pattern_that_reads_report_text_is_linear():
    child = subprocess.Popen([sys.executable, "-m", "tests.attack.sweep", str(SWEEP_SIZE)], cwd=ROOT,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines: queue.Queue = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in child.stdout] + [lines.put(None)],
                     daemon=True).start()
    current, slow, done = None, [], 0
    try:
        while True:
            try:
                line = lines.get(timeout=LINE_TIMEOUT_S)
            except queue.Empty:
                pytest.fail(f"stuck for {LINE_TIMEOUT_S} s in {current}")
            if line is None or line.startswith("finished"):
                break
            if line.startswith("start "):
                current = line[6:].strip()
            elif line.startswith("done "):
                done += 1
                seconds, growth = (float(x) for x in line.split()[-2:])
                if seconds > PATTERN_BOUND_S or (seconds > 0.15 and growth > GROWTH_BOUND):
                    slow.append(f"{current}: {seconds:.2f} s, x{growth:.1f} for 4x the text")
    finally:
        child.kill()
        child.wait()
    assert line is not None, "the sweep stopped early: " + "".join(list(lines.queue))[-2000:]
    assert done > 100 and not slow, slow


# --- every renderer, in process: a string anywhere in the document (sections it does not know too) -----

def _poisoned(value, key=""):
    if isinstance(value, str):
        return value if key in ("status", "id") else value + HOSTILE
    if isinstance(value, dict):
        return {k: _poisoned(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [_poisoned(v, key) for v in value]
    return value


def test_every_renderer_cleans_every_string_of_the_document():
    from tfdoctor.operations.explain import compare
    from tfdoctor.operations.explain import explained_document as explain
    from tfdoctor.report.saved import read_report
    from tfdoctor.render import github
    from tfdoctor.render.formats import Look, registry

    fixture = ROOT / "fixtures" / "linux" / "tensorflow-2.21-legacy-keras-without-tf-keras.json"
    saved = read_report(str(fixture))
    document = _poisoned({**explain(saved), "a_section_renderers_may_add_later": {"lines": ["x"]}})
    outputs = {name: fmt.report(document, Look(verbose=True)) for name, fmt in registry().items()}
    outputs["github summary"] = github.step_summary(document)
    outputs["github annotations"] = github.workflow_annotations(document)
    compared = _poisoned(dict(compare(str(fixture), str(fixture), redact=False).document))
    compared["differences"] = [{"section": "environment", "field": "X" + HOSTILE, "a": HOSTILE, "b": None}]
    outputs.update({f"diff {name}": fmt.diff(compared, Look()) for name, fmt in registry().items() if fmt.diff})
    for name, text in outputs.items():
        found = CONTROL.findall(text.replace("\n", "").replace("\t", ""))
        assert not found, (name, sorted(set(found)))
    assert "##[" not in outputs["json"] + outputs["diff json"]  # written \u0023#[ in JSON
    assert "\n::add-mask::" not in outputs["github annotations"]
