"""The live display in a real terminal (tmux): header and a status line while TensorFlow imports, the
results in report order as they become final, Ctrl-C ending it; and nothing of it off a terminal."""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from tfdoctor.checking.registry import all_checks

from tests import fakes
from tfdoctor.render.live import LiveDisplay, stage_words

TMUX = shutil.which("tmux")


class Pane:
    def __init__(self, cwd: Path, env: dict[str, str]) -> None:
        self.name = f"tfdoctor-test-{uuid.uuid4().hex[:8]}"
        exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
        subprocess.run([TMUX, "new-session", "-d", "-s", self.name, "-x", "140", "-y", "50",
                        f"cd {shlex.quote(str(cwd))} && env {exports} PS1='$ ' bash --norc --noprofile"], check=True)

    def type(self, *keys: str) -> None:
        subprocess.run([TMUX, "send-keys", "-t", self.name, *keys], check=True)

    def text(self) -> str:
        return subprocess.run([TMUX, "capture-pane", "-p", "-t", self.name], capture_output=True, text=True).stdout

    def wait_for(self, pattern: str, within: float = 60) -> tuple[str, float]:
        started = time.monotonic()
        while time.monotonic() - started < within:
            screen = self.text()
            if re.search(pattern, screen, re.M):
                return screen, time.monotonic() - started
            time.sleep(0.02)
        raise AssertionError(f"{pattern!r} not on screen after {within} s:\n{self.text()}")

    def close(self) -> None:
        subprocess.run([TMUX, "kill-session", "-t", self.name], stderr=subprocess.DEVNULL)


@pytest.fixture
def hanging(tmp_path):
    root = fakes.install(tmp_path, fakes.HANGS)
    env = {"PYTHONPATH": str(root), "FAKE_TF_PIDFILE": str(root / "pids.txt"), "TERM": "xterm-256color"}
    pane = Pane(root, env)
    yield root, pane
    pane.close()


@pytest.mark.skipif(TMUX is None, reason="tmux not installed")
def test_header_status_and_results_then_ctrl_c(hanging):
    root, pane = hanging
    pane.type(f"{shlex.quote(sys.executable)} -m tfdoctor --timeout 60; echo EXIT=$?", "Enter")
    screen, _ = pane.wait_for(r"^tfdoctor \d+\.\d+\.\d+ · .*\n\n(.*\n)*.*(gathering facts|starting|importing TensorFlow)")
    screen, _ = pane.wait_for(r"importing TensorFlow \d+\.\d s")
    # before the import ends, the checks that read no TensorFlow fact, in report order (memory is the last of them)
    screen, _ = pane.wait_for(r"^\S\s+memory\s")
    ids = re.findall(r"^[✓!✗‼-]\s+([a-z0-9-]+)\s", screen.split("\n\n", 1)[1], re.M)  # result rows, not the spinner
    early = [check.id for check in all_checks() if "tensorflow" not in (*check.needs, *check.uses)]
    assert ids == early and "tensorflow-import" not in ids and "platform-support" not in ids
    pids = [int(p) for p in (root / "pids.txt").read_text().split()]
    pane.type("C-c")
    screen, _ = pane.wait_for(r"^EXIT=\d+", within=20)
    assert "EXIT=130" in screen and "tfdoctor: interrupted" in screen
    assert "importing TensorFlow" not in screen  # the live display is gone
    assert fakes.survivors(pids) == []


@pytest.mark.skipif(TMUX is None, reason="tmux not installed")
def test_what_stays_on_screen_is_the_text_report(tmp_path):
    pane = Pane(tmp_path, {"TERM": "xterm-256color"})
    try:
        pane.type(f"{shlex.quote(sys.executable)} -m tfdoctor --only platform-support,cpu-instructions; echo EXIT=$?",
                  "Enter")
        screen, _ = pane.wait_for(r"^EXIT=\d+", within=120)
        report = re.search(r"^tfdoctor \d.*?(?=^EXIT=\d)", screen, re.M | re.S).group(0)
        assert "✓  platform-support" in report and "EXIT=0" in screen
        assert not re.search(r"gathering facts|importing TensorFlow|starting", report)
    finally:
        pane.close()


def test_no_live_display_off_a_terminal():
    run = subprocess.run([sys.executable, "-m", "tfdoctor", "--only", "platform-support"], capture_output=True,
                         text=True, timeout=120)
    assert "gathering facts" not in run.stdout + run.stderr and "\x1b" not in run.stdout


def test_stage_words_and_status():
    assert stage_words("importing") == "importing TensorFlow"
    assert stage_words("probe:GPU:warmup") == "timing GPU against CPU"
    assert stage_words("workload:input_pipeline") == "running the workload probe: input pipeline"
    assert stage_words("something:new") == "something:new"
    display = LiveDisplay("/usr/bin/python3")
    display("collected", {"facts": {"host": {"system": "Linux", "machine": "x86_64"}}, "pending": ["tensorflow"]})
    display("tensorflow-stage", {"stage": "importing"})
    assert display.status().startswith("importing TensorFlow ")
    display("collected", {"facts": {}, "pending": ["nvidia", "tensorflow"]})
    assert display.status().startswith("gathering facts · importing TensorFlow")
