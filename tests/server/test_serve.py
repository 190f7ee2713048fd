"""`tfdoctor serve` itself (issue 28): loopback by default, a warning when listening elsewhere without a
token, an empty token file refused (issue 28); a token file others may read refused, `--new-token`, the SQLite
files 0600, SIGTERM a clean stop (issue 35). uvicorn.run is replaced by a recorder, except for SIGTERM, which
only a real process shows."""

from __future__ import annotations

import os
import re
import signal
import stat
import subprocess
import sys
import time

import pytest
import uvicorn

from tests.cli_support import run_cli
from tfdoctor.servers.team import serve


@pytest.mark.parametrize("host, loopback", [("127.0.0.1", True), ("::1", True), ("[::1]", True),
                                            ("localhost", True), ("0.0.0.0", False), ("::", False),
                                            ("192.168.1.5", False), ("doctor.lab", False)])
def test_loopback_is_told_apart(host, loopback):
    assert serve.is_loopback(host) is loopback


@pytest.fixture()
def started(monkeypatch):
    calls = []

    def run(app, **options):
        calls.append(options)
        app.state.server.store.close()  # what the lifespan would do at the end: no connection left open

    monkeypatch.setattr(uvicorn, "run", run)
    return calls


def test_the_defaults_listen_on_loopback_with_sqlite_in_the_data_directory(started, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    code, _, err = run_cli(["serve"])
    assert code == 0 and started == [{"host": "127.0.0.1", "port": 8765, "log_level": "warning",
                                      "server_header": False, "proxy_headers": False}]
    assert (tmp_path / "data" / "tfdoctor" / "server.sqlite3").is_file()
    assert "tfdoctor serve: http://127.0.0.1:8765/ (database sqlite:///" in err and "warning" not in err


def test_retention_and_staleness_options_reach_the_server(monkeypatch, tmp_path):
    settings = []

    def run(app, **options):
        settings.append(app.state.server.settings)
        app.state.server.store.close()

    monkeypatch.setattr(uvicorn, "run", run)
    code, _, err = run_cli(["serve", "--db", str(tmp_path / "fleet.sqlite3"), "--keep-days", "90", "--keep-reports",
                            "200", "--stale-after", "48"])
    assert code == 0 and "keeps 90 days and at most 200 reports per environment" in err
    (chosen,) = settings
    assert (chosen.keep_days, chosen.keep_reports, chosen.stale_after_s) == (90, 200, 48 * 3600)
    code, _, err = run_cli(["serve", "--db", str(tmp_path / "fleet.sqlite3"), "--keep-reports", "0"])
    assert code == 2 and len(settings) == 1  # refused before the server starts


def test_listening_elsewhere_without_a_token_warns(started, tmp_path, capsys):
    serve.serve("0.0.0.0", 9999, str(tmp_path / "fleet.sqlite3"), None)
    assert "warning: listening on 0.0.0.0 without --token-file" in capsys.readouterr().err
    token = token_file(tmp_path, 0o600)
    serve.serve("0.0.0.0", 9999, str(tmp_path / "fleet.sqlite3"), str(token))
    assert "warning" not in capsys.readouterr().err and len(started) == 2


def test_an_empty_token_file_is_refused(started, tmp_path):
    empty = tmp_path / "token"
    empty.write_text("\n")
    empty.chmod(0o600)
    code, out, err = run_cli(["serve", "--db", tmp_path / "fleet.sqlite3", "--token-file", empty])
    assert (code, out, started) == (2, "", []) and err == f"tfdoctor: error: {empty} holds no token\n"


@pytest.fixture()
def umask_022():
    """The usual umask, whatever the test runner's: files a test expects private must be made so, not inherit it."""
    saved = os.umask(0o022)
    yield
    os.umask(saved)


def token_file(tmp_path, mode: int, name: str = "token"):
    path = tmp_path / name
    path.write_text("s3cret-token\n")
    path.chmod(mode)
    return path


@pytest.mark.parametrize("mode, refused", [(0o644, True), (0o604, True), (0o602, True), (0o666, True),
                                           (0o600, False), (0o400, False), (0o640, False)])
def test_a_token_file_every_user_may_read_or_write_is_refused(started, tmp_path, db_url, mode, refused):
    token = token_file(tmp_path, mode)
    code, out, err = run_cli(["serve", "--db", db_url, "--token-file", token])
    if refused:
        assert (code, out, started) == (2, "", [])
        assert err == (f"tfdoctor: error: {token} can be read or written by every user of this machine "
                       f"(mode {mode:04o}): chmod 600 {token}\n")
    else:  # the group's bits are the administrator's sharing (root:tfdoctor 0640)
        assert code == 0 and len(started) == 1 and "writes need the token, reads need none" in err


def test_new_token_writes_a_fresh_private_token_once_and_never_through_a_link(started, tmp_path, db_url):
    saved = os.umask(0)  # the file's mode is the command's choice, not the umask's
    try:
        made = tmp_path / "team.token"
        code, out, err = run_cli(["serve", "--new-token", made])
        assert (code, out, started) == (0, "", []) and f"--token-file {made}" in err
        assert stat.S_IMODE(made.stat().st_mode) == 0o600
        token = made.read_text()
        assert re.fullmatch(r"[A-Za-z0-9_-]{43}\n", token)
        again = run_cli(["serve", "--new-token", made])
        assert again[0] == 2 and "exists" in again[2] and made.read_text() == token  # never replaced
        other = tmp_path / "other.token"
        assert run_cli(["serve", "--new-token", other])[0] == 0 and other.read_text() != token
        victim, dangling = tmp_path / "victim", tmp_path / "planted-target"
        victim.write_text("keep me\n")
        for link, target in ((tmp_path / "link-to-file", victim), (tmp_path / "dangling", dangling)):
            link.symlink_to(target)
            code, _, err = run_cli(["serve", "--new-token", link])
            assert code == 2 and "exists" in err, err
        assert victim.read_text() == "keep me\n" and not dangling.exists()
    finally:
        os.umask(saved)
    code, _, err = run_cli(["serve", "--db", db_url, "--token-file", made, "--private"])
    assert code == 0 and "writes need the token, reads need it too" in err and len(started) == 1


def test_private_without_a_token_file_cannot_start(started, tmp_path, db_url):
    code, out, err = run_cli(["serve", "--db", db_url, "--private"])
    assert (code, out, started) == (2, "", []) and "--private needs --token-file" in err


def test_the_sqlite_database_and_its_companions_are_made_private(started, tmp_path, monkeypatch, healthy, umask_022):
    from tfdoctor.servers.team.store import Store

    database = tmp_path / "fleet" / "fleet.sqlite3"
    code, _, err = run_cli(["serve", "--db", database])
    assert code == 0 and "warning" not in err
    store = Store(f"sqlite:///{database}")
    try:
        store.add_report(healthy, "machine-modes", {"team": "vision"})
        made = sorted(p.name for p in database.parent.iterdir())
        assert made == ["fleet.sqlite3", "fleet.sqlite3-shm", "fleet.sqlite3-wal"]
        assert {p.name: stat.S_IMODE(p.stat().st_mode) for p in database.parent.iterdir()} == dict.fromkeys(made, 0o600)
    finally:
        store.close()
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))  # the default place is the doctor's own: 0700
    assert run_cli(["serve"])[0] == 0
    assert stat.S_IMODE((tmp_path / "data" / "tfdoctor").stat().st_mode) == 0o700
    assert stat.S_IMODE((tmp_path / "data" / "tfdoctor" / "server.sqlite3").stat().st_mode) == 0o600
    older = tmp_path / "older.sqlite3"  # made by an earlier version: used, and the user told
    older.touch(mode=0o644)
    code, _, err = run_cli(["serve", "--db", older])
    assert code == 0 and f"warning: {older} can be read by every user of this machine" in err


def test_sigterm_stops_the_server_cleanly_with_exit_0(db_url, tmp_path, healthy):
    """A real `tfdoctor serve` process: SIGTERM (what systemd, Docker and `kill` send) ends it with 0 after
    a graceful shutdown, nothing on stdout, what it stored kept."""
    import httpx

    from tests.server_support import AUTH, envelope, free_port
    from tfdoctor.servers.team.store import Store

    token = token_file(tmp_path, 0o600)
    token.write_text(f"{AUTH['Authorization'].split()[1]}\n")
    port = free_port()
    environ = {**os.environ, "HOME": str(tmp_path), "XDG_DATA_HOME": str(tmp_path / "data"),
               "XDG_CONFIG_HOME": str(tmp_path / "config"), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    server = subprocess.Popen([sys.executable, "-m", "tfdoctor", "serve", "--db", db_url, "--port", str(port),
                               "--token-file", str(token)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              env=environ, cwd=tmp_path)
    try:
        deadline = time.monotonic() + 120  # the import of the server stack on a loaded 2-core machine
        while True:
            assert server.poll() is None, server.communicate()
            try:
                answer = httpx.post(f"http://127.0.0.1:{port}/api/v1/reports", headers=AUTH, timeout=30,
                                    json=envelope(healthy, "machine-sigterm"))
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline, "the server did not start"
                time.sleep(0.2)
        assert answer.status_code == 201
        server.send_signal(signal.SIGTERM)
        out, err = server.communicate(timeout=60)
    finally:
        if server.poll() is None:
            server.kill()
            server.communicate()
    assert (server.returncode, out) == (0, b""), (server.returncode, err)
    assert err.decode().rstrip().endswith("tfdoctor serve: stopped") and b"interrupted" not in err
    store = Store(db_url)
    try:
        assert store.report_count() == 1
    finally:
        store.close()
