"""The console entry (`tfdoctor`, `python -m tfdoctor`) ends without the interpreter's teardown once its work is
done (tfdoctor/__main__.py console): what an exit must do still happens, and the exit code is the command's."""

from __future__ import annotations

import subprocess
import sys

import pytest

SCRIPT = """
import atexit, sys, threading, time
from tfdoctor import __main__ as m
atexit.register(lambda: print("atexit ran", flush=True))
if sys.argv[1] == "thread":
    def late():
        time.sleep(0.5)
        print("thread finished", flush=True)
    threading.Thread(target=late).start()
sys.stdout.write("unflushed;")  # still in the buffer when the command ends
sys.argv = ["tfdoctor", *sys.argv[2:]]
m.console()
"""


def _console(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", SCRIPT, *args], capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("args, code", [(("--version",), 0), (("--no-such-option",), 2)])
def test_the_exit_code_the_buffered_output_and_the_atexit_functions_survive_the_quick_exit(args, code):
    done = _console("plain", *args)
    assert done.returncode == code
    assert done.stdout.startswith("unflushed;")
    assert "atexit ran" in done.stdout
    if code == 0:
        assert "tfdoctor " in done.stdout


def test_a_thread_still_running_gets_the_usual_exit_that_waits_for_it():
    done = _console("thread", "--version")
    assert done.returncode == 0
    assert "thread finished" in done.stdout and "atexit ran" in done.stdout
