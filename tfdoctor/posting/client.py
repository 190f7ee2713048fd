"""`--report-to URL`: post the run's reports (already redacted as printed) to a team server, as a careful client.

The standard library's urllib, loaded only when a post is made: the plain CLI gains no dependency and no
start-up time. A client library would not spare the hard parts: neither requests nor httpx has a deadline for
a whole exchange (their timeouts bound each socket operation, so a server dripping one byte at a time holds
them for ever), and both follow redirects unless told not to. What this client guarantees:

- Credentials (the bearer token; a URL's user:password, sent as Basic) go to the URL the user named and
  nowhere else: a redirect is never followed. It is a failure that names where the server pointed.
- One deadline for all of a run's posts (`--report-timeout`, TIMEOUT_S): each exchange runs in a worker
  thread the caller stops waiting for at the deadline, and its socket is shut down then, so a dripping
  server, a stalled DNS lookup or a send the server never reads cannot hold the run.
- A URL's password never reaches the terminal (every line is scrubbed as reports are) nor the disk.
- A credential over plain http:// to anything but loopback goes, with a warning.
- A report the server did not store (no answer, refused, a redirect, 401, 5xx, ...) is kept in the user's
  cache (PENDING_DIR, at most MAX_PENDING files and MAX_PENDING_BYTES, the oldest dropped first) and sent by
  `tfdoctor report send` or by the next run posting to the same server; a report the server judged (JUDGED)
  is not: it would be refused again. A report the server stored but whose answer did not come back within
  the deadline is kept too, and is stored twice when sent again: a duplicate, never a loss.

The machine is named by a random id kept in the user's config directory; the hostname goes only with
--report-hostname. The server's answer is read for its status alone (and a redirect's Location, to name it):
nothing it says is run, printed as a command, or acted upon.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from tfdoctor.files.own_files import cache_dir, config_dir, private_dir, read_private, write_private
from tfdoctor.report.redact import scrub_secrets

API_PATH = "/api/v1/reports"
TOKEN_VARIABLE = "TFDOCTOR_REPORT_TOKEN"
TIMEOUT_S = 15.0  # all of a run's posts together, pending ones included
MACHINE_ID_FILE = "machine-id"
PENDING_DIR = "pending-reports"  # in the user's cache directory
MAX_PENDING = 100  # reports kept at most (a report is ~15 KiB; the oldest go first)
MAX_PENDING_BYTES = 32 * 1024 * 1024
STORED = 201  # the team server's answer to a report it stored (docs/server.md); anything else is not that
JUDGED = frozenset({400, 413, 422})  # the server judged the report itself: it would refuse it again
SEND_COMMAND = "`tfdoctor report send`"
_MACHINE_ID = re.compile(r"^[A-Za-z0-9_-]{8,64}$")
_PENDING_NAME = re.compile(r"^\d{20}-[0-9a-f]{12}-[0-9a-f]{8}\.json$")  # kept-at (ns), server, random


class PostRefused(Exception):
    """The post could not be made or was refused; the message is one line. `keep`: the report is worth keeping
    to send again (the server did not judge it)."""

    def __init__(self, message: str, keep: bool = True) -> None:
        super().__init__(message)
        self.keep = keep


def machine_id(directory: Optional[Path] = None) -> str:
    """This machine's random id: read from the config directory, made there on first use (through own_files:
    never read or written through a link planted there)."""
    home = directory or config_dir()
    path = home / MACHINE_ID_FILE
    try:
        existing = read_private(path, limit=128).decode("ascii").strip()
        if _MACHINE_ID.match(existing):
            return existing
    except (OSError, UnicodeDecodeError):
        pass
    made = uuid.uuid4().hex
    try:
        private_dir(home, below=home.parent)
        write_private(path, made + "\n")
    except (OSError, ValueError):
        pass  # a read-only home, a planted link: this run posts with a fresh id rather than not at all
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


def shown(text: str) -> str:
    """`text` as a line may print it: a URL's user:password and anything token-shaped hidden."""
    return scrub_secrets(text)


@dataclass(frozen=True)
class Target:
    """Where reports go. `url` is the API endpoint without user:password: what is posted to, and what pending
    reports are filed under. `shown` is the URL as given, its credentials hidden."""

    url: str
    shown: str
    host: str
    scheme: str
    user: Optional[str] = None
    password: Optional[str] = None

    @property
    def loopback(self) -> bool:
        if self.host == "localhost" or self.host.endswith(".localhost"):
            return True
        import ipaddress

        try:
            return ipaddress.ip_address(self.host).is_loopback
        except ValueError:
            return False


def target(url: str) -> Target:
    """The server's base URL (or the full API URL) -> the Target reports are posted to; PostRefused (not worth
    keeping: there is nowhere to send it) for anything but an http(s) URL with a host."""
    from urllib.parse import unquote, urlsplit, urlunsplit

    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        raise PostRefused(f"--report-to {shown(url)!r}: not a URL (a bad port?)", keep=False) from None
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https") or not parts.hostname:
        raise PostRefused(f"--report-to {shown(url)!r}: an http:// or https:// URL", keep=False)
    host = parts.hostname  # lower-cased by urllib
    netloc = (f"[{host}]" if ":" in host else host) + (f":{port}" if port is not None else "")
    path = parts.path.rstrip("/")
    path = path if path.endswith(API_PATH) else path + API_PATH
    user = unquote(parts.username) if parts.username is not None else None
    password = unquote(parts.password) if parts.password is not None else None
    return Target(urlunsplit((scheme, netloc, path, parts.query, "")), shown(url), host, scheme, user, password)


def endpoint(url: str) -> str:
    """The server's base URL (or the full API URL) -> the URL reports are posted to (no user:password)."""
    return target(url).url


def envelope(document: Mapping[str, Any], labels: Mapping[str, str], hostname: Optional[str],
             directory: Optional[Path] = None) -> dict[str, Any]:
    body: dict[str, Any] = {"machine_id": machine_id(directory), "labels": dict(labels), "report": document}
    if hostname is not None:
        body["hostname"] = hostname
    return body


def _headers(where: Target, token: Optional[str]) -> Dict[str, str]:
    headers = {"Content-Type": "application/json", "User-Agent": "tfdoctor"}
    if token and where.user is not None:
        raise PostRefused("the URL carries user:password and a token is set (TFDOCTOR_REPORT_TOKEN or "
                          "--report-token-file): a request has one Authorization; give one of them")
    if token:
        headers["Authorization"] = f"Bearer {token}"
    elif where.user is not None:
        import base64

        pair = f"{where.user}:{where.password or ''}".encode("utf-8")
        headers["Authorization"] = "Basic " + base64.b64encode(pair).decode("ascii")
    return headers


def plain_http_warning(where: Target, token: Optional[str]) -> Optional[str]:
    """The warning for a credential about to cross the network unencrypted, or None."""
    if where.scheme != "http" or where.loopback or not (token or where.user is not None):
        return None
    what = "the token" if token else "the URL's password"
    return (f"tfdoctor: warning: {what} goes to {where.shown} unencrypted (plain http:// beyond this machine); "
            "anyone on the way can read it: use https://")


# --- one exchange, under the deadline ------------------------------------------------------------------

class _Exchange:
    """The sockets of one post, so that the deadline can shut them wherever the worker waits on them."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._sockets: List[Any] = []
        self._cut = False

    def hold(self, sock: Any) -> None:
        with self._lock:
            self._sockets.append(sock)
            cut = self._cut
        if cut:
            _shut(sock)

    def cut(self) -> None:
        with self._lock:
            self._cut = True
            sockets = list(self._sockets)
        for sock in sockets:
            _shut(sock)


def _shut(sock: Any) -> None:
    import socket

    try:  # the plain socket's shutdown, also under TLS: it wakes a blocked recv or send at once
        socket.socket.shutdown(sock, socket.SHUT_RDWR)
    except OSError:
        pass


def _opener(exchange: _Exchange) -> Any:
    """urllib without its redirect handler (a 3xx becomes an HTTPError, never a second request), whose
    connections hand their socket to `exchange`. Proxies from the environment still apply, as for pip."""
    import http.client
    import urllib.request

    def held(base: Any) -> Any:
        class Held(base):
            def connect(self) -> None:
                super().connect()
                exchange.hold(self.sock)

        return Held

    class Plain(urllib.request.HTTPHandler):
        def http_open(self, req: Any) -> Any:
            return self.do_open(held(http.client.HTTPConnection), req)

    handlers: List[Any] = [urllib.request.ProxyHandler(), Plain(), urllib.request.HTTPDefaultErrorHandler(),
                           urllib.request.HTTPErrorProcessor()]
    if hasattr(urllib.request, "HTTPSHandler"):  # Python built with ssl
        class Tls(urllib.request.HTTPSHandler):
            def https_open(self, req: Any) -> Any:
                return self.do_open(held(http.client.HTTPSConnection), req, context=getattr(self, "_context", None))

        handlers.append(Tls())
    opener = urllib.request.OpenerDirector()
    for handler in handlers:
        opener.add_handler(handler)
    return opener


def _refusal(exc: BaseException, timeout: float) -> PostRefused:
    import socket
    import urllib.error

    if isinstance(exc, urllib.error.HTTPError):
        code = exc.code
        if 300 <= code < 400:
            location = (exc.headers.get("Location") or "") if exc.headers is not None else ""
            to = f" to {location[:200]}" if location else ""
            return PostRefused(f"HTTP {code}: the server redirects{to}; not followed (credentials go only to the "
                               "URL given)")
        reason = {401: "the server needs a token (TFDOCTOR_REPORT_TOKEN or --report-token-file)",
                  403: "the server refuses this token",
                  413: "the report is larger than the server accepts"}.get(code, str(exc.reason)[:200])
        if code >= 500:
            reason += " (the server did not store it)"
        return PostRefused(f"HTTP {code}: {reason}", keep=code not in JUDGED)
    if isinstance(exc, urllib.error.URLError) and isinstance(exc.reason, BaseException):
        exc = exc.reason
    if isinstance(exc, ConnectionRefusedError):
        return PostRefused("connection refused (is the server running?)")
    if isinstance(exc, (socket.timeout, TimeoutError)):
        return PostRefused(f"no answer within {timeout:g} s (--report-timeout)")
    said = getattr(exc, "reason", None) or exc
    return PostRefused(str(said)[:300] or type(exc).__name__)


ANSWER_LIMIT = 16 * 1024  # bytes of the server's answer read: a team server's is under 300


@dataclass(frozen=True)
class Stored:
    """A report the server stored: the environment's page and its status there, when its answer says them (the
    team server's does: docs/server.md), each checked and cleaned: the answer is the server's, not ours."""

    page: Optional[str] = None
    status: Optional[str] = None

    @classmethod
    def from_answer(cls, data: bytes, where: "Target") -> "Stored":
        from urllib.parse import urljoin

        try:
            answer = json.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError):
            return cls()
        if not isinstance(answer, dict):
            return cls()
        page, status = answer.get("url"), answer.get("status")
        if isinstance(page, str) and page.startswith("/") and not page.startswith("//"):
            page = urljoin(where.url, page)  # an older server's answer: the page's path on the same origin
        page = page if isinstance(page, str) and re.fullmatch(r"https?://[!-~]{1,300}", page) else None
        status = status if isinstance(status, str) and re.fullmatch(r"[a-z ]{1,20}", status) else None
        return cls(page, status)

    def line(self, what: str, where: "Target") -> str:
        """The one line a stored report gets: where to look at it, and how it stands."""
        if self.page is None:
            return f"tfdoctor: {what} posted to {where.shown}"
        return f"tfdoctor: {what} posted: {self.page}" + (f" ({self.status})" if self.status else "")


def _exchange(where: Target, body: Mapping[str, Any], headers: Mapping[str, str], deadline: float,
              timeout: float) -> Stored:
    """POST `body` and return what the server's answer says of it, all of it before `deadline`
    (time.monotonic()); PostRefused else."""
    import urllib.request

    remaining = deadline - time.monotonic()
    if remaining <= 0:
        raise PostRefused(f"not tried: the {timeout:g} s of --report-timeout had run out")
    data = json.dumps(body, ensure_ascii=True, separators=(",", ":")).encode("ascii")
    request = urllib.request.Request(where.url, data=data, headers=dict(headers), method="POST")
    exchange = _Exchange()
    outcome: Dict[str, Any] = {}

    def attempt() -> None:
        try:
            with _opener(exchange).open(request, timeout=remaining) as response:
                outcome["status"] = response.status
                outcome["answer"] = response.read(ANSWER_LIMIT) if response.status == STORED else b""
        except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread, which words it
            outcome["error"] = exc

    worker = threading.Thread(target=attempt, name="tfdoctor-report-to", daemon=True)
    worker.start()
    worker.join(remaining)
    if worker.is_alive():  # the daemon worker is abandoned: its socket is shut, it ends on its own
        exchange.cut()
        raise PostRefused(f"no complete answer within {timeout:g} s (--report-timeout)")
    if "error" in outcome:
        raise _refusal(outcome["error"], timeout)
    status = int(outcome["status"])
    if status != STORED:
        raise PostRefused(f"HTTP {status}: not a team server's answer to a stored report ({STORED})")
    return Stored.from_answer(outcome.get("answer") or b"", where)


def post(url: str, body: Mapping[str, Any], token: Optional[str], timeout: float = TIMEOUT_S) -> Stored:
    """POST one body within `timeout` seconds in all; what the server said of it (stored), else PostRefused."""
    where = target(url)
    return _exchange(where, body, _headers(where, token), time.monotonic() + timeout, timeout)


# --- reports kept to send again ------------------------------------------------------------------------

def pending_dir(environ: Mapping[str, str] = os.environ) -> Path:
    return cache_dir(environ) / PENDING_DIR


def _server_key(url: str) -> str:
    return hashlib.sha256(url.encode("utf-8")).hexdigest()[:12]


@dataclass(frozen=True)
class Pending:
    """A report kept to send again: its file, the endpoint it was meant for, and the body to post."""

    path: Path
    url: str
    body: Dict[str, Any]


def _existing_pending_dir(environ: Mapping[str, str]) -> Optional[Path]:
    """The kept reports' directory when it exists (None else), checked as own_files checks the doctor's own
    directories: UnsafePath for a link or another user's directory anywhere below the cache."""
    directory = pending_dir(environ)
    if not os.path.lexists(directory):
        return None
    return private_dir(directory, below=directory.parent.parent)


def _pending_files(directory: Path) -> List[Path]:
    """The kept reports' files, oldest first (their names start with the time they were kept)."""
    try:
        return sorted(directory / name for name in os.listdir(directory) if _PENDING_NAME.match(name))
    except OSError:
        return []


def _read_pending(path: Path) -> Optional[Pending]:
    try:
        kept = json.loads(read_private(path, limit=MAX_PENDING_BYTES + 1))
    except (OSError, ValueError):
        return None
    if not isinstance(kept, dict) or not isinstance(kept.get("url"), str) or not isinstance(kept.get("body"), dict):
        return None
    return Pending(path, kept["url"], kept["body"])


def keep(where: Target, body: Mapping[str, Any], reason: str, environ: Mapping[str, str] = os.environ
         ) -> Tuple[Path, int]:
    """Keep `body` to send to `where` later; (the directory, how many older reports were dropped to stay
    within MAX_PENDING and MAX_PENDING_BYTES). OSError (UnsafePath included) when it cannot be kept."""
    directory = pending_dir(environ)
    private_dir(directory, below=directory.parent.parent)
    data = json.dumps({"format": 1, "url": where.url, "reason": reason, "kept_at": time.time(), "body": body},
                      ensure_ascii=True, separators=(",", ":")).encode("ascii")
    if len(data) > MAX_PENDING_BYTES:
        raise OSError(f"the report is larger than the {MAX_PENDING_BYTES:,} bytes the cache keeps")
    name = f"{time.time_ns():020d}-{_server_key(where.url)}-{uuid.uuid4().hex[:8]}.json"
    write_private(directory / name, data)
    files = _pending_files(directory)
    sizes = {}
    for path in files:
        try:
            sizes[path] = os.lstat(path).st_size
        except OSError:
            sizes[path] = 0
    dropped = 0
    while files and (len(files) > MAX_PENDING or sum(sizes[p] for p in files) > MAX_PENDING_BYTES):
        oldest = files.pop(0)
        try:
            os.unlink(oldest)
            dropped += 1
        except FileNotFoundError:
            pass
    return directory, dropped


def pending_servers(environ: Mapping[str, str] = os.environ) -> Dict[str, int]:
    """The endpoints that reports are kept for, with how many each (UnsafePath: see _existing_pending_dir)."""
    directory = _existing_pending_dir(environ)
    servers: Dict[str, int] = {}
    seen: Dict[str, str] = {}  # a server's key in file names -> its URL, read once
    for path in _pending_files(directory) if directory is not None else []:
        key = path.name.split("-")[1]
        if key not in seen:
            kept = _read_pending(path)
            if kept is None:
                continue
            seen[key] = kept.url
        servers[seen[key]] = servers.get(seen[key], 0) + 1
    return servers


# --- a run's posts ---------------------------------------------------------------------------------------

@dataclass
class Outcome:
    """What a run's posting came to: the lines for stderr (credentials hidden) and how many reports were not
    posted (this run's and the pending ones)."""

    lines: List[str] = field(default_factory=list)
    not_posted: int = 0

    def say(self, line: str) -> None:
        self.lines.append(shown(line))


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def _home_short(directory: Path) -> str:
    """The directory as a line shows it: under the home directory, from `~`."""
    try:
        return str(Path("~") / directory.relative_to(Path.home()))
    except (ValueError, RuntimeError):
        return str(directory)


def _listed(names: Sequence[str], most: int = 5) -> str:
    return ", ".join(names[:most]) + (f" and {len(names) - most} more" if len(names) > most else "")


def _send_pending(where: Target, headers: Mapping[str, str], deadline: float, timeout: float,
                  outcome: Outcome, environ: Mapping[str, str]) -> None:
    """Post what is kept for this server, oldest first; each one posted (or judged by the server) is removed."""
    try:
        directory = _existing_pending_dir(environ)
    except OSError as exc:
        outcome.say(f"tfdoctor: the reports kept for {where.shown} were not sent: {exc}")
        return
    if directory is None:
        return
    key = _server_key(where.url)
    files = [path for path in _pending_files(directory) if path.name.split("-")[1] == key]
    if not files:
        return
    from filelock import FileLock, Timeout

    lock = FileLock(str(directory / ".sending.lock"), thread_local=False)
    try:
        lock.acquire(timeout=0)
    except (Timeout, OSError):
        outcome.say(f"tfdoctor: another tfdoctor is sending the reports kept in {_home_short(directory)}; "
                    "they stay for it")
        return
    failures: Dict[str, int] = {}
    sent = 0
    try:
        for path in files:
            kept = _read_pending(path)
            if kept is None or kept.url != where.url:
                continue
            try:
                _exchange(where, kept.body, headers, deadline, timeout)
                sent += 1
            except PostRefused as exc:
                if exc.keep:
                    failures[str(exc)] = failures.get(str(exc), 0) + 1
                    continue
                outcome.not_posted += 1
                outcome.say(f"tfdoctor: a report kept in {_home_short(directory)} was refused by {where.shown}: "
                            f"{exc}; dropped")
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass
    finally:
        lock.release()
    if sent:
        outcome.say(f"tfdoctor: sent {_plural(sent, 'pending report')} to {where.shown}")
    for reason, count in failures.items():
        outcome.not_posted += count
        outcome.say(f"tfdoctor: {_plural(count, 'pending report')} not posted to {where.shown}: {reason}; "
                    f"still kept in {_home_short(directory)}")


def _kept_clause(where: Target, bodies: Sequence[Mapping[str, Any]], reason: str,
                 environ: Mapping[str, str]) -> str:
    """Keep the bodies and say where ("; kept in DIR: ..."), or why they could not be."""
    directory, dropped = pending_dir(environ), 0
    try:
        for body in bodies:
            directory, dropped_now = keep(where, body, reason, environ)
            dropped += dropped_now
    except (OSError, ValueError) as exc:
        return f"; not kept to send again ({exc})"
    them = "it" if len(bodies) == 1 else "them"
    clause = f"; kept in {_home_short(directory)}: {SEND_COMMAND} sends {them}"
    if dropped:
        clause += f" (the oldest {_plural(dropped, 'kept report')} dropped: at most {MAX_PENDING} are kept)"
    return clause


def report_to(url: str, documents: Sequence[Mapping[str, Any]], token_file: Optional[str],
              labels: Sequence[str], send_hostname: bool, timeout: float = TIMEOUT_S,
              names: Optional[Sequence[str]] = None, environ: Mapping[str, str] = os.environ) -> Outcome:
    """Post what is kept for this server, then each document, all within `timeout` seconds; a report not stored
    is kept. `names`: what to call each document in a line (scan: each environment), None for a lone report."""
    deadline = time.monotonic() + timeout
    outcome = Outcome()
    try:
        where = target(url)
        parsed_labels = parse_labels(labels)
    except (PostRefused, ValueError) as exc:
        outcome.not_posted += len(documents)
        outcome.say(f"tfdoctor: report not posted to {url}: {exc}")
        return outcome
    hostname = None
    if send_hostname:
        import socket

        hostname = socket.gethostname()
    bodies = [envelope(document, parsed_labels, hostname) for document in documents]
    failures: Dict[Tuple[str, bool], List[int]] = {}
    try:
        token = read_token(token_file, environ)
        headers = _headers(where, token)
    except PostRefused as exc:
        failures[(str(exc), True)] = list(range(len(bodies)))
    else:
        warning = plain_http_warning(where, token)
        if warning:
            outcome.say(warning)
        _send_pending(where, headers, deadline, timeout, outcome, environ)
        for at, body in enumerate(bodies):
            try:
                stored = _exchange(where, body, headers, deadline, timeout)
            except PostRefused as exc:
                failures.setdefault((str(exc), exc.keep), []).append(at)
            else:
                outcome.say(stored.line("report" if names is None else f"report of {names[at]}", where))
    for (reason, worth_keeping), failed in failures.items():
        outcome.not_posted += len(failed)
        kept = _kept_clause(where, [bodies[at] for at in failed], reason, environ) if worth_keeping else ""
        if names is None:
            what = "report" if len(failed) == 1 else _plural(len(failed), "report")
        else:
            what = ("report of " if len(failed) == 1 else "reports of ") + _listed([names[at] for at in failed])
        outcome.say(f"tfdoctor: {what} not posted to {where.shown}: {reason}{kept}")
    return outcome


class Ambiguous(ValueError):
    """`report send` without --report-to while reports are kept for several servers."""


def send_pending(url: Optional[str], token_file: Optional[str], timeout: float = TIMEOUT_S,
                 environ: Mapping[str, str] = os.environ) -> Outcome:
    """`tfdoctor report send`: post the reports kept for `url`'s server, or, without a URL, for the one server
    reports are kept for (Ambiguous when there are several: the token goes only where the user points it)."""
    deadline = time.monotonic() + timeout
    outcome = Outcome()
    try:
        servers = pending_servers(environ)
    except OSError as exc:
        raise PostRefused(str(exc)) from None
    directory = pending_dir(environ)
    if url is None:
        if len(servers) > 1:
            listed = ", ".join(f"{server} ({count})" for server, count in sorted(servers.items()))
            raise Ambiguous(f"reports are kept for {len(servers)} servers ({listed}): name one with --report-to URL")
        if not servers:
            outcome.say(f"tfdoctor: no reports kept in {_home_short(directory)}: nothing to send")
            return outcome
        url = next(iter(servers))
    where = target(url)
    if where.url not in servers:
        outcome.say(f"tfdoctor: no reports kept in {_home_short(directory)} for {where.shown}: nothing to send")
        return outcome
    try:
        token = read_token(token_file, environ)
        headers = _headers(where, token)
    except PostRefused as exc:
        outcome.not_posted += servers[where.url]
        outcome.say(f"tfdoctor: {_plural(servers[where.url], 'pending report')} not posted to {where.shown}: "
                    f"{exc}; still kept in {_home_short(directory)}")
        return outcome
    warning = plain_http_warning(where, token)
    if warning:
        outcome.say(warning)
    _send_pending(where, headers, deadline, timeout, outcome, environ)
    return outcome
