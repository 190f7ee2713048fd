"""How the doctor waits on its children (tfdoctor/processes/commands.py, tfdoctor/processes/deadline.py, issue 35): a
descendant that leaves the child's session with setsid() and keeps its pipes open neither holds the wait
nor outlives it; the operation's deadline bounds every child; children run from an empty directory of
their own, never from the project folder. The same defects end to end: tests/attack/test_escaped_children.py
and tests/attack/test_project_folder.py."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

from tests.fakes import survivors
from tfdoctor.processes import deadline
from tfdoctor.processes import commands
from tfdoctor.collect.tensorflow import run_child
from tfdoctor.processes import commands, deadline

POSIX = pytest.mark.skipif(os.name != "posix", reason="sessions and setsid are POSIX")

# Generous against what it takes (well under a second): the machine is shared. The escapee lives far longer.
RETURNS_WITHIN_S = 15.0
ESCAPEE_LIFETIME_S = 300


def escaping(pidfile: Path, then: str = "") -> list[str]:
    """A child that forks a grandchild which leaves the session (setsid), notes its pid and sleeps holding
    stdout and stderr; the child itself then runs `then` and exits."""
    script = (
        "import os, sys, time\n"
        "if os.fork() == 0:\n"
        "    os.setsid()\n"
        f"    open({str(pidfile)!r}, 'a').write('%d\\n' % os.getpid())\n"
        f"    time.sleep({ESCAPEE_LIFETIME_S})\n"
        "    os._exit(0)\n"
        "print('child done', flush=True)\n" + then
    )
    return [sys.executable, "-c", script]


def noted(pidfile: Path, count: int = 1, wait_s: float = 10.0) -> list[int]:
    deadline_at = time.monotonic() + wait_s
    while time.monotonic() < deadline_at:
        if pidfile.exists() and len(pidfile.read_text().split()) >= count:
            return [int(p) for p in pidfile.read_text().split()]
        time.sleep(0.02)
    raise AssertionError("the grandchild never started")


@POSIX
def test_run_process_returns_when_the_child_exits_and_kills_the_escaped_grandchild(tmp_path):
    pidfile = tmp_path / "escaped"
    started = time.monotonic()
    finished = commands.run_process(escaping(pidfile), 60)
    took = time.monotonic() - started
    assert took < RETURNS_WITHIN_S
    assert finished.returncode == 0 and not finished.timed_out
    assert finished.stdout == b"child done\n"
    assert survivors(noted(pidfile)) == []


@POSIX
def test_at_the_timeout_the_child_and_its_escaped_grandchild_are_killed(tmp_path):
    pidfile = tmp_path / "escaped"
    started = time.monotonic()
    finished = commands.run_process(escaping(pidfile, "time.sleep(600)\n"), 2)
    assert time.monotonic() - started < RETURNS_WITHIN_S
    assert finished.timed_out and finished.returncode == -9
    assert survivors(noted(pidfile)) == []


@POSIX
def test_the_tensorflow_child_waits_for_no_escaped_grandchild_either(tmp_path):
    pidfile = tmp_path / "escaped"
    started = time.monotonic()
    fate = run_child(escaping(pidfile), dict(os.environ), 60)
    assert time.monotonic() - started < RETURNS_WITHIN_S
    assert fate.returncode == 0 and not fate.timed_out and fate.stdout["tail"] == "child done\n"
    assert survivors(noted(pidfile)) == []


@POSIX
def test_an_unregistered_child_is_finished_the_same_way(tmp_path):
    """The restore's own check (fixer/environment.py child_json): out of an interrupt's reach, not out of this."""
    pidfile = tmp_path / "escaped"
    started = time.monotonic()
    finished = commands.run_process(escaping(pidfile), 60, registered=False)
    assert time.monotonic() - started < RETURNS_WITHIN_S and finished.returncode == 0
    assert survivors(noted(pidfile)) == []


@POSIX
def test_kill_escaped_finds_only_the_processes_carrying_the_mark(tmp_path):
    import subprocess

    marked = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"],
                              env=dict(os.environ, **{commands.CHILD_MARK: "feedface"}), start_new_session=True)
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"],
                             env=dict(os.environ, **{commands.CHILD_MARK: "other"}), start_new_session=True)
    try:
        time.sleep(0.2)
        assert commands.kill_escaped(["feedface"]) == [marked.pid]
        assert marked.wait(10) == -9 and other.poll() is None
    finally:
        for process in (marked, other):
            process.kill()
            process.wait()


def test_a_child_carries_a_mark_of_its_own():
    first = commands.run_process([sys.executable, "-c", f"import os; print(os.environ[{commands.CHILD_MARK!r}])"], 30)
    second = commands.run_process([sys.executable, "-c", f"import os; print(os.environ[{commands.CHILD_MARK!r}])"], 30)
    assert first.stdout.strip() and first.stdout != second.stdout


def test_children_run_from_an_empty_directory_not_the_working_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "json.py").write_text("raise SystemExit('the project folder was imported')\n")
    finished = commands.run_process([sys.executable, "-c", "import json, os; print(os.getcwd()); print(os.listdir())"], 30)
    assert finished.returncode == 0, finished.stderr
    where, listing = finished.stdout.decode().splitlines()
    assert where == commands.neutral_directory() != str(tmp_path) and listing == "[]"
    relative = Path("bin") / "python"
    (tmp_path / "bin").mkdir()
    (tmp_path / relative).symlink_to(sys.executable)
    # a relative interpreter path means the doctor's working directory's, not the child's
    assert commands.run_process([str(relative), "-c", "print(1)"], 30).stdout == b"1\n"


def test_a_deadline_bounds_every_child_started_under_it():
    with deadline.within(1.5):
        started = time.monotonic()
        finished = commands.run_process([sys.executable, "-c", "import time; time.sleep(60)"], 60)
        assert finished.timed_out and time.monotonic() - started < RETURNS_WITHIN_S
        late = commands.run_process([sys.executable, "-c", "print(1)"], 60)
        assert late.timed_out and late.stdout == b""  # past the deadline: not even started
    assert commands.run_process([sys.executable, "-c", "print(1)"], 60).stdout == b"1\n"


def test_deadlines_nest_by_the_earlier_and_a_restore_suspends_them():
    with deadline.within(100.0) as outer:
        with deadline.within(1000.0) as inner:
            assert inner is outer
        with deadline.within(5.0) as inner:
            assert deadline.bounded(60.0) <= 5.0
            with deadline.suspended():
                assert deadline.bounded(60.0) == 60.0
    assert deadline.current() is None and deadline.bounded(60.0) == 60.0


def test_a_worker_thread_carries_the_deadline_of_the_code_that_started_it():
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(1) as pool, deadline.within(7.0):
        assert pool.submit(deadline.current).result() is None
        assert pool.submit(deadline.carried(deadline.current)).result().seconds == 7.0


def test_the_stated_deadlines_are_in_the_help():
    from typer.testing import CliRunner

    from tfdoctor.cli.app import app

    runner = CliRunner()
    assert f"{deadline.run_s(60.0, 30.0):g} s by default" in " ".join(runner.invoke(app, ["--help"]).output.split())
    assert deadline.words(deadline.FIX_S) in runner.invoke(app, ["fix", "--help"]).output
    assert "--deadline" in runner.invoke(app, ["scan", "--help"]).output
