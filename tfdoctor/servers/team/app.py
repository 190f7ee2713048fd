"""`tfdoctor serve`: the team's view of its machines, as a Starlette application.

API (versioned, JSON): POST /api/v1/reports, GET /api/v1/environments, /environments/{id}/reports,
/reports/{id}, /diff?a=&b=, /baselines, PUT /baselines/{label}; GET /metrics (Prometheus text).
Pages (server-rendered, no script): the fleet table, an environment, the baselines, "paste a report".
The server only receives and shows: nothing it answers makes a client run anything.
"""

from __future__ import annotations

import contextlib
import json
import re
from dataclasses import dataclass
from typing import Any, AsyncIterator, Optional
from urllib.parse import parse_qs, urlencode

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from tfdoctor.servers.team import security
from tfdoctor.servers.team.store import Store, passed
from tfdoctor.servers.team.summary import KEY_FACTS, STATUS_ORDER, diff_rows_first

MACHINE_ID = re.compile(r"^[A-Za-z0-9_-]{8,64}$")
LABEL_KEY = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
LABEL_VALUE = re.compile(r"^[^\x00-\x1f\x7f-\x9f]{1,128}$")
MAX_LABELS = 20
SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")
HISTORY_SHOWN = 50
FLEET_PAGE_ROWS = 100  # worst first: the first page is the one to act on; the rest a click away


@dataclass(frozen=True)
class Settings:
    db_url: str
    token: Optional[str] = None  # None: posts need no token (the server listens on loopback)
    max_body: int = security.MAX_BODY_BYTES


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


def parse_label(text: str) -> tuple[str, str]:
    key, equals, value = text.partition("=")
    if not equals or not LABEL_KEY.match(key) or not LABEL_VALUE.match(value):
        raise BadPost("a label is key=value (key: letters, digits, _.-; value: up to 128 printable characters)")
    return key, value


class TeamServer:
    """The application's parts, built once per application (no module-level state)."""

    def __init__(self, settings: Settings) -> None:
        from jinja2 import Environment, PackageLoader, select_autoescape
        from tfdoctor.render.sanitize import clean
        from tfdoctor.servers.team.validation import report_validator

        self.settings = settings
        self.store = Store(settings.db_url)
        self.validate_report = report_validator()
        self.templates = Environment(
            loader=PackageLoader("tfdoctor.servers.team", "templates"),
            autoescape=select_autoescape(default=True, default_for_string=True),
            # every value printed loses control characters first (then is HTML-escaped)
            finalize=lambda value: "" if value is None else clean(value) if isinstance(value, str) else value,
        )
        self.templates.filters["status_class"] = lambda s: s if s in STATUS_ORDER else "unknown"
        self.templates.globals["key_fact_names"] = KEY_FACTS
        from tfdoctor.servers.team.metrics import registry_for

        self.metrics, self.reports_received = registry_for(self.store)

    # --- API -----------------------------------------------------------------------------------------
    async def post_report(self, request: Request) -> Response:
        if not security.bearer_ok(self.settings.token, request.headers.get("authorization")):
            return JSONResponse({"error": "a valid bearer token is needed"}, status_code=401,
                                headers={"www-authenticate": "Bearer"})
        try:
            body = await security.read_body(request.stream(), request.headers.get("content-length"),
                                            self.settings.max_body)
        except security.BodyTooLarge:
            return JSONResponse({"error": f"larger than {self.settings.max_body} bytes"}, status_code=413)
        try:
            envelope = self._envelope(body)
        except BadPost as exc:
            return JSONResponse({"error": str(exc)}, status_code=422)
        posted = await run_in_threadpool(self.store.add_report, envelope["report"], envelope["machine_id"],
                                         envelope["labels"], envelope.get("hostname"))
        self.reports_received.inc()
        return JSONResponse({"environment": posted.environment_id, "report": posted.report_id,
                             "status": posted.status, "url": f"/environments/{posted.environment_id}"},
                            status_code=201)

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

    async def list_environments(self, request: Request) -> Response:
        try:
            label = parse_label(request.query_params["label"]) if request.query_params.get("label") else None
        except BadPost as exc:
            return JSONResponse({"error": str(exc)}, status_code=400)
        rows = self.store.environments(label)
        keys = ("id", "machine", "hostname", "python", "labels", "status", "first_failing_check", "tensorflow",
                "cuda", "gpu", "last_seen", "last_report_id", "last_pass_report_id")
        return JSONResponse([{k: row[k] for k in keys} for row in rows])

    async def environment_reports(self, request: Request) -> Response:
        environment_id = request.path_params["environment_id"]
        if self.store.environment(environment_id) is None:
            return JSONResponse({"error": "no such environment"}, status_code=404)
        return JSONResponse(self.store.history(environment_id, limit=10_000))

    async def get_report(self, request: Request) -> Response:
        document = self.store.report(request.path_params["report_id"])
        if document is None:
            return JSONResponse({"error": "no such report"}, status_code=404)
        return JSONResponse(document)

    def _diff(self, a: int, b: int) -> Optional[dict[str, Any]]:
        from tfdoctor.diff import compare
        from tfdoctor.saved_reports import UnreadableReport, parse_report

        documents = [self.store.report(a), self.store.report(b)]
        if None in documents:
            return None
        try:
            saved = [parse_report(json.dumps(d).encode("utf-8"), f"report {n}") for d, n in zip(documents, (a, b))]
        except UnreadableReport as exc:
            return {"error": str(exc)}
        return compare(saved[0], saved[1], redacted=all(d.get("redacted") for d in documents))

    async def diff(self, request: Request) -> Response:
        try:
            a, b = int(request.query_params["a"]), int(request.query_params["b"])
        except (KeyError, ValueError):
            return JSONResponse({"error": "a and b are report ids"}, status_code=400)
        document = self._diff(a, b)
        if document is None:
            return JSONResponse({"error": "no such report"}, status_code=404)
        return JSONResponse(document)

    async def list_baselines(self, request: Request) -> Response:
        return JSONResponse([self.store.baseline(label) for label in self.store.label_names()])

    async def put_baseline(self, request: Request) -> Response:
        if not security.bearer_ok(self.settings.token, request.headers.get("authorization")):
            return JSONResponse({"error": "a valid bearer token is needed"}, status_code=401)
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
        if not self.store.mark_baseline(label, report_id):
            return JSONResponse({"error": "no such report"}, status_code=404)
        return JSONResponse(self.store.baseline(label))

    async def metrics_endpoint(self, request: Request) -> Response:
        from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

        return Response(generate_latest(self.metrics), media_type=CONTENT_TYPE_LATEST)

    # --- pages ---------------------------------------------------------------------------------------
    def _page(self, request: Request, template: str, status_code: int = 200, **values: Any) -> HTMLResponse:
        csrf = request.cookies.get(security.CSRF_COOKIE) or security.new_csrf_token()
        html = self.templates.get_template(template).render(csrf=csrf, **values)
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

    async def fleet_page(self, request: Request) -> Response:
        chosen = request.query_params.get("label") or ""
        try:
            label = parse_label(chosen) if chosen else None
        except BadPost:
            label, chosen = None, ""
        try:
            page = max(1, int(request.query_params.get("page") or 1))
        except ValueError:
            page = 1
        counts = self.store.status_counts(label)
        total = sum(counts.values())
        rows = self.store.environments(label, limit=FLEET_PAGE_ROWS, offset=(page - 1) * FLEET_PAGE_ROWS)
        pages = max(1, -(-total // FLEET_PAGE_ROWS))
        link = lambda number: "/?" + urlencode({**({"label": chosen} if chosen else {}), "page": number})
        return self._page(request, "fleet.html", environments=rows, labels=self.store.label_names(),
                          chosen=chosen, counts=counts, total=total, page=page, pages=pages,
                          previous=link(page - 1) if page > 1 else None,
                          next=link(page + 1) if page < pages else None, first_row=(page - 1) * FLEET_PAGE_ROWS)

    async def environment_page(self, request: Request) -> Response:
        environment = self.store.environment(request.path_params["environment_id"])
        if environment is None:
            return self._page(request, "missing.html", status_code=404, what="environment")
        last_id = environment["last_report_id"]
        document = self.store.report(last_id) if last_id else None
        drift, since = None, None
        if document is not None and not passed(environment["status"]):
            since = self.store.last_pass_before(environment["id"], last_id)
            if since is not None:
                drift = self._diff(since, last_id)
                if drift is not None and "differences" in drift:
                    drift["differences"] = diff_rows_first(drift["differences"])
        return self._page(request, "environment.html", environment=environment, document=document,
                          history=self.store.history(environment["id"], HISTORY_SHOWN), drift=drift, since=since)

    async def mark_known_good(self, request: Request) -> Response:
        fields = await self._form(request)
        if fields is None:
            return PlainTextResponse("The form's CSRF token is missing or wrong: reload the page.", status_code=403)
        report_id = request.path_params["report_id"]
        try:
            label = "=".join(parse_label(fields.get("label", "")))
        except BadPost as exc:
            return PlainTextResponse(str(exc), status_code=422)
        if not self.store.mark_baseline(label, report_id):
            return PlainTextResponse("no such report", status_code=404)
        return RedirectResponse("/baselines?" + urlencode({"label": label}), status_code=303)

    async def baselines_page(self, request: Request) -> Response:
        groups = []
        for label in self.store.label_names():
            baseline = self.store.baseline(label)
            members = self.store.environments(tuple(label.split("=", 1)))  # type: ignore[arg-type]
            groups.append({"label": label, "baseline": baseline, "members": [
                {**member, "differs": [name for name in KEY_FACTS if baseline is not None
                                       and member["key_facts"].get(name) != baseline["key_facts"].get(name)]}
                for member in members]})
        return self._page(request, "baselines.html", groups=groups)

    async def paste_page(self, request: Request) -> Response:
        if request.method == "GET":
            return self._page(request, "paste.html", document=None, error=None, pasted="")
        try:
            fields = await self._form(request)
        except security.BodyTooLarge:
            return self._page(request, "paste.html", status_code=413, document=None, pasted="",
                              error=f"larger than {self.settings.max_body} bytes")
        if fields is None:
            return PlainTextResponse("The form's CSRF token is missing or wrong: reload the page.", status_code=403)
        pasted = fields.get("report", "")
        from tfdoctor.redact import Redactor
        from tfdoctor.saved_reports import UnreadableReport, explain, parse_report

        try:
            document = explain(parse_report(pasted.encode("utf-8", "replace"), "pasted report"))
        except UnreadableReport as exc:
            return self._page(request, "paste.html", status_code=422, document=None, error=str(exc), pasted=pasted)
        document["redacted"] = True
        document = Redactor.for_this_machine().learning_from(document).document(document)
        return self._page(request, "paste.html", document=document, error=None, pasted="")


def create_app(settings: Settings) -> Starlette:
    from importlib import resources

    server = TeamServer(settings)
    routes = [
        Route("/api/v1/reports", server.post_report, methods=["POST"]),
        Route("/api/v1/reports/{report_id:int}", server.get_report),
        Route("/api/v1/environments", server.list_environments),
        Route("/api/v1/environments/{environment_id:int}/reports", server.environment_reports),
        Route("/api/v1/diff", server.diff),
        Route("/api/v1/baselines", server.list_baselines),
        Route("/api/v1/baselines/{label:str}", server.put_baseline, methods=["PUT"]),
        Route("/metrics", server.metrics_endpoint),
        Route("/", server.fleet_page),
        Route("/environments/{environment_id:int}", server.environment_page),
        Route("/reports/{report_id:int}/known-good", server.mark_known_good, methods=["POST"]),
        Route("/baselines", server.baselines_page),
        Route("/paste", server.paste_page, methods=["GET", "POST"]),
        Mount("/static", StaticFiles(directory=str(resources.files("tfdoctor.servers.team") / "static")),
              name="static"),
    ]

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        yield
        server.store.close()

    app = Starlette(routes=routes, lifespan=lifespan, middleware=[Middleware(security.SecurityHeaders)])
    app.state.server = server
    return app
