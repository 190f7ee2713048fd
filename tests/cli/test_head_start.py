"""The head start (tfdoctor/__main__.py, processes/commands.py HeadStarts): which command lines start the
collectors' children before typer parses them, that a collector takes such a child only for its very
own command, that nothing is left behind, and that the integrity child answers the same either way."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import pytest
import typer

from tfdoctor import __main__ as launcher
from tfdoctor.child import source
from tfdoctor.cli.app import app
from tfdoctor.collect import integrity
from tfdoctor.processes.commands import HeadStarts, run_process
from tests import fakes


@pytest.mark.parametrize("args, expected", [
    ([], ((), (), False)),
    (["--json"], ((), (), False)),
    (["--json", "--skip", "probe,keras", "--skip=gpu-visible"], ((), ("probe", "keras", "gpu-visible"), False)),
    (["-f", "markdown", "--only", "install-integrity", "-o", "r.md", "--deep", "-q"],
     (("install-integrity",), (), True)),
    (["--timeout", "5", "--no-probe", "--strict", "-v", "--no-redact"], ((), (), False)),
])
def test_a_plain_diagnosis_gets_a_head_start(args, expected, monkeypatch):
    monkeypatch.delenv("_TFDOCTOR_COMPLETE", raising=False)
    assert launcher.diagnosis_asked(args) == expected


@pytest.mark.parametrize("args", [
    ["--help"], ["-h"], ["--version"], ["--list"], ["explain", "r.json"], ["scan"], ["fix"],
    ["--python", sys.executable], ["--config", "x.toml"], ["--require-gpu"], ["--min-gflops", "5"],
    ["--json", "--bogus"], ["-vq"], ["--only"], ["--"], ["r.json"], ["--install-completion"],
])
def test_anything_else_goes_the_normal_way(args):
    assert launcher.diagnosis_asked(args) is None


def test_shell_completion_goes_the_normal_way(monkeypatch):
    monkeypatch.setenv("_TFDOCTOR_COMPLETE", "complete_bash")
    assert launcher.diagnosis_asked(["--json"]) is None


def test_the_switches_it_knows_are_the_run_commands_own():
    """A renamed or removed option must not leave the look at argv guessing."""
    params = {name: param for param in typer.main.get_command(app).params for name in param.opts}
    for name in launcher.SWITCHES:
        assert params[name].is_flag, name
    for name in launcher.WITH_VALUE:
        assert not params[name].is_flag and params[name].nargs == 1, name


def echo(*words: str) -> list[str]:
    return [sys.executable, "-c", "import sys; print(' '.join(sys.argv[1:]))", *words]


def test_a_collector_takes_the_child_of_its_own_command_only(monkeypatch):
    starts = HeadStarts()
    monkeypatch.setattr("tfdoctor.processes.commands.HEAD_STARTS", starts)
    starts.start(echo("early"))
    assert starts.take(echo("other")) is None
    assert run_process(echo("early"), 30, env=dict(os.environ)).stdout == b"early\n"  # its own env: not taken
    monkeypatch.setenv("TFDOCTOR_TEST_CHANGED", "1")
    assert starts.take(echo("early")) is None  # another environment than the child's
    monkeypatch.delenv("TFDOCTOR_TEST_CHANGED")
    taken = starts.take(echo("early"))
    assert taken is not None and taken.communicate()[0] == b"early\n"
    assert starts.take(echo("early")) is None  # taken once


def test_run_process_answers_with_the_child_started_early(monkeypatch, tmp_path):
    starts = HeadStarts()
    monkeypatch.setattr("tfdoctor.processes.commands.HEAD_STARTS", starts)
    marker = tmp_path / "started"
    argv = [sys.executable, "-c", "import sys; open(sys.argv[1], 'a').write('x'); print('hi')", str(marker)]
    starts.start(argv)
    finished = run_process(argv, 30)
    assert (finished.returncode, finished.stdout, marker.read_text()) == (0, b"hi\n", "x")  # one child, not two


def test_the_children_nobody_takes_are_killed_and_reaped(monkeypatch):
    starts = HeadStarts()
    sleeper = [sys.executable, "-c", "import time; time.sleep(600)"]
    starts.start(sleeper)
    starts.start_unsettled(sleeper + ["-"])  # never settled: no collector could take it
    processes = list(starts._started)
    starts.discard()
    assert [p.returncode for p in processes] == [-signal.SIGKILL, -signal.SIGKILL]  # reaped, by SIGKILL
    assert starts.take(sleeper) is None


def integrity_report(argv: list[str], stdin: bytes | None = None) -> dict:
    done = subprocess.run(argv, input=stdin, capture_output=True, check=True, timeout=120)
    found = json.loads(done.stdout)
    found["integrity"].pop("elapsed_s")
    return found


def test_the_integrity_child_answers_the_same_with_its_options_on_stdin():
    settled = integrity.command(sys.executable, frozenset({"integrity"}), budget_s=0.0)
    late = integrity_report([*integrity.command_without_options(sys.executable), "-"], settled[-1].encode() + b"\n")
    assert late == integrity_report(settled)
    assert late["integrity"]["distributions"] and late["integrity"]["budget_s"] == 0.0
    installers_only = integrity.command(sys.executable, frozenset(), budget_s=0.0)
    late = subprocess.run([*installers_only[:-1], "-"], input=installers_only[-1].encode(), capture_output=True,
                          check=True, timeout=120)
    assert set(json.loads(late.stdout)) == {"installers"}


def test_a_run_takes_both_children_it_started(monkeypatch, capsys):
    """In process: the run's collectors take the target and integrity children the head start began."""
    taken: list[list[str]] = []
    real_take = HeadStarts.take

    def take(self, argv):
        process = real_take(self, argv)
        if process is not None:
            taken.append(list(argv))
        return process

    monkeypatch.setattr(HeadStarts, "take", take)
    monkeypatch.setattr(sys, "argv", ["tfdoctor", "--json", "--only", "install-integrity,platform-support"])
    with pytest.raises(SystemExit) as exited:
        launcher.main()
    assert exited.value.code in (0, 1)
    report = json.loads(capsys.readouterr().out)
    assert [r["id"] for r in report["results"]] == ["platform-support", "install-integrity"]
    assert sorted(argv[2] for argv in taken) == sorted([source("target_info"), source("integrity")])
    assert not report["facts"]["collection"]["errors"]


def test_a_signal_before_the_command_line_has_its_handlers(tmp_path):
    """SIGTERM while the head start's children run and typer is not even imported: they die with it."""
    script = (
        "import os, signal, sys, time\n"
        "from tfdoctor import __main__ as m\n"
        "from tfdoctor.processes.commands import HEAD_STARTS\n"
        "with m.head_start(['--json']):\n"
        "    print(' '.join(str(p.pid) for p in HEAD_STARTS._started), flush=True)\n"
        "    os.kill(os.getpid(), signal.SIGTERM)\n"
        "    time.sleep(30)\n"
        "print('not reached')\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    pids = [int(p) for p in done.stdout.split()]
    assert done.returncode == 143 and len(pids) == 2 and "not reached" not in done.stdout
    assert done.stderr.strip().splitlines()[-1] == "tfdoctor: interrupted"
    assert fakes.survivors(pids) == []
