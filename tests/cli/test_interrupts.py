"""Ctrl-C and SIGTERM during a hanging `import tensorflow` (a fake TensorFlow that sleeps and starts a
helper), with real signals: the doctor returns at once, kills the child's process group, says
"interrupted" on stderr, exits 130 / 143, writes nothing to stdout and no half file for -o."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from tests import fakes

pytestmark = pytest.mark.skipif(os.name != "posix", reason="POSIX signals")


@pytest.mark.parametrize("signum, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
@pytest.mark.parametrize("args", [("--json",), ("--format", "text")])
def test_a_signal_during_a_hanging_import(tmp_path, signum, code, args):
    root = fakes.install(tmp_path, fakes.HANGS)
    doctor = fakes.start_doctor(root, *args)
    pids = fakes.wait_for_import(root)
    doctor.send_signal(signum)
    sent = time.monotonic()
    stdout, stderr = doctor.communicate(timeout=30)
    # Far below the 60 s timeout: the wait was cut short (the goal is under a second, see README)
    assert time.monotonic() - sent < 10
    assert doctor.returncode == code
    assert stdout == ""
    assert stderr.strip().splitlines()[-1] == "tfdoctor: interrupted"
    assert fakes.survivors(pids) == []


def test_an_interrupted_output_file_is_never_half_written(tmp_path):
    root = fakes.install(tmp_path, fakes.HANGS)
    target = tmp_path / "report.json"
    target.write_text("the previous report\n")
    doctor = fakes.start_doctor(root, "--json", "-o", str(target))
    pids = fakes.wait_for_import(root)
    doctor.send_signal(signal.SIGINT)
    doctor.communicate(timeout=30)
    assert doctor.returncode == 130
    assert target.read_text() == "the previous report\n"
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".report.json")) == []
    assert fakes.survivors(pids) == []


def test_output_file_is_written_whole_through_a_rename(tmp_path):
    out = tmp_path / "report.json"
    run = subprocess.run([sys.executable, "-m", "tfdoctor", "--json", "--only", "platform-support", "-o", str(out)],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0 and run.stdout == ""
    assert out.read_text().startswith("{") and out.read_text().endswith("}\n")
    assert [p.name for p in tmp_path.iterdir()] == ["report.json"]


def test_a_signal_while_nvidia_smi_hangs_kills_it(tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    pidfile = tmp_path / "smi.pid"
    smi = bin_dir / "nvidia-smi"
    smi.write_text(f"#!/bin/sh\necho $$ >> {pidfile}\nexec sleep 600\n")
    smi.chmod(0o755)
    env = dict(os.environ, PATH=f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    doctor = subprocess.Popen([sys.executable, "-m", "tfdoctor", "--json", "--only", "nvidia-driver"], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not pidfile.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    pids = [int(p) for p in pidfile.read_text().split()]
    doctor.send_signal(signal.SIGINT)
    stdout, stderr = doctor.communicate(timeout=30)
    assert (doctor.returncode, stdout) == (130, "")
    assert stderr.strip().splitlines()[-1] == "tfdoctor: interrupted"
    assert fakes.survivors(pids) == []


class _InterruptedInsideALock:
    """A command whose run is interrupted the way CPython can be: the signal's exception lands between a
    lock's release and its re-acquire (threading.Condition.wait's finally), so the `with` around it then
    releases an unlocked lock and RuntimeError replaces the interrupt, with the interrupt as its context."""

    def main(self, **_: object) -> None:
        import threading

        from tfdoctor.cli.interrupts import Interrupted

        lock = threading.Lock()
        with lock:
            lock.release()
            raise Interrupted(signal.SIGTERM)


@pytest.fixture
def children_reopened_after():
    """An interrupt in process closes the running-children registry for good (the process is ending);
    this test's process goes on to other tests."""
    from tfdoctor.processes.commands import CHILDREN

    yield
    CHILDREN.reopen()


def test_an_interrupt_that_surfaces_as_a_lock_error_is_still_an_interrupt(monkeypatch, capsys,
                                                                           children_reopened_after):
    from tfdoctor.cli import entry as cli

    monkeypatch.setattr(cli, "_click_command", lambda: _InterruptedInsideALock())
    assert cli.run_command_line(["--json"]) == 143
    assert capsys.readouterr().err.strip().splitlines() == ["tfdoctor: interrupted"]


def test_an_error_without_an_interrupt_behind_it_stays_an_internal_error(monkeypatch, capsys):
    import threading

    from tfdoctor.cli import entry as cli

    class Broken:
        def main(self, **_: object) -> None:
            lock = threading.Lock()
            with lock:
                lock.release()

    monkeypatch.setattr(cli, "_click_command", lambda: Broken())
    assert cli.run_command_line(["--json"]) == 2
    assert "internal error: RuntimeError: release unlocked lock" in capsys.readouterr().err
