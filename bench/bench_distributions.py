"""What 5,000 installed distributions cost: the target collector's time and the JSON report's size.

Builds 5,000 fake distributions (dist-info directories with METADATA, RECORD, INSTALLER and WHEEL, one in ten
with an extension module, a few dozen of them requiring TensorFlow, like tensorflow-text or tensorflow-io would) in a temporary
directory put on the target's sys.path with PYTHONPATH, then times, in alternating rounds, the
target collector's child script with and without them, and measures `tfdoctor --json` both ways. `--shape`
says how they require each other: `hubs` (the default) as a big real environment, most requiring a few common
ones; `ring`, the worst case, each requiring the next three so that TensorFlow's dependents reach all of them.

    python bench/bench_distributions.py [--rounds 7] [--count 5000] [--shape hubs|ring] [--json results.json]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PYTHON = sys.executable
BODY = ("A package for the bench. " * 40 + "\n") * 4  # a long description, as real METADATA has


HUBS = 50  # SHAPES["hubs"]: the first 50 are what everything else requires (numpy, requests, six and the like)


def ring_requirements(index: int, count: int) -> list[str]:
    """Each requires the next three: one ring through all of them, so the 25 that require TensorFlow reach every
    other on their Requires-Dist closure (the worst case: the closure is the whole environment)."""
    return [f"fake-package-{(index + step) % count:05d}>={step}.0" for step in (1, 2, 3)]


def hub_requirements(index: int, count: int) -> list[str]:
    """As a big real environment is shaped: the first HUBS are required by everything else, each of the others requires
    two of them and one neighbour in its group of ten; a closure is a group and the hubs it reaches, not the whole."""
    if index < HUBS:
        return [f"fake-package-{index + 1:05d}>=1.0"] if index + 1 < HUBS else []
    group = index - index % 10
    neighbour = group + (index + 1) % 10
    return [f"fake-package-{index % HUBS:05d}>=1.0", f"fake-package-{(index * 7) % HUBS:05d}>=2.0",
            *([f"fake-package-{neighbour:05d}>=3.0"] if HUBS <= neighbour < count and neighbour != index else [])]


SHAPES = {"hubs": hub_requirements, "ring": ring_requirements}


def requires_tensorflow(index: int, shape: str) -> bool:
    """One in 200 (25 of 5,000), like tensorflow-text or tensorflow-io; among the hubs' dependents, not a hub (every
    distribution would then be TensorFlow's dependent)."""
    return index % 200 == (0 if shape == "ring" else 100)


def fake_distribution(root: Path, index: int, count: int, shape: str = "hubs") -> None:
    name = f"fake_package_{index:05d}"
    version = f"{index % 7}.{index % 13}.{index % 5}"
    info = root / f"{name}-{version}.dist-info"
    info.mkdir()
    requires = SHAPES[shape](index, count)
    if requires_tensorflow(index, shape):  # 25 of 5,000 require TensorFlow: they are recorded with their pins
        requires.append("tensorflow<2.22,>=2.20")
    headers = [
        "Metadata-Version: 2.1", f"Name: {name.replace('_', '-')}", f"Version: {version}",
        "Summary: a fake distribution for the bench", "Home-page: https://example.org/",
        "Author: bench", "License: MIT", "Classifier: Programming Language :: Python :: 3",
        "Requires-Python: >=3.8", *(f"Requires-Dist: {r}" for r in requires),
        "Description-Content-Type: text/markdown",
    ]
    (info / "METADATA").write_text("\n".join(headers) + "\n\n" + BODY)
    (info / "INSTALLER").write_text("pip\n")
    # every wheel leaves a WHEEL file; one in ten ships an extension module (its tags are then recorded)
    compiled = index % 10 == 0
    tag = "cp311-cp311-manylinux_2_17_x86_64" if compiled else "py3-none-any"
    (info / "WHEEL").write_text(f"Wheel-Version: 1.0\nGenerator: bdist_wheel (0.45.1)\nRoot-Is-Purelib: "
                                f"{'false' if compiled else 'true'}\nTag: {tag}\n\n")
    files = [f"{name}/__init__.py", f"{name}/core.py", f"{name}-{version}.dist-info/METADATA",
             f"{name}-{version}.dist-info/RECORD", f"{name}-{version}.dist-info/INSTALLER",
             f"{name}-{version}.dist-info/WHEEL", *([f"{name}/_speedups.cpython-311-x86_64-linux-gnu.so"] if compiled else [])]
    (info / "RECORD").write_text("".join(f"{path},sha256=abc,123\n" for path in files))
    if requires_tensorflow(index, shape):  # those the collector reads (collect/library_imports.py): their own files, ~40 kB of them
        package = root / name
        package.mkdir()
        (package / "__init__.py").write_text("import tensorflow as tf\n" + "x = 1  # a line of code\n" * 800)
        (package / "core.py").write_text("def f():\n    import tf_keras\n" + "y = 2  # a line of code\n" * 800)


def target_child_seconds(env: dict[str, str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one run of the target collector's child. CPU time is what the
    child itself spent, steady on a VM shared with other jobs where wall time is not."""
    from tfdoctor.child import source

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run([PYTHON, "-c", source("target_info")], env=env, check=True, capture_output=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def library_import_seconds(env: dict[str, str], cache: Path) -> tuple[float, float, int]:
    """(seconds of the first read of the libraries' own files, seconds of the next, cached, run, libraries read): the
    target collector's work after its child (collect/library_imports.py), on the distributions the child records."""
    from tfdoctor.child import source
    from tfdoctor.collect.library_imports import wanted, with_imports

    completed = subprocess.run([PYTHON, "-c", source("target_info")], env=env, check=True, capture_output=True)
    recorded = json.loads(completed.stdout.decode().strip().splitlines()[-1])["distributions"]
    timings = []
    for _ in range(2):
        started = time.perf_counter()
        with_imports([dict(entry) for entry in recorded], {"XDG_CACHE_HOME": str(cache)})
        timings.append(time.perf_counter() - started)
    return timings[0], timings[1], sum(1 for entry in recorded if wanted(entry))


def doctor_seconds(env: dict[str, str], skip: str) -> float:
    """One `tfdoctor --json` without the TensorFlow checks: the target collector is on the critical path
    (in a full run it overlaps the TensorFlow import)."""
    started = time.perf_counter()
    subprocess.run([PYTHON, "-m", "tfdoctor", "--json", "--skip", skip], env=env, capture_output=True)
    return time.perf_counter() - started


def report_bytes(env: dict[str, str]) -> tuple[int, int]:
    """(bytes of `tfdoctor --json --no-probe`, distributions it recorded)."""
    completed = subprocess.run([PYTHON, "-m", "tfdoctor", "--json", "--no-probe"], env=env, capture_output=True)
    document = json.loads(completed.stdout)
    return len(completed.stdout), len(document["facts"].get("distributions") or ())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--count", type=int, default=5000)
    parser.add_argument("--shape", choices=sorted(SHAPES), default="hubs",
                        help="how the fakes require each other: hubs (a big real environment), ring (all on one closure)")
    parser.add_argument("--doctor-rounds", type=int, default=3, help="rounds of the whole doctor run (slower)")
    parser.add_argument("--json", help="write the figures to this file too")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="tfdoctor-bench-dists-") as tmp:
        root = Path(tmp)
        started = time.perf_counter()
        for index in range(args.count):
            fake_distribution(root, index, args.count, args.shape)
        print(f"built {args.count} fake distributions ({args.shape}) in {time.perf_counter() - started:.1f} s")
        # the doctor's own cache (the libraries' imports) inside the bench's directory, not the user's
        plain = {**{k: v for k, v in os.environ.items() if k != "PYTHONPATH"}, "XDG_CACHE_HOME": str(root / ".cache")}
        loaded = {**plain, "PYTHONPATH": str(root)}
        target_child_seconds(loaded)  # warm the file cache: the installed case, not a cold disk
        without, with_fakes = [], []
        for _ in range(args.rounds):
            without.append(target_child_seconds(plain))
            with_fakes.append(target_child_seconds(loaded))
        base, heavy = statistics.median(w for w, _ in without), statistics.median(w for w, _ in with_fakes)
        base_cpu, heavy_cpu = statistics.median(c for _, c in without), statistics.median(c for _, c in with_fakes)
        first_read, cached_read, libraries = library_import_seconds(loaded, root / ".library-cache")
        from tfdoctor.checking.registry import all_checks

        skip = ",".join(c.id for c in all_checks() if "tensorflow" in c.needs + c.uses)
        run_without, run_with = [], []
        for _ in range(args.doctor_rounds):
            run_without.append(doctor_seconds(plain, skip))
            run_with.append(doctor_seconds(loaded, skip))
        run_base, run_heavy = statistics.median(run_without), statistics.median(run_with)
        size_plain, recorded_plain = report_bytes(plain)
        size_loaded, recorded_loaded = report_bytes(loaded)
    figures = {
        "count": args.count, "shape": args.shape, "rounds": args.rounds,
        "target_child_s": {"without": round(base, 3), "with": round(heavy, 3), "added": round(heavy - base, 3)},
        "target_child_cpu_s": {"without": round(base_cpu, 3), "with": round(heavy_cpu, 3),
                               "added": round(heavy_cpu - base_cpu, 3)},
        "doctor_without_tf_checks_s": {"without": round(run_base, 3), "with": round(run_heavy, 3),
                                       "added": round(run_heavy - run_base, 3)},
        "report_bytes": {"without": size_plain, "with": size_loaded},
        "distributions_recorded": {"without": recorded_plain, "with": recorded_loaded},
        "library_imports_s": {"libraries": libraries, "first": round(first_read, 3), "cached": round(cached_read, 3)},
    }
    print(f"target collector child, median of {args.rounds}: {base:.3f} s without, {heavy:.3f} s with "
          f"{args.count} distributions: +{heavy - base:.3f} s (goal: at most +0.3 s); CPU time "
          f"{base_cpu:.3f} s -> {heavy_cpu:.3f} s: +{heavy_cpu - base_cpu:.3f} s")
    print(f"tfdoctor --json --skip <TF checks>, median of {args.doctor_rounds}: {run_base:.3f} s without, {run_heavy:.3f} s "
          f"with: +{run_heavy - run_base:.3f} s")
    print(f"tfdoctor --json --no-probe: {size_plain / 1024:.1f} KiB without, {size_loaded / 1024:.1f} KiB with "
          f"(goal: under 200 KiB); distributions recorded: {recorded_plain} -> {recorded_loaded}")
    print(f"libraries' own files read (collect/library_imports.py): {libraries} libraries, {first_read:.3f} s the first "
          f"run, {cached_read:.3f} s cached (one RECORD each)")
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
