"""Hostile text: every pattern that reads a report's strings, on adversarial strings of 1 MB, then
`tfdoctor explain` (every format) and `tfdoctor diff` on a 1 MB report made of such strings.

A saved report comes from strangers. A pattern with nested or overlapping quantifiers takes time
quadratic in the length of a string built against it (before this bench, 40 KB of 'a.' kept
`explain` busy for 50 s); every pattern here must stay linear. Goals: each pattern well under a
second per 1 MB string; `explain` and `diff` of the 1 MB report within 2 s.

    python bench/bench_hostile.py [--size 1000000] [--json results.json]

tests/attack/ runs the same strings at ~100 KB with a generous bound (not quadratic, not hanging).
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "fixtures" / "linux" / "tensorflow-2.21-legacy-keras-without-tf-keras.json"
GOAL_PATTERN_S = 1.0
GOAL_COMMAND_S = 2.0

# Each unit repeated to the size asked: aimed at a pattern's prefix, separator or missing terminator.
UNITS = {
    "a.": "a.",  # a word boundary at every character
    "run": "a",  # one long run of name and token characters
    "name=": "token=",  # assignments, each value the next assignment
    "unterminated quote": 'secret="',
    "quoted key": "'password':",
    "aws secret context": "secret: ",
    "url schemes": "a://b:",
    "url no @": "git+https://user:",
    "bearer": "Bearer ",
    "jwt no dots": "eyJ-",
    "jwt short segments": "eyJa.b.",
    "token prefixes": "sk-glpat-xoxb-pypi-hf_ghp_",
    "aws ids": "AKIA",
    "google keys": "AIza",
    "pem no end": "-----BEGIN PRIVATE KEY-----",
    "pem label": "-----BEGIN ",
    "user dirs": "/home/",
    "windows user dirs": "C:\\Users\\a ",
    "references": "a.a#",
    "owner/repo#": "a/b.",
    "mentions": "@a",
    "csi": "\x1b[",
    "csi params": "\x1b[0",
    "osc": "\x1b]0;",
    "c1": "\x9b\x9d",
    "spaces": " ",
}


def adversarial_strings(size: int) -> dict[str, str]:
    """Name -> a string of about `size` characters built to make a careless pattern backtrack."""
    return {name: (unit * (size // len(unit) + 1))[:size] for name, unit in UNITS.items()}


def patterns() -> dict[str, Callable[[str], str]]:
    """Every function that runs a pattern over a report's strings, by name."""
    from tfdoctor.report import redact
    from tfdoctor.render import github, markdown, sanitize

    found: dict[str, Callable[[str], str]] = {f"redact: {name}": scrub for name, scrub in redact.SCRUBBERS}
    for shape in redact.TOKEN_SHAPES:
        compiled = re.compile(shape.pattern)
        found[f"token: {shape.name}"] = lambda text, compiled=compiled: compiled.sub("", text)
    redactor = redact.Redactor(home="/home/alice", user="alice", host="alices-laptop.example", other_users=("bob",))
    found["redact: whole text (home, user dirs, names)"] = redactor.text
    found["redact: learn user names"] = lambda text: ",".join(redact.user_dir_names(text))
    found["terminal: clean"] = sanitize.clean
    found["json: escape C1"] = lambda text: sanitize.json_dumps({"s": text})
    found["markdown: escape"] = markdown.escape
    found["markdown: code span"] = markdown.code
    found["github: annotation value"] = github.escape_property
    return found


def time_patterns(size: int) -> list[dict]:
    strings = adversarial_strings(size)
    rows = []
    for name, run in patterns().items():
        worst, worst_input = 0.0, ""
        for label, text in strings.items():
            started = time.perf_counter()
            run(text)
            elapsed = time.perf_counter() - started
            if elapsed > worst:
                worst, worst_input = elapsed, label
        rows.append({"pattern": name, "worst_s": round(worst, 4), "worst_input": worst_input})
    return rows


def hostile_report(size: int) -> tuple[dict, dict]:
    """Two reports, A (a real machine's facts) and B (the same with about `size` bytes of adversarial
    strings where the checks read, the renderers print and diff compares)."""
    base = json.loads(FIXTURE.read_text(encoding="utf-8"))

    def with_pieces(piece: int) -> dict:
        pieces = adversarial_strings(piece)
        report = json.loads(json.dumps(base))
        facts = report["facts"]
        facts["environment"] = {**(facts.get("environment") or {}),
                                **{f"TF_HOSTILE_{i}": text for i, text in enumerate(pieces.values())}}
        facts["python"]["executable"] = pieces["a."]
        facts["host"]["machine"] = pieces["csi"]
        facts["tensorflow"].update(status="import_error", imported=False, stderr_tail="\n".join(pieces.values()),
                                   exception={"type": "ImportError", "message": pieces["name="]})
        return report

    first = max(1, size // (3 * len(UNITS)))
    scale = size / len(json.dumps(with_pieces(first)))
    return base, with_pieces(max(1, int(first * scale)))


def time_commands(size: int) -> list[dict]:
    a, b = hostile_report(size)
    rows = []
    with tempfile.TemporaryDirectory() as directory:
        path_a, path_b = Path(directory, "a.json"), Path(directory, "b.json")
        path_a.write_text(json.dumps(a), encoding="utf-8")
        path_b.write_text(json.dumps(b), encoding="utf-8")
        commands = {f"explain --format {fmt}": ["explain", str(path_b), "--format", fmt]
                    for fmt in ("text", "json", "markdown", "github")}
        commands["diff"] = ["diff", str(path_a), str(path_b)]
        for name, args in commands.items():
            started = time.perf_counter()
            run = subprocess.run([sys.executable, "-m", "tfdoctor", *args], capture_output=True, text=True)
            elapsed = time.perf_counter() - started
            rows.append({"command": name, "seconds": round(elapsed, 2), "exit": run.returncode,
                         "report_bytes": path_b.stat().st_size})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=1_000_000)
    parser.add_argument("--json", metavar="FILE")
    args = parser.parse_args()
    pattern_rows = time_patterns(args.size)
    width = max(len(r["pattern"]) for r in pattern_rows)
    print(f"Each pattern on {len(UNITS)} adversarial strings of {args.size:,} characters (worst case):")
    for row in pattern_rows:
        mark = "" if row["worst_s"] <= GOAL_PATTERN_S else f"  over the {GOAL_PATTERN_S} s goal"
        print(f"  {row['pattern']:<{width}}  {row['worst_s']:8.4f} s  ({row['worst_input']}){mark}")
    command_rows = time_commands(args.size)
    print(f"\ntfdoctor on a hostile report of {command_rows[0]['report_bytes']:,} bytes (goal {GOAL_COMMAND_S} s):")
    for row in command_rows:
        mark = "met" if row["seconds"] <= GOAL_COMMAND_S else "NOT met"
        print(f"  {row['command']:<26} {row['seconds']:6.2f} s  exit {row['exit']}  {mark}")
    if args.json:
        Path(args.json).write_text(json.dumps({"patterns": pattern_rows, "commands": command_rows}, indent=2))


if __name__ == "__main__":
    main()
