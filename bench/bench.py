"""Measure what tfdoctor costs next to the floor: one bare `import tensorflow` in the same interpreter.

Runs each command in alternating rounds (so drift hits all alike), prints medians and ratios to the
floor, then the probe's own figures: its CPU GFLOPS against the best of five long matmul runs of the
same size measured separately, and its run-to-run spread over the full runs.

    python bench/bench.py [--rounds 5] [--json results.json]
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import os
import subprocess
import sys
import time

PYTHON = sys.executable

# Long matmul runs of size N in a separate process: the reference the probe's CPU figure must match.
REFERENCE = r"""
import json, sys, time
import numpy as np
import tensorflow as tf
n, runs, seconds = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
rng = np.random.default_rng(0)
with tf.device("/CPU:0"):
    a = tf.constant(rng.standard_normal((n, n), dtype=np.float32))
    b = tf.constant(rng.standard_normal((n, n), dtype=np.float32))
    tf.linalg.matmul(a, b).numpy()
    best = []
    for _ in range(runs):
        calls, started = 0, time.perf_counter()
        while time.perf_counter() - started < seconds:
            tf.linalg.matmul(a, b).numpy()
            calls += 1
        best.append(2 * n ** 3 * calls / (time.perf_counter() - started) / 1e9)
print(json.dumps(best))
"""


def tensorflow_checks() -> list[str]:
    from tfdoctor.registry import all_checks

    return [c.id for c in all_checks() if "tensorflow" in (*c.needs, *c.uses)]


def commands() -> dict[str, list[str]]:
    doctor = [PYTHON, "-m", "tfdoctor"]
    return {
        "import tensorflow (floor)": [PYTHON, "-c", "import tensorflow"],
        "tfdoctor --json": doctor + ["--json"],
        "tfdoctor --json --no-probe": doctor + ["--json", "--no-probe"],
        "tfdoctor --json --skip <TF checks>": doctor + ["--json", "--skip", ",".join(tensorflow_checks())],
        "tfdoctor --version": doctor + ["--version"],
        "tfdoctor --list": doctor + ["--list"],
    }


# Users' Pythons cache bytecode; a shell with PYTHONDONTWRITEBYTECODE set would compile every module of
# TensorFlow and of the doctor on each run and measure that instead.
TIMED_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def timed(argv: list[str]) -> tuple[float, str]:
    started = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, env=TIMED_ENV)
    elapsed = time.perf_counter() - started
    if done.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(argv)} exited {done.returncode}: {done.stderr.strip()[-300:]}")
    return elapsed, done.stdout


def cpu_probe(report: dict) -> dict | None:
    probe = ((report.get("facts") or {}).get("tensorflow") or {}).get("probe") or {}
    return (probe.get("sides") or {}).get("cpu")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--json", dest="json_path", help="also write the figures to this file")
    args = parser.parse_args()

    runs = commands()
    times: dict[str, list[float]] = {name: [] for name in runs}
    probes: list[dict] = []
    for argv in runs.values():  # warm the file and bytecode caches once, untimed
        timed(argv)
    for _ in range(args.rounds):
        for name, argv in runs.items():
            elapsed, out = timed(argv)
            times[name].append(elapsed)
            if name == "tfdoctor --json":
                probe = cpu_probe(json.loads(out))
                if probe:
                    probes.append(probe)

    floor = statistics.median(times["import tensorflow (floor)"])
    print(f"machine: {platform.machine()}, {platform.system()} {platform.release()}, "
          f"Python {platform.python_version()}, {args.rounds} rounds")
    print(f"{'command':<38} {'median s':>9} {'min s':>7} {'x floor':>8}")
    figures: dict = {"rounds": args.rounds, "commands": {}}
    for name, values in times.items():
        median = statistics.median(values)
        print(f"{name:<38} {median:>9.3f} {min(values):>7.3f} {median / floor:>8.2f}")
        figures["commands"][name] = {"median_s": median, "min_s": min(values), "ratio_to_floor": median / floor}

    if probes:
        gflops = [p["gflops_best"] for p in probes]  # the probe's reported figure
        medians = [p["gflops_median"] for p in probes]
        n = probes[0]["n"]
        reference = json.loads(subprocess.run([PYTHON, "-c", REFERENCE, str(n), "5", "2.0"],
                                              capture_output=True, text=True, check=True).stdout)
        best = max(reference)
        median_probe = statistics.median(gflops)
        print(f"\nprobe CPU GFLOPS at N={n}: median {median_probe:.1f} over {len(gflops)} runs, "
              f"spread max/min {max(gflops) / min(gflops):.3f}")
        print(f"(the median block instead: median {statistics.median(medians):.1f}, "
              f"spread max/min {max(medians) / min(medians):.3f})")
        print(f"reference (5 runs x 2 s, same N): best {best:.1f} GFLOPS; "
              f"probe/best = {median_probe / best:.3f}")
        figures["probe"] = {"n": n, "gflops": gflops, "gflops_median_block": medians,
                            "spread": max(gflops) / min(gflops),
                            "reference_gflops": reference, "probe_over_best": median_probe / best}
    if args.json_path:
        with open(args.json_path, "w") as handle:
            json.dump(figures, handle, indent=2)


if __name__ == "__main__":
    main()
