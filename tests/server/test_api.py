"""The team server's API and pages (issue 28), the same tests on SQLite and on a real PostgreSQL."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from tests.server_support import AUTH, TOKEN, RunningServer, client_for, csrf_of, envelope, post, sign_in


def test_the_fleet_lists_each_environment_worst_first_with_its_key_facts(db_url, healthy, broken):
    with client_for(db_url) as client:
        assert post(client, healthy, "machine-healthy", {"team": "vision"}, "gpu-01").status_code == 201
        answer = post(client, broken, "machine-broken", {"team": "nlp"})
        assert answer.status_code == 201
        answered = answer.json()  # ids, the status and where to look: nothing to run
        path = f"/environments/{answered['environment']}"
        assert answered == {"environment": answered["environment"], "report": answered["report"], "status": "fail",
                            "url": "http://testserver" + path, "path": path}
        fleet = client.get("/api/v1/environments").json()
    assert [e["machine"] for e in fleet] == ["machine-broken", "machine-healthy"]
    bad, good = fleet
    assert bad["status"] == "fail" and bad["first_failing_check"] == "cuda-build"
    assert bad["labels"] == {"team": "nlp"} and bad["hostname"] is None
    assert bad["tensorflow"] == "2.16.1"
    assert good["status"] == "pass" and good["first_failing_check"] is None and good["hostname"] == "gpu-01"
    assert good["tensorflow"] == "2.21.0" and good["cuda"] is None  # the fixture has no build_info
    assert "T4" in (good["gpu"] or "")
    for entry in fleet:
        assert {"machine", "python", "labels", "status", "first_failing_check", "tensorflow", "cuda", "gpu",
                "last_seen"} <= set(entry)


def test_filtering_by_label_keeps_only_that_label(db_url, healthy, broken):
    with client_for(db_url) as client:
        post(client, healthy, "machine-aaaa", {"team": "vision", "site": "lab"})
        post(client, broken, "machine-bbbb", {"team": "nlp"})
        vision = client.get("/api/v1/environments", params={"label": "team=vision"}).json()
        page = client.get("/", params={"label": "team=nlp"}).text
    assert [e["machine"] for e in vision] == ["machine-aaaa"]
    assert "machine-bbbb"[:12] in page and "machine-aaaa" not in page


def test_an_environment_shows_what_changed_since_it_last_passed(db_url, healthy, broken):
    with client_for(db_url) as client:
        first = post(client, healthy, "machine-drift").json()
        second = post(client, broken, "machine-drift").json()
        assert first["environment"] == second["environment"]
        history = client.get(f"/api/v1/environments/{first['environment']}/reports").json()
        diff = client.get("/api/v1/diff", params={"a": first["report"], "b": second["report"]}).json()
        page = client.get(f"/environments/{first['environment']}").text
    assert [h["id"] for h in history] == [second["report"], first["report"]]
    assert [h["status"] for h in history] == ["fail", "pass"]
    changed = {(d["section"], d["field"]): (d["a"], d["b"]) for d in diff["differences"]}
    assert changed[("tensorflow", "TensorFlow version")][1] == "2.16.1"
    assert any(c["id"] == "cuda-build" and c["a"] == "pass" and c["b"] == "fail" for c in diff["checks"])
    drift = page.split('id="drift"', 1)[1].split("</section>", 1)[0]
    assert "What changed since it last passed" in drift
    rows = drift.split("<tbody>", 1)[1].split("</tr>")
    assert rows[0].startswith("<tr") and "TensorFlow version" in rows[0] and "named by cuda-build" in rows[0]
    assert page.index('id="drift"') < page.index('id="plan"') < page.index('id="problems"')  # problems first


def test_a_post_without_the_token_is_refused(db_url, healthy):
    with client_for(db_url) as client:
        assert post(client, healthy, "machine-token", headers={}).status_code == 401
        assert post(client, healthy, "machine-token", headers={"Authorization": "Bearer wrong"}).status_code == 401
        assert post(client, healthy, "machine-token", headers={"Authorization": TOKEN}).status_code == 401
        assert client.get("/api/v1/environments").json() == []
        assert post(client, healthy, "machine-token").status_code == 201


def test_a_5_mb_post_is_refused_with_413(db_url, healthy):
    padding = "x" * (5 * 1024 * 1024)
    body = json.dumps(envelope({**healthy, "padding": padding}, "machine-big")).encode()
    with client_for(db_url) as client:
        assert client.post("/api/v1/reports", content=body, headers=AUTH).status_code == 413

        def chunks():  # no Content-Length: the limit holds on the stream too
            for start in range(0, len(body), 65536):
                yield body[start:start + 65536]

        assert client.post("/api/v1/reports", content=chunks(), headers=AUTH).status_code == 413
        assert client.get("/api/v1/environments").json() == []


@pytest.mark.parametrize("change", ["no results", "schema 2", "NaN", "bad machine", "bad label", "not json"])
def test_a_post_that_is_not_a_report_is_refused_with_the_reason(db_url, healthy, change):
    body = envelope(healthy, "machine-schema")
    if change == "no results":
        body["report"] = {k: v for k, v in healthy.items() if k != "results"}
    elif change == "schema 2":
        body["report"] = {**healthy, "schema_version": "2.0"}
    elif change == "bad machine":
        body["machine_id"] = "../../etc"
    elif change == "bad label":
        body["labels"] = {"team": "a\x1b[2Jb"}
    raw = json.dumps(body).encode()
    if change == "NaN":
        raw = raw.replace(b'"redacted": true', b'"redacted": NaN', 1)
        assert b'NaN' in raw
    if change == "not json":
        raw = raw[:1000]
    with client_for(db_url) as client:
        answer = client.post("/api/v1/reports", content=raw, headers={**AUTH, "Content-Type": "application/json"})
        assert answer.status_code == 422, answer.text
        assert client.get("/api/v1/environments").json() == []


def test_each_label_has_a_baseline_its_newest_passing_report_or_the_one_marked(db_url, healthy, broken):
    with client_for(db_url) as client:
        good = post(client, healthy, "machine-base1", {"team": "vision"}).json()
        post(client, broken, "machine-base2", {"team": "vision"})
        assert client.get("/api/v1/baselines").json() == [
            {**client.get("/api/v1/baselines").json()[0], "report_id": good["report"], "how": "newest passing report"}]
        newer = post(client, healthy, "machine-base3", {"team": "vision"}).json()
        assert client.get("/api/v1/baselines").json()[0]["report_id"] == newer["report"]
        assert client.put("/api/v1/baselines/team=vision", json={"report": good["report"]}).status_code == 401
        marked = client.put("/api/v1/baselines/team=vision", json={"report": good["report"]}, headers=AUTH).json()
        assert marked["report_id"] == good["report"] and marked["how"] == "marked known-good"
        page = client.get("/baselines").text
    assert "marked known-good" in page and "≠ 2.16.1" in page  # the broken one differs in TensorFlow


def test_form_posts_need_the_csrf_token_of_the_page(db_url, healthy):
    with client_for(db_url) as client:
        posted = post(client, healthy, "machine-csrf", {"team": "vision"}).json()
        assert sign_in(client).status_code == 303  # a write: the token too (tests/server/test_access.py)
        client.get(f"/environments/{posted['environment']}")  # sets the cookie
        form = {"label": "team=vision"}
        refused = client.post(f"/reports/{posted['report']}/known-good", data=form, follow_redirects=False)
        assert refused.status_code == 403
        page = client.get(f"/environments/{posted['environment']}").text
        token = page.split('name="csrf" value="', 1)[1].split('"', 1)[0]
        foreign = client.post(f"/reports/{posted['report']}/known-good", data={**form, "csrf": token},
                              headers={"Origin": "http://evil.example"}, follow_redirects=False)
        assert foreign.status_code == 403
        assert client.get("/api/v1/baselines").json()[0]["how"] == "newest passing report"
        accepted = client.post(f"/reports/{posted['report']}/known-good", data={**form, "csrf": token},
                               follow_redirects=False)
        assert accepted.status_code == 303
        assert client.get("/api/v1/baselines").json()[0]["how"] == "marked known-good"


def test_every_report_string_reaches_the_pages_escaped_and_inert(db_url, healthy):
    hostile = json.loads(json.dumps(healthy))
    hostile["results"][0]["summary"] = '<script>alert("x")</script>\x1b]0;owned\x07\x07 <img src=x onerror=alert(1)>'
    hostile["results"][0]["status"] = "fail"
    hostile["target"]["python"] = '"><svg onload=alert(2)>'
    with client_for(db_url) as client:
        posted = post(client, hostile, "machine-hostile", {"team": '<b onmouseover="alert(3)">x</b>'}).json()
        pages = [client.get("/"), client.get(f"/environments/{posted['environment']}"), client.get("/baselines")]
    for page in pages:
        assert page.headers["content-security-policy"].startswith("default-src 'none'")
        assert "script-src" not in page.headers["content-security-policy"]  # none: default-src 'none' rules
        html = page.text
        assert "<script" not in html and "<img" not in html and "<svg" not in html and "<b " not in html
        assert "\x1b" not in html and "\x07" not in html
    assert "&lt;script&gt;" in pages[1].text and "&lt;svg onload=alert(2)&gt;" in pages[0].text


def test_restarting_the_server_loses_nothing(db_url, healthy, broken):
    with client_for(db_url) as client:
        ids = [post(client, report, f"machine-restart{n}", {"n": str(n)}).json()["report"]
               for n, report in enumerate((healthy, broken, healthy))]
        before = client.get("/api/v1/environments").json()
        mark = client.put("/api/v1/baselines/n=0", json={"report": ids[0]}, headers=AUTH)
        assert mark.status_code == 200
    with client_for(db_url) as client:  # a new process's view: migrations run again, nothing is lost
        assert client.get("/api/v1/environments").json() == before
        assert [client.get(f"/api/v1/reports/{i}").json()["created_at"] for i in ids] == [
            r["created_at"] for r in (healthy, broken, healthy)]
        assert client.get("/api/v1/baselines").json()[0]["how"] == "marked known-good"


def test_two_clients_posting_at_once_lose_nothing(db_url, healthy, broken):
    import httpx

    each = 15
    failures: list[str] = []
    with RunningServer(db_url, TOKEN) as server:
        def client(name: str, report: dict) -> None:
            with httpx.Client(base_url=server.url, headers=AUTH, timeout=60) as http:
                for n in range(each):  # the same shared environment, and one of its own
                    for machine in ("machine-shared", f"machine-{name}"):
                        answer = http.post("/api/v1/reports", json=envelope(report, machine, {"c": name}))
                        if answer.status_code != 201:
                            failures.append(answer.text)

        threads = [threading.Thread(target=client, args=(name, report))
                   for name, report in (("one", healthy), ("two", broken))]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        store = server.app.state.server.store
        fleet = {e["machine"]: e for e in store.environments()}
        histories = {m: len(store.history(e["id"], limit=1000)) for m, e in fleet.items()}
    assert failures == []
    assert store.report_count() == 4 * each
    assert histories == {"machine-shared": 2 * each, "machine-one": each, "machine-two": each}


def test_metrics_are_read_by_prometheus_clients_own_parser(db_url, healthy, broken):
    from prometheus_client.parser import text_string_to_metric_families

    with client_for(db_url) as client:
        post(client, healthy, "machine-metric1")
        post(client, broken, "machine-metric2")
        post(client, broken, "machine-metric3")
        text = client.get("/metrics").text
    families = {family.name: family for family in text_string_to_metric_families(text)}
    per_status = {s.labels["status"]: s.value for s in families["tfdoctor_fleet_environments"].samples}
    assert per_status == {"error": 0, "fail": 2, "warn": 0, "pass": 1}
    checks = {(s.labels["check"], s.labels["status"]): s.value for s in families["tfdoctor_fleet_check_results"].samples}
    assert checks[("cuda-build", "fail")] == 2 and checks[("cuda-build", "pass")] == 1
    assert any(s.value == 3 for s in families["tfdoctor_reports_received"].samples)


def test_the_paste_page_judges_a_report_with_todays_checks_and_stores_nothing(db_url, broken):
    with client_for(db_url) as client:
        anonymous = client.post("/paste", data={"report": json.dumps(broken), "csrf": csrf_of(client.get("/login").text)})
        assert anonymous.status_code == 401 and "Today's verdict" not in anonymous.text  # it costs a second of CPU
        assert sign_in(client).status_code == 303
        form = client.get("/paste").text
        token = form.split('name="csrf" value="', 1)[1].split('"', 1)[0]
        assert client.post("/paste", data={"report": json.dumps(broken)}).status_code == 403
        judged = client.post("/paste", data={"report": json.dumps(broken), "csrf": token})
        unreadable = client.post("/paste", data={"report": "{not json", "csrf": token})
        assert client.get("/api/v1/environments").json() == []
    assert judged.status_code == 200 and "Today's verdict" in judged.text and "cuda-build" in judged.text
    page = judged.text  # problems first: the verdict, the plan, the failing checks, then the passes folded
    assert page.index('id="verdict"') < page.index('id="plan"') < page.index('id="problems"') < \
        page.index('<details id="passed"') < page.index('id="report"')
    assert unreadable.status_code == 422 and "invalid JSON" in unreadable.text


def test_a_lone_surrogate_is_stored_as_the_replacement_character(db_url, healthy):
    report = json.loads(json.dumps(healthy))
    report["results"][0]["summary"] = "broken \ud800 text"
    raw = json.dumps(envelope(report, "machine-surrogate")).encode()  # ensure_ascii: the escape \ud800
    with client_for(db_url) as client:
        posted = client.post("/api/v1/reports", content=raw, headers={**AUTH, "Content-Type": "application/json"})
        assert posted.status_code == 201
        stored = client.get(f"/api/v1/reports/{posted.json()['report']}").json()
    assert stored["results"][0]["summary"] == "broken \ufffd text"


def test_the_fleet_page_shows_the_worst_first_a_page_at_a_time(db_url, healthy, broken, monkeypatch):
    import tfdoctor.servers.team.app as team_app

    monkeypatch.setattr(team_app, "FLEET_PAGE_ROWS", 2)
    with client_for(db_url) as client:
        for n, report in enumerate((healthy, broken, healthy)):
            post(client, report, f"machine-page{n}", {"team": "vision"})
        first = client.get("/", params={"label": "team=vision"}).text
        second = client.get("/", params={"label": "team=vision", "page": 2}).text
    first_rows, second_rows = (html.split('id="fleet"', 1)[1].split("</table>", 1)[0] for html in (first, second))
    assert first_rows.count('<tr class="row-') == 2 and second_rows.count('<tr class="row-') == 1
    assert 'class="row-fail"' in first_rows and 'class="row-fail"' not in second_rows  # worst first across pages
    assert "3 environments" in first and 'href="/?label=team%3Dvision&amp;page=2" id="next"' in first
    assert 'id="previous"' in second and 'id="next"' not in second


@pytest.mark.parametrize("beyond", [0, 2**31, 2**63, 10**30])
def test_an_id_the_database_cannot_hold_is_404_not_500(db_url, healthy, beyond):
    with client_for(db_url, raise_server_exceptions=False) as client:
        posted = post(client, healthy, "machine-range", {"team": "vision"}).json()
        answers = {
            "report": client.get(f"/api/v1/reports/{beyond}"),
            "history": client.get(f"/api/v1/environments/{beyond}/reports"),
            "page": client.get(f"/environments/{beyond}"),
            "diff": client.get("/api/v1/diff", params={"a": beyond, "b": posted["report"]}),
            "put": client.put("/api/v1/baselines/team=vision", json={"report": beyond}, headers=AUTH),
        }
        assert {door: answer.status_code for door, answer in answers.items()} == dict.fromkeys(answers, 404)
        assert sign_in(client).status_code == 303
        csrf = csrf_of(client.get(f"/environments/{posted['environment']}").text)
        assert client.post(f"/reports/{beyond}/known-good", data={"label": "team=vision", "csrf": csrf},
                           follow_redirects=False).status_code == 404
        assert client.get(f"/api/v1/reports/{posted['report']}").status_code == 200


def take_the_database_away(db_url: str, request, away: bool, store) -> None:
    """The database stops answering (away) or answers again. PostgreSQL: the database refuses connections and
    its sessions are ended. SQLite: its directory is moved away and the pool let go (its open connections
    would keep the moved file: what fails is the next connection, as after a restart of the pool)."""
    from sqlalchemy.engine import make_url

    parsed = make_url(db_url)
    if parsed.get_backend_name() == "postgresql":
        import psycopg

        cluster = request.getfixturevalue("postgres")
        with psycopg.connect(f"host=127.0.0.1 port={cluster.port} user=tfdoctor dbname=postgres",
                             autocommit=True) as admin:
            admin.execute(f"ALTER DATABASE {parsed.database} WITH ALLOW_CONNECTIONS {'false' if away else 'true'}")
            admin.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s",
                          (parsed.database,))
        return
    folder = Path(parsed.database).parent
    moved = folder.with_name(folder.name + "-away")
    (folder if away else moved).rename(moved if away else folder)
    if away:
        store.engine.dispose()


def test_a_database_that_does_not_answer_is_503_with_retry_after(db_url, healthy, request, tmp_path):
    if db_url.startswith("sqlite"):
        (tmp_path / "db").mkdir()
        db_url = f"sqlite:///{tmp_path / 'db' / 'server.sqlite3'}"
    with client_for(db_url, raise_server_exceptions=False) as client:
        posted = post(client, healthy, "machine-outage", {"team": "vision"}).json()
        store = client.app.state.server.store
        take_the_database_away(db_url, request, True, store)  # PostgreSQL: the pool's connections are ended
        try:
            answers = {"post": post(client, healthy, "machine-outage"), "read": client.get("/api/v1/environments"),
                       "report": client.get(f"/api/v1/reports/{posted['report']}"), "metrics": client.get("/metrics"),
                       "page": client.get("/"), "environment": client.get(f"/environments/{posted['environment']}")}
        finally:
            take_the_database_away(db_url, request, False, store)
        for door, answer in answers.items():
            assert (answer.status_code, answer.headers.get("retry-after")) == (503, "30"), door
        assert answers["post"].json() == {"error": "the database is unavailable: try again later"}
        assert "The database is unavailable" in answers["page"].text and "127.0.0.1" not in answers["page"].text
        assert post(client, healthy, "machine-outage").status_code == 201  # back: nothing to restart
        assert len(client.get(f"/api/v1/environments/{posted['environment']}/reports").json()) == 2
