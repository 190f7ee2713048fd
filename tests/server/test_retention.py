"""Retention (issue 37): --keep-reports and --keep-days remove old reports of each environment but keep what the
server still shows (the last report, the last passing one, the one the drift compares to, every marked
baseline), and the server applies them on its own schedule. SQLite and PostgreSQL; and the schema upgrade
from revision 0001, whose reports have no stored drift yet."""

from __future__ import annotations

import datetime as dt
import json
import time
import zlib

from tests.server_support import AUTH, client_for, post


def report_ids(client, environment: int) -> list[int]:
    return sorted(r["id"] for r in client.get(f"/api/v1/environments/{environment}/reports").json())


def test_keep_reports_keeps_the_newest_and_what_the_pages_show(db_url, healthy, broken):
    with client_for(db_url) as client:
        ids = [post(client, report, "machine-keep", {"team": "vision"}).json()
               for report in (healthy, healthy, healthy, broken, broken, broken)]
        other = post(client, healthy, "machine-other", {"team": "vision"}).json()
        first, last_pass = ids[0]["report"], ids[2]["report"]
        assert client.put("/api/v1/baselines/team=vision", json={"report": first}, headers=AUTH).status_code == 200
        store = client.app.state.server.store
        assert store.apply_retention(keep_reports=2) == 2  # reports 2 and 4 go
        kept = report_ids(client, ids[0]["environment"])
        page = client.get(f"/environments/{ids[0]['environment']}")
        baseline = client.get("/api/v1/baselines").json()
        assert store.apply_retention(keep_reports=2) == 0  # nothing more to do
        assert report_ids(client, other["environment"]) == [other["report"]]
    assert kept == [first, last_pass, ids[4]["report"], ids[5]["report"]]  # baseline, last passing, newest two
    assert page.status_code == 200 and f'href="/reports/{last_pass}">Report {last_pass}</a> (pass' in page.text
    assert baseline[0]["report_id"] == first


def test_keep_days_removes_old_reports_but_not_the_last_passing_one(db_url, healthy, broken):
    from tfdoctor.servers.team.store import reports

    with client_for(db_url) as client:
        ids = [post(client, report, "machine-days").json()["report"]
               for report in (healthy, healthy, broken, broken, broken)]
        environment = client.get("/api/v1/environments").json()[0]["id"]
        store = client.app.state.server.store
        old = (dt.datetime.now(dt.timezone.utc) - dt.timedelta(days=40)).isoformat(timespec="microseconds")
        with store.engine.begin() as conn:
            conn.execute(reports.update().where(reports.c.id.in_(ids[:3])).values(received_at=old))
        assert store.apply_retention(keep_days=30) == 2  # the first and third: the second is the last passing one
        assert report_ids(client, environment) == [ids[1], ids[3], ids[4]]
        assert store.apply_retention(keep_days=30, keep_reports=1) == 1  # the fourth: neither last nor passing
        assert report_ids(client, environment) == [ids[1], ids[4]]


def test_the_server_applies_retention_on_its_own_schedule(db_url, healthy):
    with client_for(db_url, keep_reports=1, retention_every_s=0.2) as client:
        posted = [post(client, healthy, "machine-schedule").json() for _ in range(3)]
        deadline = time.monotonic() + 20
        while len(report_ids(client, posted[0]["environment"])) > 1 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert report_ids(client, posted[0]["environment"]) == [posted[-1]["report"]]


def test_a_database_of_revision_0001_upgrades_and_its_drift_is_computed_when_first_shown(db_url, healthy, broken):
    """Environments keep their cause (read from their last report by the migration); a report stored before the
    upgrade gets its drift computed from the stored reports the first time a page shows it, then kept."""
    from alembic import command
    from alembic.config import Config
    from importlib import resources
    from sqlalchemy import text

    from tfdoctor.servers.team.store import WRITE, make_engine
    from tfdoctor.servers.team.summary import summarize

    engine = make_engine(db_url)
    config = Config()
    config.set_main_option("script_location", str(resources.files("tfdoctor.servers.team") / "migrations"))
    with engine.connect().execution_options(**WRITE) as connection:
        config.attributes["connection"] = connection
        command.upgrade(config, "0001_fleet")
        connection.commit()
    now = dt.datetime.now(dt.timezone.utc).isoformat(timespec="microseconds")
    with engine.begin() as conn:  # what the server of revision 0001 wrote: a pass, then a failure
        conn.execute(text("INSERT INTO environments (id, machine_id, python, labels, status, key_facts, checks, "
                          "first_seen, last_seen, last_report_id, last_pass_report_id) VALUES (1, 'machine-old', "
                          "'/srv/venv/bin/python', '{}', 'fail', '{}', '{}', :now, :now, 2, 1)"), {"now": now})
        for number, report in ((1, healthy), (2, broken)):
            conn.execute(text("INSERT INTO reports (id, environment_id, received_at, status, key_facts, document) "
                              "VALUES (:id, 1, :now, :status, '{}', :document)"),
                         {"id": number, "now": now, "status": summarize(report)["status"],
                          "document": zlib.compress(json.dumps(report).encode())})
    engine.dispose()
    with client_for(db_url) as client:
        (entry,) = client.get("/api/v1/environments").json()
        page = client.get("/environments/1").text
        stored = client.get("/api/v1/reports/2/drift").json()
    assert entry["cause"].startswith("TensorFlow 2.16.1 does not find its own pip-installed CUDA libraries")
    assert entry["first_step"] == "python3 -m pip install -- 'tensorflow[and-cuda]==2.16.2'"
    assert 'href="/reports/1">Report 1</a> (pass' in page
    assert stored["since_better"]["differences"][0]["field"] == "TensorFlow version"
    assert stored["since_better"]["base"]["report"] == 1
