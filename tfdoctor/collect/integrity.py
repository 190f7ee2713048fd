"""Install integrity and installer facts, from a child of the target interpreter (no imports there).

The child (tfdoctor/child/integrity.py) checks the TensorFlow-family files against their RECORD and
records the installers (pip, conda) and the wheel tags of those distributions. It runs at a lower
priority next to the TensorFlow import; sha256 of native libraries stops at HASH_BUDGET_S (measured
by bench/bench_integrity.py). Installer facts are cheap and always recorded, because every check's
install commands depend on them (tfdoctor.environment.pip); file verification only when a selected check
needs the `integrity` section.
"""

from __future__ import annotations

import json
from typing import Any

from tfdoctor.child import source
from tfdoctor.collect.options import CollectOptions
from tfdoctor.processes.commands import run_command

# Seconds of sha256 over native libraries, smallest first. About 1 GB/s on one core of the 2-core CI
# VM: 0.3 s covers every library of a tensorflow-cpu 2.21 environment except libtensorflow_cc.so.2
# (750 MiB) and keeps the full run within the bench's bound (bench/bench_integrity.py).
HASH_BUDGET_S = 0.3
# Without the TensorFlow child (its checks skipped or not selected) this child is the run's critical
# path: hashing gets a tenth of a second, so such a run stays within 0.4 s (bench/bench.py). The report
# says what the budget stopped.
HASH_BUDGET_ALONE_S = 0.1
CHILD_TIMEOUT_S = 30.0


def command(python: str, sections: frozenset[str] | set[str], budget_s: float | None = None) -> list[str]:
    """The child's command line for a run whose checks need `sections` (also started early, before the
    command line is parsed: tfdoctor/__main__.py)."""
    beside_tensorflow = "tensorflow" in sections
    if budget_s is None:
        budget_s = HASH_BUDGET_S if beside_tensorflow else HASH_BUDGET_ALONE_S
    # niced only beside the TensorFlow import, whose CPU it must not take; alone it is the critical path
    argument = json.dumps({"budget_s": budget_s, "verify": "integrity" in sections, "nice": beside_tensorflow})
    return [*command_without_options(python), argument]


def command_without_options(python: str) -> list[str]:
    """The child's command line less its options; given "-" instead, the child reads them on stdin."""
    return [python, "-c", source("integrity")]


def collect_integrity(options: CollectOptions, budget_s: float | None = None) -> dict[str, Any]:
    # run_command: a timeout, its own session, and killed with the other children on an interrupt
    ran = run_command(command(options.python, options.sections, budget_s), CHILD_TIMEOUT_S, options.environ)
    if ran["status"] != "ok":
        tail = ran["stderr"].strip().splitlines()[-1:] or ["no output"]
        raise RuntimeError(f"integrity child {ran['status']} (exit code {ran['exit_code']}): {tail[0]}")
    found = json.loads(ran["stdout"].strip().splitlines()[-1])
    return {name: found[name] for name in ("integrity", "installers") if name in found}
