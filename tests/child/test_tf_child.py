"""The TensorFlow child's plumbing: the script itself, bounded capture, the fate of a process, the facts."""

from __future__ import annotations

import ast
import json
import os
import re
import signal
import subprocess
import sys
import time

import pytest

from tests.fakes import survivors
from tfdoctor.child import source
from tfdoctor.collect.target import TargetUnusableError, confirm_python
from tfdoctor.collect.tensorflow import (
    ChildFate,
    StreamCapture,
    child_environment,
    child_status,
    run_child,
    signal_name,
    tensorflow_facts,
)

STDLIB_TOP_LEVEL = {"json", "os", "sys", "time"}


def test_child_imports_only_the_standard_library_at_top_level_and_parses_as_python_3_6():
    text = source("tf_child")
    tree = ast.parse(text, feature_version=(3, 6))
    top = {alias.name.split(".")[0] for node in tree.body if isinstance(node, ast.Import) for alias in node.names}
    top |= {node.module.split(".")[0] for node in tree.body if isinstance(node, ast.ImportFrom)}
    assert top <= STDLIB_TOP_LEVEL
    assert "tensorflow" not in top and "numpy" not in top


def test_child_source_fits_a_windows_command_line():
    # CreateProcess limits the whole command line to 32767 characters; the source goes in as `-c`.
    assert len(source("tf_child")) < 30000


def test_a_shell_given_the_child_source_exits_without_running_it(tmp_path):
    marker = tmp_path / "ran"
    script = source("tf_child") + f"\ntouch {marker}\n"
    completed = subprocess.run(["/bin/sh", "-c", script], capture_output=True, timeout=10)
    assert completed.returncode == 64
    assert completed.stdout == b"" and completed.stderr == b""
    assert not marker.exists()


def test_not_installed_is_answered_without_importing(tmp_path):
    out = tmp_path / "result.json"
    config = {"out": str(out), "probe": True, "budget_s": 0.1, "timeout_s": 10}
    # -S: no site-packages, so no tensorflow whatever the test interpreter has
    completed = subprocess.run([sys.executable, "-S", "-c", source("tf_child"), json.dumps(config)],
                               capture_output=True, timeout=30)
    result = json.loads(out.read_text())
    assert completed.returncode == 0
    assert result["stage"] == "not_installed" and result["spec"] is None
    assert [stage for stage, _ in result["stages"]] == ["started", "not_installed"]


# ------------------------------------------------------------------------------------- capture

def test_capture_keeps_head_tail_and_notable_lines_across_chunk_boundaries():
    capture = StreamCapture(re.compile(rb"Metal device set to"), head=100, tail=100)
    capture.feed(b"start line\nMetal dev")
    capture.feed(b"ice set to: Apple M1\n" + b"x" * 1000 + b"\n")
    capture.feed(b"the end\n")
    capture.close()
    text = capture.text()
    assert text["bytes"] == len(b"start line\nMetal device set to: Apple M1\n") + 1001 + len(b"the end\n")
    assert text["head"].startswith("start line\nMetal device")
    assert text["tail"].endswith("the end\n") and len(text["tail"]) == 100
    assert text["notable"] == ["Metal device set to: Apple M1"]


def test_capture_of_a_short_stream_is_whole_and_has_no_head():
    capture = StreamCapture(None, head=10, tail=100)
    capture.feed(b"0123456789abcdef")
    capture.feed(b"ghij")
    assert capture.text() == {"head": None, "tail": "0123456789abcdefghij", "bytes": 20, "notable": []}


def test_capture_bounds_a_line_without_newlines():
    capture = StreamCapture(re.compile(rb"needle"), head=10, tail=10)
    for _ in range(100):
        capture.feed(b"y" * 10000)
    capture.feed(b"needle\n")
    capture.close()
    assert len(capture.partial) == 0 and capture.text()["bytes"] == 1000007
    kept = capture.text()["notable"][0]
    assert "needle" in kept and len(kept) <= 2000


# ------------------------------------------------------------------------------------- process fate

def test_ten_megabytes_on_both_pipes_neither_deadlock_nor_grow_unbounded():
    flood = ("import sys\nline = 'x' * 99 + '\\n'\n"
             "for _ in range(100000):\n    sys.stdout.write(line); sys.stderr.write(line)\n")
    fate = run_child([sys.executable, "-c", flood], dict(os.environ), timeout=60)
    assert fate.returncode == 0 and not fate.timed_out
    assert fate.stdout["bytes"] == fate.stderr["bytes"] == 10_000_000
    assert len(fate.stderr["tail"]) <= 48 * 1024 and len(fate.stderr["head"]) <= 16 * 1024


def test_timeout_kills_the_whole_group_including_grandchildren(tmp_path):
    pidfile = tmp_path / "pids"
    script = ("import os, subprocess, sys, time\n"
              "p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'])\n"
              f"open({str(pidfile)!r}, 'w').write('%d %d' % (os.getpid(), p.pid))\n"
              "time.sleep(600)\n")
    started = time.monotonic()
    fate = run_child([sys.executable, "-c", script], dict(os.environ), timeout=2)
    assert fate.timed_out and fate.returncode == -signal.SIGKILL
    assert time.monotonic() - started < 2 + 3
    pids = [int(p) for p in pidfile.read_text().split()]
    assert len(pids) == 2 and survivors(pids) == []


def test_what_a_child_leaves_running_is_killed_when_it_exits(tmp_path):
    pidfile = tmp_path / "pids"
    script = ("import subprocess, sys\n"
              "p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'])\n"
              f"open({str(pidfile)!r}, 'w').write(str(p.pid))\n")
    fate = run_child([sys.executable, "-c", script], dict(os.environ), timeout=30)
    assert fate.returncode == 0 and not fate.timed_out
    assert survivors([int(pidfile.read_text())]) == []


@pytest.mark.parametrize("returncode, name, inferred", [
    (-4, "SIGILL", False), (-11, "SIGSEGV", False), (-6, "SIGABRT", False), (-9, "SIGKILL", False),
    (132, "SIGILL", True),  # a shell wrapper reports 128 + 4
    (0xC000001D, "SIGILL", True), (0xC0000005, "SIGSEGV", True),  # Windows NTSTATUS
    (0, None, False), (1, None, False), (3, None, False),
])
def test_signal_names(returncode, name, inferred):
    assert signal_name(returncode) == (name, inferred)


def _fate(returncode=0, timed_out=False, stderr="", stdout=""):
    capture = {"head": None, "tail": stderr, "bytes": len(stderr), "notable": []}
    return ChildFate(returncode, timed_out, 1.5, {"head": None, "tail": stdout, "bytes": len(stdout),
                                                   "notable": []}, capture)


@pytest.mark.parametrize("result, fate, status", [
    ({"stage": "not_installed"}, _fate(0), "not_installed"),
    ({"stage": "done"}, _fate(0), "ok"),
    ({"stage": "import_failed", "exception": {"type": "ImportError", "message": "x"}}, _fate(3), "import_error"),
    ({"stage": "importing"}, _fate(-4), "crashed"),
    ({"stage": "probe:GPU:warmup"}, _fate(-11), "crashed"),
    ({"stage": "importing"}, _fate(-9, timed_out=True), "timed_out"),
    (None, _fate(1), "crashed"),
])
def test_child_status(result, fate, status):
    assert child_status(result, fate) == status


def test_facts_keep_the_documented_shape_and_say_how_far_the_child_got():
    result = {"stage": "importing", "stages": [["started", 0.0], ["importing", 0.01]], "errors": {}}
    facts = tensorflow_facts(result, _fate(-4, stderr="boom\n"), 60.0, user_log_level="3")
    for key in ("status", "exit_code", "signal", "timed_out", "duration_s", "stderr_tail", "exception", "version",
                "build_info", "devices", "probe"):
        assert key in facts
    assert facts["status"] == "crashed" and facts["signal"] == "SIGILL" and facts["stage"] == "importing"
    assert facts["imported"] is False and facts["stderr_tail"] == "boom\n"
    assert facts["log_level"] == {"TF_CPP_MIN_LOG_LEVEL": "0", "user_value": "3"}
    json.dumps(facts)


def test_timed_out_child_is_recorded_as_killed():
    facts = tensorflow_facts({"stage": "importing", "stages": []}, _fate(-9, timed_out=True), 5.0)
    assert facts["status"] == "timed_out" and facts["timed_out"] is True and facts["signal"] == "SIGKILL"


def test_the_child_sees_every_log_line_whatever_the_user_set():
    env = child_environment({"TF_CPP_MIN_LOG_LEVEL": "3", "HOME": "/home/x"})
    assert env == {"TF_CPP_MIN_LOG_LEVEL": "0", "HOME": "/home/x"}


@pytest.mark.parametrize("program", ["/bin/true", "/bin/sh"])
def test_a_program_that_is_not_python_is_refused(program):
    with pytest.raises(TargetUnusableError, match="is not a Python interpreter"):
        confirm_python(program)


def test_python_itself_is_accepted():
    confirm_python(sys.executable)


def test_without_waitid_the_child_is_still_timed_out_and_its_group_killed(tmp_path, monkeypatch):
    # macOS builds of Python may lack os.waitid; the fallback waits with Popen.wait(timeout)
    monkeypatch.delattr(os, "waitid", raising=False)
    pidfile = tmp_path / "pids"
    script = ("import os, subprocess, sys, time\n"
              "p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'])\n"
              f"open({str(pidfile)!r}, 'w').write('%d %d' % (os.getpid(), p.pid))\n"
              "time.sleep(600)\n")
    fate = run_child([sys.executable, "-c", script], dict(os.environ), timeout=2)
    assert fate.timed_out
    assert survivors([int(p) for p in pidfile.read_text().split()]) == []
