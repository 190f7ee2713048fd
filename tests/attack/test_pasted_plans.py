"""A pasted plan runs the environment's own Python and nothing else, whatever its path holds (issue 25).

Every installer step of every fixture's plan (the verdict snapshot) is spelt again for an interpreter
living under a directory whose name holds one odd character, pasted into a real bash from inside that
directory, and the fake interpreters tell who ran: the real one must have run with exactly the step's
arguments, and none of the decoys placed where an unquoted glob, brace, backslash, newline, space or
expansion would lead. The "Undo with" line and the leftover-removal command are pasted the same way.
Checked to fail on main at 181ac01 for '?', '{a,b}', '\\' and a newline (its quoting left them bare); the
PowerShell test fails there as well (double quotes, ',' '{' '#' left bare)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tfdoctor.environment.spell import POSIX, POWERSHELL, Spelling, argv
from tfdoctor.results.repairs import Action

SNAPSHOT = Path(__file__).resolve().parents[1] / "snapshots" / "fixture_verdicts.json"
# each odd name, and the decoy an unquoted spelling of it would reach instead
ODD = {
    "a?b": ["aXb"], "a*b": ["aXb"], "x{a,b}": ["xa", "xb"], "a,b": [], "a}b": [], "a\\b": ["ab"],
    "new\nline": ["new"], "two words": ["two"], "d$x": ["d"], "q'uote": [], 'dq"x': [], "t~": [], "h#x": [],
    "b`id`": ["b"], "s;t": ["s"], "amp&x": ["amp"], "p(a)": [], "l<x": ["l"], "[ab]": ["a", "b"],
}
LOGGER = "#!/bin/sh\nfor a in \"$0\" \"$@\"; do printf '%s\\0' \"$a\"; done >> \"$RAN_LOG\"\nprintf '\\n\\0' >> \"$RAN_LOG\"\n"


def _interpreter(prefix: Path) -> Path:
    python = prefix / "bin" / "python"
    python.parent.mkdir(parents=True, exist_ok=True)
    python.write_text(LOGGER, encoding="utf-8")
    python.chmod(0o755)
    return python


def _ran(log: Path) -> list[list[str]]:
    if not log.exists():
        return []
    runs, current = [], []
    for word in log.read_text(encoding="utf-8").split("\0")[:-1]:
        if word == "\n":
            runs.append(current)
            current = []
        else:
            current.append(word)
    return runs


def _installer_steps() -> list[tuple[str, dict]]:
    snapshot = json.loads(SNAPSHOT.read_text(encoding="utf-8"))
    steps = []
    for name, verdict in sorted(snapshot.items()):
        for step in (verdict.get("plan") or {}).get("steps") or ():
            if step["action"] in ("install", "uninstall", "reinstall", "upgrade-installer") and not step.get("manager"):
                steps.append((name, step))
    return steps


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
@pytest.mark.parametrize("odd", sorted(ODD), ids=lambda name: repr(name))
def test_every_fixture_plan_pasted_into_bash_runs_the_environments_own_python(tmp_path, odd):
    home = tmp_path / odd
    home.mkdir()
    python = _interpreter(home / "venv")
    for decoy in ODD[odd]:
        _interpreter(tmp_path / decoy / "venv")
        _interpreter(home / decoy / "venv")
    log = tmp_path / "ran.log"
    steps = _installer_steps()
    assert steps, "the snapshot holds installer steps"
    expected, script = [], []
    for _, step in steps:
        spelling = Spelling("venv", str(python), POSIX)
        words = argv(spelling, Action(step["action"]), step["packages"], no_deps=step["no_deps"],
                     pre=step.get("pre", False), missing=step.get("missing", False))
        expected.append(words)
        script.append(" ".join([spelling.interpreter(), *(spelling.quote(w) for w in words[1:])]))
    quote = Spelling("venv", str(python), POSIX).quote
    undo = f"{quote(str(python))} -m tfdoctor fix --undo --python {quote(str(python))}"  # the "Undo with" line's words
    expected.append([str(python), "-m", "tfdoctor", "fix", "--undo", "--python", str(python)])
    script.append(undo)
    subprocess.run(["bash", "-c", "\n".join(script)], cwd=home, env={"RAN_LOG": str(log), "PATH": "/usr/bin:/bin",
                                                                    "x": "/tmp", "HOME": str(tmp_path)},
                   capture_output=True, timeout=120)
    assert _ran(log) == expected


@pytest.mark.parametrize("odd", sorted(ODD), ids=lambda name: repr(name))
def test_powershell_quoting_reads_back_every_character(odd):
    """PowerShell is not run here (no pwsh on the test machines); its rules are: single-quoted strings
    expand nothing, a quote (and its typographic forms) is doubled, and a quoted interpreter needs '&'."""
    word = f"C:\\Users\\me\\{odd}\\\u2019python.exe"
    quoted = Spelling("system", word, POWERSHELL).quote(word)
    assert quoted.startswith("'") and quoted.endswith("'")
    body = quoted[1:-1]
    read_back, at = [], 0
    while at < len(body):
        read_back.append(body[at])
        at += 2 if body[at] in "'\u2018\u2019\u201a\u201b" else 1
        if read_back[-1] in "'\u2018\u2019\u201a\u201b":
            assert body[at - 1] == read_back[-1], "a quote inside a single-quoted PowerShell string is doubled"
    assert "".join(read_back) == word
    assert Spelling("system", word, POWERSHELL).interpreter() == f"& {quoted}"
