"""Secrets planted the way they reach a report: nothing secret-shaped survives redaction.

Property tests (hypothesis) generate the shapes from their definitions (TOKEN_SHAPES' prefixes and
bodies, NAME=value with a secret-looking NAME, an AWS secret key after a 'secret' name, PEM private-key
blocks) inside ordinary text; the documented examples of each issuer are checked as they are. Linear
time for every pattern is tests/attack/test_hostile_reports.py's sweep; the times are bench/bench_hostile.py's.
"""

from __future__ import annotations

import re
import string

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tfdoctor.collect.system import ENVIRONMENT_PREFIXES, select_environment
from tfdoctor.report.redact import REDACTED, SECRET_WORDS, TOKEN_SHAPES, Redactor, drop_environment_secrets, scrub_secrets

PROPERTY = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
# Surrounding prose that can form no secret of its own (no '-', ':', '/', '=' or '_').
PROSE = st.text(alphabet=string.ascii_lowercase + string.digits + " .,()", max_size=60)

# Examples from the issuers' own pages (see each TokenShape's source), and the shapes of the others.
DOCUMENTED = [
    "AKIAIOSFODNN7EXAMPLE",  # AWS access key id (STS GetAccessKeyInfo)
    "AIzaefgh0123456789_-ABCDEFGHIJKLMNOPQRS",  # Google API key (Microsoft Purview's definition)
    # RFC 7519 section 3.1
    "eyJ0eXAiOiJKV1QiLA0KICJhbGciOiJIUzI1NiJ9.eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxl"
    "LmNvbS9pc19yb290Ijp0cnVlfQ.dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk",
    "xoxb-17653672481-19874698323-pdFZKVeTuE8sk7oOcBrzbqgy",  # Slack bot token
    "ghp_" + "A1b2C3d4E5" * 4, "github_pat_" + "11ABCDEFG0" * 3, "glpat-" + "AbCdEfGhIj" * 2,
    "hf_" + "PlantedToken0123456789" * 2, "sk-proj-" + "abcdefghij" * 4, "npm_" + "a1B2c3D4e5" * 3 + "F6g7H8",
    "pypi-AgEIcHlwaS5vcmc" + "CJGE4ZjI5" * 6,
]


@pytest.mark.parametrize("token", DOCUMENTED)
def test_documented_tokens_are_hidden(token):
    for text in (token, f"error: {token}.", f"(token={token})", f'{{"key": "{token}"}}', f"${{KEY:-{token}}}"):
        out = scrub_secrets(text)
        assert token not in out and REDACTED in out, text


def test_every_shape_cites_its_public_definition():
    for shape in TOKEN_SHAPES:
        assert shape.source.startswith("https://"), shape.name
        re.compile(shape.pattern)


JWT_BODY = r"[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}"  # after 'eyJ', RFC 7519 section 3.1


@st.composite
def token_in_prose(draw):
    shape = draw(st.sampled_from([*TOKEN_SHAPES, None]))
    prefixes, body = (shape.prefixes, shape.body) if shape else (("eyJ",), JWT_BODY)
    token = draw(st.sampled_from(prefixes)) + draw(st.from_regex(f"\\A{body}\\Z", fullmatch=True))
    before = draw(st.sampled_from([" ", "(", "=", ":-", "'", "\n"]))
    return f"{draw(PROSE)}{before}{token} {draw(PROSE)}", token


@PROPERTY
@given(token_in_prose())
def test_no_token_shape_survives(case):
    text, token = case
    out = scrub_secrets(text)
    assert token not in out and REDACTED in out


SECRET_NAMES = st.builds(
    "".join, st.tuples(st.sampled_from(["", "MY_", "aws_", "db.", "x-", "HF_", "openai."]),
                       st.sampled_from(["token", "TOKEN", "secret", "password", "passwd", "pass", "PWD", "api_key",
                                        "apikey", "access_key", "private_key", "credentials", "AccountKey",
                                        "SharedAccessSignature", "passphrase", "auth"]),
                       st.sampled_from(["", "_ID", "_VALUE", "-2", ".x"])))
VALUES = st.text(alphabet=string.ascii_letters + string.digits + "!#$%()*+/<>?@^~[]{}|.-_=:", min_size=1, max_size=40)


@PROPERTY
@given(PROSE, SECRET_NAMES, st.sampled_from(["=", " = ", "\t=\t"]), VALUES, PROSE)
def test_no_secret_assignment_survives(left, name, equals, value, right):
    out = scrub_secrets(f"{left} {name}{equals}{value} {right}")
    assert f"{name}{equals}{REDACTED} " in out


@PROPERTY
@given(PROSE, SECRET_NAMES, st.sampled_from(["'", '"']), VALUES.filter(lambda v: "'" not in v and '"' not in v), PROSE)
def test_no_quoted_key_survives(left, name, quote, value, right):
    # JSON, and a dict's repr in a traceback: "password": "hunter2"
    out = scrub_secrets(f"{left} {{{quote}{name}{quote}: {quote}{value}{quote}, {quote}n{quote}: 1}} {right}")
    assert f"{quote}{name}{quote}: {REDACTED}," in out


AWS_SECRET_NAMES = st.sampled_from(["aws_secret_access_key", "AWS_SECRET_ACCESS_KEY", "SecretAccessKey", "secret",
                                    "SECRET_KEY", "aws.secret"])


@PROPERTY
@given(PROSE, AWS_SECRET_NAMES, st.sampled_from([" = ", "=", ": ", ":", "='", '": "']),
       st.from_regex(r"\A[A-Za-z0-9/+]{40}\Z", fullmatch=True), PROSE)
def test_no_aws_secret_key_survives_after_its_name(left, name, separator, key, right):
    out = scrub_secrets(f"{left} {name}{separator}{key} {right}")
    assert key not in out and REDACTED in out


def test_a_bare_40_character_string_is_left_alone():
    # Without its name an AWS secret key cannot be told from a SHA-1 or a build id: those stay readable.
    text = "commit da39a3ee5e6b4b0d3255bfef95601890afd80709 built 4f9c2a8e7d6b5c4a3f2e1d0c9b8a7f6e5d4c3b2a"
    assert scrub_secrets(text) == text


def test_aws_secret_key_in_an_error_text():
    secret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"  # AWS's documented example
    for text in (f"botocore: using aws_secret_access_key = {secret} from ~/.aws/credentials",
                 f'{{"Credentials": {{"AccessKeyId": "ASIAIOSFODNN7EXAMPLE", "SecretAccessKey": "{secret}"}}}}',
                 f"export AWS_SECRET_ACCESS_KEY={secret}"):
        out = scrub_secrets(text)
        assert secret not in out and "ASIAIOSFODNN7EXAMPLE" not in out, out


@PROPERTY
@given(st.sampled_from(["", "RSA ", "EC ", "DSA ", "OPENSSH ", "ENCRYPTED "]),
       st.lists(st.from_regex(r"\A[A-Za-z0-9+/]{16,64}\Z", fullmatch=True), min_size=1, max_size=6),
       st.booleans(), st.text(alphabet=string.ascii_lowercase + " ", max_size=30))
def test_no_private_key_block_survives(label, lines, terminated, after):
    block = f"-----BEGIN {label}PRIVATE KEY-----\n" + "\n".join(lines) + "\n"
    if terminated:
        block += f"-----END {label}PRIVATE KEY-----\n"
    out = scrub_secrets(f"key file:\n{block}{after if terminated else ''}")
    assert not any(line in out for line in lines) and REDACTED in out
    if terminated:
        assert out.endswith(after)  # what follows the block is kept


def test_azure_connection_string_keeps_its_shape_and_loses_its_key():
    key = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
    text = f"DefaultEndpointsProtocol=https;AccountName=devstore;AccountKey={key};EndpointSuffix=core.windows.net"
    assert scrub_secrets(text) == text.replace(key, REDACTED)
    sas = "sv=2022-11-02&ss=b&sig=abc%2Fdef"
    assert sas not in scrub_secrets(f"BlobEndpoint=https://x.blob.core.windows.net/;SharedAccessSignature={sas}")


def test_bearer_token_with_underscores_is_hidden_whole():
    out = scrub_secrets("Authorization: Bearer abc_def_ghi_jkl_mno")
    assert out == f"Authorization: Bearer {REDACTED}"


# --- environment variables --------------------------------------------------------------------------

@PROPERTY
@given(st.sampled_from(ENVIRONMENT_PREFIXES), st.sampled_from(SECRET_WORDS),
       st.text(alphabet=string.ascii_uppercase + "_", max_size=8), st.text(min_size=1, max_size=20))
def test_no_secret_looking_variable_is_recorded_whatever_its_prefix(prefix, word, tail, value):
    name = f"{prefix}{word}{tail}"
    assert name not in select_environment({name: value, "TF_CPP_MIN_LOG_LEVEL": "2"})


@given(st.text(alphabet=string.ascii_letters + string.digits + "_", min_size=1, max_size=20), st.text(max_size=20))
def test_terraform_variables_are_never_recorded(name, value):
    environ = {f"TF_VAR_{name}": value}
    assert select_environment(environ) == {}
    report = {"facts": {"environment": environ}}
    assert drop_environment_secrets(report)["facts"]["environment"] == {}


def test_a_saved_report_with_planted_variables_loses_them():
    document = {"facts": {"environment": {"TF_VAR_db_pass": "hunter2", "TF_VAR_region": "eu-west-1",
                                          "PIP_PASSWORD": "p4ss", "CUDA_VISIBLE_DEVICES": "0"}}}
    out = Redactor(None, None, None).document(document)
    assert out["facts"]["environment"] == {"CUDA_VISIBLE_DEVICES": "0"}


def test_a_token_shape_inside_a_jwt_does_not_leave_the_rest_of_it():
    jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ-sk-abcdefghijklmnopqrstuvwxyzAB.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
    assert scrub_secrets(f"token {jwt} here") == f"token {REDACTED} here"
