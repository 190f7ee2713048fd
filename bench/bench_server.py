"""The team server under a fleet's load (issues 28 and 37), on SQLite and on a real PostgreSQL side by side, and
the plain CLI's start-up beside main's.

For each database: `tfdoctor serve` starts as users start it (a subprocess, its own interpreter). One client
posts 10,000 reports from 1,000 environments, one after another over a kept-alive connection (each post's
time is the client's: request sent to answer read). Every third environment drifts: it posts a passing report
nine times, then a failing one (this machine's own report, then the same with numpy downgraded to 1.24.4 and
`import tensorflow` failing, judged by today's checks; or a recorded GPU box that passed, then one that
broke), so a third of the fleet has a drift to show. The others post their own report each time. Then the
pages are fetched 50 times each: the fleet page (worst first, with causes and label counts), by label, an
environment's page with its drift, the HTML diff, /metrics, the JSON list. Last, 4 client processes load
drift pages in a loop while one client posts 500 more reports: the post times under that load.

Issue 37's bounds: an environment's page with drift p95 <= 50 ms, the fleet page p95 <= 100 ms, a post p95
<= 50 ms while the 4 clients load drift pages. The machine's load average is printed beside each figure (a
shared machine inflates wall times; the server's CPU per request says what the server itself spent).
PostgreSQL runs with its default durability (fsync on).

Start-up: `tfdoctor --version` and `tfdoctor explain FIXTURE --json` from a wheel of this tree and from a
wheel of `main`, installed side by side (--no-deps, into temporary directories), alternating rounds.

    python bench/bench_server.py [--environments 1000] [--reports 10] [--only sqlite|postgresql|startup]
                                 [--loaders 4] [--report SAVED.json] [--json results.json]
"""

from __future__ import annotations

import argparse
import copy
import json
import multiprocessing
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
TOKEN = "bench-token"
FIXTURES = ("linux/t4-driver-580-tensorflow-2.21-and-cuda", "linux/tensorflow-2.16.1-and-cuda-no-gpu",
            "linux/kaggle-cudnn-9.0-vs-9.3", "macos/m1-numpy-c-api-0x10-vs-0xf", "linux/cpu-only-tensorflow-cpu-no-gpu",
            "linux/colab-t4-driver-550-tensorflow-2.19", "macos/m1-rosetta-venv-from-x86-python")
# (passing, failing) pairs a drifting environment posts: a machine that passed, then broke
RECORDED_DRIFTS = (("linux/t4-driver-580-tensorflow-2.21-and-cuda", "linux/tensorflow-2.16.1-and-cuda-no-gpu"),)
LOADED_POSTS = 500
PAGE_FETCHES = 50


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(share * (len(ordered) - 1))))]


def line(name: str, values: list[float], cpu_s: float | None = None) -> dict[str, float]:
    """Client-side latencies; `cpu_s`: the server process's CPU time over the same requests, which a machine
    shared with other work does not inflate as it does wall time (the load average says how shared)."""
    load = os.getloadavg()[0]
    figures = {"n": len(values), "p50_ms": 1000 * statistics.median(values), "p95_ms": 1000 * percentile(values, 0.95),
               "max_ms": 1000 * max(values), "load_average": load}
    cpu = ""
    if cpu_s is not None:
        figures["server_cpu_ms_per_request"] = 1000 * cpu_s / len(values)
        cpu = f"  server CPU {figures['server_cpu_ms_per_request']:6.1f} ms/request"
    print(f"  {name:<40} n={figures['n']:>6}  p50 {figures['p50_ms']:7.1f} ms  p95 {figures['p95_ms']:7.1f} ms  "
          f"max {figures['max_ms']:7.1f} ms{cpu}  (load {load:.1f})", flush=True)
    return figures


def cpu_seconds(pid: int) -> float:
    import psutil

    times = psutil.Process(pid).cpu_times()
    return times.user + times.system


def numpy_downgraded(report: dict) -> dict:
    """This machine's report after `pip install numpy==1.24.4` broke `import tensorflow`, judged by today's
    checks (the drift issue 37 names)."""
    from tests.server_support import judged

    facts = copy.deepcopy(report["facts"])
    for distribution in facts.get("distributions") or ():
        if distribution.get("name") == "numpy":
            distribution["version"] = "1.24.4"
    facts["tensorflow"] = {"status": "import_error", "imported": False, "exit_code": 1,
                           "exception": {"type": "ImportError", "message": "numpy.core.multiarray failed to import"}}
    return judged(facts)


def real_reports(saved: str | None) -> tuple[list[dict], list[tuple[dict, dict]]]:
    """The reports environments post as they are, and the (passing, failing) pairs drifting ones post."""
    from tests.server_support import fixture_report

    if saved:
        own = json.loads(Path(saved).read_text())
    else:
        run = subprocess.run([sys.executable, "-m", "tfdoctor", "--json", "--no-probe"], capture_output=True,
                             text=True, timeout=600, cwd=tempfile.gettempdir())
        own = json.loads(run.stdout)
    steady = [own] + [fixture_report(name) for name in FIXTURES]
    drifts = [(own, numpy_downgraded(own))] + [(fixture_report(a), fixture_report(b)) for a, b in RECORDED_DRIFTS]
    for passing, failing in drifts:
        assert passing["totals"]["fail"] == 0 and failing["totals"]["fail"] > 0, "a drift goes from pass to fail"
    return steady, drifts


def wait_for(url: str, process: subprocess.Popen, seconds: float = 60) -> None:
    import httpx

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"tfdoctor serve ended: {process.stderr.read()}")
        try:
            httpx.get(url + "/api/v1/environments", timeout=2)
            return
        except httpx.HTTPError:
            time.sleep(0.2)
    raise RuntimeError("tfdoctor serve did not answer")


def load_pages(url: str, paths: list[str], stop, ready, results) -> None:
    """A client process: GET the drift pages in a loop until `stop` is set (saying when it is `ready`: loading);
    its latencies go to `results`."""
    import httpx

    times = []
    with httpx.Client(base_url=url, timeout=120) as client:
        number = 0
        client.get(paths[0]).raise_for_status()
        ready.release()
        while not stop.is_set():
            began = time.perf_counter()
            client.get(paths[number % len(paths)]).raise_for_status()
            times.append(time.perf_counter() - began)
            number += 1
    results.put(times)


def load(db: str, steady: list[dict], drifts: list[tuple[dict, dict]], environments: int, per_environment: int,
         loaders: int, workdir: Path) -> dict:
    import httpx

    from tests.server_support import free_port

    token_file = workdir / "token"
    token_file.write_text(TOKEN + "\n")
    token_file.chmod(0o600)  # tfdoctor serve refuses a token file every user may read
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    server = subprocess.Popen([sys.executable, "-m", "tfdoctor", "serve", "--db", db, "--port", str(port),
                               "--token-file", str(token_file)], stderr=subprocess.PIPE, text=True)
    try:
        wait_for(url, server)
        machines = [uuid.uuid4().hex for _ in range(environments)]

        def serialized(report: dict) -> bytes:  # one interpreter per machine: a drift is the same environment
            return json.dumps({**report, "target": {"python": "/srv/venv/bin/python"}}).encode()

        steady_bodies = [serialized(r) for r in steady]
        drift_bodies = [(serialized(a), serialized(b)) for a, b in drifts]

        def body(environment: int, number: int) -> bytes:
            if environment % 3 == 0:  # a third drifts: passing until its last report, which fails
                passing, failing = drift_bodies[(environment // 3) % len(drift_bodies)]
                report = failing if number >= per_environment - 1 else passing
            else:
                report = steady_bodies[environment % len(steady_bodies)]
            head = json.dumps({"machine_id": machines[environment], "labels": {"team": f"team-{environment % 12}"}})
            return head[:-1].encode() + b',"report":' + report + b"}"

        bodies = [(e, r) for r in range(per_environment) for e in range(environments)]
        headers = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"}
        figures: dict = {}
        with httpx.Client(base_url=url, headers=headers, timeout=120) as client:
            def post_all(pairs: list[tuple[int, int]]) -> tuple[list[float], float, list[int]]:
                times, sizes = [], []
                cpu_before = cpu_seconds(server.pid)
                for environment, number in pairs:
                    content = body(environment, number)
                    sizes.append(len(content))
                    began = time.perf_counter()
                    answer = client.post("/api/v1/reports", content=content)
                    times.append(time.perf_counter() - began)
                    if answer.status_code != 201:
                        raise RuntimeError(f"post refused: {answer.status_code} {answer.text[:200]}")
                return times, cpu_seconds(server.pid) - cpu_before, sizes

            started = time.perf_counter()
            times, cpu, sizes = post_all(bodies)
            total = time.perf_counter() - started
            print(f"  {len(bodies)} posts from {environments} environments in {total:.1f} s "
                  f"({len(bodies) / total:.0f}/s; {sum(sizes) / len(sizes) / 1024:.0f} KiB each on average)")
            figures["POST (seeding, alone)"] = line("POST /api/v1/reports (seeding, alone)", times, cpu)
            fleet = client.get("/api/v1/environments").json()
            assert len(fleet) == environments, len(fleet)
            drifted = [e for e in fleet if e["regressed_at"]]
            print(f"  {len(drifted)} environments drifted from a passing report "
                  f"({sum(e['status'] == 'fail' for e in fleet)} failing)")
            own_drift = drifted[0]["id"]  # environment 0: this machine's report, then numpy downgraded
            history = client.get(f"/api/v1/environments/{own_drift}/reports").json()
            pages = {"fleet page (GET /)": "/", "fleet page by label": "/?label=team%3Dteam-3",
                     "environment page with drift": f"/environments/{own_drift}",
                     "HTML diff page": f"/diff?a={history[1]['id']}&b={history[0]['id']}",
                     "GET /metrics": "/metrics", "GET /api/v1/environments": "/api/v1/environments"}
            for name, path in pages.items():
                times = []
                cpu_before = cpu_seconds(server.pid)
                for _ in range(PAGE_FETCHES):
                    began = time.perf_counter()
                    answer = client.get(path)
                    times.append(time.perf_counter() - began)
                    assert answer.status_code == 200, (path, answer.status_code)
                figures[name] = line(name, times, cpu_seconds(server.pid) - cpu_before)
            assert "numpy" in client.get(f"/environments/{own_drift}").text.split('id="drift"', 1)[1][:3000]

            context = multiprocessing.get_context("spawn")
            stop, ready, results = context.Event(), context.Semaphore(0), context.Queue()
            paths = [f"/environments/{e['id']}" for e in drifted[:50]]
            clients = [context.Process(target=load_pages, args=(url, paths, stop, ready, results))
                       for _ in range(loaders)]
            for process in clients:
                process.start()
            for _ in clients:  # every loader has started (its interpreter and imports) and is loading pages
                assert ready.acquire(timeout=300)
            time.sleep(1)
            times, cpu, _ = post_all([(e, per_environment + n) for n, e in
                                      enumerate(range(0, environments, max(1, environments // LOADED_POSTS)))][:LOADED_POSTS])
            stop.set()
            page_times = [t for _ in clients for t in results.get(timeout=300)]
            for process in clients:
                process.join(60)
            figures[f"POST while {loaders} clients load drift pages"] = line(
                f"POST while {loaders} clients load drift pages", times)
            # the server's CPU over the phase, per request of either kind: what it spent, whatever the load
            mixed = 1000 * cpu / (len(times) + len(page_times))
            figures[f"POST while {loaders} clients load drift pages"]["server_cpu_ms_per_request_mixed"] = mixed
            print(f"  {'':<40} server CPU {mixed:.1f} ms per request over the phase ({len(times)} posts and "
                  f"{len(page_times)} page loads)")
            figures[f"drift pages under that load ({loaders} clients)"] = line(
                f"drift pages under that load ({loaders} clients)", page_times)
        return figures
    finally:
        server.terminate()
        server.wait(30)


def startup(rounds: int, workdir: Path) -> dict:
    """`--version` and an `explain` from wheels of this tree and of main (PYTHONPATH first on sys.path)."""
    trees = {}
    for name in ("main", "this tree"):
        source = workdir / f"src-{name.replace(' ', '-')}"
        if name == "main":
            source.mkdir()
            archive = subprocess.run(["git", "archive", "main"], cwd=ROOT, capture_output=True, check=True).stdout
            subprocess.run(["tar", "-x", "-C", str(source)], input=archive, check=True)
        else:
            shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(".venv", ".git", "__pycache__", "build",
                                                                        "*.egg-info"))
        target = workdir / f"site-{name.replace(' ', '-')}"
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation", "--target",
                        str(target), str(source)], check=True, capture_output=True)
        trees[name] = target
    fixture = str(ROOT / "fixtures" / "linux" / "kaggle-cudnn-9.0-vs-9.3.json")
    commands = {"tfdoctor --version": ["--version"], "tfdoctor explain FIXTURE --json": ["explain", fixture, "--json"]}
    times: dict[str, list[float]] = {f"{c} [{t}]": [] for c in commands for t in trees}
    for _ in range(rounds):
        for command, args in commands.items():
            for tree, target in trees.items():
                env = {**os.environ, "PYTHONPATH": str(target)}
                began = time.perf_counter()
                subprocess.run([sys.executable, "-m", "tfdoctor", *args], env=env, capture_output=True,
                               cwd=tempfile.gettempdir())
                times[f"{command} [{tree}]"].append(time.perf_counter() - began)
    return {name: line(name, values) for name, values in times.items()}


def side_by_side(sqlite: dict, postgresql: dict) -> None:
    print("\nSide by side: p50 / p95 ms (load average)      SQLite                      PostgreSQL 15")
    for name in sqlite:
        cells = [f"{f['p50_ms']:6.1f} / {f['p95_ms']:6.1f} ({f['load_average']:4.1f})" for f in (sqlite[name], postgresql[name])]
        print(f"  {name:<42} {cells[0]:<27} {cells[1]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--environments", type=int, default=1000)
    parser.add_argument("--reports", type=int, default=10, help="reports per environment")
    parser.add_argument("--only", choices=("sqlite", "postgresql", "startup"))
    parser.add_argument("--rounds", type=int, default=10, help="start-up rounds")
    parser.add_argument("--loaders", type=int, default=4, help="client processes loading drift pages during posts")
    parser.add_argument("--report", help="this machine's `tfdoctor --json --no-probe` report, saved (else run once)")
    parser.add_argument("--json", dest="json_path")
    args = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="server-bench-", dir="/tmp"))
    results: dict = {"load_average_before": os.getloadavg()}
    try:
        if args.only in (None, "sqlite", "postgresql"):
            steady, drifts = real_reports(args.report)
        if args.only in (None, "sqlite"):
            print(f"SQLite (load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)")
            results["sqlite"] = load(str(workdir / "fleet.sqlite3"), steady, drifts, args.environments, args.reports,
                                     args.loaders, workdir)
        if args.only in (None, "postgresql"):
            from tests.server_support import PostgresCluster

            cluster = PostgresCluster(durable=True).start()
            try:
                print(f"PostgreSQL 15 (load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)")
                results["postgresql"] = load(cluster.url(), steady, drifts, args.environments, args.reports,
                                             args.loaders, workdir)
            finally:
                cluster.stop()
        if "sqlite" in results and "postgresql" in results:
            side_by_side(results["sqlite"], results["postgresql"])
        if args.only in (None, "startup"):
            print(f"Start-up (load average {os.getloadavg()[0]:.1f})")
            results["startup"] = startup(args.rounds, workdir)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    if args.json_path:
        Path(args.json_path).write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
