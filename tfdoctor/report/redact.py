"""Redaction: reports are safe to paste into a public issue by default.

What is hidden, in every string of the report document (paths, TensorFlow's error text, command
output, dictionary keys), in this order:

1. Secrets (`scrub_secrets`, also applied when environment values are collected, so they are never
   recorded at all): PEM private-key blocks, credentials in URLs, parsed (`https://user:p@ss@host` ->
   `https://<redacted>@host`, `?sig=...`, `?key=...`, `&token=...` -> `?sig=<redacted>`, also in a query
   that follows a bare path, as pip's retry warnings print it: `/simple?key=...`), `NAME=value` where
   NAME looks secret (`HF_TOKEN=...`, `?api_key=...`, `db_pass=...`, Azure's `AccountKey=...`), `"NAME": value`
   in quoted keys (JSON, a dict's repr), an AWS secret access key after a name holding `secret` (`aws_secret_access_key = ...`,
   `"SecretAccessKey": "..."`), `Bearer`/`Basic` credentials, and values shaped like well-known tokens
   (TOKEN_SHAPES, each with its public definition: Hugging Face `hf_`, GitHub `ghp_`/`github_pat_`,
   GitLab `glpat-`, OpenAI/Anthropic `sk-`, AWS `AKIA`/`ASIA`, Slack `xoxb-`..., Google `AIza`, npm,
   PyPI; and JWTs). Shapes are matched, not guessed: a random-looking string with no known prefix or
   context is left alone (a hash or a build id must stay readable), so a bare 40-character AWS secret
   key in free text is not recognised. Every pattern runs in linear time (see SCRUBBERS).
2. The home directory of this machine -> `~` (also its real path and its forward/doubled-backslash
   spellings on Windows).
3. Any user directory, whoever's: `/home/NAME`, `/Users/NAME`, `C:\\Users\\NAME` -> `<user>` in place
   of NAME, even when HOME is elsewhere, so a report saved with --no-redact on another machine is
   redacted when explained here. Shared, generic accounts (`/Users/Shared`, `/home/runner`,
   `/home/linuxbrew`) identify nobody and are kept: they are diagnostic.
4. The host name (full and first label), then the user name and every user name learned from
   step 3, as whole words, case-insensitively -> `<user>` / `<host>`. Names that cannot identify a person or
   that would eat the report's own vocabulary (shorter than 3 characters, `root`, `ubuntu`, `python`,
   `ok`, ...; see NOT_IDENTIFYING) are not replaced as words; in paths they are still covered by 2-3.

Environment variables are allowlisted (collect/system.py); a secret-looking name, whatever its prefix,
and another tool's variable (Terraform's `TF_VAR_*`) are never recorded (`never_recorded`);
`drop_environment_secrets` enforces the same on reports read from disk, which may come from older
versions or from people's hands. The redactor works on the JSON document, so
every renderer shows the same redacted data.
"""

from __future__ import annotations

import getpass
import os
import re
import socket
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Any, Callable, Iterable, Iterator

USER_PLACEHOLDER = "<user>"
HOST_PLACEHOLDER = "<host>"
REDACTED = "<redacted>"

# An environment variable whose name contains one of these is never recorded (substring, on purpose:
# hiding a harmless variable costs little, showing a secret a lot). PASS covers PASSWORD and PASSWD.
SECRET_WORDS = ("TOKEN", "KEY", "SECRET", "PASS", "PWD", "CRED", "AUTH", "PRIVATE", "COOKIE", "SESSION",
                "SIGNATURE")
# Variables of other tools that share an allowlisted prefix: Terraform's input variables (TF_VAR_db_pass,
# https://developer.hashicorp.com/terraform/language/values/variables#environment-variables) are never
# recorded, whatever their name.
FOREIGN_PREFIXES = ("TF_VAR_",)


def looks_secret(name: str) -> bool:
    upper = name.upper()
    return any(word in upper for word in SECRET_WORDS)


def never_recorded(name: str) -> bool:
    """An environment variable that no report may carry: a secret-looking name, or another tool's."""
    return looks_secret(name) or name.upper().startswith(FOREIGN_PREFIXES)


# --- secrets in text -------------------------------------------------------------------------------
# Every pattern here runs in time linear in the text, because a saved report comes from strangers:
# no nested or overlapping quantifiers, and where a failed attempt could scan far (a NAME=value pair, a
# URL's user) a lookbehind lets an attempt start only where a run of its characters starts, so no
# stretch of text is scanned again and again. tests/attack/test_hostile_reports.py's sweep holds every
# pattern to that on 100 KB adversarial strings; bench/bench_hostile.py times them on 1 MB.


@dataclass(frozen=True)
class TokenShape:
    """A credential recognised by its shape alone, as its issuer defines it: one of `prefixes`, then
    `body`, then nothing of `ending` (a fixed-length shape must not be the start of a longer word)."""

    name: str
    prefixes: tuple[str, ...]
    body: str
    source: str  # the public definition of the shape
    ending: str = ""

    @property
    def pattern(self) -> str:
        """It starts where a word does (after '-' too, as in '${KEY:-sk-...}'); one character class follows
        the prefix, so an attempt fails within the shape's minimum length or consumes what it scanned."""
        ending = f"(?![{self.ending}])" if self.ending else ""
        return f"(?<![A-Za-z0-9_])(?:{'|'.join(re.escape(p) for p in self.prefixes)}){self.body}{ending}"


TOKEN_SHAPES = (
    TokenShape("Hugging Face access token", ("hf_",), "[A-Za-z0-9]{30,}",
               "https://huggingface.co/docs/hub/security-tokens"),
    TokenShape("GitHub token", ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"), "[A-Za-z0-9]{30,}",
               "https://docs.github.com/en/authentication/keeping-your-account-and-data-secure/"
               "about-authentication-to-github#githubs-token-formats"),
    TokenShape("GitHub fine-grained token", ("github_pat_",), "[A-Za-z0-9_]{22,}",
               "https://docs.github.com/en/authentication/keeping-your-account-and-data-secure/"
               "about-authentication-to-github#githubs-token-formats"),
    TokenShape("GitLab personal access token", ("glpat-",), "[A-Za-z0-9_-]{20,}",
               "https://docs.gitlab.com/security/tokens/#token-prefixes"),
    # sk-, sk-proj- (OpenAI project keys), sk-ant- (Anthropic).
    TokenShape("OpenAI or Anthropic secret key", ("sk-",), "[A-Za-z0-9_-]{20,}",
               "https://platform.openai.com/docs/api-reference/authentication"),
    # AKIA: a long-term access key id, ASIA: a temporary (STS) one; 20 characters in all.
    TokenShape("AWS access key id", ("AKIA", "ASIA"), "[0-9A-Z]{16}",
               "https://docs.aws.amazon.com/STS/latest/APIReference/API_GetAccessKeyInfo.html", ending="0-9A-Za-z"),
    # xoxb- bot, xoxp- user, xoxe- refresh and configuration, xapp- app-level; a, o, s, r older kinds.
    TokenShape("Slack token", ("xoxa-", "xoxb-", "xoxe-", "xoxo-", "xoxp-", "xoxr-", "xoxs-", "xapp-"),
               "[A-Za-z0-9-]{10,}", "https://api.slack.com/authentication/token-types"),
    # 'AIza' and 35 characters of [A-Za-z0-9_-].
    TokenShape("Google API key", ("AIza",), "[0-9A-Za-z_-]{35}",
               "https://learn.microsoft.com/en-us/purview/sit-defn-google-api-key", ending="0-9A-Za-z_-"),
    TokenShape("npm access token", ("npm_",), "[A-Za-z0-9]{36}",
               "https://github.blog/changelog/2021-09-23-npm-has-a-new-access-token-format/", ending="A-Za-z0-9"),
    TokenShape("PyPI API token", ("pypi-",), "[A-Za-z0-9_-]{50,}", "https://pypi.org/help/#apitoken"),
)
# The lookahead on the first characters lets the engine skip every other position at C speed.
_TOKENS = re.compile(f"(?=[{re.escape(''.join(sorted({p[0] for s in TOKEN_SHAPES for p in s.prefixes})))}])"
                     f"(?:{'|'.join(shape.pattern for shape in TOKEN_SHAPES)})")

# JSON Web Tokens (https://www.rfc-editor.org/rfc/rfc7519#section-3.1): header.payload.signature, each
# base64url; a JSON header '{"' always encodes to 'eyJ'. Three parts can fail after long scans ('eyJ-eyJ-...'
# without dots), so `_jwt_spans` moves past a failed attempt's first part: every start inside that part
# reaches the same end and fails the same way.
_JWT_START = re.compile(r"(?<![A-Za-z0-9_])eyJ")
_JWT = re.compile(r"eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}")
_BASE64URL_RUN = re.compile(r"[A-Za-z0-9_-]*")


def _jwt_spans(text: str) -> Iterator[tuple[int, int]]:
    position = 0
    while (start := _JWT_START.search(text, position)) is not None:
        token = _JWT.match(text, start.start())
        if token is None:
            run = _BASE64URL_RUN.match(text, start.end())  # matches always (maybe empty)
            position = run.end() if run else start.end()
        else:
            yield token.span()
            position = token.end()


# A URL: a scheme starting a run of scheme characters, '://', then everything up to a space or a quote.
# Each is parsed (urllib.parse): the userinfo is everything before the authority's last '@' (a password
# may hold '@', as pip and urllib read it), and a query parameter named like a credential has its value
# hidden (an Azure SAS 'sig', '?key=', 'token', 'access_token', ...). Attempts start only where a scheme
# run starts and a URL ends at the first space, so no stretch of text is scanned twice.
_URL = re.compile(r"(?<![A-Za-z0-9+.-])[a-zA-Z][a-zA-Z0-9+.-]*://[^\s\"'<>`]+")
# Query parameters that carry a credential whatever else the name holds (_SECRET_NAME), and these exact
# names: Azure SAS's signature (https://learn.microsoft.com/en-us/rest/api/storageservices/create-service-sas),
# AWS SigV4's (https://docs.aws.amazon.com/AmazonS3/latest/API/sigv4-query-string-auth.html), Google's
# API key and signed URLs (https://cloud.google.com/storage/docs/access-control/signed-urls), OAuth's
# (https://www.rfc-editor.org/rfc/rfc6750#section-2.3, https://www.rfc-editor.org/rfc/rfc6749#section-4.1.2).
_CREDENTIAL_PARAMETERS = frozenset({
    "sig", "signature", "key", "apikey", "code", "x-amz-signature", "x-amz-security-token", "x-amz-credential",
    "x-goog-signature", "x-goog-credential", "googleaccessid", "pass", "pwd", "auth", "authorization",
})


def _is_credential_parameter(name: str) -> bool:
    name = name.lower()
    return name in _CREDENTIAL_PARAMETERS or bool(_SECRET_NAME.search(name))


def _scrub_url(url: str) -> str:
    """The URL with its userinfo and credential-named query (and fragment) values replaced by REDACTED,
    the rest as written. Split as RFC 3986 section 3 does: the authority ends at the first '/', '?' or
    '#', the query at '#'; the userinfo ends at the authority's last '@'."""
    scheme, rest = url.split("://", 1)
    rest, hash_mark, fragment = rest.partition("#")
    rest, question_mark, query = rest.partition("?")
    authority, slash, path = rest.partition("/")
    if "@" in authority:
        authority = REDACTED + "@" + authority.rpartition("@")[2]
    if query:
        query = _scrub_parameters(query)
    if "=" in fragment:  # OAuth's implicit grant puts access_token in the fragment
        fragment = _scrub_parameters(fragment)
    return f"{scheme}://{authority}{slash}{path}{question_mark}{query}{hash_mark}{fragment}"


def _scrub_parameters(query: str) -> str:
    pieces = re.split(r"([&;])", query)
    for at in range(0, len(pieces), 2):
        name, equals, value = pieces[at].partition("=")
        if equals and value and _is_credential_parameter(name):
            pieces[at] = f"{name}={REDACTED}"
    return "".join(pieces)


# A query outside a URL: pip's retry warnings and urllib3's errors name the index by its path alone
# ("Retrying (...) after connection broken by ...: /simple?key=.../numpy/", "Max retries exceeded with url:
# /simple/?token=..."), with no scheme for _URL to find. After '?' or '&', a parameter named like a credential
# (the URL's own rule) has its value hidden up to the next '&', '#', space or quote. An attempt starts only at
# '?' or '&', which no name or hidden value holds, so no stretch of text is scanned twice.
_QUERY_PARAMETER = re.compile(r"[?&](?P<name>[A-Za-z0-9_.-]+)=")
_QUERY_VALUE = re.compile(r"[^&#\s\"'<>`]*")


def _query_spans(text: str) -> Iterator[tuple[int, int]]:
    position = 0
    while (match := _QUERY_PARAMETER.search(text, position)) is not None:
        value = _QUERY_VALUE.match(text, match.end())
        if _is_credential_parameter(match["name"]) and value is not None and value.group():
            yield value.span()
            position = value.end()
        else:
            position = match.end()


# Authorization credentials: a bearer token is b64token, 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" )
# *"=" (https://www.rfc-editor.org/rfc/rfc6750#section-2.1); Basic is base64 (https://www.rfc-editor.org/rfc/rfc7617).
_AUTH_HEADER = re.compile(r"(?i)\b(?P<kind>bearer|basic)\s+[A-Za-z0-9._~+/-]{12,}=*")
# PEM private keys (RFC 7468: 'PRIVATE KEY', 'ENCRYPTED PRIVATE KEY', https://www.rfc-editor.org/rfc/rfc7468#section-10;
# 'RSA PRIVATE KEY' and 'OPENSSH PRIVATE KEY' are the same armour with another label).
_PEM_BEGIN = re.compile(r"-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY-----")
_PEM_END = re.compile(r"-----END [A-Z0-9 ]{0,40}PRIVATE KEY-----")

# NAME=value, NAME: value. NAME is a whole run of name characters (it starts where the run starts), so
# a run is scanned once whatever follows it; whether NAME looks secret is decided afterwards.
_NAME_THEN_SEPARATOR = re.compile(r"(?<![A-Za-z0-9_.-])(?P<name>[A-Za-z0-9_.-]+)(?P<quote>[\"']?)[ \t]*(?P<sep>[:=])[ \t]*")
_VALUE = re.compile(r"\"[^\"\n]*\"?|'[^'\n]*'?|[^\s,;&\"']+")
# Names that hold secrets. Azure: AccountKey and SharedAccessSignature in storage connection strings
# (https://learn.microsoft.com/en-us/azure/storage/common/storage-configure-connection-string),
# SharedAccessKey in Service Bus and Event Hubs ones.
_SECRET_NAME = re.compile(
    r"(?i)token|secret|passw(?:or)?d|passphrase|api[_-]?key|access[_-]?key|private[_-]?key|credential"
    r"|account[_-]?key|shared[_-]?access[_-]?(?:key|signature)|(?<![a-z])(?:pass|pwd|auth)(?![a-z])")
# An AWS secret access key is 40 characters of base64 (the documented example is
# wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY, https://docs.aws.amazon.com/STS/latest/APIReference/API_GetAccessKeyInfo.html).
# Alone it cannot be told from a hash, so it is hidden only after a name holding 'secret':
# aws_secret_access_key in the config files (https://docs.aws.amazon.com/cli/latest/userguide/cli-configure-files.html),
# AWS_SECRET_ACCESS_KEY (https://docs.aws.amazon.com/cli/latest/userguide/cli-configure-envvars.html),
# SecretAccessKey in STS's JSON (https://docs.aws.amazon.com/STS/latest/APIReference/API_Credentials.html).
_AWS_SECRET_VALUE = re.compile(r"[\"']?[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])[\"']?")


def _hidden_value(text: str, match: re.Match[str]) -> re.Match[str] | None:
    """The value after `NAME=` or `NAME:` that must be hidden, or None.

    `=` after a secret-looking name always hides; `:` only in a quoted key ('"password": "x"', as in
    JSON or a dict's repr), because prose says 'token: expected ...'; an AWS-secret-shaped value after a
    name holding 'secret' is hidden after either."""
    name = match["name"]
    if "secret" in name.lower():
        aws = _AWS_SECRET_VALUE.match(text, match.end())
        if aws:
            return aws
    if not _SECRET_NAME.search(name):
        return None
    quoted = bool(match["quote"]) and text[match.start() - 1:match.start()] == match["quote"]
    if match["sep"] == "=" or quoted:
        return _VALUE.match(text, match.end())
    return None


def _assignment_spans(text: str) -> Iterator[tuple[int, int]]:
    position = 0
    while (match := _NAME_THEN_SEPARATOR.search(text, position)) is not None:
        value = _hidden_value(text, match)
        if value is None or not value.group():
            position = match.end()
        else:
            yield value.span()
            position = value.end()


def _private_key_spans(text: str) -> Iterator[tuple[int, int]]:
    """A PEM private-key block from BEGIN to END; an unterminated one (a cut log) to the end of the text."""
    position = 0
    while (begin := _PEM_BEGIN.search(text, position)) is not None:
        end = _PEM_END.search(text, begin.end())
        position = end.end() if end else len(text)
        yield begin.start(), position


def _hidden(spans: Callable[[str], Iterator[tuple[int, int]]]) -> Callable[[str], str]:
    """A scrubber replacing the spans `spans(text)` finds, left to right and apart, with REDACTED."""

    def scrub(text: str) -> str:
        parts, done = [], 0
        for start, end in spans(text):
            parts += [text[done:start], REDACTED]
            done = end
        return "".join(parts) + text[done:] if parts else text

    return scrub


# In this order: private-key blocks first (their base64 would otherwise be half matched), then values
# whose name or header says they are secret (hidden whole, not just a token inside them), JWTs before
# the one-part tokens (whose shapes can occur inside a JWT's base64 and would break it up).
SCRUBBERS: tuple[tuple[str, Callable[[str], str]], ...] = (
    ("private keys", _hidden(_private_key_spans)),
    ("URLs", lambda text: _URL.sub(lambda match: _scrub_url(match[0]), text)),
    ("queries outside a URL", _hidden(_query_spans)),
    ("NAME=value", _hidden(_assignment_spans)),
    ("Authorization", lambda text: _AUTH_HEADER.sub(lambda m: f"{m['kind']} {REDACTED}", text)),
    ("JSON Web Tokens", _hidden(_jwt_spans)),
    ("tokens", lambda text: _TOKENS.sub(REDACTED, text)),
)


def scrub_secrets(text: str) -> str:
    """Hide credentials and token-shaped values; everything else is left as it is."""
    for _, scrub in SCRUBBERS:
        text = scrub(text)
    return text


# Names that identify nobody (default and CI accounts, shared folders) or that are words the report
# itself is made of: never replaced as words, and kept in /home/NAME-style paths.
NOT_IDENTIFYING = frozenset({
    # accounts and folders
    "root", "admin", "administrator", "user", "users", "guest", "nobody", "shared", "public", "default",
    "default user", "all users", "ubuntu", "debian", "fedora", "centos", "ec2-user", "runner", "vagrant",
    "docker", "jovyan", "linuxbrew", "travis", "circleci", "vscode", "codespace", "build", "builder",
    # the report's own vocabulary
    "localhost", "local", "host", "home", "python", "python3", "tensorflow", "keras", "numpy", "linux",
    "darwin", "windows", "macos", "mac", "cuda", "metal", "gpu", "cpu", "tpu", "ram", "pip", "conda",
    "env", "venv", "bin", "lib", "dev", "usr", "opt", "src", "var", "tmp", "etc", "sys", "app", "api",
    "log", "run", "none", "null", "true", "false", "pass", "fail", "failed", "warn", "skip", "error",
    "status", "version", "system", "machine", "apple", "intel", "amd", "nvidia",
})
MIN_WORD_LENGTH = 3

_SEP = r"(?:\\\\|\\|/)"  # a path separator as written: /, \ or a JSON/repr-doubled \\
# /home/NAME, /Users/NAME (also /var/home, /mnt/c/Users, /System/Volumes/Data/Users), names without spaces.
_POSIX_USER_DIR = re.compile(rf"(?P<root>{_SEP}(?i:users|home){_SEP})(?P<name>[^\\/\s\"'<>:;,|*?`()\[\]{{}}=]+)")
# C:\Users\NAME and C:\Documents and Settings\NAME: Windows names may hold spaces, so a name with
# spaces counts only when a separator follows it.
_WINDOWS_USER_DIR = re.compile(
    rf"(?P<root>\b[A-Za-z]:{_SEP}(?i:users|documents and settings){_SEP})"
    rf"(?P<name>[^\\/\"'<>:|*?\r\n]+(?={_SEP})|[^\\/\s\"'<>:;,|*?`()\[\]{{}}=]+)"
)


def identifying(name: str | None) -> bool:
    return name is not None and len(name) >= MIN_WORD_LENGTH and name.lower() not in NOT_IDENTIFYING


def user_dir_names(text: str) -> Iterator[str]:
    """Names of the user directories a text mentions (`/Users/alice/x` -> 'alice')."""
    for pattern in (_WINDOWS_USER_DIR, _POSIX_USER_DIR):
        for match in pattern.finditer(text):
            yield match["name"]


def _redact_user_dirs(text: str) -> str:
    def one(match: re.Match[str]) -> str:
        name = match["name"]
        if name.lower() in NOT_IDENTIFYING or name.startswith("~"):
            return match[0]
        return match["root"] + USER_PLACEHOLDER

    return _POSIX_USER_DIR.sub(one, _WINDOWS_USER_DIR.sub(one, text))


def _home_pattern(home: str) -> re.Pattern[str]:
    """The home directory in any of its spellings, as a whole path component."""
    parts = [re.escape(p) for p in re.split(r"[\\/]+", home) if p]
    windows = bool(re.match(r"^[A-Za-z]:", home))
    lead = "" if windows else _SEP
    body = lead + _SEP.join(parts)
    return re.compile(("(?i)" if windows else "") + rf"(?<![A-Za-z0-9_.-]){body}(?![A-Za-z0-9_.-])")


def _word_pattern(names: Iterable[str]) -> re.Pattern[str] | None:
    # Longest first, so 'alice-mbp.local' is replaced before 'alice-mbp'.
    unique = sorted({n for n in names if identifying(n)}, key=lambda n: (-len(n), n))
    if not unique:
        return None
    return re.compile(rf"(?i)(?<![A-Za-z0-9])(?:{'|'.join(re.escape(n) for n in unique)})(?![A-Za-z0-9])")


@dataclass(frozen=True)
class Redactor:
    home: str | None
    user: str | None
    host: str | None
    other_users: tuple[str, ...] = ()  # user names learned from the document's paths

    @classmethod
    def for_this_machine(cls) -> "Redactor":
        try:
            user = getpass.getuser()
        except Exception:  # noqa: BLE001 - no passwd entry in some containers
            user = None
        try:
            host = socket.gethostname()
        except OSError:
            host = None
        home = os.path.expanduser("~")
        return cls(home if home not in ("~", "/", "") else None, user, host)

    def learning_from(self, document: Any) -> "Redactor":
        """This redactor, also hiding the user names that the document's user-directory paths show."""
        # each distinct string once: a report repeats its keys and paths thousands of times
        names = {name for text in set(_strings(document)) for name in user_dir_names(text) if identifying(name)}
        return replace(self, other_users=tuple(sorted(names - {self.user or ""})))

    def _homes(self) -> list[str]:
        if not self.home:
            return []
        homes = {self.home.rstrip("\\/")}
        real = os.path.realpath(self.home).rstrip("\\/")
        if real and real != "/":
            homes.add(real)
        return sorted((h for h in homes if h and h not in ("/", "~")), key=len, reverse=True)

    @cached_property
    def _patterns(self) -> tuple[list[re.Pattern[str]], re.Pattern[str] | None, re.Pattern[str] | None]:
        host = self.host or ""
        return (
            [_home_pattern(home) for home in self._homes()],
            _word_pattern([self.user or "", *self.other_users]),
            _word_pattern([host, host.split(".")[0]]),
        )

    def text(self, value: str) -> str:
        homes, users, hosts = self._patterns
        value = scrub_secrets(value)
        for home in homes:
            value = home.sub("~", value)
        value = _redact_user_dirs(value)
        if hosts:  # before the user: host names often contain it ('alices-macbook')
            value = hosts.sub(HOST_PLACEHOLDER, value)
        if users:
            value = users.sub(USER_PLACEHOLDER, value)
        return value

    def document(self, value: Any) -> Any:
        """A redacted copy of a JSON-like value; for a report, secret environment variables are dropped too."""
        # `text` is a pure function of the string: each distinct one is redacted once (a report with 5,000
        # distributions holds 87,000 strings, its keys and locations repeated thousands of times)
        redacted: dict[str, str] = {}

        def text(string: str) -> str:
            done = redacted.get(string)
            if done is None:
                done = redacted[string] = self.text(string)
            return done

        def walk(value: Any) -> Any:
            if isinstance(value, str):
                return text(value)
            if isinstance(value, dict):
                return {text(str(k)): walk(v) for k, v in value.items()}
            if isinstance(value, (list, tuple)):
                return [walk(v) for v in value]
            return value

        return walk(drop_environment_secrets(value) if isinstance(value, dict) else value)


def drop_environment_secrets(document: dict[str, Any]) -> dict[str, Any]:
    """A report (a dict with facts.environment) without the variables no report may carry."""
    facts = document.get("facts")
    environment = facts.get("environment") if isinstance(facts, dict) else None
    if not isinstance(environment, dict) or not any(never_recorded(str(k)) for k in environment):
        return document
    kept = {k: v for k, v in environment.items() if not never_recorded(str(k))}
    return {**document, "facts": {**(facts or {}), "environment": kept}}


def _strings(value: Any) -> Iterator[str]:
    """Every string in a JSON-like value, keys included (iteratively: documents can be deep)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            yield item
        elif isinstance(item, dict):
            stack.extend(str(k) for k in item)
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
