"""Maintainer tool: record a new check's verdicts in every fixture's `expected` map.

    python tools/fixture_expect.py CHECK_ID            # show what CHECK_ID says on every fixture
    python tools/fixture_expect.py CHECK_ID --write    # record those verdicts (read the listing first!)

Only the `expected` entry of CHECK_ID changes; each file keeps its own JSON layout. A verdict is
recorded because a person read it and agreed, never to make a test pass.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def layout(text: str, document: dict) -> tuple[int, bool, str]:
    for indent in (1, 2, 4):
        for ascii_only in (True, False):
            for end in ("\n", ""):
                if json.dumps(document, indent=indent, ensure_ascii=ascii_only) + end == text:
                    return indent, ascii_only, end
    return 1, False, "\n"


def main(argv: list[str]) -> int:
    from tfdoctor.checking.registry import all_checks
    from tfdoctor.checking.runner import run_checks

    if not argv or argv[0].startswith("-"):
        print(__doc__.strip())
        return 2
    check_id, write = argv[0], "--write" in argv
    checks = all_checks()
    order = [c.id for c in checks]
    chosen = [c for c in checks if c.id == check_id]
    if not chosen:
        print(f"unknown check {check_id}")
        return 2
    for path in sorted(p for p in ROOT.glob("fixtures/*/*.json") if p.parent.name != "fresh"):
        text = path.read_text(encoding="utf-8")
        document = json.loads(text)
        result = run_checks(chosen, document["facts"])[0]
        before = document.get("expected", {}).get(check_id)
        print(f"{result.status.value:5} (was {before or '-':5}) {path.relative_to(ROOT)}: {result.summary[:100]}")
        if write and before != result.status.value:
            expected = dict(document.get("expected", {}))
            expected[check_id] = result.status.value
            document["expected"] = {k: expected[k] for k in sorted(expected, key=lambda k: order.index(k) if k in order else len(order))}
            indent, ascii_only, end = layout(text, json.loads(text))
            path.write_text(json.dumps(document, indent=indent, ensure_ascii=ascii_only) + end, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
