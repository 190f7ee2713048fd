"""Write tests/snapshots/fixture_verdicts.json: every check's result and the repair plan for every fixture.

The snapshot pins behaviour across refactors (issue 21): tests/test_verdict_snapshot.py diagnoses every
fixture again and compares. Regenerate only when a change of verdict, wording or plan is intended, and
say so in the commit:  python tools/snapshot_verdicts.py
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.fixtures_support import fixture_id, fixture_paths, load_fixture  # noqa: E402

SNAPSHOT = ROOT / "tests" / "snapshots" / "fixture_verdicts.json"


def verdicts() -> dict[str, dict]:
    """fixture id -> the results (status, summary, evidence, remediation) and the plan, as JSON has them."""
    from tfdoctor.checking.registry import all_checks
    from tfdoctor.report.run import RunReport
    from tfdoctor.checking.runner import run_checks

    out = {}
    for path in fixture_paths():
        facts = load_fixture(path)["facts"]
        document = RunReport(facts, run_checks(all_checks(), facts)).to_dict()
        for result in document["results"]:
            del result["duration_ms"]  # the one field that differs from run to run
        out[fixture_id(path)] = {key: document[key] for key in ("results", "totals", "plan")}
    return out


def main() -> None:
    SNAPSHOT.parent.mkdir(exist_ok=True)
    SNAPSHOT.write_text(json.dumps(verdicts(), indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {SNAPSHOT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
