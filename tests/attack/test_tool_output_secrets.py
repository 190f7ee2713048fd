"""Secrets in what other tools print (issue 35): pip's own output, an interpreter's last words, relayed by
`tfdoctor fix` or an error line, carry no secret shape of tests/attack/test_secrets.py.

pip names an index it cannot reach by its path alone in its retry warnings ("Retrying (...) after connection
broken by ...: /simple?key=.../fakedep/"), where no URL scrubber looks. The test makes pip really print them:
a small real venv (tests/fixer_support.py) whose index and extra index carry a password, `?key=`, `&sig=` and
`&token=` and point at a loopback port that refuses connections, so pip retries, warns and fails, and `fix`
relays the tail of its output. Checked against fab4259 (this file copied into `git archive fab4259`): the
`?key=` and `sig=` values reached fix's stdout in every retry warning, an interpreter's secret reached
the `tfdoctor: error:` line, and the bare-path shapes passed scrub_secrets.
"""

from __future__ import annotations

import os
import socket
import sys
from pathlib import Path

import pytest

from tests import fixer_support as fs
from tfdoctor.report.redact import REDACTED, scrub_secrets

PASSWORD, KEY, SIGNATURE, TOKEN = "S3CRETpassw0rd", "S3CRETkeyvalue", "S3CRETsignature", "S3CRETtokenvalue"
SECRETS = (PASSWORD, KEY, SIGNATURE, TOKEN)


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    root = tmp_path_factory.mktemp("toolsecrets")
    wheels, base, env = fs.build_world(root)
    return root, base, env


@pytest.fixture
def refused_port():
    """A loopback port bound and never listened on: every connection is refused at once, and no other
    process can take the port while the test runs."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    yield sock.getsockname()[1]
    sock.close()


def _leaky(env: dict, port: int, home: Path) -> dict:
    config = home / "pip.conf"  # the machine's own pip configuration plays no part
    config.write_text("", encoding="utf-8")
    leaky = {k: v for k, v in env.items() if k not in ("PIP_NO_INDEX", "PIP_FIND_LINKS")}
    leaky.update(PIP_INDEX_URL=f"http://alice:{PASSWORD}@127.0.0.1:{port}/simple?key={KEY}",
                 PIP_EXTRA_INDEX_URL=f"http://127.0.0.1:{port}/extra/simple?sig={SIGNATURE}&token={TOKEN}",
                 PIP_RETRIES="2", PIP_TIMEOUT="2", PIP_CONFIG_FILE=str(config), HOME=str(home),
                 XDG_CACHE_HOME=str(home / "cache"), XDG_CONFIG_HOME=str(home / "config"))
    return leaky


def _clean(text: str) -> None:
    for secret in SECRETS:
        assert secret not in text, f"{secret} leaked:\n{text}"


def test_pips_retry_warnings_relayed_by_fix_carry_no_secret(world, refused_port, tmp_path):
    root, base, env = world
    target = fs.copy_venv(base, tmp_path / "leaky")
    result = fs.fix(target, _leaky(env, refused_port, tmp_path), "--yes")
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    assert "did not work on a copy" in result.stdout and "Retrying" in result.stdout, output  # pip's own lines
    assert f"key={REDACTED}" in result.stdout, output  # the bare path's query, hidden where it stood
    _clean(output)


@pytest.mark.parametrize("line", [
    # pip 26's retry warning, as it prints it for an index URL with a query (urllib3's request path)
    "WARNING: Retrying (Retry(total=1, connect=None, read=None, redirect=None, status=None)) after connection "
    "broken by 'NewConnectionError(\"HTTPConnection(host='127.0.0.1', port=9): Failed to establish a new "
    f"connection: [Errno 111] Connection refused\")': /simple?key={KEY}/fakedep/",
    f"WARNING: Retrying (Retry(total=0)) after connection broken by 'ReadTimeoutError': /extra/simple?sig={SIGNATURE}"
    f"&token={TOKEN}/fakedep/",
    # urllib3's MaxRetryError, which pip relays in its ERROR lines
    f"HTTPConnectionPool(host='127.0.0.1', port=9): Max retries exceeded with url: /links?sv=2022&sig={SIGNATURE} "
    "(Caused by NewConnectionError('Connection refused'))",
    f"GET /simple/numpy/?api_key={KEY}#frag",
])
def test_a_query_after_a_bare_path_loses_its_credentials(line):
    out = scrub_secrets(line)
    _clean(out)
    assert REDACTED in out


def test_a_query_without_credentials_is_left_alone():
    text = "fetched /simple/numpy/?page=2&sort=asc and https://example.org/x?format=json"
    assert scrub_secrets(text) == text


def test_an_interpreters_last_words_on_the_error_line_carry_no_secret(tmp_path):
    """`fix --python X` quotes the last line X wrote when it could not answer: here a URL with a password and a
    key, written by a sitecustomize before the interpreter dies."""
    venv = tmp_path / "dying"
    python = Path(getattr(sys, "_base_executable", sys.executable))
    assert fs.run([python, "-m", "venv", "--without-pip", venv]).returncode == 0
    (fs.site_packages(venv) / "sitecustomize.py").write_text(
        "import os, sys\n"
        f"sys.stderr.write('cannot reach https://alice:{PASSWORD}@127.0.0.1:9/simple?key={KEY}\\n')\n"
        "sys.stderr.flush()\nos._exit(3)\n", encoding="utf-8")
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("PIP_")}, "HOME": str(tmp_path),
           "XDG_CACHE_HOME": str(tmp_path / "cache"), "XDG_CONFIG_HOME": str(tmp_path / "config")}
    for args in (("fix", "--python", venv / "bin" / "python", "--yes"), ("--python", venv / "bin" / "python", "--no-probe")):
        result = fs.run(fs.doctor_argv(*args), env=env, timeout=120)
        assert result.returncode == 2 and "tfdoctor: error:" in result.stderr, result.stdout + result.stderr
        _clean(result.stdout + result.stderr)
