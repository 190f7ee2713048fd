"""No control character from facts or a saved report reaches the terminal; rich markup stays literal."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tfdoctor.render.sanitize import clean

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "linux" / "nvidia-smi-hangs.json"
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
HOSTILE = "\x1b[2J\x1b[H\x1b]0;owned\x07\x1b]8;;https://evil.example\x1b\\click\x1b]8;;\x1b\\\x9b31m\r\x00\x08[bold red]markup[/]"


@pytest.mark.parametrize("text, expected", [
    ("\x1b[0;31mE tensorflow/core/x.cc:1] failed\x1b[0m", "E tensorflow/core/x.cc:1] failed"),
    ("\x1b]0;window title\x07after", "after"),
    ("\x1b]8;;https://x\x1b\\link\x1b]8;;\x1b\\", "link"),
    ("a\rb\x00c\x7fd\x85e\x9b2Jf", "abcdef"),
    ("keeps\ttabs\nand newlines, café ✓", "keeps\ttabs\nand newlines, café ✓"),
])
def test_clean(text, expected):
    assert clean(text) == expected


def hostile_report(tmp_path: Path) -> Path:
    document = json.loads(FIXTURE.read_text())
    document["facts"]["python"] = {**(document["facts"].get("python") or {}), "executable": "/opt/" + HOSTILE,
                                   "version": "3.11" + HOSTILE}
    document["facts"]["nvidia"]["smi"]["stderr"] = HOSTILE
    document["facts"]["host"]["machine"] = "x86_64" + HOSTILE
    path = tmp_path / "hostile.json"
    path.write_text(json.dumps(document))
    return path


@pytest.mark.parametrize("fmt", ["text", "markdown", "github"])
def test_explain_prints_no_control_character(tmp_path, fmt):
    run = subprocess.run([sys.executable, "-m", "tfdoctor", "explain", str(hostile_report(tmp_path)), "-v",
                          "--format", fmt, "--no-redact"], capture_output=True, text=True, timeout=120)
    assert run.returncode in (0, 1), run.stderr
    assert "owned" not in run.stdout and "evil.example" not in run.stdout
    assert not CONTROL.findall(run.stdout.replace("\n", "").replace("\t", ""))
    if fmt == "text":
        assert "[bold red]markup[/]" in run.stdout  # printed literally, not interpreted


def test_json_keeps_the_data_escaped(tmp_path):
    run = subprocess.run([sys.executable, "-m", "tfdoctor", "explain", str(hostile_report(tmp_path)), "--json",
                          "--no-redact"], capture_output=True, text=True, timeout=120)
    assert "\x1b" not in run.stdout and "\\u001b" in run.stdout  # JSON escapes; the data is kept for machines
