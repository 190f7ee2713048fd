"""`tfdoctor scan DIR` over twenty real environments against twenty single runs of the same environments.

The environments (tests/scan_support.py: hard-link copies of this venv's tensorflow-cpu broken a dozen
ways, three healthy, fresh venvs without TensorFlow, interpreters that cannot start) are built once. Each
round times `tfdoctor --python ENV --no-probe --json` for every environment one after another, and
`tfdoctor scan DIR --json` (the order alternates between rounds), checks that the scan gives every
environment the verdict of its single run (exit code, every check's status, or the reason it could not
run), and compares the scan's time with the issue's bound: the sum of the single runs divided by the cores,
plus 20 %. The load average is printed beside the figures: on a shared machine it says how much of the
cores the runs had.

    python bench/bench_scan.py [--rounds 3] [--dir DIR (kept, reused)] [--jobs N] [--json results.json]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests import scan_support  # noqa: E402
from tfdoctor.scan.find import interpreter  # noqa: E402
from tfdoctor.scan.run import cores  # noqa: E402

PYTHON = sys.executable
BOUND = 1.2  # the issue: within the sum of single runs / cores, plus 20 %


def environ() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "VIRTUAL_ENV"}}


def child_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def single(python: str, cwd: Path) -> tuple[float, float, dict]:
    """(wall s, CPU s, verdict) of `tfdoctor --python PYTHON --no-probe --json`."""
    cpu, started = child_cpu(), time.perf_counter()
    done = subprocess.run([PYTHON, "-m", "tfdoctor", "--python", python, "--no-probe", "--json"], capture_output=True,
                          text=True, cwd=str(cwd), env=environ(), timeout=600)
    wall, cpu = time.perf_counter() - started, child_cpu() - cpu
    if done.returncode == 2:
        reason = done.stderr.strip().splitlines()[-1].removeprefix("tfdoctor: error: ")
        return wall, cpu, {"exit_code": 2, "reason": reason}
    document = json.loads(done.stdout)
    return wall, cpu, {"exit_code": done.returncode, "results": {r["id"]: r["status"] for r in document["results"]}}


def scan(directory: Path, cwd: Path, jobs: int | None) -> tuple[float, float, dict[str, dict]]:
    """(wall s, CPU s, {python: verdict}) of `tfdoctor scan DIR --json`."""
    argv = [PYTHON, "-m", "tfdoctor", "scan", str(directory), "--json", "--no-redact"]
    argv += ["--jobs", str(jobs)] if jobs else []
    cpu, started = child_cpu(), time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, cwd=str(cwd), env=environ(), timeout=1800)
    wall, cpu = time.perf_counter() - started, child_cpu() - cpu
    rows = json.loads(done.stdout)["environments"]
    verdicts = {}
    for row in rows:
        verdict = {"exit_code": row["exit_code"]}
        verdict.update({"reason": row["reason"]} if row["exit_code"] == 2 else {"results": row["results"]})
        verdicts[row["python"]] = verdict
    return wall, cpu, verdicts


def same_verdict(scanned: dict | None, single_run: dict) -> bool:
    """The same exit code and, where the doctor ran, every check's status. Where it could not run the
    reason's wording is not compared: the target and TensorFlow collectors both notice an unusable
    interpreter and whichever is first words it (`cannot run X: Exec format error` or `[Errno 8] ...`)."""
    if scanned is None or scanned["exit_code"] != single_run["exit_code"]:
        return False
    return single_run["exit_code"] == 2 or scanned["results"] == single_run["results"]


def short(verdict: dict) -> str:
    if verdict["exit_code"] == 2:
        return "cannot run"
    failing = [k for k, v in verdict["results"].items() if v in ("fail", "error")]
    warning = [k for k, v in verdict["results"].items() if v == "warn"]
    return f"exit {verdict['exit_code']}" + (f" fail: {','.join(failing)}" if failing else "") + (
        f" warn: {','.join(warning)}" if warning else "")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--dir", type=Path, help="build the environments here (kept) or reuse them")
    parser.add_argument("--jobs", type=int, default=None, help="passed to tfdoctor scan (default: its own)")
    parser.add_argument("--json", type=Path, help="write every figure here")
    args = parser.parse_args()

    directory = args.dir or Path(tempfile.mkdtemp(prefix="tfdoctor-scan-bench-"))
    cases = scan_support.twenty()
    built_here = not all((directory / case.name / "env").exists() for case in cases)
    started = time.perf_counter()
    if built_here:
        shutil.rmtree(directory, ignore_errors=True)
        directory.mkdir(parents=True)
        envs = scan_support.build_all(cases, directory)
    else:
        envs = {case.name: directory / case.name / "env" for case in cases}
    print(f"{len(envs)} environments in {directory} ({'built' if built_here else 'reused'} in "
          f"{time.perf_counter() - started:.1f} s); {cores()} cores; tfdoctor scan --jobs {args.jobs or 'default'}")
    pythons = {name: str(interpreter(env)) for name, env in envs.items()}
    neutral = Path(tempfile.mkdtemp(prefix="tfdoctor-scan-cwd-"))

    rounds = []
    for index in range(args.rounds):
        load_before = os.getloadavg()
        singles, scanned = {}, None

        def run_singles() -> None:
            for name, python in pythons.items():
                singles[name] = single(python, neutral)

        if index % 2 == 0:
            run_singles()
            scanned = scan(directory, neutral, args.jobs)
        else:
            scanned = scan(directory, neutral, args.jobs)
            run_singles()
        load_after = os.getloadavg()
        scan_wall, scan_cpu, scan_verdicts = scanned
        total = sum(wall for wall, _, _ in singles.values())
        bound = total / cores() * BOUND
        mismatches = [name for name, (_, _, verdict) in singles.items()
                      if not same_verdict(scan_verdicts.get(pythons[name]), verdict)]
        missing = len(pythons) - len(scan_verdicts)
        rounds.append({"round": index + 1, "singles_s": {n: round(w, 3) for n, (w, _, _) in singles.items()},
                       "singles_sum_s": round(total, 2), "singles_cpu_s": round(sum(c for _, c, _ in singles.values()), 2),
                       "scan_s": round(scan_wall, 2), "scan_cpu_s": round(scan_cpu, 2), "bound_s": round(bound, 2),
                       "within_bound": scan_wall <= bound, "mismatches": mismatches, "listed": len(scan_verdicts),
                       "missing": missing, "load_before": load_before, "load_after": load_after,
                       "verdicts": {n: short(v) for n, (_, _, v) in singles.items()}})
        print(f"round {index + 1}: singles {total:.1f} s (CPU {rounds[-1]['singles_cpu_s']:.1f} s), scan {scan_wall:.1f} s "
              f"(CPU {scan_cpu:.1f} s), bound {bound:.1f} s -> {scan_wall / (total / cores()):.2f} x sum/cores, "
              f"{'within' if scan_wall <= bound else 'OVER'}; verdicts: {len(pythons) - len(mismatches) - missing} of "
              f"{len(pythons)} the same{' (differ: ' + ', '.join(mismatches) + ')' if mismatches else ''}; "
              f"load {load_before[0]:.1f} -> {load_after[0]:.1f}")

    print("\nper environment (first round): single-run seconds, verdict")
    first = rounds[0]
    for name in pythons:
        print(f"  {name:<28} {first['singles_s'][name]:6.2f} s  {first['verdicts'][name]}")
    ratios = [r["scan_s"] / (r["singles_sum_s"] / cores()) for r in rounds]
    print(f"\nscan / (sum of singles / {cores()} cores): median {statistics.median(ratios):.2f} "
          f"(rounds: {', '.join(f'{x:.2f}' for x in ratios)}); the bound is {BOUND:.2f}")
    if args.json:
        args.json.write_text(json.dumps({"directory": str(directory), "cores": cores(), "rounds": rounds}, indent=2))
    shutil.rmtree(neutral, ignore_errors=True)
    if not args.dir:
        shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    main()
