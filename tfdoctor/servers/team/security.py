"""The team server's guards: the token (bearer for scripts, a signed session cookie for browsers), CSRF of form
posts, body size, the token file, and the headers of every response.

Every report string is untrusted: templates escape everything (Jinja2 autoescape), pages carry no script
at all, and the Content-Security-Policy forbids any (so markup that slipped through could not run either).
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import stat
import time
from typing import Any, Awaitable, Callable, Mapping, Optional

MAX_BODY_BYTES = 5 * 1024 * 1024  # a report is ~50 KB; tfdoctor reads at most this much of a saved one too

CONTENT_SECURITY_POLICY = ("default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; "
                           "frame-ancestors 'none'; base-uri 'none'")
SECURITY_HEADERS = (
    (b"content-security-policy", CONTENT_SECURITY_POLICY.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"same-origin"),  # no-referrer would make browsers send `Origin: null` on our own forms
    (b"x-frame-options", b"DENY"),
    (b"cache-control", b"no-store"),
)
CSRF_COOKIE = "tfdoctor_csrf"
CSRF_FIELD = "csrf"
SESSION_COOKIE = "tfdoctor_session"
SESSION_SECONDS = 7 * 24 * 3600  # a browser signs in once a week; rotating the token ends every session at once
TOKEN_BYTES = 32  # 256 random bits: no guessing, so the sign-in form needs no rate limit
OTHERS_ACCESS = stat.S_IROTH | stat.S_IWOTH


class BodyTooLarge(Exception):
    pass


def read_token_file(path: str) -> str:
    """The token: the file's first line, stripped. An empty file is an error (it would let anyone post), and so
    is a file every user of the machine may read or write: the token would be anyone's (`chmod 600`). Refused,
    not warned about: a server runs unattended, where a warning is a log line nobody reads, and the fix is one
    chmod. Group bits are the administrator's deliberate sharing (root:tfdoctor 0640 is how a service is
    usually handed a secret) and are left alone."""
    handle = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NONBLOCK", 0))
    with os.fdopen(handle, encoding="utf-8") as opened:
        status = os.fstat(handle)  # of the file read, not of whatever the name points at a moment later
        if not stat.S_ISREG(status.st_mode):
            raise ValueError(f"{path} is not a regular file")
        if os.name != "nt" and status.st_mode & OTHERS_ACCESS:
            raise ValueError(f"{path} can be read or written by every user of this machine (mode "
                             f"{stat.S_IMODE(status.st_mode):04o}): chmod 600 {path}")
        token = opened.readline().strip()
    if not token:
        raise ValueError(f"{path} holds no token")
    return token


def write_new_token(path: str) -> None:
    """A fresh random token in `path`, a new file (0600) the user named: O_EXCL refuses an existing file and
    any link at that name (a dangling one too), so nothing is overwritten or written through. Its directory is
    the user's choice (unlike the doctor's own files, tfdoctor/files/own_files.py)."""
    flags = (os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        handle = os.open(path, flags, 0o600)
    except FileExistsError:
        raise ValueError(f"{path} exists: a new token goes to a new file (remove the old one to rotate)") from None
    try:
        try:
            os.write(handle, (secrets.token_urlsafe(TOKEN_BYTES) + "\n").encode("ascii"))
            os.fsync(handle)
        finally:
            os.close(handle)
    except BaseException:
        os.unlink(path)  # a half-written token is worse than none
        raise


def _session_signature(token: str, expires: int) -> str:
    """HMAC-SHA256 keyed by the token: a session needs no server-side state, survives a restart and dies with
    the token."""
    return hmac.new(token.encode("utf-8"), f"tfdoctor-session:{expires}".encode("ascii"), hashlib.sha256).hexdigest()


def new_session(token: str, now: Optional[float] = None) -> str:
    """The session cookie's value: its expiry and a signature, nothing else (the token never leaves the server)."""
    expires = int(now if now is not None else time.time()) + SESSION_SECONDS
    return f"{expires}.{_session_signature(token, expires)}"


def session_ok(token: Optional[str], cookie: Optional[str], now: Optional[float] = None) -> bool:
    """A session cookie this server signed with its token, not yet expired."""
    if token is None or not cookie:
        return False
    expires_text, _, signature = cookie.partition(".")
    if not (expires_text.isascii() and expires_text.isdigit()) or len(expires_text) > 12:
        return False
    expires = int(expires_text)
    if expires <= (now if now is not None else time.time()):
        return False
    return hmac.compare_digest(signature.encode("ascii", "replace"),
                               _session_signature(token, expires).encode("ascii"))


def token_ok(expected: str, given: str) -> bool:
    """The sign-in form's token against the server's, in constant time."""
    return hmac.compare_digest(given.strip().encode("utf-8"), expected.encode("utf-8"))


def local_path(target: Optional[str]) -> str:
    """Where to go after signing in: a path of this server only (`//host` and `/\\host` leave it)."""
    if not target or not target.startswith("/") or target.startswith("//") or "\\" in target:
        return "/"
    return target if all(32 < ord(c) < 127 for c in target) else "/"


def bearer_ok(expected: Optional[str], authorization: Optional[str]) -> bool:
    """No token configured: open (loopback by default). Else `Authorization: Bearer <token>`, compared in
    constant time."""
    if expected is None:
        return True
    scheme, _, given = (authorization or "").partition(" ")
    if scheme.lower() != "bearer" or not given:
        return False
    return hmac.compare_digest(given.strip().encode("utf-8"), expected.encode("utf-8"))


def new_csrf_token() -> str:
    return secrets.token_urlsafe(32)


def csrf_ok(cookie: Optional[str], field: Optional[str]) -> bool:
    """Double submit: the form's hidden field equals the SameSite=Strict cookie set with the page."""
    if not cookie or not field:
        return False
    return hmac.compare_digest(cookie.encode("utf-8"), field.encode("utf-8"))


def same_origin(headers: Mapping[str, str]) -> bool:
    """A browser's form post names its origin: it must be this server (a missing Origin is an old browser
    or a script, which the CSRF token still guards)."""
    origin = headers.get("origin")
    if origin is None or origin == "null":
        return origin is None
    host = headers.get("host", "")
    return origin.split("://", 1)[-1] == host


async def read_body(receive_stream: Any, content_length: Optional[str], limit: int = MAX_BODY_BYTES) -> bytes:
    """The request body, or BodyTooLarge as soon as it (or its declared length) passes `limit`."""
    if content_length is not None and content_length.isdigit() and int(content_length) > limit:
        raise BodyTooLarge()
    chunks, size = [], 0
    async for chunk in receive_stream:
        size += len(chunk)
        if size > limit:
            raise BodyTooLarge()
        chunks.append(chunk)
    return b"".join(chunks)


class SecurityHeaders:
    """Pure ASGI middleware: the headers above on every HTTP response."""

    def __init__(self, app: Callable[..., Awaitable[None]]) -> None:
        self.app = app

    async def __call__(self, scope: dict, receive: Callable, send: Callable) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: dict) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = list(message.get("headers") or ()) + list(SECURITY_HEADERS)
            await send(message)

        await self.app(scope, receive, send_with_headers)
