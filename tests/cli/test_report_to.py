"""`--report-to URL` (issue 28): a run posts its report, as printed and redacted, to a real team server; a
failed post is one line on stderr and leaves the exit code alone."""

from __future__ import annotations

import json
import socket
import subprocess
import sys

import pytest

from tests.cli_support import run_cli
from tests.server_support import TOKEN, RunningServer, free_port
from tfdoctor.posting import client as report_to


@pytest.fixture(scope="module")
def cheap_broken_venv(tmp_path_factory):
    """A real virtual environment without TensorFlow (no pip either): the doctor fails it in seconds."""
    prefix = tmp_path_factory.mktemp("venvs") / "no-tensorflow"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(prefix)], check=True)
    return prefix


@pytest.fixture()
def server(tmp_path):
    with RunningServer(f"sqlite:///{tmp_path / 'server.sqlite3'}", TOKEN) as running:
        yield running


@pytest.fixture(autouse=True)
def config_home(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # where a failed post keeps its report
    monkeypatch.delenv("TFDOCTOR_REPORT_TOKEN", raising=False)
    return tmp_path / "config" / "tfdoctor"


def test_a_run_posts_the_report_it_printed_with_labels_and_a_random_machine_id(
        server, cheap_broken_venv, config_home, monkeypatch, tmp_path):
    monkeypatch.setenv("TFDOCTOR_REPORT_TOKEN", TOKEN)
    args = ["--python", cheap_broken_venv / "bin" / "python", "--no-probe", "--json"]
    alone = run_cli(args)
    code, out, err = run_cli([*args, "--report-to", server.url, "--label", "team=nlp", "--label", "site=lab"])
    store = server.app.state.server.store
    [environment] = store.environments()
    # one line on success (issue 37): the environment's page and its status there
    assert (code, err) == (alone[0], f"tfdoctor: report posted: {server.url}/environments/{environment['id']} (fail)\n")
    assert code == 1
    machine = (config_home / "machine-id").read_text().strip()
    assert environment["machine"] == machine and len(machine) == 32
    assert environment["labels"] == {"team": "nlp", "site": "lab"} and environment["hostname"] is None
    assert environment["status"] == "fail" and environment["first_failing_check"] == "tensorflow-install"
    assert store.report(environment["last_report_id"]) == json.loads(out)  # as printed, redacted
    assert json.loads(out)["redacted"] is True

    token_file = tmp_path / "token"
    token_file.write_text(TOKEN + "\n")
    monkeypatch.delenv("TFDOCTOR_REPORT_TOKEN")
    code, _, err = run_cli([*args, "--report-to", server.url, "--report-token-file", token_file,
                            "--report-hostname", "--label", "team=nlp"])
    assert (code, err) == (1, f"tfdoctor: report posted: {server.url}/environments/{environment['id']} (fail)\n")
    [again] = store.environments()  # the same machine id: the same environment, one more report
    assert again["id"] == environment["id"] and again["hostname"] == socket.gethostname()
    assert len(store.history(again["id"])) == 2


def test_scan_posts_each_environment_it_diagnosed(server, cheap_broken_venv, monkeypatch):
    monkeypatch.setenv("TFDOCTOR_REPORT_TOKEN", TOKEN)
    code, _, err = run_cli(["scan", cheap_broken_venv, "--json", "--report-to", server.url, "--label", "via=scan"])
    [environment] = server.app.state.server.store.environments()
    venv_python = cheap_broken_venv / "bin" / "python"
    assert (code, err) == (1, f"tfdoctor: report of {venv_python} posted: {server.url}/environments/{environment['id']} "
                              "(fail)\n")
    assert environment["labels"] == {"via": "scan"} and environment["python"].endswith("/bin/python")


@pytest.mark.parametrize("where", ["no token", "nobody listening"])
def test_a_failed_post_is_one_line_on_stderr_and_keeps_the_exit_code(server, cheap_broken_venv, where):
    url = server.url if where == "no token" else f"http://127.0.0.1:{free_port()}"
    args = ["--python", cheap_broken_venv / "bin" / "python", "--no-probe", "--json"]
    code, out, err = run_cli([*args, "--report-to", url])
    assert code == 1 and json.loads(out)["totals"]["fail"] >= 1
    assert err.count("\n") == 1 and err.startswith(f"tfdoctor: report not posted to {url}: ")
    assert ("HTTP 401" in err) == (where == "no token")
    assert server.app.state.server.store.environments() == []


def test_the_machine_id_is_made_once_and_kept(tmp_path):
    first = report_to.machine_id(tmp_path)
    assert report_to.machine_id(tmp_path) == first and (tmp_path / "machine-id").read_text().strip() == first
    (tmp_path / "machine-id").write_text("../../not an id\n")
    assert report_to.machine_id(tmp_path) != first  # an unreadable id is replaced, never sent


@pytest.mark.parametrize("url, posted_to", [
    ("http://team:8765", "http://team:8765/api/v1/reports"),
    ("https://team.example/tf/", "https://team.example/tf/api/v1/reports"),
    ("http://team:8765/api/v1/reports", "http://team:8765/api/v1/reports"),
])
def test_the_url_is_the_servers_base_or_its_api(url, posted_to):
    assert report_to.endpoint(url) == posted_to


@pytest.mark.parametrize("bad", ["file:///etc/passwd", "team:8765", "ftp://team/"])
def test_only_http_urls_are_posted_to(bad):
    with pytest.raises(report_to.PostRefused):
        report_to.endpoint(bad)


def test_labels_are_key_equals_value():
    assert report_to.parse_labels(["team=vision", "gpu=a100=80g"]) == {"team": "vision", "gpu": "a100=80g"}
    for bad in ("team", "=x", "te am=x", "team="):
        with pytest.raises(ValueError):
            report_to.parse_labels([bad])
