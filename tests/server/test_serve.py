"""`tfdoctor serve` itself (issue 28): loopback by default, a warning when listening elsewhere without a
token, an empty token file refused. uvicorn.run is replaced by a recorder: nothing binds a port here."""

from __future__ import annotations

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
    monkeypatch.setattr(uvicorn, "run", lambda app, **options: calls.append(options))
    return calls


def test_the_defaults_listen_on_loopback_with_sqlite_in_the_data_directory(started, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    code, _, err = run_cli(["serve"])
    assert code == 0 and started == [{"host": "127.0.0.1", "port": 8765, "log_level": "warning",
                                      "server_header": False, "proxy_headers": False}]
    assert (tmp_path / "data" / "tfdoctor" / "server.sqlite3").is_file()
    assert "tfdoctor serve: http://127.0.0.1:8765/ (database sqlite:///" in err and "warning" not in err


def test_listening_elsewhere_without_a_token_warns(started, tmp_path, capsys):
    serve.serve("0.0.0.0", 9999, str(tmp_path / "fleet.sqlite3"), None)
    assert "warning: listening on 0.0.0.0 without --token-file" in capsys.readouterr().err
    token = tmp_path / "token"
    token.write_text("s3cret\n")
    serve.serve("0.0.0.0", 9999, str(tmp_path / "fleet.sqlite3"), str(token))
    assert "warning" not in capsys.readouterr().err and len(started) == 2


def test_an_empty_token_file_is_refused(started, tmp_path):
    empty = tmp_path / "token"
    empty.write_text("\n")
    code, out, err = run_cli(["serve", "--db", tmp_path / "fleet.sqlite3", "--token-file", empty])
    assert (code, out, started) == (2, "", []) and err == f"tfdoctor: error: {empty} holds no token\n"
