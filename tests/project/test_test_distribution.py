"""The root conftest.py spreads a plain `pytest` over the cores: the live modules first, the one with the most
tests first, each whole on one worker (its fixtures build its environments once), so the two biggest start at
once on two workers; the fast files run whole (a module's shared fixture runs once) behind and beside them, and
the ledger each live worker filled is printed by the controller. Run on a small tree of its own, with the real
conftest.py."""

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
            worker = __import__("os").environ.get("PYTEST_XDIST_WORKER", "serial")
            if workeroutput is not None and any("live" in line and worker in line for line in open(__import__("os").environ["SEEN"])):
                workeroutput["live_ledger_lines"] = [f"ledger line from the live worker {worker}"]
    """))
    # the smallest live module first by name, the fast files between the live ones in size: in collection order
    # or xdist's reordering by size, the second biggest live module (f) would not start first on its worker
    for name, size in (("a", 2), ("b", 5), ("f", 3)):
        body = FAST + "import pytest\npytestmark = pytest.mark.live\n" + "".join(
            f"def test_{name}{i}():\n    _note('live/{name}{i}')\n" for i in range(size))
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


def test_a_plain_run_starts_each_live_module_whole_on_a_worker_the_biggest_first_and_prints_their_ledgers(tmp_path):
    done, seen = _run(_tree(tmp_path))
    assert done.returncode == 0, done.stdout + done.stderr
    assert len(seen) == 22, seen
    workers = {worker for _, worker in seen}
    assert workers == {"gw0", "gw1"}, f"a plain run on this machine's two cores: {workers}"
    where = {module: {worker for name, worker in seen if name.startswith(module)} for module in ("live/a", "live/b", "live/f", *"cde")}
    assert all(len(on) == 1 for on in where.values()), f"a module was split over workers: {seen}"
    assert where["live/b"] != where["live/f"], f"the two biggest live modules start at once, on two workers: {seen}"
    for module, size in (("live/b", 5), ("live/f", 3)):
        (worker,) = where[module]
        first = [name for name, on in seen if on == worker][:size]
        assert all(name.startswith(module) for name in first), f"{worker} did not start with {module}: {seen}"
    for worker in ("gw0", "gw1"):
        assert f"ledger line from the live worker {worker}" in done.stdout, done.stdout
    assert "live environments" in done.stdout


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


def test_the_live_suites_shared_wheelhouse_and_base_go_when_the_run_ends(tmp_path):
    tree = _tree(tmp_path)
    # a live module leaving what tests/live/support.py shares between workers, in the run's temporary root
    (tree / "tests" / "live" / "test_live_shares.py").write_text(textwrap.dedent("""
        import pytest
        pytestmark = pytest.mark.live
        def test_share(tmp_path_factory):
            root = tmp_path_factory.getbasetemp().parent  # a worker's root is inside the run's
            for name in ("live-wheelhouse/3.11", "live-base/bin"):
                (root / name).mkdir(parents=True, exist_ok=True)
            for name in ("live-base.built", "live-base.lock", "live-wheelhouse/3.11.lock"):
                (root / name).write_text("")
    """))
    basetemp = tmp_path / "basetemp"
    done, _ = _run(tree, f"--basetemp={basetemp}", "tests/live/test_live_shares.py")
    assert done.returncode == 0, done.stdout + done.stderr
    left = sorted(path.name for path in basetemp.iterdir())
    assert left and not [name for name in left if name.startswith(("live-wheelhouse", "live-base"))], left


def test_the_wide_tier_runs_only_when_asked_and_the_run_says_how_many_it_left_out(tmp_path, monkeypatch):
    """Every commit's run (a plain `pytest`) leaves the tests marked `wide` out, on every worker alike, and says so in
    one line; TFDOCTOR_LIVE_WIDE=1 (the nightly workflow) runs them with the others."""
    tree = _tree(tmp_path)
    (tree / "pytest.ini").write_text("[pytest]\nmarkers =\n    live: builds real environments\n    wide: the wide tier\n")
    (tree / "tests" / "live" / "test_live_w.py").write_text(FAST + textwrap.dedent("""
        import pytest
        pytestmark = pytest.mark.live
        @pytest.mark.parametrize("case", ["gate", pytest.param("wide1", marks=pytest.mark.wide)])
        def test_case(case):
            _note(f"live/w-{case}")
        @pytest.mark.wide
        def test_wide2():
            _note("live/w-wide2")
    """))
    monkeypatch.delenv("TFDOCTOR_LIVE_WIDE", raising=False)
    done, seen = _run(tree)  # under xdist: the workers deselect, the controller says how many
    assert done.returncode == 0, done.stdout + done.stderr
    names = {name for name, _ in seen}
    assert "live/w-gate" in names and not {"live/w-wide1", "live/w-wide2"} & names, seen
    assert len(seen) == 23, seen
    assert "live suite: 2 tests of the wide tier left out (TFDOCTOR_LIVE_WIDE=1 runs them" in done.stdout, done.stdout
    monkeypatch.setenv("TFDOCTOR_LIVE_WIDE", "1")
    done, seen = _run(tree)
    assert done.returncode == 0, done.stdout + done.stderr
    assert {"live/w-gate", "live/w-wide1", "live/w-wide2"} <= {name for name, _ in seen} and len(seen) == 25, seen
    assert "wide tier left out" not in done.stdout


def test_the_nightly_workflow_runs_the_wide_tier_of_the_live_suite():
    import yaml

    workflow = yaml.safe_load((ROOT / ".github" / "workflows" / "live-wide.yml").read_text(encoding="utf-8"))
    triggers = workflow.get("on", workflow.get(True))  # YAML 1.1 reads a bare `on` as true
    assert "workflow_dispatch" in triggers
    (schedule,) = triggers["schedule"]
    assert schedule["cron"].split()[2:] == ["*", "*", "*"], "every night"
    (job,) = workflow["jobs"].values()
    runs = [step for step in job["steps"] if "pytest" in step.get("run", "")]
    assert len(runs) == 1 and "tests/live" in runs[0]["run"].split()
    conftest = (ROOT / "conftest.py").read_text(encoding="utf-8")
    assert 'WIDE_RUN = "TFDOCTOR_LIVE_WIDE"' in conftest and runs[0]["env"]["TFDOCTOR_LIVE_WIDE"] == "1"
