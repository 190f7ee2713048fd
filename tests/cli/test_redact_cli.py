"""End to end: planted identities and secrets never leave `python -m tfdoctor`, in any format.

The test builds its own machine: HOME is a temporary directory named after a fake user, PYTHONPATH
puts a fake `tensorflow` package (with metadata) under that home, and its import raises an
ImportError that mentions its own path, the user, the host and a token. The environment carries a
secret-named variable and an index URL with a password.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tfdoctor.report.redact import identifying

USER = "zqxplanteduser"
TOKEN = "hf_" + "PlantedToken0123456789" * 2
ENV_SECRET = "plantedenvsecretvalue"
PASSWORD = "plantedpassw0rd"
HOST = socket.gethostname()


def _fake_machine(tmp_path: Path) -> tuple[dict[str, str], Path]:
    home = tmp_path / "home" / USER
    site = home / "projects" / "site"
    package = site / "tensorflow"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(
        "raise ImportError('libtensorflow_framework.so.2: cannot open shared object file: No such file or "
        f"directory (from ' + __file__ + ', user {USER} on {HOST}, {TOKEN})')\n",
        encoding="utf-8",
    )
    meta = site / "tensorflow-2.99.0.dist-info"
    meta.mkdir()
    (meta / "METADATA").write_text("Metadata-Version: 2.1\nName: tensorflow\nVersion: 2.99.0\n", encoding="utf-8")
    (meta / "INSTALLER").write_text("pip\n", encoding="utf-8")
    (meta / "RECORD").write_text("tensorflow/__init__.py,,\n", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TF_", "PIP_INDEX"))}
    env.update(
        HOME=str(home), USER=USER, LOGNAME=USER, PYTHONPATH=str(site), NO_COLOR="1",
        TF_HUB_ACCESS_TOKEN=ENV_SECRET,
        PIP_INDEX_URL=f"https://{USER}:{PASSWORD}@pypi.example.com/simple",
    )
    return env, home


def _run(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tfdoctor", "--no-probe", *args], env=env, cwd=cwd,
                          capture_output=True, text=True, timeout=180)


@pytest.fixture(scope="module")
def machine(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("redact")
    env, home = _fake_machine(tmp_path)
    outputs = {fmt: _run(["--format", fmt], env, tmp_path) for fmt in ("text", "json", "markdown")}
    outputs["no-redact"] = _run(["--json", "--no-redact"], env, tmp_path)
    outputs["no-redact-text"] = _run(["--no-redact"], env, tmp_path)
    return home, outputs


def _planted(home: Path) -> list[str]:
    planted = [str(home), USER, TOKEN, ENV_SECRET, PASSWORD]
    if identifying(HOST):  # a host called 'vm' or 'localhost' is not a secret (see redact.py)
        planted.append(HOST)
    return planted


@pytest.mark.parametrize("fmt", ["text", "json", "markdown"])
def test_no_planted_secret_in_any_format(machine, fmt):
    home, outputs = machine
    run = outputs[fmt]
    assert run.returncode in (0, 1), run.stderr
    for secret in _planted(home):
        assert secret not in run.stdout, secret
        assert secret not in run.stderr, secret


def test_the_redacted_report_keeps_what_is_safe_and_drops_secret_names(machine):
    home, outputs = machine
    report = json.loads(outputs["json"].stdout)
    assert report["redacted"] is True
    environment = report["facts"]["environment"]
    assert "TF_HUB_ACCESS_TOKEN" not in environment  # a secret-looking name is not recorded at all
    assert environment["PYTHONPATH"] == "~/projects/site"
    assert environment["PIP_INDEX_URL"] == "https://<redacted>@pypi.example.com/simple"
    tensorflow = [d for d in report["facts"]["distributions"] if d["name"] == "tensorflow"]
    assert tensorflow and tensorflow[0]["location"] == "~/projects/site"


def test_no_redact_shows_them_and_says_so(machine):
    home, outputs = machine
    report = json.loads(outputs["no-redact"].stdout)
    assert report["redacted"] is False
    text = outputs["no-redact"].stdout
    assert str(home) in text and USER in text
    assert report["facts"]["environment"]["PYTHONPATH"] == str(home / "projects" / "site")
    # secret-named variables and URL passwords are never recorded, redaction or not
    assert ENV_SECRET not in text and PASSWORD not in text
    assert "Not redacted" in outputs["no-redact-text"].stdout


def test_tensorflow_error_text_is_redacted_too(machine):
    home, outputs = machine
    raw = json.loads(outputs["no-redact"].stdout)["facts"].get("tensorflow")
    if raw is None:
        pytest.skip("the TensorFlow collector does not record facts yet")
    assert str(home / "projects" / "site" / "tensorflow") in json.dumps(raw), "the planted error text was recorded"
    redacted = json.loads(outputs["json"].stdout)["facts"]["tensorflow"]
    assert "~/projects/site/tensorflow/__init__.py" in json.dumps(redacted)
