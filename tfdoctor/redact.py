"""Redaction: reports are safe to paste into a public issue by default.

What is hidden, in every string of the report document (paths, TensorFlow's error text, command
output, dictionary keys), in this order:

1. Secrets (`scrub_secrets`, also applied when environment values are collected, so they are never
   recorded at all): credentials in URLs (`https://user:pass@host` -> `https://<redacted>@host`),
   `NAME=value` where NAME looks secret (`HF_TOKEN=...`, `?api_key=...`), `Bearer`/`Basic`
   credentials, and values shaped like well-known tokens (TOKEN_PATTERNS: Hugging Face `hf_`,
   GitHub `ghp_`/`github_pat_`, GitLab `glpat-`, OpenAI/Anthropic `sk-`, AWS `AKIA`, Slack `xox?-`,
   Google `AIza`, npm, PyPI, JWTs). Shapes are matched, not guessed: a random-looking string with no
   known prefix is left alone (a hash or a build id must stay readable).
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

Environment variables are allowlisted and secret-looking names recorded as present only
(collect/system.py); `hide_environment_secrets` enforces the same on reports read from disk, which
may come from older versions or from people's hands. The redactor works on the JSON document, so
every renderer shows the same redacted data.
"""

from __future__ import annotations

import getpass
import os
import re
import socket
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Any, Iterable, Iterator

USER_PLACEHOLDER = "<user>"
HOST_PLACEHOLDER = "<host>"
REDACTED = "<redacted>"
SECRET_PRESENT = "<set, value hidden>"

# An environment variable whose name contains one of these is reported as set, never shown.
SECRET_WORDS = ("TOKEN", "KEY", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "AUTH", "PRIVATE",
                "COOKIE", "SESSION")


def looks_secret(name: str) -> bool:
    """Substring match on purpose: hiding a harmless value costs little, showing a secret a lot."""
    upper = name.upper()
    return any(word in upper for word in SECRET_WORDS)


# Well-known token shapes (prefixes published by the issuers). \b keeps them from matching mid-word.
TOKEN_PATTERNS = (
    r"hf_[A-Za-z0-9]{30,}",  # Hugging Face access token
    r"gh[pousr]_[A-Za-z0-9]{30,}",  # GitHub classic tokens
    r"github_pat_[A-Za-z0-9_]{22,}",  # GitHub fine-grained token
    r"glpat-[A-Za-z0-9_-]{20,}",  # GitLab personal access token
    r"sk-(?:proj-|ant-|live-|test-)?[A-Za-z0-9_-]{20,}",  # OpenAI, Anthropic, Stripe secret keys
    r"(?:AKIA|ASIA)[0-9A-Z]{16}",  # AWS access key id
    r"xox[abposr]-[A-Za-z0-9-]{10,}",  # Slack
    r"AIza[0-9A-Za-z_-]{35}",  # Google API key
    r"npm_[A-Za-z0-9]{36}",  # npm access token
    r"pypi-[A-Za-z0-9_-]{50,}",  # PyPI API token
    r"eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}",  # JSON Web Token
)
_TOKENS = re.compile(r"\b(?:" + "|".join(TOKEN_PATTERNS) + r")\b")
_URL_CREDENTIALS = re.compile(r"(?P<scheme>\b[a-zA-Z][a-zA-Z0-9+.-]*://)[^/\s:@]+(?::[^/\s@]*)?@")
_AUTH_HEADER = re.compile(r"(?i)\b(?P<kind>bearer|basic)\s+[A-Za-z0-9._~+/-]{12,}=*")
_SECRET_ASSIGNMENT = re.compile(
    r"(?i)(?P<name>\b[A-Za-z0-9_.-]*(?:token|secret|passw(?:or)?d|api[_-]?key|access[_-]?key|private[_-]?key"
    r"|credentials?)[A-Za-z0-9_.-]*)(?P<eq>\s*=\s*)(?P<value>\"[^\"]*\"|'[^']*'|[^\s,;&\"']+)"
)


def scrub_secrets(text: str) -> str:
    """Hide credentials and token-shaped values; everything else is left as it is."""
    text = _URL_CREDENTIALS.sub(rf"\g<scheme>{REDACTED}@", text)
    text = _SECRET_ASSIGNMENT.sub(lambda m: f"{m['name']}{m['eq']}{REDACTED}", text)
    text = _AUTH_HEADER.sub(lambda m: f"{m['kind']} {REDACTED}", text)
    return _TOKENS.sub(REDACTED, text)


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
    return bool(name) and len(name) >= MIN_WORD_LENGTH and name.lower() not in NOT_IDENTIFYING


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
        names = {name for text in _strings(document) for name in user_dir_names(text) if identifying(name)}
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
        """A redacted copy of a JSON-like value; for a report, secret environment values are hidden too."""
        redacted = self._walk(value)
        return hide_environment_secrets(redacted) if isinstance(redacted, dict) else redacted

    def _walk(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {self.text(str(k)): self._walk(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [self._walk(v) for v in value]
        return value


def hide_environment_secrets(document: dict[str, Any]) -> dict[str, Any]:
    """In a report (a dict with facts.environment), show secret-looking variables as present only."""
    facts = document.get("facts")
    environment = facts.get("environment") if isinstance(facts, dict) else None
    if not isinstance(environment, dict) or not any(looks_secret(str(k)) for k in environment):
        return document
    hidden = {k: SECRET_PRESENT if looks_secret(str(k)) else v for k, v in environment.items()}
    return {**document, "facts": {**facts, "environment": hidden}}


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
