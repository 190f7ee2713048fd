"""What the TensorFlow child's companion imports cost where no companion is installed (issue 19: at most 0.1 s).

The child (tfdoctor/child/tf_child.py companion_imports) looks for each companion with
importlib.util.find_spec and imports only those installed. This bench runs that function in a fresh
process of the target interpreter, after `import tensorflow` as in the child, with the real list
(tfdoctor.facts.tensorflow_child.COMPANION_MODULES): the first call (cold finder caches for these names) and the
median of later calls; then the same in a process that has not imported TensorFlow (sys.path's
directories not yet listed by the path finder), the worst case.

    python bench/bench_companions.py [--python PATH] [--rounds 20]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

DRIVER = """
import json, os, statistics, sys, time
config = json.loads(sys.argv[1])
if config["import_tensorflow"]:
    import tensorflow  # noqa: F401  as in the child: the companions come after TensorFlow
namespace = {"__name__": "tf_child"}
exec(compile(sys.stdin.read(), "tf_child", "exec"), namespace)
recorder = namespace["Recorder"](config["out"])
config["deadline"] = time.perf_counter() + 60.0
times = []
for _ in range(config["rounds"]):
    started = time.perf_counter()
    namespace["companion_imports"](recorder, config)
    times.append(time.perf_counter() - started)
print(json.dumps({"first": times[0], "median_later": statistics.median(times[1:]) if len(times) > 1 else None,
                  "found": [e["module"] for e in recorder.data["companions"]]}))
os._exit(0)
"""


def measure(python: str, rounds: int, import_tensorflow: bool) -> dict:
    from tfdoctor.child import source
    from tfdoctor.facts.tensorflow_child import COMPANION_MODULES

    with tempfile.TemporaryDirectory() as scratch:
        config = {"out": str(Path(scratch) / "result.json"), "companions": list(COMPANION_MODULES),
                  "rounds": rounds, "import_tensorflow": import_tensorflow}
        completed = subprocess.run([python, "-c", DRIVER, json.dumps(config)], input=source("tf_child"),
                                   capture_output=True, text=True, cwd=scratch, timeout=300)
    if completed.returncode != 0:
        raise SystemExit(completed.stderr[-2000:])
    return json.loads(completed.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--rounds", type=int, default=20)
    args = parser.parse_args()
    for after_tensorflow in (True, False):
        result = measure(args.python, args.rounds, after_tensorflow)
        where = "after import tensorflow" if after_tensorflow else "without TensorFlow imported (worst case)"
        print(f"companion imports, {where}: first call {result['first'] * 1000:.2f} ms, later calls median "
              f"{result['median_later'] * 1000:.2f} ms; companions found: {', '.join(result['found']) or 'none'}")
    print("goal: at most 100 ms where no companion is installed")


if __name__ == "__main__":
    main()
