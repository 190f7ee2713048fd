"""What `tfdoctor --deep` costs, and whether its figures are right.

1. Cost: `tfdoctor --json` and `tfdoctor --json --deep` in alternating rounds (so drift hits both
   alike); the issue's goal is a median difference of at most 15 s.
2. Accuracy: every figure of the --deep runs (each contender's best block) against long runs of the
   same workload measured separately (child/workload.py run with LONG_FACTOR times the budget: the
   same blocks, more of them), one before each round and one after; the goal is agreement within 15 %.
   The long runs' disagreement among themselves is printed beside it: the VM's own drift.

    python bench/bench_workload.py [--rounds 3] [--long-factor 4] [--json results.json]

Run it on a quiet machine: on a shared VM a whole process sometimes runs at half speed, and the
report says so through the spread of the rounds.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

PYTHON = sys.executable
ROOT = Path(__file__).resolve().parent.parent
WORKLOAD_SCRIPT = ROOT / "tfdoctor" / "child" / "workload.py"

# The same workload as the child runs, in a process of its own, with a longer budget.
LONG_RUN = r"""
import json, sys, time
import tensorflow as tf
script, budget = sys.argv[1], float(sys.argv[2])
namespace = {"__name__": "tfdoctor_workload"}
exec(compile(open(script).read(), script, "exec"), namespace)
class Recorder(object):
    def __init__(self):
        self.data = {}
    def flush(self):
        pass
    def stage(self, name):
        pass
recorder = Recorder()
gpus = tf.config.list_physical_devices("GPU")
namespace["run_workload"](tf, recorder, {"budget_s": budget, "deadline": time.perf_counter() + 4 * budget}, gpus)
print(json.dumps(recorder.data["workload"]))
"""


def timed(argv: list[str]) -> tuple[float, str]:
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    started = time.perf_counter()
    completed = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=600, check=False)
    return time.perf_counter() - started, completed.stdout


def contenders(workload: dict) -> dict[str, dict]:
    """name -> the record of every contender that was timed."""
    found: dict[str, dict] = {}
    for row in (workload.get("crossover") or {}).get("sizes") or ():
        for kind in ("gpu", "cpu"):
            if (row.get(kind) or {}).get("best_s"):
                found[f"crossover {kind} {row['n']}"] = row[kind]
    for section in ("dispatch", "input_pipeline", "conv2d", "training_step"):
        for name, value in (workload.get(section) or {}).items():
            if isinstance(value, dict) and value.get("best_s"):
                found[f"{section} {name}"] = value
    return found


def figures(workload: dict) -> dict[str, float]:
    """name -> seconds per repetition (the best block) of every contender that was timed."""
    return {name: info["best_s"] for name, info in contenders(workload).items()}


def first_blocks_bias(long_runs: list[dict], workloads: list[dict]) -> dict[str, float]:
    """Inside each long run, the best of n of its blocks, taken as a --deep run takes them (n: the --deep
    runs' median block count for that figure; the first n/2 of each of its two windows, the second
    window starting about halfway through its blocks), against the best of all its blocks: the error of
    a short run's figure that comes from its fewer blocks alone, with the VM's drift between processes
    left out. Median over the long runs."""
    counts: dict[str, list[int]] = {}
    for workload in workloads:
        for name, info in contenders(workload).items():
            counts.setdefault(name, []).append(len([b for b in info.get("block_s") or () if b]))
    bias: dict[str, float] = {}
    for name, numbers in counts.items():
        n = max(1, int(statistics.median(numbers)))
        ratios = []
        for run in long_runs:
            blocks = [b for b in (contenders(run).get(name) or {}).get("block_s") or () if b]
            if len(blocks) > n:
                half, middle = n // 2, len(blocks) // 2
                sample = blocks[:max(1, half)] + blocks[middle:middle + n - half]
                ratios.append(min(sample) / min(blocks))
        if ratios:
            bias[name] = statistics.median(ratios)
    return bias


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--long-factor", type=float, default=4.0)
    parser.add_argument("--json", dest="json_path")
    args = parser.parse_args()

    from tfdoctor.collect.tensorflow import WORKLOAD_BUDGET_S

    def long_run() -> tuple[float, dict]:
        seconds, out = timed([PYTHON, "-c", LONG_RUN, str(WORKLOAD_SCRIPT), str(WORKLOAD_BUDGET_S * args.long_factor)])
        return seconds, (json.loads(out) if out.strip() else {})

    # A long run before every round and one after the last. Noise on a shared VM only adds time, but the
    # VM also drifts between speed states for tens of seconds at a time, so each --deep round is held
    # against the faster of the two long runs beside it (and, stricter, against the fastest of all).
    loads = [os.getloadavg()[0]]
    long_runs = [long_run()]
    doctor = [PYTHON, "-m", "tfdoctor", "--json"]
    runs: dict[str, list[float]] = {"tfdoctor --json": [], "tfdoctor --json --deep": []}
    workloads: list[dict] = []
    for round_number in range(args.rounds):
        for name, argv in (("tfdoctor --json", doctor), ("tfdoctor --json --deep", doctor + ["--deep"])):
            seconds, out = timed(argv)
            runs[name].append(seconds)
            if "--deep" in argv:
                workload = (json.loads(out)["facts"]["tensorflow"].get("workload") or {}) if out.strip() else {}
                workloads.append(workload)
        long_runs.append(long_run())
        loads.append(os.getloadavg()[0])
        print(f"round {round_number + 1}: " + ", ".join(f"{n} {v[-1]:.1f} s" for n, v in runs.items())
              + f", then a long run of {long_runs[-1][0]:.1f} s; load average {loads[-1]:.1f}", file=sys.stderr)
    seconds = max(s for s, _ in long_runs)
    long_figures = [figures(run) for _, run in long_runs]
    fastest: dict[str, float] = {}
    for found in long_figures:
        for name, value in found.items():
            fastest[name] = min(value, fastest.get(name, value))

    def beside(round_number: int, name: str) -> float | None:
        values = [f[name] for f in long_figures[round_number:round_number + 2] if name in f]
        return min(values) if values else None

    medians = {name: statistics.median(values) for name, values in runs.items()}
    extra = medians["tfdoctor --json --deep"] - medians["tfdoctor --json"]
    print(f"\n{platform.system()} {platform.machine()}, Python {platform.python_version()}, "
          f"{os.cpu_count()} CPUs, {args.rounds} rounds; 1-minute load average from {min(loads):.1f} to "
          f"{max(loads):.1f} (start, after each round, end: {', '.join(f'{x:.1f}' for x in loads)})")
    print("\n| command | median | range |\n| --- | --- | --- |")
    for name, values in runs.items():
        print(f"| `{name}` | {medians[name]:.1f} s | {min(values):.1f}-{max(values):.1f} s |")
    print(f"\n--deep adds {extra:.1f} s (median), goal <= 15 s: {'met' if extra <= 15 else 'NOT met'}; "
          f"workload duration {', '.join(str(w.get('duration_s')) for w in workloads)} s")

    print(f"\nEach figure against {len(long_runs)} long runs ({WORKLOAD_BUDGET_S * args.long_factor:.0f} s budget, up to "
          f"{seconds:.0f} s wall each) of the same workload, one before each round and one after the last: "
          "ratio = the --deep run's best block / the best block of the faster long run beside it; "
          "'long runs disagree' = slowest / fastest long run, the VM's own drift on that figure")
    bias = first_blocks_bias([run for _, run in long_runs], workloads)
    print("\n| figure | fastest long run | long runs disagree | --deep runs: ratio per round | within 15 % "
          "| of the fastest long run | median of the rounds / median of the long runs "
          "| a long run's first blocks / all its blocks |\n| --- | --- | --- | --- | --- | --- | --- | --- |")
    within = strict = total = 0
    typical = []  # the method's bias with the drift averaged over the rounds
    rows = []
    for name, value in fastest.items():
        pairs = [(f[name] / beside(r, name), f[name] / value)
                 for r, f in enumerate(map(figures, workloads)) if name in f and beside(r, name)]
        if not pairs:
            continue
        ratios = [p[0] for p in pairs]
        drift = max(f.get(name, value) for f in long_figures) / value
        ok = sum(1 for r in ratios if abs(r - 1) <= 0.15)
        ok_strict = sum(1 for _, r in pairs if abs(r - 1) <= 0.15)
        within, strict, total = within + ok, strict + ok_strict, total + len(ratios)
        of_medians = (statistics.median(f[name] for f in map(figures, workloads) if name in f)
                      / statistics.median(f[name] for f in long_figures if name in f))
        typical.append(of_medians)
        rows.append({"figure": name, "long_s": value, "long_disagree": drift, "ratios": ratios,
                     "ratios_to_fastest": [p[1] for p in pairs], "median_ratio": of_medians,
                     "first_blocks_bias": bias.get(name)})
        first = f"{bias[name]:.2f}" if name in bias else "-"
        print(f"| {name} | {value * 1000:.3g} ms | {drift:.2f} | {', '.join(f'{r:.2f}' for r in ratios)} "
              f"| {ok}/{len(ratios)} | {ok_strict}/{len(ratios)} | {of_medians:.2f} | {first} |")
    if total:
        every = [r for row in rows for r in row["ratios"]]
        drifts = [row["long_disagree"] for row in rows]
        print(f"\n{within} of {total} figures within 15 % of the long run beside them ({strict} of {total} of the "
              f"fastest long run); ratios {min(every):.2f}-{max(every):.2f}, median {statistics.median(every):.2f}. "
              f"The long runs disagreed among themselves by {statistics.median(drifts):.2f}x (median over "
              f"figures; {sum(1 for d in drifts if d > 1.15)} of {len(drifts)} figures by more than 15 %). "
              f"With the drift averaged over the rounds (the median --deep figure against the median long-run "
              f"figure), {sum(1 for r in typical if abs(r - 1) <= 0.15)} of {len(typical)} figures agree within "
              f"15 % (ratios {min(typical):.2f}-{max(typical):.2f}, median {statistics.median(typical):.2f}). "
              f"Inside the long runs, the best of as many blocks as a --deep run gets is within 15 % of the best "
              f"of all for {sum(1 for b in bias.values() if b <= 1.15)} of {len(bias)} figures (median "
              f"{statistics.median(bias.values()) if bias else float('nan'):.2f}): the part of the error that "
              f"fewer blocks alone make")
    if args.json_path:
        Path(args.json_path).write_text(json.dumps({"runs": runs, "medians": medians, "extra_s": extra,
                                                    "long_runs": [r for _, r in long_runs], "loads": loads,
                                                    "figures": rows,
                                                    "workloads": workloads}, indent=1))


if __name__ == "__main__":
    main()
