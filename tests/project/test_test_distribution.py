"""The root conftest.py spreads a plain `pytest` over the cores: every live test goes to one worker, first,
while the fast files run beside it whole (a module's shared fixture runs once), and the live ledger the
worker filled is printed by the controller. Run on a small tree of its own, with the real conftest.py."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

FAST = """
import json, os, pathlib
def _note(name):
    with open(os.environ["SEEN"], "a") as seen:
        seen.write(json.dumps([name, os.environ.get("PYTEST_XDIST_WORKER", "serial")]) + "\\n")
"""


def _tree(tmp_path: Path) -> Path:
    shutil.copy(ROOT / "conftest.py", tmp_path / "conftest.py")
    (tmp_path / "pytest.ini").write_text("[pytest]\nmarkers =\n    live: builds real environments\n")
    live = tmp_path / "tests" / "live"
    live.mkdir(parents=True)
    (live / "conftest.py").write_text(textwrap.dedent("""
        def pytest_sessionfinish(session):
            workeroutput = getattr(session.config, "workeroutput", None)
            if workeroutput is not None and any("live" in line for line in open(__import__("os").environ["SEEN"])):
                workeroutput["live_ledger_lines"] = ["ledger line from the live worker"]
    """))
    for name in ("a", "b"):
        body = FAST + "import pytest\npytestmark = pytest.mark.live\n" + "".join(
            f"def test_{name}{i}():\n    _note('live/{name}{i}')\n" for i in range(3))
        (live / f"test_live_{name}.py").write_text(body)
    for name in ("c", "d", "e"):
        body = FAST + "".join(f"def test_{name}{i}():\n    _note('{name}{i}')\n" for i in range(4))
        (tmp_path / "tests" / f"test_{name}.py").write_text(body)
    return tmp_path


def _run(tree: Path, *args: str) -> tuple[subprocess.CompletedProcess, list[tuple[str, str]]]:
    seen = tree / "seen.jsonl"
    seen.write_text("")
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args], cwd=tree,
                          capture_output=True, text=True, timeout=300,
                          env={**{k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")},  # not a worker's id
                               "SEEN": str(seen), "PYTHONDONTWRITEBYTECODE": "1"})
    return done, [tuple(json.loads(line)) for line in seen.read_text().splitlines()]


def test_a_plain_run_sends_the_live_tests_to_one_worker_first_and_prints_their_ledger(tmp_path):
    done, seen = _run(_tree(tmp_path))
    assert done.returncode == 0, done.stdout + done.stderr
    assert len(seen) == 18, seen
    workers = {worker for _, worker in seen}
    assert workers <= {"gw0", "gw1"} and "serial" not in workers, workers
    live_workers = {worker for name, worker in seen if name.startswith("live/")}
    assert len(live_workers) == 1, f"the live tests were split over workers: {seen}"
    live_worker = live_workers.pop()
    first_on_live_worker = [name for name, worker in seen if worker == live_worker][:6]
    assert all(name.startswith("live/") for name in first_on_live_worker), seen
    for module in "cde":
        assert len({worker for name, worker in seen if name.startswith(module)}) == 1, f"{module} was split: {seen}"
    assert "live environments" in done.stdout and "ledger line from the live worker" in done.stdout, done.stdout


def test_the_fast_suite_runs_whole_files_per_worker_and_serial_stays_serial(tmp_path):
    tree = _tree(tmp_path)
    done, seen = _run(tree, "-m", "not live")
    assert done.returncode == 0, done.stdout + done.stderr
    assert len(seen) == 12 and not any(name.startswith("live/") for name, _ in seen), seen
    assert "serial" not in {worker for _, worker in seen}
    for module in "cde":
        assert len({worker for name, worker in seen if name.startswith(module)}) == 1, f"{module} was split: {seen}"
    done, seen = _run(tree, "-p", "no:xdist")
    assert done.returncode == 0 and {worker for _, worker in seen} == {"serial"}, done.stdout
