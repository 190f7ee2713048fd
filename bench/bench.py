"""Measure what tfdoctor costs next to the floor: one bare `import tensorflow` in the same interpreter.

Runs each command in alternating rounds (so drift hits all alike), prints medians and ratios to the
floor (wall and CPU time), each stage's share of the doctor's runs, then the probe's own figures: its
CPU GFLOPS against the best of five long matmul runs of the same size measured separately, and its
run-to-run spread over the full runs.

    python bench/bench.py [--rounds 5] [--json results.json]
"""

from __future__ import annotations

import argparse
import json
import platform
import resource
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
    from tfdoctor.checking.registry import all_checks

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


def cpu_of_children() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(argv: list[str], cpu: list[float] | None = None) -> tuple[float, str]:
    """Wall seconds and stdout of one run; its CPU seconds (user + sys, its reaped children included)
    are appended to `cpu`: on a shared machine they vary less than the wall time."""
    started, cpu_before = time.perf_counter(), cpu_of_children()
    done = subprocess.run(argv, capture_output=True, text=True, env=TIMED_ENV)
    elapsed = time.perf_counter() - started
    if cpu is not None:
        cpu.append(cpu_of_children() - cpu_before)
    if done.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(argv)} exited {done.returncode}: {done.stderr.strip()[-300:]}")
    return elapsed, done.stdout


def cpu_probe(report: dict) -> dict | None:
    probe = ((report.get("facts") or {}).get("tensorflow") or {}).get("probe") or {}
    return (probe.get("sides") or {}).get("cpu")


def child_stages(tensorflow: dict) -> dict[str, float]:
    """Seconds of each part of the TensorFlow child's life, from the stage marks it records (seconds
    since it started): interpreter start-up is what its duration holds before the first mark and after
    the last one (os._exit; the parent's reaping)."""
    marks = [(name, at) for name, at in tensorflow.get("stages") or ()]
    parts: dict[str, float] = {}
    group = lambda name: ("import" if name in ("started", "importing") else
                          "devices" if name in ("imported", "devices", "listed") else
                          "probe" if name.startswith("probe") else
                          "companions" if name.startswith("companion:") else name)  # noqa: E731
    for (name, at), (_, following) in zip(marks, marks[1:]):
        parts[group(name)] = parts.get(group(name), 0.0) + following - at
    if marks and tensorflow.get("duration_s"):
        parts["start-up and exit"] = tensorflow["duration_s"] - marks[-1][1]
    return parts


def stage_shares(report: dict, wall: float) -> dict[str, float]:
    """Seconds of one run by stage: the TensorFlow child's parts (the critical path when it runs), the
    other collectors (beside it; on the critical path only when it does not run) and the doctor's own
    time on the critical path: the run's wall time less its slowest collector."""
    facts = report.get("facts") or {}
    durations = {name: ms / 1000 for name, ms in ((facts.get("collection") or {}).get("durations_ms") or {}).items()}
    stages: dict[str, float] = {}
    if "tensorflow" in durations:
        stages.update({f"tf child: {name}": s for name, s in child_stages(facts.get("tensorflow") or {}).items()})
    stages.update({f"collector {name} (beside)": s for name, s in durations.items() if name != "tensorflow"})
    stages["doctor's own (wall - slowest collector)"] = wall - max(durations.values(), default=0.0)
    return stages


def print_stages(name: str, runs: list[dict[str, float]], wall: float) -> dict[str, float]:
    medians = {stage: statistics.median(run.get(stage, 0.0) for run in runs) for stage in runs[0]}
    print(f"\n{name}: stages (median s, share of the median wall {wall:.3f} s)")
    for stage, seconds in medians.items():
        if seconds >= 0.0005:
            print(f"  {stage:<46} {seconds:>7.3f} {seconds / wall:>6.0%}")
    return medians


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--json", dest="json_path", help="also write the figures to this file")
    args = parser.parse_args()

    runs = commands()
    times: dict[str, list[float]] = {name: [] for name in runs}
    cpu: dict[str, list[float]] = {name: [] for name in runs}
    probes: list[dict] = []
    stages: dict[str, list[dict[str, float]]] = {}
    for argv in runs.values():  # warm the file and bytecode caches once, untimed
        timed(argv)
    for _ in range(args.rounds):
        for name, argv in runs.items():
            elapsed, out = timed(argv, cpu[name])
            times[name].append(elapsed)
            if name.startswith("tfdoctor --json"):
                stages.setdefault(name, []).append(stage_shares(json.loads(out), elapsed))
            if name == "tfdoctor --json":
                probe = cpu_probe(json.loads(out))
                if probe:
                    probes.append(probe)

    floor = statistics.median(times["import tensorflow (floor)"])
    print(f"machine: {platform.machine()}, {platform.system()} {platform.release()}, "
          f"Python {platform.python_version()}, {args.rounds} rounds")
    cpu_floor = statistics.median(cpu["import tensorflow (floor)"])
    print(f"{'command':<38} {'median s':>9} {'min s':>7} {'x floor':>8} {'CPU s':>7} {'x floor':>8}")
    figures: dict = {"rounds": args.rounds, "commands": {}}
    for name, values in times.items():
        median = statistics.median(values)
        cpu_median = statistics.median(cpu[name])
        print(f"{name:<38} {median:>9.3f} {min(values):>7.3f} {median / floor:>8.2f} "
              f"{cpu_median:>7.3f} {cpu_median / cpu_floor:>8.2f}")
        figures["commands"][name] = {"median_s": median, "min_s": min(values), "ratio_to_floor": median / floor,
                                     "cpu_median_s": cpu_median, "cpu_ratio_to_floor": cpu_median / cpu_floor}

    figures["stages"] = {name: print_stages(name, runs, statistics.median(times[name]))
                         for name, runs in stages.items()}

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
