"""What the repair plan costs, and what proving it on a clone costs.

1. Planning: `build_plan` on the saved reports in fixtures/ (explained with today's checks) and on a
   synthetic run with 200 repair intents over 60 distributions: median seconds per plan (goal: at
   most 0.05 s added to a run).
2. Cloning: the throwaway hard-link copy `tfdoctor fix` makes of an environment, and its removal,
   timed on a real environment (default: the venv running this bench, which holds TensorFlow).
   Proving a plan costs the installer's own time on the clone plus this and one doctor run
   (goal: at most the installer's time plus 5 s).

    python bench/bench_plan.py [--rounds 7] [--env PATH_TO_VENV]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _median_seconds(function, rounds: int) -> float:
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        function()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def bench_planning(rounds: int) -> None:
    from tfdoctor.operations.explain import explained_document as explain
    from tfdoctor.report.saved import read_report
    from tfdoctor.results.model import CheckResult, Remediation, Status
    from tfdoctor.plan.planner import build_plan
    from tfdoctor.results.repairs import Repair

    reports = []
    for path in sorted((ROOT / "fixtures").rglob("*.json")):
        document = explain(read_report(str(path)))
        reports.append(([CheckResult.from_dict(r) for r in document["results"]], document["facts"]))
    worst = max(_median_seconds(lambda: build_plan(results, facts), rounds) for results, facts in reports)
    total = sum(_median_seconds(lambda: build_plan(results, facts), rounds) for results, facts in reports)
    print(f"planning: {len(reports)} fixture reports, median {total / len(reports) * 1000:.2f} ms each, "
          f"slowest {worst * 1000:.2f} ms")
    facts = reports[0][1]
    many = [CheckResult(f"check-{i}", "t", Status.WARN, "s", remediation=Remediation("a", repairs=tuple(
        Repair.install(f"dist-{(i * 7 + j) % 60}>={j % 5}.0,<{10 + j % 3}", reason=f"r{i}") for j in range(10))))
        for i in range(20)]
    print(f"planning: 200 intents over 60 distributions, median {_median_seconds(lambda: build_plan(many, facts), rounds) * 1000:.2f} ms")


def bench_clone(env: Path, rounds: int) -> None:
    from tfdoctor.fixer.environment import link_tree, remove

    files = sum(1 for _ in env.rglob("*"))
    size = sum(p.stat().st_size for p in env.rglob("*") if p.is_file() and not p.is_symlink())
    clones, removals = [], []
    for _ in range(rounds):
        target = Path(tempfile.mkdtemp(dir=env.parent, prefix=f".{env.name}.bench-")) / "clone"
        started = time.perf_counter()
        link_tree(env, target)
        clones.append(time.perf_counter() - started)
        started = time.perf_counter()
        remove(target.parent)
        removals.append(time.perf_counter() - started)
    print(f"clone of {env} ({files:,} entries, {size / 2**30:.2f} GiB): hard-link copy median "
          f"{statistics.median(clones):.2f} s (min {min(clones):.2f}), removal median {statistics.median(removals):.2f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--env", type=Path, default=Path(sys.prefix))
    args = parser.parse_args()
    bench_planning(args.rounds)
    bench_clone(args.env.resolve(), max(3, args.rounds // 2))


if __name__ == "__main__":
    main()
