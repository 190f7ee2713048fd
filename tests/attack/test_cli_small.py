"""The small ones of issue 18: NO_COLOR in the live lines, the report at the terminal's width (in colour
there), `--python ""`, `explain --help`, completion of check ids. Terminals are real ptys."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import struct
import subprocess
import sys
import termios
import time

import pytest

from tests.fixtures_support import FIXTURES
from tfdoctor.checking.registry import all_checks

pytestmark = pytest.mark.skipif(os.name != "posix", reason="ptys")

REPORT = FIXTURES / "linux" / "cpu-only-tensorflow-cpu-no-gpu.json"
SGR = re.compile(r"\x1b\[([0-9;]*)m")
ESCAPES = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
COLOUR_PARAMS = {*range(30, 39), *range(40, 49), *range(90, 98), *range(100, 108)}


def clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("NO_COLOR", "FORCE_COLOR", "COLUMNS", "LINES", "TTY_COMPATIBLE", "GITHUB_ACTIONS")}
    env.update(TERM="xterm-256color", **extra)
    return env


def on_terminal(args: list[str], columns: int, env: dict[str, str], timeout: float = 120) -> str:
    """Everything `python -m tfdoctor ARGS` writes to a pty of `columns` columns."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
    process = subprocess.Popen([sys.executable, "-m", "tfdoctor", *args], stdin=slave, stdout=slave,
                               stderr=slave, env=env, close_fds=True)
    os.close(slave)
    chunks = []
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.5)
            if not ready:
                if process.poll() is not None:
                    break
                continue
            try:
                data = os.read(master, 65536)
            except OSError:  # EIO: the child closed the terminal
                break
            if not data:
                break
            chunks.append(data)
    finally:
        os.close(master)
        process.kill() if process.poll() is None else None
        process.wait(10)
    return b"".join(chunks).decode("utf-8", "replace")


def colour_codes(text: str) -> list[str]:
    found = []
    for match in SGR.finditer(text):
        params = [int(p) for p in match.group(1).split(";") if p.isdigit()]
        if any(p in COLOUR_PARAMS for p in params):
            found.append(match.group(0))
    return found


def screen_lines(text: str) -> list[str]:
    return [ESCAPES.sub("", line).rstrip() for line in text.replace("\r\n", "\n").split("\n")]


def test_no_color_is_honoured_by_the_live_lines():
    args = ["--only", "platform-support,memory"]
    coloured = on_terminal(args, 120, clean_env())
    assert colour_codes(coloured), "the live lines should be coloured on a terminal without NO_COLOR"
    plain = on_terminal(args, 120, clean_env(NO_COLOR="1"))
    assert "platform-support" in plain
    assert colour_codes(plain) == []


def test_the_report_is_coloured_on_a_terminal_and_plain_with_no_color():
    assert colour_codes(on_terminal(["explain", str(REPORT)], 120, clean_env()))
    plain = on_terminal(["explain", str(REPORT)], 120, clean_env(NO_COLOR="1"))
    assert "platform-support" in plain and colour_codes(plain) == []


def test_the_report_is_drawn_at_the_terminals_width():
    narrow = screen_lines(on_terminal(["explain", str(REPORT)], 60, clean_env(NO_COLOR="1")))
    wide = screen_lines(on_terminal(["explain", str(REPORT)], 170, clean_env(NO_COLOR="1")))
    assert "platform-support" in "\n".join(narrow) and "platform-support" in "\n".join(wide)
    assert max(map(len, narrow)) <= 60
    # the "facts read from <absolute path>" line is longer than 100 columns: on one line when there is room
    assert any(len(line) > 100 and line.startswith("facts read from") for line in wide), wide


def test_off_a_terminal_the_report_is_100_columns():
    run = subprocess.run([sys.executable, "-m", "tfdoctor", "explain", str(REPORT)], capture_output=True,
                         text=True, timeout=120, env=clean_env())
    lines = run.stdout.splitlines()
    assert run.returncode == 0 and 90 < max(map(len, lines)) <= 100


def test_an_empty_python_is_an_error_not_this_interpreter():
    run = subprocess.run([sys.executable, "-m", "tfdoctor", "--python", "", "--only", "platform-support", "--json"],
                         capture_output=True, text=True, timeout=120)
    lines = run.stderr.splitlines()
    assert (run.returncode, run.stdout) == (2, "")
    assert len(lines) == 1 and lines[0].startswith("tfdoctor: error: --python"), run.stderr


def test_explain_help_does_not_mention_python():
    run = subprocess.run([sys.executable, "-m", "tfdoctor", "explain", "--help"], capture_output=True, text=True,
                         timeout=60, env=clean_env(COLUMNS="200"))
    assert run.returncode == 0 and "--only" in run.stdout
    assert "--python" not in run.stdout


def complete(words: str) -> list[str]:
    """What bash completion offers for the last of `words` (typer's protocol, as --show-completion sets it up)."""
    env = clean_env(_TFDOCTOR_COMPLETE="complete_bash", COMP_WORDS=words,
                    COMP_CWORD=str(len(words.split()) - (0 if words.endswith(" ") else 1)))
    run = subprocess.run([sys.executable, "-m", "tfdoctor"], capture_output=True, text=True, timeout=60, env=env)
    assert run.returncode == 0, run.stderr
    return run.stdout.split()


CHECKS = all_checks()


@pytest.mark.parametrize("words", ["tfdoctor --only ", "tfdoctor --skip ", "tfdoctor explain r.json --only "])
def test_completion_offers_every_check_id_and_tag(words):
    offered = complete(words)
    assert {c.id for c in CHECKS} <= set(offered)
    assert {t for c in CHECKS for t in c.tags} <= set(offered)


def test_completion_completes_a_prefix_and_the_last_of_a_comma_list():
    assert complete("tfdoctor --only pla") == ["platform-support"]
    assert complete("tfdoctor --skip platform-support,pro") == ["platform-support,probe"]
    assert complete("tfdoctor --only nothing-like-this") == []


def test_a_long_error_is_one_short_line_and_whole_with_verbose(tmp_path):
    """A Python that fails at start with a 5000-character message (think of a broken sitecustomize)."""
    python = tmp_path / "python"
    message = "E" * 5000
    python.write_text(f'#!/bin/sh\n[ "$1" = "-V" ] && exec {sys.executable} -V\necho {message} >&2\nexit 3\n')
    python.chmod(0o755)
    for verbose, longest in (([], 400), (["-v"], 6000)):
        run = subprocess.run([sys.executable, "-m", "tfdoctor", "--json", "--only", "platform-support", *verbose,
                              "--python", str(python)], capture_output=True, text=True, timeout=120)
        lines = run.stderr.splitlines()
        assert (run.returncode, run.stdout, len(lines)) == (2, "", 1), run.stderr[:500]
        assert lines[0].startswith("tfdoctor: error: ") and len(lines[0]) <= longest
        assert (message in lines[0]) == bool(verbose)
    assert lines[0].endswith(message)
