"""Redaction: reports are safe to paste into a public issue by default.

The home directory becomes `~`, the user name and host name are replaced wherever they appear
(paths, TensorFlow's error text, command output), and credentials in URLs are stripped. Secret
environment values are never collected in the first place (collect/system.py). The redactor works
on the JSON document, so every renderer shows the same redacted data.
"""

from __future__ import annotations

import getpass
import os
import re
import socket
from dataclasses import dataclass
from typing import Any

USER_PLACEHOLDER = "<user>"
HOST_PLACEHOLDER = "<host>"

_URL_CREDENTIALS = re.compile(r"(?P<scheme>[a-zA-Z][a-zA-Z0-9+.-]*://)[^/\s:@]+(?::[^/\s@]*)?@")


@dataclass(frozen=True)
class Redactor:
    home: str | None
    user: str | None
    host: str | None

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

    def text(self, value: str) -> str:
        if self.home:
            value = value.replace(self.home, "~")
        value = _URL_CREDENTIALS.sub(r"\g<scheme><redacted>@", value)
        # Short or generic names (root, a one-letter user) would eat ordinary words: only whole words.
        for secret, placeholder in ((self.user, USER_PLACEHOLDER), (self.host, HOST_PLACEHOLDER)):
            if secret and len(secret) >= 2:
                value = re.sub(rf"(?<![A-Za-z0-9_.-]){re.escape(secret)}(?![A-Za-z0-9_-])", placeholder, value)
        return value

    def document(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {self.text(str(k)): self.document(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [self.document(v) for v in value]
        return value
