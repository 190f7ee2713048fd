"""What the RECORD verification costs: the integrity child alone at several hashing budgets, and the
full doctor run against a bare `import tensorflow` with the verification on and off.

The child hashes native libraries smallest first until its budget is spent, at a lower priority,
next to the TensorFlow import on the same cores. The issue's bound: the full run stays within 1.2 x a
bare `import tensorflow`. Rounds alternate the commands so drift hits all alike; medians are printed.

    python bench/bench_integrity.py [--rounds 5] [--budgets 0,0.1,0.3,1] [--json results.json]
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import subprocess
import sys
import time

PYTHON = sys.executable


def child(budget_s: float) -> tuple[float, float, dict]:
    """(wall seconds, CPU seconds of the child, its integrity section) for one child run."""
    from tfdoctor.child import source

    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run([PYTHON, "-c", source("integrity"), json.dumps({"budget_s": budget_s})],
                          capture_output=True, text=True, check=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, json.loads(done.stdout)["integrity"]


def timed(argv: list[str]) -> float:
    started = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True)
    if done.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(argv)} exited {done.returncode}: {done.stderr.strip()[-300:]}")
    return time.perf_counter() - started


def full_runs() -> dict[str, list[str]]:
    doctor = [PYTHON, "-m", "tfdoctor", "--json"]
    return {
        "import tensorflow (floor)": [PYTHON, "-c", "import tensorflow"],
        "tfdoctor --json": doctor,
        "tfdoctor --json --skip install-integrity": doctor + ["--skip", "install-integrity"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--budgets", default="0,0.1,0.3,1")
    parser.add_argument("--json", dest="json_path")
    args = parser.parse_args()
    budgets = [float(b) for b in args.budgets.split(",")]

    print(f"{platform.system()} {platform.machine()}, Python {platform.python_version()}, {PYTHON}")
    child_rows: dict[float, list[tuple[float, float, dict]]] = {b: [] for b in budgets}
    runs: dict[str, list[float]] = {name: [] for name in full_runs()}
    for _ in range(args.rounds):
        for budget in budgets:
            child_rows[budget].append(child(budget))
        for name, argv in full_runs().items():
            runs[name].append(timed(argv))

    print("\nintegrity child alone (median over rounds)")
    print(f"{'budget s':>9} {'wall s':>7} {'cpu s':>6} {'files':>6} {'hashed':>13} {'of MiB':>8} stopped")
    figures: dict = {"child": {}, "full": {}}
    for budget, rows in child_rows.items():
        wall = statistics.median(r[0] for r in rows)
        cpu = statistics.median(r[1] for r in rows)
        section = rows[-1][2]
        entries = section["distributions"]
        files = sum(e["size_checked"] + e["exists_checked"] for e in entries)
        hashed = sum(e["hashed_files"] for e in entries)
        natives = sum(e["native_files"] for e in entries)
        hashed_mib = sum(e["hashed_bytes"] for e in entries) / 2 ** 20
        native_mib = sum(e["native_bytes"] for e in entries) / 2 ** 20
        print(f"{budget:>9} {wall:>7.2f} {cpu:>6.2f} {files:>6} {hashed:>4}/{natives:<3} {hashed_mib:>4.0f} MiB "
              f"{native_mib:>8.0f} {section['hash_stopped']}")
        figures["child"][str(budget)] = {"wall_s": wall, "cpu_s": cpu, "files": files, "hashed_files": hashed,
                                         "native_files": natives, "hashed_mib": hashed_mib, "native_mib": native_mib}

    floor = statistics.median(runs["import tensorflow (floor)"])
    print("\nfull runs (median over rounds; x floor)")
    for name, values in runs.items():
        median = statistics.median(values)
        print(f"{name:<42} {median:6.2f} s  x{median / floor:4.2f}   (runs: {', '.join(f'{v:.2f}' for v in values)})")
        figures["full"][name] = {"median_s": median, "x_floor": median / floor, "runs": values}
    if args.json_path:
        with open(args.json_path, "w", encoding="utf-8") as handle:
            json.dump(figures, handle, indent=2)


if __name__ == "__main__":
    main()
