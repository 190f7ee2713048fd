"""Score today's doctor on the fresh cases (issue 29, part 6): python tools/score_fresh.py [--aside|--aside2|--aside3|--aside4|--aside5|--aside6|--aside7|--round3|--round5|--round6|--round7|--round8|--set DIR] [--list] [--verbose]

Each fixture in fixtures/fresh/ (with --aside to --aside7: a held-out set, fixtures/fresh/aside*/, which only the
lead scores; with a --roundN flag (--round3, --round5 to --round8): that round's seen cases; with --set DIR: any folder)
is diagnosed the way `tfdoctor explain FILE` does it (read as a saved report, today's checks, one plan). A case is
right when every check its `expected` block names reached that status, and every `expected_hints` substring appears
in that check's remediation (advice, commands, URL) or in the plan steps that carry out its repairs. The
expectations were written from each thread's accepted fix before the doctor was run; this tool only reads them.
Exit code: 0 whatever the score (a measurement, not a gate).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.fixtures_support import HELD_OUT_SETS, SEEN_ROUNDS, fresh_fixture_paths, load_fixture  # noqa: E402


def diagnose(path: Path) -> dict[str, Any]:
    """The report document `tfdoctor explain PATH` would print as JSON (not redacted: hints are matched)."""
    from tfdoctor.operations.explain import explained_document as explain
    from tfdoctor.report.saved import read_report

    return explain(read_report(str(path)), redacted=False)


def hint_text(document: dict[str, Any], check_id: str) -> str:
    """Everything the user is told to do about one check: its remediation and its plan steps."""
    result = next((r for r in document["results"] if r["id"] == check_id), None)
    parts: list[str] = []
    remedy = (result or {}).get("remediation") or {}
    parts += [remedy.get("advice") or "", *(remedy.get("commands") or ()), remedy.get("url") or ""]
    for step in (document.get("plan") or {}).get("steps") or ():
        if any(reason.get("check") == check_id for reason in step.get("reasons") or ()):
            parts.append(step.get("command") or "")
    return " ".join(parts)


def score(path: Path) -> tuple[bool, list[str]]:
    """(right, why-not reasons) for one fresh fixture."""
    fixture = load_fixture(path)
    try:
        document = diagnose(path)
    except Exception as exc:  # a crash of the doctor on a case is a wrong answer, with its reason
        return False, [f"doctor raised {type(exc).__name__}: {exc}"]
    got = {r["id"]: r for r in document["results"]}
    problems: list[str] = []
    for check_id, want in fixture["expected"].items():
        result = got.get(check_id)
        status = result["status"] if result else "missing"
        if status != want:
            summary = (result or {}).get("summary", "")
            problems.append(f"{check_id}: {status} (want {want}) - {summary[:110]}")
    for check_id, needles in (fixture.get("expected_hints") or {}).items():
        text = hint_text(document, check_id)
        for needle in needles:
            if needle not in text:
                problems.append(f"{check_id}: hint lacks {needle!r}")
    return not problems, problems


def verdicts(path: Path) -> list[str]:
    """--verbose: what the doctor said on each check the case names, and the plan's commands."""
    fixture = load_fixture(path)
    try:
        document = diagnose(path)
    except Exception as exc:
        return [f"doctor raised {type(exc).__name__}: {exc}"]
    got = {r["id"]: r for r in document["results"]}
    lines = [f"{check_id}: {(got.get(check_id) or {}).get('status', 'missing')} - "
             f"{(got.get(check_id) or {}).get('summary', '')[:140]}" for check_id in fixture["expected"]]
    lines += [f"plan: {step.get('command')}" for step in (document.get("plan") or {}).get("steps") or ()]
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    chosen = parser.add_mutually_exclusive_group()
    # one flag per set, from the two lists the tests use: --aside ... --asideN (held out), --round3 ... (seen)
    for name in (*HELD_OUT_SETS, *SEEN_ROUNDS):
        number = name.removeprefix("aside").removeprefix("round") or "1"
        what = "held-out cases (the lead's)" if name in HELD_OUT_SETS else "seen cases"
        chosen.add_argument(f"--{name}", action="store_const", const=name, dest="held_out",
                            help=f"score round {number}'s {what} in fixtures/fresh/{name}/")
    chosen.add_argument("--set", type=Path, metavar="DIR", help="score the cases in DIR/*.json")
    parser.add_argument("--list", action="store_true",
                        help="only list the cases (kind, name, the checks they name) without diagnosing any")
    parser.add_argument("--verbose", action="store_true", help="also print every named check's verdict and the plan")
    args = parser.parse_args(argv)
    if args.set is not None:
        paths, label = sorted(args.set.glob("*.json")), str(args.set)
    else:
        paths, label = fresh_fixture_paths(args.held_out), args.held_out or "seen"
    if args.list:  # a dry listing: parses every case, runs no check (safe on a held-out set)
        for path in paths:
            fixture = load_fixture(path)
            print(f"[{fixture['fixture'].get('kind', '?')}] {path.stem}: {', '.join(fixture['expected'])}")
        print(f"{len(paths)} cases ({label} set)")
        return 0
    right = 0
    for path in paths:
        ok, problems = score(path)
        right += ok
        kind = load_fixture(path)["fixture"].get("kind", "?")
        print(f"{'right' if ok else 'WRONG'}  [{kind}] {path.stem}")
        for problem in problems:
            print(f"         {problem}")
        if args.verbose:
            for line in verdicts(path):
                print(f"           | {line}")
    print(f"total: {right}/{len(paths)} right ({label} set)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
