"""`tfdoctor serve`: the team's view of its machines, as a Starlette application.

API (versioned, JSON): POST /api/v1/reports, GET /api/v1/environments, /environments/{id}/reports,
/reports/{id}, /diff?a=&b=, /baselines, PUT /baselines/{label}; GET /metrics (Prometheus text).
Pages (server-rendered, no script): the fleet (what is broken, since when, why, the first step), an
environment (problems first), a report, the diff of two reports, the baselines, "paste a report".
The server only receives and shows: nothing it answers makes a client run anything.

Nothing blocking runs on the event loop: handlers that reach the database, compare reports or judge a paste
are plain functions (Starlette runs them in its thread pool), or hand that work to the pool. Old reports go
by the retention settings, on a schedule inside the server (the lifespan's task).

Who may do what is written once, in the route table (`create_app`): with a token set, every write needs it
(scripts as a bearer token, browsers through the session cookie the sign-in form sets from it); with
`private`, so does every read. A database that does not answer is 503 with Retry-After, never 500.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import inspect
import json
import logging
import re
from dataclasses import dataclass
from typing import Any, AsyncIterator, Awaitable, Callable, Optional
from urllib.parse import parse_qs, urlencode, urlsplit

from anyio import CapacityLimiter, to_thread
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from tfdoctor.operations.drift import drift as drift_between
from tfdoctor.report.document import WORST_FIRST
from tfdoctor.servers.team import security
from tfdoctor.servers.team.store import BaselineRefused, NoSuchReport, Posted, Store
from tfdoctor.servers.team.summary import KEY_FACTS, STATUS_ORDER, STATUS_RANK, summarize

MACHINE_ID = re.compile(r"^[A-Za-z0-9_-]{8,64}$")
LABEL_KEY = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
LABEL_VALUE = re.compile(r"^[^\x00-\x1f\x7f-\x9f]{1,128}$")
MAX_LABELS = 20
SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")
HISTORY_SHOWN = 10  # reports per page of an environment's history
FLEET_PAGE_ROWS = 100  # worst first: the first page is the one to act on; the rest a click away
FLEET_STATUSES = (*WORST_FIRST, "stale")  # the report document's statuses, worst first, and a machine gone quiet
CAUSE_KEY = re.compile(r"^[0-9a-f]{16}$")
READ_THREADS = 1  # reads served at once (the rest wait their turn); posts and other writes are not limited
RETRY_AFTER_S = 30  # a database restart or failover takes about this long; clients keep the report meanwhile
LOG = logging.getLogger(__name__)

# Who may call a route (create_app's table): anyone; a reader (anyone, unless private); a writer (the token).
OPEN, READ, WRITE = "open", "read", "write"
Handler = Callable[[Request], Any]  # async, or a plain function run in Starlette's thread pool


@dataclass(frozen=True)
class Settings:
    db_url: str
    token: Optional[str] = None  # None: nothing needs a token (the server listens on loopback)
    max_body: int = security.MAX_BODY_BYTES
    private: bool = False  # reads and pages need the token too
    stale_after_s: float = 24 * 3600  # an environment without a report for this long is marked stale
    keep_days: Optional[float] = None  # retention: reports older than this go (None: kept)
    keep_reports: Optional[int] = None  # retention: each environment keeps its newest this many (None: all)
    retention_every_s: float = 3600  # how often retention runs inside the server (and once at start)

    def __post_init__(self) -> None:
        if self.private and self.token is None:
            raise ValueError("--private needs --token-file: it is the token readers sign in with")
        if self.stale_after_s <= 0:
            raise ValueError("--stale-after is a positive number of hours")
        if (self.keep_days is not None and self.keep_days <= 0) or (self.keep_reports is not None
                                                                     and self.keep_reports < 1):
            raise ValueError("--keep-days and --keep-reports are positive numbers")


class BadPost(Exception):
    """A post that is not a report this server keeps: 422 with the reason."""


def _reject_constant(name: str) -> Any:
    raise BadPost(f"{name} is not JSON")


def _without_surrogates(value: Any) -> Any:
    """Lone surrogates (from \\ud800 escapes) cannot be stored as UTF-8: make them U+FFFD."""
    if isinstance(value, str):
        return value.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    if isinstance(value, dict):
        return {_without_surrogates(k): _without_surrogates(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_without_surrogates(v) for v in value]
    return value


def _duration(seconds: float) -> str:
    """A span in words, coarsely: 45 s, 12 min, 5 h, 3 days."""
    seconds = max(0.0, seconds)
    for unit, size in (("day", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            count = int(seconds // size)
            return f"{count} {unit}{'s' if unit == 'day' and count != 1 else ''}"
    return f"{int(seconds)} s"


def _parse_time(iso: str) -> Optional[dt.datetime]:
    try:
        parsed = dt.datetime.fromisoformat(iso)
    except (TypeError, ValueError):
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=dt.timezone.utc)


def ago(iso: str, now: dt.datetime) -> str:
    """A stored time as "3 h ago" (relative to the page's `now`)."""
    when = _parse_time(iso)
    return "never" if when is None else "just now" if (now - when).total_seconds() < 1 else \
        f"{_duration((now - when).total_seconds())} ago"


def absolute(iso: str) -> str:
    """A stored time as "2026-11-29 01:02:03 UTC" (shown on hover)."""
    when = _parse_time(iso)
    return iso if when is None else when.astimezone(dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


def parse_label(text: str) -> tuple[str, str]:
    key, equals, value = text.partition("=")
    if not equals or not LABEL_KEY.match(key) or not LABEL_VALUE.match(value):
        raise BadPost("a label is key=value (key: letters, digits, _.-; value: up to 128 printable characters)")
    return key, value


class TeamServer:
    """The application's parts, built once per application (no module-level state)."""

    def __init__(self, settings: Settings) -> None:
        from jinja2 import Environment, PackageLoader, select_autoescape
        from markupsafe import Markup, escape

        from tfdoctor.render.sanitize import clean
        from tfdoctor.servers.team.validation import report_validator

        self.settings = settings
        self.store = Store(settings.db_url)
        self.validate_report = report_validator()
        self.templates = Environment(
            loader=PackageLoader("tfdoctor.servers.team", "templates"),
            autoescape=select_autoescape(default=True, default_for_string=True),
            # every value printed loses control characters first (then is HTML-escaped); markup the templates
            # made themselves (macros, `exact`) is left as it is
            finalize=lambda value: "" if value is None else value if isinstance(value, Markup)
            else clean(value) if isinstance(value, str) else value,
        )
        self.templates.filters["status_class"] = lambda s: s if s in STATUS_ORDER else "unknown"
        # a value a form sends back (a label): HTML-escaped but not `clean`ed, which spells out invisible
        # characters (\u202e) that the server would then not find; labels hold no control characters
        self.templates.filters["exact"] = lambda value: Markup(escape(str(value)))
        self.templates.filters["ago"] = ago
        self.templates.filters["absolute"] = absolute
        self.templates.filters["changed_checks"] = lambda checks: [c for c in checks if c["a"] != c["b"]]
        self.templates.globals["key_fact_names"] = KEY_FACTS
        self.paste_limiter = CapacityLimiter(1)
        self.read_limiter = CapacityLimiter(READ_THREADS)
        from tfdoctor.servers.team.metrics import registry_for

        self.metrics, self.reports_received = registry_for(self.store)

    # --- who may ------------------------------------------------------------------------------------
    def _signed_in(self, request: Request) -> bool:
        """The token came with the request: as a bearer token, or as the browser's session cookie."""
        token = self.settings.token
        return (token is None or security.bearer_ok(token, request.headers.get("authorization"))
                or security.session_ok(token, request.cookies.get(security.SESSION_COOKIE)))

    def _allowed(self, request: Request, need: str, api: bool) -> bool:
        if need == OPEN or self.settings.token is None or (need == READ and not self.settings.private):
            return True
        if need == WRITE and api:  # the API's writes take the bearer token only: a cookie never writes by itself
            return security.bearer_ok(self.settings.token, request.headers.get("authorization"))
        return self._signed_in(request)

    def guarded(self, handler: Handler, need: str, api: bool) -> Callable[[Request], Awaitable[Response]]:
        """`handler` behind its guard: the API answers 401 to whoever lacks the token; a page sends a browser
        to the sign-in form (a form post answers 401 with that form: its action is not replayed). The guard
        reads only headers and cookies (no database): it never blocks the event loop."""
        is_async = inspect.iscoroutinefunction(handler)
        # reads (pages, the API's reads, /metrics) take turns on a few threads of their own: however many
        # browsers reload pages, a machine's post finds the interpreter (the GIL) shared by few, not by all
        limiter = self.read_limiter if need != WRITE else None

        async def endpoint(request: Request) -> Response:
            if self._allowed(request, need, api):
                if is_async:
                    return await handler(request)
                return await to_thread.run_sync(handler, request, limiter=limiter)
            if api:
                return JSONResponse({"error": "a valid bearer token is needed"}, status_code=401,
                                    headers={"www-authenticate": "Bearer"})
            if request.method in ("GET", "HEAD"):
                return RedirectResponse("/login?" + urlencode({"next": _path_of(request)}), status_code=303)
            referer = urlsplit(request.headers.get("referer", ""))
            back = referer.path if referer.netloc == request.headers.get("host") else "/"
            return self._page(request, "login.html", status_code=401, error="Sign in first: this needs the "
                              "server's token.", next=security.local_path(back))

        return endpoint

    async def database_unavailable(self, request: Request, exc: Exception) -> Response:
        """503 with Retry-After: the database is down or unreachable (the reason goes to the log, not the
        client: it may name hosts)."""
        LOG.warning("tfdoctor serve: the database did not answer: %s: %s", type(exc).__name__,
                    str(exc).splitlines()[0] if str(exc) else "")
        headers = {"retry-after": str(RETRY_AFTER_S)}
        if request.url.path.startswith("/api/") or request.url.path == "/metrics":
            return JSONResponse({"error": "the database is unavailable: try again later"}, status_code=503,
                                headers=headers)
        html = self.templates.get_template("unavailable.html").render(retry_after=RETRY_AFTER_S, token_set=False)
        return HTMLResponse(html, status_code=503, headers=headers)

    # --- API -----------------------------------------------------------------------------------------
    # Handlers that touch the database, a diff or a paste are plain functions: Starlette runs them in its
    # thread pool, so the event loop only reads bodies and writes answers. Those that read a body read it
    # on the loop (async), then hand the rest to the pool.
    async def post_report(self, request: Request) -> Response:
        try:
            body = await security.read_body(request.stream(), request.headers.get("content-length"),
                                            self.settings.max_body)
        except security.BodyTooLarge:
            return JSONResponse({"error": f"larger than {self.settings.max_body} bytes"}, status_code=413)
        try:
            posted = await run_in_threadpool(self._accept, body)
        except BadPost as exc:
            return JSONResponse({"error": str(exc)}, status_code=422)
        self.reports_received.inc()
        path = f"/environments/{posted.environment_id}"
        return JSONResponse({"environment": posted.environment_id, "report": posted.report_id,
                             "status": posted.status, "url": str(request.base_url).rstrip("/") + path,
                             "path": path}, status_code=201)

    def _accept(self, body: bytes) -> Posted:
        """Parse, validate and store a post (in the pool: JSON, the schema and the drift are CPU work)."""
        envelope = self._envelope(body)
        return self.store.add_report(envelope["report"], envelope["machine_id"], envelope["labels"],
                                     envelope.get("hostname"))

    def _envelope(self, body: bytes) -> dict[str, Any]:
        try:
            envelope = json.loads(body.decode("utf-8"), parse_constant=_reject_constant)
        except (UnicodeDecodeError, ValueError, RecursionError) as exc:
            raise BadPost(f"not JSON: {type(exc).__name__}") from None
        if not isinstance(envelope, dict):
            raise BadPost("the body is a JSON object {machine_id, labels, hostname, report}")
        machine_id = envelope.get("machine_id")
        if not isinstance(machine_id, str) or not MACHINE_ID.match(machine_id):
            raise BadPost("machine_id: 8 to 64 letters, digits, '-' or '_'")
        raw_labels = envelope.get("labels") or {}
        if not isinstance(raw_labels, dict) or len(raw_labels) > MAX_LABELS:
            raise BadPost(f"labels: an object of at most {MAX_LABELS} key=value pairs")
        labels = dict(parse_label(f"{k}={v}") for k, v in raw_labels.items() if isinstance(v, str))
        if len(labels) != len(raw_labels):
            raise BadPost("labels: every value is a string")
        hostname = envelope.get("hostname")
        if hostname is not None and (not isinstance(hostname, str) or not LABEL_VALUE.match(hostname[:255] or "?")):
            raise BadPost("hostname: a string of printable characters")
        report = envelope.get("report")
        if SURROGATE_ESCAPE.search(body):  # rare: walking a 50 KB report costs more than the rest of a post
            report = _without_surrogates(report)
        error = self.validate_report(report)
        if error is not None:
            raise BadPost(f"report does not match the report schema: {error}")
        return {"machine_id": machine_id, "labels": labels, "hostname": hostname[:255] if hostname else None,
                "report": report}

    def list_environments(self, request: Request) -> Response:
        try:
            label = parse_label(request.query_params["label"]) if request.query_params.get("label") else None
        except BadPost as exc:
            return JSONResponse({"error": str(exc)}, status_code=400)
        rows = self.store.environments(label)
        stale_before = self._stale_before()
        keys = ("id", "machine", "hostname", "python", "labels", "status", "first_failing_check", "cause",
                "first_step", "regressed_at", "tensorflow", "cuda", "gpu", "first_seen", "last_seen",
                "last_report_id", "last_pass_report_id", "regressions")
        return JSONResponse([{**{k: row[k] for k in keys}, "stale": row["last_seen"] < stale_before}
                             for row in rows])

    def environment_reports(self, request: Request) -> Response:
        environment_id = request.path_params["environment_id"]
        if self.store.environment(environment_id) is None:
            return JSONResponse({"error": "no such environment"}, status_code=404)
        return JSONResponse(self.store.history(environment_id, limit=10_000))

    def get_report(self, request: Request) -> Response:
        document = self.store.report(request.path_params["report_id"])
        if document is None:
            return JSONResponse({"error": "no such report"}, status_code=404)
        return JSONResponse(document)

    def report_drift(self, request: Request) -> Response:
        """The drift stored with a report when it arrived: since the environment's better report, and since
        its previous one (each null when there is none)."""
        drift = self.store.drift(request.path_params["report_id"])
        if drift is None:
            return JSONResponse({"error": "no such report"}, status_code=404)
        return JSONResponse(drift)

    def _diff(self, a: int, b: int) -> Optional[dict[str, Any]]:
        """Two stored reports compared from their digests (facts and verdicts as recorded: no check runs)."""
        digests = self.store.digests((a, b))
        if digests is None:
            return None
        return drift_between(digests[0], digests[1], every_check=True)

    @staticmethod
    def _report_ids(request: Request) -> Optional[tuple[int, int]]:
        try:
            return int(request.query_params["a"]), int(request.query_params["b"])
        except (KeyError, ValueError):
            return None

    def diff(self, request: Request) -> Response:
        ids = self._report_ids(request)
        if ids is None:
            return JSONResponse({"error": "a and b are report ids"}, status_code=400)
        document = self._diff(*ids)
        if document is None:
            return JSONResponse({"error": "no such report"}, status_code=404)
        changed = any(check["a"] != check["b"] for check in document["checks"])
        return JSONResponse({"reports": {"a": ids[0], "b": ids[1]}, "identical": not document["differences"]
                             and not changed, **{k: v for k, v in document.items() if k != "base"}})

    def list_baselines(self, request: Request) -> Response:
        return JSONResponse([self.store.baseline(label) for label in self.store.label_names()])

    async def put_baseline(self, request: Request) -> Response:
        try:
            label = "=".join(parse_label(request.path_params["label"]))
            body = json.loads(await security.read_body(request.stream(), request.headers.get("content-length"),
                                                       64 * 1024))
            report_id = int(body["report"])
        except security.BodyTooLarge:
            return JSONResponse({"error": "too large"}, status_code=413)
        except (BadPost, ValueError, KeyError, TypeError) as exc:
            return JSONResponse({"error": f"PUT {{\"report\": ID}} to /api/v1/baselines/KEY=VALUE ({exc})"},
                                status_code=422)
        try:
            await run_in_threadpool(self.store.mark_baseline, label, report_id)
        except NoSuchReport:
            return JSONResponse({"error": "no such report"}, status_code=404)
        except BaselineRefused as exc:
            return JSONResponse({"error": str(exc)}, status_code=422)
        return JSONResponse(await run_in_threadpool(self.store.baseline, label))

    def metrics_endpoint(self, request: Request) -> Response:
        from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

        return Response(generate_latest(self.metrics), media_type=CONTENT_TYPE_LATEST)

    # --- pages ---------------------------------------------------------------------------------------
    def _page(self, request: Request, template: str, status_code: int = 200, **values: Any) -> HTMLResponse:
        csrf = request.cookies.get(security.CSRF_COOKIE) or security.new_csrf_token()
        token_set = self.settings.token is not None
        html = self.templates.get_template(template).render(
            csrf=csrf, token_set=token_set, signed_in=token_set and self._signed_in(request),
            now=dt.datetime.now(dt.timezone.utc), **values)
        response = HTMLResponse(html, status_code=status_code)
        response.set_cookie(security.CSRF_COOKIE, csrf, httponly=True, samesite="strict", path="/")
        return response

    async def _form(self, request: Request) -> Optional[dict[str, str]]:
        """A form post's fields, or None when its CSRF token or origin is wrong."""
        body = await security.read_body(request.stream(), request.headers.get("content-length"),
                                        self.settings.max_body)
        fields = {k: v[0] for k, v in parse_qs(body.decode("utf-8", "replace"), keep_blank_values=True).items()}
        if not security.same_origin(request.headers) or not security.csrf_ok(
                request.cookies.get(security.CSRF_COOKIE), fields.get(security.CSRF_FIELD)):
            return None
        return fields

    def _stale_before(self) -> str:
        """The time before which an environment's last report makes it stale (the stored timestamps' format)."""
        cutoff = dt.datetime.now(dt.timezone.utc) - dt.timedelta(seconds=self.settings.stale_after_s)
        return cutoff.isoformat(timespec="microseconds")

    @staticmethod
    def _page_number(request: Request, name: str) -> int:
        try:
            return max(1, min(int(request.query_params.get(name) or 1), 10**6))
        except ValueError:
            return 1

    def fleet_page(self, request: Request) -> Response:
        chosen = request.query_params.get("label") or ""
        try:
            label = parse_label(chosen) if chosen else None
        except BadPost:
            label, chosen = None, ""
        chosen_status = request.query_params.get("status") or ""
        if chosen_status not in FLEET_STATUSES:
            chosen_status = ""
        chosen_cause = request.query_params.get("cause") or ""
        if not CAUSE_KEY.match(chosen_cause):
            chosen_cause = ""
        page = self._page_number(request, "page")
        stale_before = self._stale_before()
        filters: dict[str, Any] = dict(label=label, status=chosen_status or None, stale_before=stale_before,
                                       cause_key=chosen_cause or None)
        counts = self.store.status_counts(label, stale_before)
        total = self.store.count_environments(**filters)
        rows = self.store.environments(**filters, limit=FLEET_PAGE_ROWS, offset=(page - 1) * FLEET_PAGE_ROWS)
        now = dt.datetime.now(dt.timezone.utc)
        for row in rows:
            row["stale"] = row["last_seen"] < stale_before
            for name in ("last_seen", "first_seen", "regressed_at"):
                if row[name]:
                    row[f"{name}_ago"], row[f"{name}_absolute"] = ago(row[name], now), absolute(row[name])
        pages = max(1, -(-total // FLEET_PAGE_ROWS))
        current = {"label": chosen, "status": chosen_status, "cause": chosen_cause}

        def link(**changes: Any) -> str:
            """This page's address with some filters changed (None removes one); the page number starts over."""
            query = {k: v for k, v in {**current, **changes}.items() if v}
            return "/?" + urlencode(query) if query else "/"

        return self._page(request, "fleet.html", environments=rows, labels=self.store.label_names(),
                          label_counts=self.store.label_counts(stale_before),
                          causes=self.store.causes(label, stale_before=stale_before) if chosen_status != "pass" else [],
                          chosen=chosen, chosen_status=chosen_status, chosen_cause=chosen_cause, counts=counts,
                          total=total, total_all=sum(v for k, v in counts.items() if k != "stale"), page=page,
                          pages=pages, link=link, stale_after=_duration(self.settings.stale_after_s),
                          previous=link(page=page - 1) if page > 1 else None,
                          next=link(page=page + 1) if page < pages else None, first_row=(page - 1) * FLEET_PAGE_ROWS)

    @staticmethod
    def _drift_view(drift: Optional[dict[str, Any]], report_id: int, status: str) -> Optional[dict[str, Any]]:
        if drift is None or status == "pass":
            return None  # a healthy environment gets no drift view
        return {**drift, "report": report_id, "never_passed": drift.get("since_better") is None}

    def _drift_for_page(self, report_id: int, status: str) -> Optional[dict[str, Any]]:
        return self._drift_view(self.store.drift(report_id), report_id, status)

    def environment_page(self, request: Request) -> Response:
        page = self._page_number(request, "history")
        first = (page - 1) * HISTORY_SHOWN
        view = self.store.environment_view(request.path_params["environment_id"], HISTORY_SHOWN, first)
        if view is None:
            return self._page(request, "missing.html", status_code=404, what="environment")
        environment, document, history = view["environment"], view["document"], view["history"]
        environment["stale"] = environment["last_seen"] < self._stale_before()
        for row, older in zip(history, history[1:]):
            row["previous_id"] = older["id"]
            row["regressed"] = STATUS_RANK.get(row["status"], 0) < STATUS_RANK.get(older["status"], 0)
            row["changed"] = ", ".join(f"{name} {row['key_facts'].get(name) or 'none'} (was {older['key_facts'].get(name) or 'none'})"
                                       for name in KEY_FACTS if row["key_facts"].get(name) != older["key_facts"].get(name))
        total = view["history_total"]
        base = f"/environments/{environment['id']}"
        return self._page(request, "environment.html", environment=environment, document=document,
                          verdict=summarize(document) if document is not None else None,
                          drift=self._drift_view(view["drift"], environment["last_report_id"], environment["status"]),
                          history=history[:HISTORY_SHOWN], history_total=total, history_first=first,
                          history_previous=f"{base}?history={page - 1}#history" if page > 1 else None,
                          history_next=f"{base}?history={page + 1}#history" if first + HISTORY_SHOWN < total else None)

    def report_page(self, request: Request) -> Response:
        head = self.store.report_head(request.path_params["report_id"])
        if head is None:
            return self._page(request, "missing.html", status_code=404, what="report")
        document = self.store.report(head["id"]) or {}
        return self._page(request, "report.html", head=head, document=document, verdict=summarize(document),
                          environment=self.store.environment(head["environment_id"]),
                          drift=self._drift_for_page(head["id"], head["status"]))

    def diff_page(self, request: Request) -> Response:
        ids = self._report_ids(request)
        heads = [self.store.report_head(i) for i in ids] if ids is not None else [None]
        if ids is None or None in heads:
            return self._page(request, "missing.html", status_code=404, what="pair of reports")
        names = {}
        for head in heads:
            assert head is not None  # checked above
            environment = self.store.environment(head["environment_id"]) or {}
            names[head["environment_id"]] = environment.get("hostname") or str(environment.get("machine", ""))[:12]
        return self._page(request, "diff.html", a=heads[0], b=heads[1], diff=self._diff(*ids), names=names)

    async def mark_known_good(self, request: Request) -> Response:
        fields = await self._form(request)
        if fields is None:
            return PlainTextResponse("The form's CSRF token is missing or wrong: reload the page.", status_code=403)
        report_id = request.path_params["report_id"]
        try:
            label = "=".join(parse_label(fields.get("label", "")))
        except BadPost as exc:
            return PlainTextResponse(str(exc), status_code=422)
        try:
            await run_in_threadpool(self.store.mark_baseline, label, report_id)
        except NoSuchReport:
            return PlainTextResponse("no such report", status_code=404)
        except BaselineRefused as exc:
            return PlainTextResponse(str(exc), status_code=422)
        return RedirectResponse("/baselines?" + urlencode({"label": label}), status_code=303)

    def baselines_page(self, request: Request) -> Response:
        groups = []
        for label in self.store.label_names():
            baseline = self.store.baseline(label)
            # the ignore below: label_names() writes every label as key=value, so the split is a pair
            members = self.store.environments(tuple(label.split("=", 1)))  # type: ignore[arg-type]
            groups.append({"label": label, "baseline": baseline, "members": [
                {**member, "differs": [name for name in KEY_FACTS if baseline is not None
                                       and member["key_facts"].get(name) != baseline["key_facts"].get(name)]}
                for member in members]})
        return self._page(request, "baselines.html", groups=groups)

    def paste_form(self, request: Request) -> Response:
        return self._page(request, "paste.html", document=None, error=None, pasted="")

    async def paste_page(self, request: Request) -> Response:
        try:
            fields = await self._form(request)
        except security.BodyTooLarge:
            return self._page(request, "paste.html", status_code=413, document=None, pasted="",
                              error=f"larger than {self.settings.max_body} bytes")
        if fields is None:
            return PlainTextResponse("The form's CSRF token is missing or wrong: reload the page.", status_code=403)
        pasted = fields.get("report", "")
        # explain runs every check: in the pool, one paste at a time, so pastes never starve posts and pages
        return await to_thread.run_sync(self._judge, request, pasted, limiter=self.paste_limiter)

    def _judge(self, request: Request, pasted: str) -> Response:
        from tfdoctor.operations import CannotRun
        from tfdoctor.operations.explain import ExplainRequest, explain

        try:
            document = explain(ExplainRequest(pasted.encode("utf-8", "replace"), name="pasted report")).document.data
        except CannotRun as exc:
            return self._page(request, "paste.html", status_code=422, document=None, error=str(exc), pasted=pasted)
        return self._page(request, "paste.html", document=document, verdict=summarize(document), error=None,
                          pasted="")

    # --- signing in (browsers; scripts send the bearer token) ---------------------------------------------
    async def login_page(self, request: Request) -> Response:
        token = self.settings.token
        if token is None:
            return RedirectResponse("/", status_code=303)  # nothing to sign in to
        if request.method == "GET":
            return self._page(request, "login.html", error=None,
                              next=security.local_path(request.query_params.get("next")))
        fields = await self._form(request)
        if fields is None:
            return PlainTextResponse("The form's CSRF token is missing or wrong: reload the page.", status_code=403)
        target = security.local_path(fields.get("next"))
        if not security.token_ok(token, fields.get("token", "")):
            return self._page(request, "login.html", status_code=401, error="That is not this server's token.",
                              next=target)
        response = RedirectResponse(target, status_code=303)
        response.set_cookie(security.SESSION_COOKIE, security.new_session(token), max_age=security.SESSION_SECONDS,
                            httponly=True, samesite="strict", secure=request.url.scheme == "https", path="/")
        return response

    async def logout(self, request: Request) -> Response:
        if await self._form(request) is None:
            return PlainTextResponse("The form's CSRF token is missing or wrong: reload the page.", status_code=403)
        response = RedirectResponse("/login" if self.settings.private else "/", status_code=303)
        response.delete_cookie(security.SESSION_COOKIE, httponly=True, samesite="strict", path="/")
        return response


def _path_of(request: Request) -> str:
    query = request.url.query
    return request.url.path + (f"?{query}" if query else "")


def create_app(settings: Settings) -> Starlette:
    from importlib import resources

    from sqlalchemy.exc import InterfaceError, OperationalError, TimeoutError as PoolTimeout

    server = TeamServer(settings)

    def api(path: str, handler: Handler, need: str, methods: tuple[str, ...] = ("GET",)) -> Route:
        return Route(path, server.guarded(handler, need, api=True), methods=list(methods))

    def page(path: str, handler: Handler, need: str, methods: tuple[str, ...] = ("GET",)) -> Route:
        return Route(path, server.guarded(handler, need, api=False), methods=list(methods))

    routes = [
        api("/api/v1/reports", server.post_report, WRITE, ("POST",)),
        api("/api/v1/reports/{report_id:int}", server.get_report, READ),
        api("/api/v1/reports/{report_id:int}/drift", server.report_drift, READ),
        api("/api/v1/environments", server.list_environments, READ),
        api("/api/v1/environments/{environment_id:int}/reports", server.environment_reports, READ),
        api("/api/v1/diff", server.diff, READ),
        api("/api/v1/baselines", server.list_baselines, READ),
        api("/api/v1/baselines/{label:str}", server.put_baseline, WRITE, ("PUT",)),
        api("/metrics", server.metrics_endpoint, READ),
        page("/", server.fleet_page, READ),
        page("/environments/{environment_id:int}", server.environment_page, READ),
        page("/reports/{report_id:int}", server.report_page, READ),
        page("/reports/{report_id:int}/known-good", server.mark_known_good, WRITE, ("POST",)),
        page("/diff", server.diff_page, READ),
        page("/baselines", server.baselines_page, READ),
        page("/paste", server.paste_form, READ),
        # judging stores nothing, but runs every check (a second of CPU): with a token, signed-in browsers only
        page("/paste", server.paste_page, WRITE, ("POST",)),
        page("/login", server.login_page, OPEN, ("GET", "POST")),
        page("/logout", server.logout, OPEN, ("POST",)),
        Mount("/static", StaticFiles(directory=str(resources.files("tfdoctor.servers.team") / "static")),
              name="static"),
    ]

    async def retention() -> None:
        """Apply the retention settings now and then every `retention_every_s`, in the pool (deletes block)."""
        while True:
            try:
                removed = await to_thread.run_sync(server.store.apply_retention, settings.keep_days,
                                                   settings.keep_reports)
                if removed:
                    LOG.info("tfdoctor serve: retention removed %d reports", removed)
            except Exception as exc:  # noqa: BLE001 - the database may be away: the next round tries again
                LOG.warning("tfdoctor serve: retention failed: %s: %s", type(exc).__name__, exc)
            await asyncio.sleep(settings.retention_every_s)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        task = None
        if settings.keep_days is not None or settings.keep_reports is not None:
            task = asyncio.get_running_loop().create_task(retention())
        try:
            yield
        finally:
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
            await to_thread.run_sync(server.store.close)  # closing connections waits on the database

    unavailable = {error: server.database_unavailable for error in (OperationalError, InterfaceError, PoolTimeout)}
    app = Starlette(routes=routes, lifespan=lifespan, middleware=[Middleware(security.SecurityHeaders)],
                    exception_handlers=unavailable)
    app.state.server = server
    return app
