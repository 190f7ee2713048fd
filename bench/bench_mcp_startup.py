"""Start-up of `import tfdoctor` and the plain CLI, before and after `tfdoctor mcp` (issue 27).

The server lives in an optional package (tfdoctor/servers/) that only `tfdoctor mcp` imports, so nothing
else may get slower, with the SDK installed or not. This times, in alternating rounds, each command from two
source trees: this checkout and a git ref (default: main, which has no server until this branch is merged),
extracted with `git archive` into a temporary directory and put first on PYTHONPATH (the editable install's
finder comes after sys.path, so the tree on PYTHONPATH is the one imported). It also checks, in each run, that neither
the SDK nor tfdoctor.servers was imported, and times `tfdoctor mcp` itself up to its answer to
`initialize`, for scale.

    python bench/bench_mcp_startup.py [--ref main] [--rounds 15] [--json results.json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable

# Each probe prints whether the SDK or the servers package got imported; the timing is the whole process.
CHECK = ("import sys; loaded = [m for m in sys.modules if m.split('.')[0] in ('mcp', 'mcp_types', 'anyio') "
         "or m.startswith('tfdoctor.servers')]; sys.stderr.write('LOADED=%r\\n' % loaded)")
COMMANDS = {
    "import tfdoctor": f"import tfdoctor\n{CHECK}",
    "import tfdoctor + API": f"import tfdoctor; tfdoctor.diagnose, tfdoctor.explain\n{CHECK}",
    "tfdoctor --version": ("import atexit, sys\natexit.register(lambda: exec(" + repr(CHECK) + "))\n"
                           "sys.argv = ['tfdoctor', '--version']\nfrom tfdoctor.__main__ import main\nmain()"),
    "tfdoctor --list": ("import atexit, sys\natexit.register(lambda: exec(" + repr(CHECK) + "))\n"
                        "sys.argv = ['tfdoctor', '--list']\nfrom tfdoctor.__main__ import main\nmain()"),
}


def extract(ref: str, into: Path) -> Path:
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", ref], capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into


def timed(tree: Path, code: str) -> tuple[float, list[str]]:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    started = time.perf_counter()
    done = subprocess.run([PYTHON, "-c", code], capture_output=True, text=True, env=env, cwd=tempfile.gettempdir(),
                          timeout=120)
    seconds = time.perf_counter() - started
    loaded = next((line for line in done.stderr.splitlines() if line.startswith("LOADED=")), "LOADED=?")
    if done.returncode not in (0,) or loaded == "LOADED=?":
        raise SystemExit(f"{code!r} in {tree} failed: {done.stderr[-2000:]}")
    return seconds, eval(loaded.split("=", 1)[1])  # noqa: S307 - our own repr of a list of names


def server_ready_s() -> float:
    """`tfdoctor mcp` from start to its answer to `initialize` (the SDK imported), on this checkout."""
    request = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
               "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                          "clientInfo": {"name": "bench", "version": "0"}}}
    started = time.perf_counter()
    process = subprocess.Popen([PYTHON, "-m", "tfdoctor", "mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, cwd=tempfile.gettempdir())
    process.stdin.write((json.dumps(request) + "\n").encode())
    process.stdin.flush()
    line = process.stdout.readline()
    seconds = time.perf_counter() - started
    process.stdin.close()
    process.wait(timeout=30)
    assert json.loads(line)["id"] == 1, line
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ref", default="main", help="the git ref to compare with (without the MCP server)")
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--json", metavar="FILE")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="mcp-bench-") as scratch:
        trees = {"before": extract(args.ref, Path(scratch)), "now": ROOT}
        samples: dict[tuple[str, str], list[float]] = {(c, t): [] for c in COMMANDS for t in trees}
        for tree_name, tree in trees.items():  # one warm-up each (bytecode caches)
            for code in COMMANDS.values():
                timed(tree, code)
        for round_number in range(args.rounds):
            order = list(trees.items()) if round_number % 2 == 0 else list(reversed(trees.items()))
            for command, code in COMMANDS.items():
                for tree_name, tree in order:
                    seconds, loaded = timed(tree, code)
                    if loaded:
                        raise SystemExit(f"{command} ({tree_name}) imported {loaded}")
                    samples[(command, tree_name)].append(seconds)
        ready = [server_ready_s() for _ in range(3)]
    results = {}
    print(f"{'command':<24} {'before ms':>10} {'now ms':>10} {'now/before':>11}   (median of {args.rounds} rounds; "
          f"load average {os.getloadavg()[0]:.1f})")
    for command in COMMANDS:
        before = statistics.median(samples[(command, "before")]) * 1000
        now = statistics.median(samples[(command, "now")]) * 1000
        results[command] = {"before_ms": round(before, 1), "now_ms": round(now, 1), "ratio": round(now / before, 3)}
        print(f"{command:<24} {before:>10.1f} {now:>10.1f} {now / before:>11.3f}")
    results["tfdoctor mcp until initialize answered"] = {"now_ms": round(statistics.median(ready) * 1000, 1)}
    print(f"{'tfdoctor mcp (initialize)':<24} {'':>10} {statistics.median(ready) * 1000:>10.1f}   (for scale: "
          "the SDK is imported only here)")
    print("No run of the plain commands imported mcp, mcp_types, anyio or tfdoctor.servers.")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
