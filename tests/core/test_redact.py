"""Redaction rules, one by one, on the redactor itself (the end-to-end runs are in tests/cli/test_redact_cli.py)."""

from __future__ import annotations

import json

import pytest

from tfdoctor.collect.system import select_environment
from tfdoctor.report.redact import (
    HOST_PLACEHOLDER,
    REDACTED,
    USER_PLACEHOLDER,
    Redactor,
    drop_environment_secrets,
    looks_secret,
    scrub_secrets,
)
from tfdoctor.render.formats import Look, output_format, serving
from tfdoctor.report.run import RunReport

ALICE = Redactor(home="/home/alice", user="alice", host="alices-laptop.corp.example")
HF_TOKEN = "hf_" + "A1b2C3d4E5" * 4
GITHUB_TOKEN = "ghp_" + "x9Y8z7W6v5" * 4


@pytest.mark.parametrize(
    "text, expected",
    [
        ("/home/alice/venv/bin/python", "~/venv/bin/python"),
        ("/home/alice", "~"),
        ("PATH=/home/alice/bin:/usr/bin", "PATH=~/bin:/usr/bin"),
        # a longer name that merely starts with the home is someone else's directory
        ("/home/alice2/x", f"/home/{USER_PLACEHOLDER}/x"),
    ],
)
def test_home_becomes_tilde(text, expected):
    assert ALICE.text(text) == expected


@pytest.mark.parametrize(
    "text, expected",
    [
        ("/Users/bob/miniforge3/bin/python", f"/Users/{USER_PLACEHOLDER}/miniforge3/bin/python"),
        ("/home/carol/.local/lib", f"/home/{USER_PLACEHOLDER}/.local/lib"),
        ("/mnt/c/Users/dave/x", f"/mnt/c/Users/{USER_PLACEHOLDER}/x"),
        (r"C:\Users\Erin Smith\AppData\Local\python.exe", rf"C:\Users\{USER_PLACEHOLDER}\AppData\Local\python.exe"),
        (r"c:/users/frank/venv", f"c:/users/{USER_PLACEHOLDER}/venv"),
        # a repr or a JSON string doubles the backslashes
        (r"'C:\\Users\\gina\\site-packages'", rf"'C:\\Users\\{USER_PLACEHOLDER}\\site-packages'"),
        # shared and CI accounts identify nobody and tell the reader something: kept
        ("/Users/Shared/x /home/runner/work /home/linuxbrew/.linuxbrew", "/Users/Shared/x /home/runner/work /home/linuxbrew/.linuxbrew"),
    ],
)
def test_user_directories_under_any_root_hide_the_name(text, expected):
    assert ALICE.text(text) == expected


def test_user_and_host_names_as_words_whatever_the_case():
    out = ALICE.text("Alice ran it on alices-laptop.corp.example (alices-laptop), by alice")
    assert "alice" not in out.lower()
    assert out == f"{USER_PLACEHOLDER} ran it on {HOST_PLACEHOLDER} ({HOST_PLACEHOLDER}), by {USER_PLACEHOLDER}"


def test_names_inside_other_words_stay():
    assert Redactor(None, "ann", None).text("annotated-types channel") == "annotated-types channel"


@pytest.mark.parametrize("user, host", [("root", "vm"), ("ubuntu", "localhost"), ("ok", "mac")])
def test_generic_names_do_not_eat_the_report(user, host):
    redactor = Redactor(None, user, host)
    text = "vm.swapusage: status ok; Ubuntu 22.04 on an Intel Mac; root cause; localhost"
    assert redactor.text(text) == text


def test_learned_names_from_another_machines_paths():
    document = {"facts": {"python": {"executable": "/Users/mallory/venv/bin/python"}},
                "results": [{"summary": "mallory's TensorFlow is broken"}]}
    redacted = Redactor(None, None, None).learning_from(document).document(document)
    assert "mallory" not in json.dumps(redacted)
    assert redacted["results"][0]["summary"] == f"{USER_PLACEHOLDER}'s TensorFlow is broken"


@pytest.mark.parametrize(
    "text, hidden",
    [
        ("pip install --index-url https://alice:s3cretpw@pypi.example.com/simple x", ["s3cretpw", "alice:"]),
        ("git+https://oauth2:glpat-AbCdEfGhIjKlMnOpQrSt@gitlab.example.com/r.git", ["glpat-AbCd"]),
        (f"export HF_TOKEN={HF_TOKEN}", [HF_TOKEN]),
        (f"token is {GITHUB_TOKEN}.", [GITHUB_TOKEN]),
        ("OPENAI_API_KEY=notaprefixedvalue123", ["notaprefixedvalue123"]),
        ("https://h/x?api_key=Zz9Yy8&page=2", ["Zz9Yy8"]),
        ("Authorization: Bearer abcdefghijklmnopqrstuvwxyz", ["abcdefghijklmnopqrstuvwxyz"]),
        ("key AKIAIOSFODNN7EXAMPLE used", ["AKIAIOSFODNN7EXAMPLE"]),
        ("sk-proj-abcdefghijklmnopqrstuvwx1234", ["abcdefghijklmnopqrstuvwx1234"]),
        ('password="hunter2 with spaces"', ["hunter2"]),
    ],
)
def test_secrets_in_text_are_hidden(text, hidden):
    out = scrub_secrets(text)
    assert REDACTED in out
    for secret in hidden:
        assert secret not in out


@pytest.mark.parametrize(
    "text",
    [
        "KeyError: 'tensorflow' TokenError: bad",  # words, not assignments
        "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",  # hashes stay readable
        "https://pypi.org/simple/tensorflow-metal/",
        "Successfully opened dynamic library libcudart.so.12",
        "desk-top task-manager-with-a-very-long-name",
    ],
)
def test_ordinary_text_is_left_alone(text):
    assert scrub_secrets(text) == text


def test_environment_allowlist_and_secret_names():
    environ = {
        "TF_CPP_MIN_LOG_LEVEL": "2", "CUDA_VISIBLE_DEVICES": "0", "PYTHONPATH": "/x", "CONDA_PREFIX": "/c",
        "PIP_INDEX_URL": "https://u:p4ss@pypi.example.com/simple", "MTL_DEBUG_LAYER": "1",
        "TF_HUB_TOKEN": "tok", "HF_TOKEN": "tok2", "AWS_SECRET_ACCESS_KEY": "k", "HOME": "/home/alice",
        "USER": "alice", "HOSTNAME": "box", "TF_VAR_db_pass": "hunter2", "TF_VAR_region": "eu-west-1",
        "PIP_PASS": "p", "CONDA_DB_PWD": "p",
    }
    chosen = select_environment(environ)
    assert chosen["TF_CPP_MIN_LOG_LEVEL"] == "2" and chosen["CUDA_VISIBLE_DEVICES"] == "0"
    assert chosen["MTL_DEBUG_LAYER"] == "1" and chosen["CONDA_PREFIX"] == "/c"
    assert chosen["PIP_INDEX_URL"] == f"https://{REDACTED}@pypi.example.com/simple"
    # secret-looking names whatever their prefix, and Terraform's variables, are not recorded at all
    for absent in ("TF_HUB_TOKEN", "TF_VAR_db_pass", "TF_VAR_region", "PIP_PASS", "CONDA_DB_PWD", "HF_TOKEN",
                   "AWS_SECRET_ACCESS_KEY", "HOME", "USER", "HOSTNAME"):
        assert absent not in chosen


@pytest.mark.parametrize("name", ["HF_TOKEN", "tf_api_key", "PIP_PASSWORD", "AWS_SECRET_ACCESS_KEY", "GOOGLE_APPLICATION_CREDENTIALS",
                                  "TF_VAR_db_pass", "PIP_PASSPHRASE", "DB_PWD"])
def test_secret_looking_names(name):
    assert looks_secret(name)


def test_saved_reports_lose_their_secret_environment_variables():
    document = {"facts": {"environment": {"TF_TOKEN": "plain-value", "TF_VAR_db_pass": "hunter2",
                                          "TF_CPP_MIN_LOG_LEVEL": "1"}}}
    assert drop_environment_secrets(document)["facts"]["environment"] == {"TF_CPP_MIN_LOG_LEVEL": "1"}
    redacted = json.dumps(Redactor(None, None, None).document(document))
    assert "plain-value" not in redacted and "hunter2" not in redacted and "TF_VAR_db_pass" not in redacted


def _planted_document() -> dict:
    """A report whose facts carry the planted identities and secrets in paths and TensorFlow's error text."""
    error = ("ImportError: dlopen(/home/alice/venv/lib/python3.11/site-packages/tensorflow/python/"
             "_pywrap_tensorflow_internal.so, 0x0006): Library not loaded: @rpath/libtensorflow_framework.2.dylib\n"
             f"  Referenced from: /Users/alice/x.so (built on alices-laptop.corp.example with {HF_TOKEN})")
    facts = {
        "host": {"system": "Linux", "machine": "x86_64"},
        "python": {"executable": "/home/alice/venv/bin/python", "version": "3.11.7", "machine": "x86_64"},
        "environment": {"PYTHONPATH": "/home/alice/src", "TF_TOKEN": "leaky"},
        "tensorflow": {"status": "import_error", "stderr_tail": error,
                       "exception": {"type": "ImportError", "message": error}},
    }
    from tfdoctor.results.model import CheckResult, Remediation, Status

    result = CheckResult("tensorflow-import", "TensorFlow imports", Status.FAIL, error.splitlines()[0],
                         tuple(error.splitlines()),
                         Remediation("Reinstall in /home/alice/venv", ("/home/alice/venv/bin/python -m pip install x",)))
    return RunReport(facts=facts, results=[result]).to_dict()


@pytest.mark.parametrize("fmt", serving("report"))
def test_every_format_is_clean_after_redaction(fmt):
    document = ALICE.learning_from(_planted_document()).document(_planted_document())
    out = output_format(fmt).report(document, Look(verbose=True))
    for planted in ("alice", "alices-laptop", HF_TOKEN, "leaky", "/home/alice"):
        assert planted.lower() not in out.lower(), planted
    assert "~/venv/bin/python" in out
