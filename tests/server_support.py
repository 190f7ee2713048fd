"""What the team server's tests share (issue 28): a real PostgreSQL from Debian's binaries in a temporary
directory on loopback, the server running for real (uvicorn in a thread), and reports to post.

PostgreSQL refuses to run as root: as root (CI, this machine) initdb and pg_ctl run as the `postgres`
user (else `nobody`) through runuser, in a directory chowned to it. Without PostgreSQL or Chromium the
tests skip, except in CI (CI=true), where a test that cannot run fails.
"""

from __future__ import annotations

import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Optional

import pytest

from tests.fixtures_support import FIXTURES

PG_BIN = Path("/usr/lib/postgresql/15/bin")
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--no-first-run"]
TOKEN = "team-token-4b1f0c"


def unavailable(reason: str) -> None:
    """Skip, or fail in CI: there a missing PostgreSQL or Chromium is a broken setup, not an excuse."""
    if os.environ.get("CI") == "true":
        pytest.fail(f"cannot run in CI: {reason}", pytrace=False)
    pytest.skip(reason)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _unprivileged_user() -> Optional[str]:
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "nobody"):
        try:
            pwd.getpwnam(name)
            return name
        except KeyError:
            continue
    return None


class PostgresCluster:
    """initdb + pg_ctl in a fresh directory under /tmp, listening on 127.0.0.1 only; `stop` removes it."""

    def __init__(self, durable: bool = False) -> None:
        self.user = _unprivileged_user()
        self.base = Path(tempfile.mkdtemp(prefix="server-pg-", dir="/tmp"))
        self.data = self.base / "data"
        self.port = free_port()
        self.durable = durable  # tests: fsync off (speed); the bench: PostgreSQL's defaults
        self.databases = 0

    def _run(self, *command: str) -> None:
        prefix = ["runuser", "-u", self.user, "--"] if self.user else []
        completed = subprocess.run([*prefix, *command], capture_output=True, text=True, timeout=120)
        if completed.returncode != 0:
            log = (self.base / "log").read_text(errors="replace") if (self.base / "log").exists() else ""
            raise RuntimeError(f"{command[0]} failed: {completed.stderr}{completed.stdout}{log}")

    def start(self) -> "PostgresCluster":
        if self.user:
            shutil.chown(self.base, self.user)
        self._run(str(PG_BIN / "initdb"), "-D", str(self.data), "-U", "tfdoctor", "--auth=trust", "-E", "UTF8",
                  "--no-sync", "--no-instructions")
        options = f"-h 127.0.0.1 -p {self.port} -k {self.base}"
        if not self.durable:
            options += " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
        self._run(str(PG_BIN / "pg_ctl"), "-D", str(self.data), "-l", str(self.base / "log"), "-w", "-t", "60",
                  "-o", options, "start")
        return self

    def url(self, database: str = "postgres") -> str:
        return f"postgresql+psycopg://tfdoctor@127.0.0.1:{self.port}/{database}"

    def new_database(self) -> str:
        import psycopg

        self.databases += 1
        name = f"tfdoctor_{self.databases}"
        with psycopg.connect(f"host=127.0.0.1 port={self.port} user=tfdoctor dbname=postgres",
                             autocommit=True) as connection:
            connection.execute(f"CREATE DATABASE {name}")
        return self.url(name)

    def stop(self) -> None:
        try:
            if (self.data / "postmaster.pid").exists():
                self._run(str(PG_BIN / "pg_ctl"), "-D", str(self.data), "-m", "fast", "-w", "stop")
        finally:
            shutil.rmtree(self.base, ignore_errors=True)


def start_postgres(durable: bool = False) -> PostgresCluster:
    if not (PG_BIN / "initdb").exists():
        unavailable(f"no PostgreSQL 15 at {PG_BIN} (apt-get install postgresql)")
    try:
        import psycopg  # noqa: F401
    except ImportError:
        unavailable("psycopg is not installed (pip install -e '.[test]')")
    return PostgresCluster(durable).start()


class RunningServer:
    """The real application served by uvicorn on 127.0.0.1 in a thread, on a free port."""

    def __init__(self, db_url: str, token: Optional[str] = None, private: bool = False, **settings: Any) -> None:
        import uvicorn

        from tfdoctor.servers.team.app import Settings, create_app

        self.app = create_app(Settings(db_url, token, private=private, **settings))
        self.port = free_port()
        self.server = uvicorn.Server(uvicorn.Config(self.app, host="127.0.0.1", port=self.port, log_level="warning",
                                                    lifespan="on"))
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> "RunningServer":
        self.thread.start()
        deadline = time.monotonic() + 30
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("the server did not start")
            time.sleep(0.02)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(30)


def fixture_report(name: str) -> dict[str, Any]:
    """A real report of a recorded machine: today's checks on the fixture's facts (as `tfdoctor explain
    fixtures/NAME.json --json` prints it, redacted)."""
    from tfdoctor.report.redact import Redactor
    from tfdoctor.operations.explain import explained_document as explain
    from tfdoctor.report.saved import read_report

    document = explain(read_report(str(FIXTURES / f"{name}.json")))
    return Redactor.for_this_machine().learning_from(document).document(document)


def envelope(report: dict[str, Any], machine: str, labels: Optional[dict[str, str]] = None,
             hostname: Optional[str] = None) -> dict[str, Any]:
    body: dict[str, Any] = {"machine_id": machine, "labels": labels or {}, "report": report}
    if hostname is not None:
        body["hostname"] = hostname
    return body


HEALTHY_FIXTURE = "linux/t4-driver-580-tensorflow-2.21-and-cuda"  # passes
BROKEN_FIXTURE = "linux/tensorflow-2.16.1-and-cuda-no-gpu"  # fails: cuda-build
AUTH = {"Authorization": f"Bearer {TOKEN}"}


SETTINGS = ("stale_after_s", "keep_days", "keep_reports", "retention_every_s")


def client_for(db_url: str, token: Optional[str] = TOKEN, private: bool = False, **options: Any) -> Any:
    """The application in-process (Starlette's TestClient); `options` go to it, except the server's own settings
    (SETTINGS: stale_after_s=..., keep_reports=...)."""
    from starlette.testclient import TestClient

    from tfdoctor.servers.team.app import Settings, create_app

    settings = {name: options.pop(name) for name in SETTINGS if name in options}
    return TestClient(create_app(Settings(db_url, token, private=private, **settings)), **options)


def post(client: Any, report: dict[str, Any], machine: str, labels: Optional[dict[str, str]] = None,
         hostname: Optional[str] = None, headers: Optional[dict[str, str]] = AUTH) -> Any:
    return client.post("/api/v1/reports", json=envelope(report, machine, labels, hostname), headers=headers or {})


def csrf_of(html: str) -> str:
    """The CSRF field of a page's form (the cookie beside it is the client's)."""
    return html.split('name="csrf" value="', 1)[1].split('"', 1)[0]


def sign_in(client: Any, token: str = TOKEN, next_path: str = "/") -> Any:
    """The browser's way in: the sign-in form, its CSRF field, the token. Returns the form post's answer."""
    form = client.get("/login", params={"next": next_path}).text
    return client.post("/login", data={"csrf": csrf_of(form), "next": next_path, "token": token},
                       follow_redirects=False)


def judged(facts: dict[str, Any], created_at: Optional[str] = None) -> dict[str, Any]:
    """A report of these facts as the doctor prints it: today's checks, redacted."""
    from tfdoctor.operations.explain import explained_document
    from tfdoctor.report.redact import Redactor
    from tfdoctor.report.saved import SavedReport

    document = explained_document(SavedReport("facts", "1.3", facts, created_at=created_at))
    return Redactor.for_this_machine().learning_from(document).document(document)


def numpy_downgrade_reports() -> tuple[dict[str, Any], dict[str, Any]]:
    """tensorflow-cpu 2.21.0 that imports, then the same environment after `pip install numpy==1.24.4`, where
    `import tensorflow` fails (issue 37: the drift names numpy, and TensorFlow's version is still known)."""
    from tests.builders import IMPORTED, tensorflow_environment

    imported = {**IMPORTED, "devices": [{"name": "/physical_device:CPU:0", "device_type": "CPU"}]}
    failed = {"status": "import_error", "imported": False, "exit_code": 1,
              "exception": {"type": "ImportError", "message": "numpy.core.multiarray failed to import"}}
    return (judged(tensorflow_environment(tensorflow=imported)),
            judged(tensorflow_environment({"numpy": "1.24.4"}, tensorflow=failed)))


def age_environment(app: Any, environment_id: int, days: float) -> None:
    """Make an environment look silent for `days` (its last report that long ago): a stale machine."""
    import datetime as dt

    from tfdoctor.servers.team.store import environments

    when = (dt.datetime.now(dt.timezone.utc) - dt.timedelta(days=days)).isoformat(timespec="microseconds")
    store = app.state.server.store
    with store.engine.begin() as conn:
        conn.execute(environments.update().where(environments.c.id == environment_id).values(last_seen=when))
