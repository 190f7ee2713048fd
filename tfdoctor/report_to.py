"""`--report-to URL`: post the run's report (already redacted as printed) to a team server.

Stdlib only (urllib): the plain CLI gains no dependency. The machine is named by a random id kept in the
user's config directory; the hostname goes only with --report-hostname. The server's answer is read for
its status alone: nothing it says is run, printed as a command, or acted upon.
"""

from __future__ import annotations

import json
import os
import re
import sys
import uuid
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence

API_PATH = "/api/v1/reports"
TOKEN_VARIABLE = "TFDOCTOR_REPORT_TOKEN"
TIMEOUT_S = 15.0
MACHINE_ID_FILE = "machine-id"
_MACHINE_ID = re.compile(r"^[A-Za-z0-9_-]{8,64}$")


class PostRefused(Exception):
    """The post could not be made or was refused; the message is one line."""


def config_dir(environ: Mapping[str, str] = os.environ) -> Path:
    """tfdoctor's directory in the user's config place (XDG on Linux, Application Support, APPDATA)."""
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Application Support" / "tfdoctor"
    if os.name == "nt":
        return Path(environ.get("APPDATA") or Path.home() / "AppData" / "Roaming") / "tfdoctor"
    return Path(environ.get("XDG_CONFIG_HOME") or Path.home() / ".config") / "tfdoctor"


def machine_id(directory: Optional[Path] = None) -> str:
    """This machine's random id: read from the config directory, made there on first use."""
    path = (directory or config_dir()) / MACHINE_ID_FILE
    try:
        existing = path.read_text(encoding="ascii").strip()
        if _MACHINE_ID.match(existing):
            return existing
    except (OSError, UnicodeDecodeError):
        pass
    made = uuid.uuid4().hex
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_name(f".{MACHINE_ID_FILE}.{os.getpid()}")
        temporary.write_text(made + "\n", encoding="ascii")
        os.replace(temporary, path)
    except OSError:
        pass  # a read-only home: this run posts with a fresh id rather than not at all
    return made


def parse_labels(pairs: Sequence[str]) -> dict[str, str]:
    """`--label team=vision` (repeatable) -> {"team": "vision"}; ValueError names the bad one."""
    labels: dict[str, str] = {}
    for pair in pairs:
        key, equals, value = pair.partition("=")
        if not equals or not re.match(r"^[A-Za-z0-9_.-]{1,64}$", key) or not value or len(value) > 128:
            raise ValueError(f"--label {pair!r}: KEY=VALUE (key: letters, digits, '_', '.', '-')")
        labels[key] = value
    return labels


def read_token(token_file: Optional[str], environ: Mapping[str, str] = os.environ) -> Optional[str]:
    if token_file:
        try:
            with open(token_file, encoding="utf-8") as handle:
                token = handle.readline().strip()
        except OSError as exc:
            raise PostRefused(f"cannot read --report-token-file {token_file}: {exc.strerror or exc}") from None
        if not token:
            raise PostRefused(f"--report-token-file {token_file} holds no token")
        return token
    return environ.get(TOKEN_VARIABLE) or None


def endpoint(url: str) -> str:
    """The server's base URL (or the full API URL) -> the URL reports are posted to."""
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise PostRefused(f"--report-to {url!r}: an http:// or https:// URL")
    return url if parts.path.rstrip("/").endswith(API_PATH) else url.rstrip("/") + API_PATH


def envelope(document: Mapping[str, Any], labels: Mapping[str, str], hostname: Optional[str],
             directory: Optional[Path] = None) -> dict[str, Any]:
    body: dict[str, Any] = {"machine_id": machine_id(directory), "labels": dict(labels), "report": document}
    if hostname is not None:
        body["hostname"] = hostname
    return body


def post(url: str, body: Mapping[str, Any], token: Optional[str], timeout: float = TIMEOUT_S) -> int:
    """POST the body; returns the HTTP status, or PostRefused with a one-line reason."""
    import urllib.error
    import urllib.request

    data = json.dumps(body, ensure_ascii=True, separators=(",", ":")).encode("ascii")
    headers = {"Content-Type": "application/json", "User-Agent": "tfdoctor"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    request = urllib.request.Request(endpoint(url), data=data, headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status
    except urllib.error.HTTPError as exc:
        reason = {401: "the server needs a token (TFDOCTOR_REPORT_TOKEN or --report-token-file)",
                  413: "the report is larger than the server accepts"}.get(exc.code, exc.reason)
        raise PostRefused(f"HTTP {exc.code}: {reason}") from None
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", None) or exc
        raise PostRefused(str(reason)) from None


def report_to(url: str, documents: Sequence[Mapping[str, Any]], token_file: Optional[str],
              labels: Sequence[str], send_hostname: bool) -> Optional[str]:
    """Post each document; None when all went, else the one line to print on stderr."""
    import socket

    try:
        parsed_labels = parse_labels(labels)
        token = read_token(token_file)
        hostname = socket.gethostname() if send_hostname else None
        for document in documents:
            post(url, envelope(document, parsed_labels, hostname), token)
    except (PostRefused, ValueError) as exc:
        return f"tfdoctor: report not posted to {url}: {exc}"
    return None
