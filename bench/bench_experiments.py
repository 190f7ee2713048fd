"""What the offline experiments cost (issue 29: 0 s on a healthy environment, at most 30 s on a broken one),
and that a plain run never touches the network.

Runs `tfdoctor --json --no-probe` on the target interpreter (default: this one) as it is (healthy), then
broken by its environment only, never by its files: PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION=cpp (protobuf's
upb build has no cpp implementation), KERAS_HOME at a keras.json naming the jax backend, and LD_LIBRARY_PATH
first holding another build of libtensorflow_framework.so.2 (built here when a C compiler is found). Each
run is in a new network namespace with no interface but a down loopback (`unshare -rn`, when it works here),
so any connection would fail; besides, every trial's audit hook records any socket use (`network`).
Prints per run: the whole run's seconds, the experiments' seconds and trials, what they proved.

    python bench/bench_experiments.py [--python PATH] [--budget 30] [--no-unshare]
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# The console script beside this interpreter (an editable install is the source tree): no PYTHONPATH, which
# the target's children would inherit (a variable the experiments would then try too).
DOCTOR = [str(Path(sys.executable).with_name("tfdoctor"))]


def isolated_network() -> list[str]:
    """`unshare -rn` when it works here (a user namespace with no network), else nothing."""
    unshare = shutil.which("unshare")
    if unshare and subprocess.run([unshare, "-rn", "true"], capture_output=True).returncode == 0:
        return [unshare, "-rn"]
    return []


def stub_library(where: Path) -> Path | None:
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        return None
    (where / "stub.c").write_text("int tfdoctor_other_build(void) { return 2; }\n", encoding="utf-8")
    subprocess.run([compiler, "-shared", "-fPIC", "-Wl,-soname,libtensorflow_framework.so.2", "-o",
                    str(where / "libtensorflow_framework.so.2"), str(where / "stub.c")], check=True)
    return where


def run(python: str, budget: float, extra: dict[str, str], prefix: list[str], scratch: Path) -> dict:
    import os

    env = {k: v for k, v in os.environ.items() if k not in {"TF_USE_LEGACY_KERAS", "KERAS_HOME", "LD_LIBRARY_PATH",
                                                            "PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION"}}
    env.pop("PYTHONPATH", None)
    env.update(extra)
    started = time.monotonic()
    completed = subprocess.run([*prefix, *DOCTOR, "--python", python, "--json", "--no-probe",
                                "--experiments-timeout", str(budget)], capture_output=True, text=True, env=env,
                               cwd=scratch, timeout=600)
    seconds = time.monotonic() - started
    report = json.loads(completed.stdout)
    section = report["facts"].get("experiments")
    problems = [f"{r['id']}:{r['status']}" for r in report["results"] if r["status"] in ("fail", "warn", "error")]
    return {"exit": completed.returncode, "seconds": round(seconds, 1), "problems": problems,
            "experiment_seconds": section["seconds"] if section else 0.0,
            "trials": len(section["trials"]) if section else 0,
            "stopped": section["stopped"] if section else None,
            "proved": [p["description"] for p in section["proofs"]] if section else [],
            "network": sorted({e for t in (section or {}).get("trials", ()) for e in t["network"]})}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--budget", type=float, default=30.0)
    parser.add_argument("--no-unshare", action="store_true", help="run with the machine's network")
    args = parser.parse_args()
    prefix = [] if args.no_unshare else isolated_network()
    print(f"network: {'none (unshare -rn)' if prefix else 'the machine’s (no unshare here)'}; budget {args.budget} s")
    with tempfile.TemporaryDirectory(prefix="tfdoctor-bench-experiments-") as scratch_name:
        scratch = Path(scratch_name)
        keras_home = scratch / "keras-home"
        keras_home.mkdir()
        (keras_home / "keras.json").write_text(json.dumps({"backend": "jax", "floatx": "float32"}), encoding="utf-8")
        (scratch / "lib").mkdir()
        cases = {"healthy": {}, "PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION=cpp": {"PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION": "cpp"},
                 "keras.json backend jax": {"KERAS_HOME": str(keras_home)}}
        stub = stub_library(scratch / "lib")
        if stub is not None:
            cases["LD_LIBRARY_PATH other libtensorflow_framework"] = {"LD_LIBRARY_PATH": str(stub)}
        failed = False
        for name, extra in cases.items():
            seen = run(args.python, args.budget, extra, prefix, scratch)
            print(f"{name}: run {seen['seconds']} s, experiments {seen['experiment_seconds']:.1f} s in {seen['trials']} "
                  f"trials ({seen['stopped'] or 'none run'}); proved: {seen['proved'] or '-'}; problems: "
                  f"{', '.join(seen['problems']) or 'none'}; network events: {seen['network'] or 'none'}")
            if name == "healthy":
                failed |= seen["trials"] != 0 or bool(seen["problems"])
            else:
                failed |= seen["experiment_seconds"] > args.budget + 1.0 or not seen["proved"]
            failed |= bool(seen["network"])
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
