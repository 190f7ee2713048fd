"""The team server's guards: bearer token, CSRF of form posts, body size, and the headers of every response.

Every report string is untrusted: templates escape everything (Jinja2 autoescape), pages carry no script
at all, and the Content-Security-Policy forbids any (so markup that slipped through could not run either).
"""

from __future__ import annotations

import hmac
import secrets
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


class BodyTooLarge(Exception):
    pass


def read_token_file(path: str) -> str:
    """The token: the file's first line, stripped. An empty file is an error (it would let anyone post)."""
    with open(path, encoding="utf-8") as handle:
        token = handle.readline().strip()
    if not token:
        raise ValueError(f"{path} holds no token")
    return token


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
