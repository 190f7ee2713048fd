"""What the AutoGraph use probe costs in every run where TensorFlow imports (issue 29): the TensorFlow child
converts one function with Python control flow (tf.autograph.to_graph) after tf.keras; this times that stage
from the child's own stage marks, on the target interpreter (default: this one), a few runs, no probe.

    python bench/bench_autograph.py [--python PATH] [--runs 3]

A healthy environment pays the conversion (~0.05-0.1 s beside a multi-second `import tensorflow`); a broken
one (gast 0.2.2 under TensorFlow 2.21) fails faster, plus reading the failing files' imports.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tfdoctor.collect.options import CollectOptions  # noqa: E402
from tfdoctor.collect.tensorflow import collect_tensorflow  # noqa: E402


def stage_seconds(stages: list, name: str) -> float | None:
    """Seconds from the stage's mark to the next one's."""
    marks = [(str(s), float(t)) for s, t in stages]
    for index, (stage, at) in enumerate(marks[:-1]):
        if stage == name:
            return marks[index + 1][1] - at
    return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    autograph, imports, statuses = [], [], set()
    for _ in range(args.runs):
        facts = collect_tensorflow(CollectOptions(python=args.python, probe=False))["tensorflow"]
        seconds = stage_seconds(facts["stages"], "autograph")
        if seconds is None:
            sys.exit(f"no autograph stage: the child ended at {facts.get('stage')} ({facts.get('status')})")
        autograph.append(seconds)
        imports.append(float(facts.get("import_s") or 0.0))
        statuses.add((facts.get("autograph") or {}).get("status"))
    print(f"{args.python}: AutoGraph conversion {'/'.join(sorted(map(str, statuses)))}: median "
          f"{statistics.median(autograph) * 1000:.0f} ms (max {max(autograph) * 1000:.0f} ms) over {args.runs} runs; "
          f"`import tensorflow` median {statistics.median(imports):.1f} s")


if __name__ == "__main__":
    main()
