"""`--report-to` against hostile and absent servers (issue 35): credentials never follow a redirect, one deadline
holds against a dripping server, a URL's password never reaches the terminal, a token over plain http:// beyond
loopback is warned about, and a report the server did not store is kept and sent later by `tfdoctor report send`
(or the next run), within a bounded cache.

Every server is real, on loopback: http.server in a thread, on an ephemeral port. The cache, the config and the
home directory are in tmp_path.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Optional

import pytest

from tests.cli_support import run_cli
from tests.server_support import free_port
from tfdoctor.posting import client as report_to

TOKEN = "attack-token-7d2c91e5"
PASSWORD = "S3cret-pa55word-9f1e"
DRIP_S = 0.5  # between two bytes of a dripping answer: below any per-read timeout the tests give


class Hostile:
    """An HTTP server on loopback, in a thread, answering every request as `behaviour` says and recording it:
    "store" (201, as the team server does), "500", "redirect:URL" (302 to URL), "drip" (the status line and
    headers one byte every DRIP_S seconds)."""

    def __init__(self, behaviour: str = "store", port: int = 0, host: str = "127.0.0.1") -> None:
        self.behaviour = behaviour
        self.requests: list[dict[str, Any]] = []
        self.stop = threading.Event()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                outer.answer(self)

            do_GET = do_POST

        self.httpd = ThreadingHTTPServer((host, port), Handler)
        self.httpd.daemon_threads = True
        self.host, self.port = host, self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def answer(self, handler: BaseHTTPRequestHandler) -> None:
        length = int(handler.headers.get("Content-Length") or 0)
        body = handler.rfile.read(length) if length else b""
        self.requests.append({"method": handler.command, "path": handler.path,
                              "authorization": handler.headers.get("Authorization"),
                              "body": json.loads(body) if body else None})
        if self.behaviour == "drip":
            for byte in b"HTTP/1.1 201 Created\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}":
                if self.stop.wait(DRIP_S):
                    return
                handler.wfile.write(bytes([byte]))
            return
        if self.behaviour.startswith("redirect:"):
            status, headers, payload = 302, {"Location": self.behaviour.partition(":")[2]}, b""
        elif self.behaviour == "500":
            status, headers, payload = 500, {}, b"database down"
        elif self.behaviour.startswith("answer:"):  # stored, with this JSON answer
            status, headers, payload = 201, {"Content-Type": "application/json"}, self.behaviour[7:].encode()
        else:
            status, headers, payload = 201, {"Content-Type": "application/json"}, b'{"report": 1}'
        handler.send_response(status)
        for name, value in {**headers, "Content-Length": str(len(payload)), "Connection": "close"}.items():
            handler.send_header(name, value)
        handler.end_headers()
        handler.wfile.write(payload)

    def close(self) -> None:
        self.stop.set()
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture()
def servers():
    """Start Hostile servers with servers(...); each is stopped at the end of the test."""
    started: list[Hostile] = []

    def start(*args: Any, **kwargs: Any) -> Hostile:
        started.append(Hostile(*args, **kwargs))
        return started[-1]

    yield start
    for server in started:
        server.close()


@pytest.fixture(autouse=True)
def homes(tmp_path, monkeypatch):
    """The user's cache, config and home in tmp_path; the token set; no proxy between us and loopback."""
    for name in ("XDG_CACHE_HOME", "XDG_CONFIG_HOME", "HOME"):
        monkeypatch.setenv(name, str(tmp_path / name.lower()))
    for name in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("TFDOCTOR_REPORT_TOKEN", TOKEN)
    return tmp_path


def kept(tmp_path: Path) -> list[dict]:
    """The reports kept to send again, oldest first."""
    directory = tmp_path / "xdg_cache_home" / "tfdoctor" / "pending-reports"
    return [json.loads(path.read_text()) for path in sorted(directory.glob("*.json"))] if directory.is_dir() else []


@pytest.fixture(scope="module")
def venvs(tmp_path_factory):
    """Two real environments without TensorFlow (nor pip): the doctor diagnoses each in well under a second."""
    base = tmp_path_factory.mktemp("report-to-venvs")
    for name in ("first", "second"):
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(base / name)], check=True)
    return base


def passing_run(venvs: Path) -> list[str]:
    """A run that exits 0 by itself (one check, which skips on Linux), printing its report as JSON."""
    return ["--python", venvs / "first" / "bin" / "python", "--no-probe", "--only", "architecture", "--json"]


def timed(args: list) -> tuple[int, str, str, float]:
    started = time.monotonic()
    code, out, err = run_cli(args)
    return code, out, err, time.monotonic() - started


# --- each defect ------------------------------------------------------------------------------------------

def test_a_redirect_to_another_origin_gets_no_request_and_no_token(servers, venvs, homes):
    elsewhere = servers("store", host="localhost")
    redirecting = servers(f"redirect:{elsewhere.url}/api/v1/reports")
    code, out, err = run_cli([*passing_run(venvs), "--report-to", redirecting.url])
    assert elsewhere.requests == []  # followed, it carried the Authorization header there
    assert [r["authorization"] for r in redirecting.requests] == [f"Bearer {TOKEN}"]
    assert code == 0 and err.count("\n") == 1
    assert err.startswith(f"tfdoctor: report not posted to {redirecting.url}: HTTP 302: the server redirects to "
                          f"{elsewhere.url}/api/v1/reports; not followed")
    assert [k["body"]["report"] for k in kept(homes)] == [json.loads(out)]


def test_one_deadline_holds_against_a_server_dripping_its_answer(servers):
    dripping = servers("drip")
    body = report_to.envelope({"schema_version": "1.3"}, {}, None)
    started = time.monotonic()
    with pytest.raises(report_to.PostRefused, match="no complete answer within 2 s"):
        report_to.post(dripping.url, body, TOKEN, timeout=2)  # a per-read timeout would wait ~30 s of drip
    assert time.monotonic() - started < 8


def test_a_url_password_never_reaches_the_terminal_nor_the_disk(venvs, homes, monkeypatch):
    monkeypatch.delenv("TFDOCTOR_REPORT_TOKEN")
    url = f"http://alice:{PASSWORD}@127.0.0.1:{free_port()}"  # nobody listening
    code, _, err = run_cli([*passing_run(venvs), "--report-to", url])
    assert PASSWORD not in err
    assert code == 0 and err.startswith("tfdoctor: report not posted to http://<redacted>@127.0.0.1:")
    assert "connection refused" in err
    [pending] = kept(homes)
    assert PASSWORD not in json.dumps(pending) and "alice" not in pending["url"]


def test_a_url_password_goes_as_basic_credentials_to_that_server_only(servers, venvs, monkeypatch):
    monkeypatch.delenv("TFDOCTOR_REPORT_TOKEN")
    server = servers("store")
    code, _, err = run_cli([*passing_run(venvs), "--report-to", f"http://alice:{PASSWORD}@127.0.0.1:{server.port}/"])
    assert (code, err) == (0, f"tfdoctor: report posted to http://<redacted>@127.0.0.1:{server.port}/\n")
    [request] = server.requests
    assert request["authorization"] == "Basic " + base64.b64encode(f"alice:{PASSWORD}".encode()).decode()
    assert request["path"] == "/api/v1/reports"


def test_a_token_over_plain_http_beyond_loopback_is_warned_about(venvs):
    code, _, err = run_cli([*passing_run(venvs), "--report-to", "http://doctor.invalid:8765"])
    lines = err.splitlines()
    assert lines[0] == ("tfdoctor: warning: the token goes to http://doctor.invalid:8765 unencrypted (plain http:// "
                        "beyond this machine); anyone on the way can read it: use https://")
    assert code == 0 and lines[1].startswith("tfdoctor: report not posted to http://doctor.invalid:8765: ")
    assert TOKEN not in err


@pytest.mark.parametrize("url, warned", [
    ("http://doctor.lab:8765", True), ("https://doctor.lab", False), ("http://127.0.0.1:8765", False),
    ("http://127.8.9.10", False), ("http://[::1]:8765", False), ("http://localhost:8765", False),
    ("http://ci.localhost", False), ("http://10.0.0.7", True), ("http://[fe80::1]", True),
])
def test_the_warning_is_for_plain_http_beyond_loopback_only(url, warned):
    where = report_to.target(url)
    assert (report_to.plain_http_warning(where, TOKEN) is not None) == warned
    assert report_to.plain_http_warning(where, None) is None  # nothing secret goes


def test_a_report_the_server_did_not_store_is_kept(servers, venvs, homes):
    failing = servers("500")
    code, out, err = run_cli([*passing_run(venvs), "--report-to", failing.url])
    [pending] = kept(homes)  # the report was lost
    assert pending["body"]["report"] == json.loads(out) and pending["url"] == f"{failing.url}/api/v1/reports"
    assert code == 0 and err.count("\n") == 1
    assert err.startswith(f"tfdoctor: report not posted to {failing.url}: HTTP 500: ")
    assert err.rstrip().endswith("/pending-reports: `tfdoctor report send` sends it")
    directory = homes / "xdg_cache_home" / "tfdoctor" / "pending-reports"
    assert directory.stat().st_mode & 0o777 == 0o700
    assert all(path.stat().st_mode & 0o777 == 0o600 for path in directory.glob("*.json"))


@pytest.mark.parametrize("answer, line", [
    ('{"url": "http://127.0.0.1:PORT/environments/7", "status": "pass"}',
     "tfdoctor: report posted: http://127.0.0.1:PORT/environments/7 (pass)"),
    ('{"url": "/environments/7", "status": "warn"}',  # an older server: the path only
     "tfdoctor: report posted: http://127.0.0.1:PORT/environments/7 (warn)"),
    ('{"report": 1}', "tfdoctor: report posted to http://127.0.0.1:PORT"),  # a server that names no page
    # the answer is the server's: a link it names is shown only as a plain http(s) URL, a status only as a word
    ('{"url": "javascript:alert(1)", "status": "\u001b[2Jpass"}', "tfdoctor: report posted to http://127.0.0.1:PORT"),
    ('{"url": "http://x/\u001b]8;;evil\u0007", "status": "pass"}', "tfdoctor: report posted to http://127.0.0.1:PORT"),
])
def test_a_stored_report_gets_one_line_naming_its_page_and_status(servers, venvs, homes, answer, line):
    server = servers("answer:" + answer.replace("PORT", "0"))
    server.behaviour = "answer:" + answer.replace("PORT", str(server.port))
    code, out, err = run_cli([*passing_run(venvs), "--report-to", server.url])
    assert code == 0 and json.loads(out)
    assert err == line.replace("PORT", str(server.port)) + "\n"
    assert kept(homes) == []


def test_scan_posts_every_environment_and_names_the_one_that_failed(servers, venvs, homes):
    server = servers("store")
    original = server.answer

    def first_fails(handler):  # the first post is not stored, the others are
        server.behaviour = "500" if not server.requests else "store"
        original(handler)

    server.answer = first_fails
    code, _, err = run_cli(["scan", venvs, "--json", "--depth", "1", "--report-to", server.url])
    assert code == 1 and len(server.requests) == 2  # it stopped at the first failure
    failed, stored = (r["body"]["report"]["facts"]["python"]["executable"] for r in server.requests)
    # the stored one's line, then the failure's (every failure is said after the posts)
    posted, not_posted = err.splitlines()
    assert posted == f"tfdoctor: report of {stored} posted to {server.url}"
    assert not_posted.startswith(f"tfdoctor: report of {failed} not posted to {server.url}: HTTP 500")
    assert [k["body"]["report"]["facts"]["python"]["executable"] for k in kept(homes)] == [failed]


def test_report_required_makes_a_failed_post_exit_4_only_when_no_check_failed(venvs):
    nobody = f"http://127.0.0.1:{free_port()}"
    assert run_cli([*passing_run(venvs), "--report-to", nobody])[0] == 0
    assert run_cli([*passing_run(venvs), "--report-to", nobody, "--report-required"])[0] == 4
    failing = ["--python", venvs / "first" / "bin" / "python", "--no-probe", "--only", "tensorflow-install", "--json"]
    assert run_cli([*failing, "--report-to", nobody, "--report-required"])[0] == 1  # the diagnosis says more


def test_the_kept_reports_are_bounded_the_oldest_dropped_first(homes, monkeypatch):
    monkeypatch.setattr(report_to, "MAX_PENDING", 3)
    nobody = f"http://127.0.0.1:{free_port()}"
    for number in range(5):
        outcome = report_to.report_to(nobody, [{"number": number}], None, [], False, timeout=5)
    assert outcome.lines[0].startswith("tfdoctor: 3 pending reports not posted to")  # the kept ones tried first
    assert outcome.not_posted == 4 and "(the oldest 1 kept report dropped: at most 3 are kept)" in outcome.lines[-1]
    assert [k["body"]["report"]["number"] for k in kept(homes)] == [2, 3, 4]
    monkeypatch.setattr(report_to, "MAX_PENDING_BYTES", 1000)
    report_to.report_to(nobody, [{"big": "x" * 600}], None, [], False, timeout=5)
    directory = homes / "xdg_cache_home" / "tfdoctor" / "pending-reports"
    assert sum(path.stat().st_size for path in directory.glob("*.json")) <= 1000
    assert "big" in kept(homes)[-1]["body"]["report"] and len(kept(homes)) < 3  # older ones made room
    outcome = report_to.report_to(nobody, [{"huge": "x" * 2000}], None, [], False, timeout=5)
    assert "not kept to send again (the report is larger than" in outcome.lines[-1]
    assert "huge" not in json.dumps(kept(homes))


def test_the_machine_id_is_never_read_or_written_through_a_planted_link(tmp_path):
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    home = tmp_path / "config" / "tfdoctor"
    home.mkdir(parents=True)
    (home / f".machine-id.{os.getpid()}").symlink_to(victim)  # the temporary name this process would write
    made = report_to.machine_id(home)
    assert victim.read_text() == "precious\n"
    assert not (home / "machine-id").is_symlink() and (home / "machine-id").read_text().strip() == made

    (tmp_path / "someone-elses-id").write_text("0123456789abcdef\n")
    (home / "machine-id").unlink()
    (home / "machine-id").symlink_to(tmp_path / "someone-elses-id")
    replaced = report_to.machine_id(home)
    assert replaced not in (made, "0123456789abcdef")
    assert (tmp_path / "someone-elses-id").read_text() == "0123456789abcdef\n"
    assert not (home / "machine-id").is_symlink() and report_to.machine_id(home) == replaced


# --- the "done when": each hostile or absent server, then `tfdoctor report send` --------------------

@pytest.mark.parametrize("hostile", ["redirect", "drip", "500", "refused"])
def test_the_token_stays_home_the_run_ends_in_time_and_the_report_is_sent_later(hostile, servers, venvs, homes):
    elsewhere = servers("store", host="localhost")
    behaviour = {"redirect": f"redirect:{elsewhere.url}/api/v1/reports"}.get(hostile, hostile)
    server: Optional[Hostile] = None if hostile == "refused" else servers(behaviour)
    port = server.port if server else free_port()
    url = f"http://127.0.0.1:{port}"

    code, out, err, took = timed([*passing_run(venvs), "--report-to", url, "--report-timeout", "3"])
    assert took < 3 + 10 and code == 0 and err.count("\n") == 1  # 3 s for the post, a generous margin
    assert err.startswith(f"tfdoctor: report not posted to {url}: ") and "kept in" in err and TOKEN not in err
    assert elsewhere.requests == []
    assert [k["body"]["report"] for k in kept(homes)] == [json.loads(out)]

    if server is None:
        server = servers("store", port=port)
    server.behaviour = "store"
    code, _, err = run_cli(["report", "send"])
    assert (code, err) == (0, f"tfdoctor: sent 1 pending report to {url}/api/v1/reports\n")  # where it was kept for
    last = server.requests[-1]
    assert last["authorization"] == f"Bearer {TOKEN}" and last["body"]["report"] == json.loads(out)
    assert kept(homes) == [] and elsewhere.requests == []
    assert run_cli(["report", "send"])[:2] == (0, "")  # nothing left


def test_the_next_run_to_that_server_sends_what_is_kept_first(servers, venvs, homes):
    server = servers("500")
    _, first, _ = run_cli([*passing_run(venvs), "--report-to", server.url])
    other = servers("500")
    run_cli([*passing_run(venvs), "--report-to", other.url])  # kept for another server: not this run's to send
    server.behaviour = "store"
    code, second, err = run_cli([*passing_run(venvs), "--report-to", server.url])
    assert (code, err) == (0, f"tfdoctor: sent 1 pending report to {server.url}\ntfdoctor: report posted to {server.url}\n")
    assert [r["body"]["report"] for r in server.requests[1:]] == [json.loads(first), json.loads(second)]
    assert [k["url"] for k in kept(homes)] == [f"{other.url}/api/v1/reports"] and len(other.requests) == 1


def test_report_send_names_one_server_when_reports_are_kept_for_several(servers, venvs, homes):
    one, two = servers("500"), servers("500")
    for server in (one, two):
        run_cli([*passing_run(venvs), "--report-to", server.url])
    one.behaviour = two.behaviour = "store"
    code, out, err = run_cli(["report", "send"])
    assert code == 2 and out == "" and "kept for 2 servers" in err and "--report-to URL" in err
    assert len(one.requests) == len(two.requests) == 1  # the token went nowhere
    code, _, err = run_cli(["report", "send", "--report-to", two.url])
    assert (code, err) == (0, f"tfdoctor: sent 1 pending report to {two.url}\n")
    assert len(one.requests) == 1 and [k["url"] for k in kept(homes)] == [f"{one.url}/api/v1/reports"]


def test_report_send_exits_4_while_the_server_is_still_down(servers, venvs, homes):
    server = servers("500")
    run_cli([*passing_run(venvs), "--report-to", server.url])
    code, _, err = run_cli(["report", "send"])
    assert code == 4 and err.startswith(f"tfdoctor: 1 pending report not posted to {server.url}/api/v1/reports: "
                                        "HTTP 500")
    assert "still kept in" in err and len(kept(homes)) == 1


def test_a_pending_directory_planted_as_a_link_is_neither_written_nor_read(servers, venvs, homes):
    elsewhere = homes / "elsewhere"
    elsewhere.mkdir()
    (homes / "xdg_cache_home" / "tfdoctor").mkdir(parents=True)
    (homes / "xdg_cache_home" / "tfdoctor" / "pending-reports").symlink_to(elsewhere)
    server = servers("500")
    code, _, err = run_cli([*passing_run(venvs), "--report-to", server.url])
    assert code == 0 and "not kept to send again" in err and "is a symbolic link" in err
    assert list(elsewhere.iterdir()) == []
    planted = {"format": 1, "url": f"{server.url}/api/v1/reports", "body": {"machine_id": "planted0", "report": {}}}
    (elsewhere / f"{time.time_ns():020d}-{'0' * 12}-{'0' * 8}.json").write_text(json.dumps(planted))
    server.behaviour = "store"
    code, _, err = run_cli(["report", "send"])
    assert code == 2 and "is a symbolic link" in err and len(server.requests) == 1
