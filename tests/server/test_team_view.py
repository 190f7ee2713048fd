"""The team view a lead acts on (issue 37): drift from stored facts, computed once when a report arrives and
ranked by cause; a fleet page that says what is broken, since when, why and what to do; environment, report
and diff pages problems first; nothing blocking on the event loop. The same tests on SQLite and on a real
PostgreSQL."""

from __future__ import annotations

import asyncio
import inspect
import json
import re

from tests.server_support import (AUTH, TOKEN, RunningServer, age_environment, client_for, numpy_downgrade_reports,
                                  post)


def drift_rows(html: str, section: str = "drift") -> list[list[str]]:
    """The cells of a page's drift table, as text."""
    part = html.split(f'id="{section}"', 1)[1].split("</section>", 1)[0]
    rows = re.findall(r"<tr class=\"why-[^\"]*\">(.*?)</tr>", part, re.S)
    return [[re.sub(r"<[^>]+>", "", cell).strip() for cell in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)]
            for row in rows]


def fleet_rows(html: str) -> list[str]:
    return re.findall(r"<tr class=\"row-[^\"]*\">.*?</tr>", html.split('id="fleet"', 1)[1].split("</table>", 1)[0],
                      re.S)


def test_a_numpy_downgrade_drifts_as_numpy_first_and_tensorflow_stays_known(db_url):
    """TensorFlow 2.21 imported; then numpy 1.24.4 and the import fails. The drift's first row is numpy, named by
    the failing dependencies check; the failed import comes after it as a consequence; TensorFlow's version
    is no row at all (it did not change: the installed tensorflow-cpu still says 2.21.0)."""
    before, after = numpy_downgrade_reports()
    with client_for(db_url) as client:
        post(client, before, "machine-numpy")
        posted = post(client, after, "machine-numpy").json()
        page = client.get(f"/environments/{posted['environment']}").text
        stored = client.get(f"/api/v1/reports/{posted['report']}/drift").json()
    rows = drift_rows(page)
    assert rows[0][:3] == ["numpy packages", "2.4.6", "1.24.4"] and "named by dependencies" in rows[0][3]
    assert not any(row[0].startswith("TensorFlow version") for row in rows)
    assert "not recorded" not in page.split('id="drift"', 1)[1].split("TensorFlow import", 1)[0]
    fields = [row["field"] for row in stored["since_better"]["differences"]]
    assert fields[0] == "numpy" and fields.index("numpy") < fields.index("TensorFlow import")
    assert stored["since_better"]["differences"][fields.index("TensorFlow import")]["why"] == "consequence"
    assert stored["since_previous"] is None  # the previous report is the one it passed with


def test_no_page_runs_a_check_or_parses_two_reports(db_url, healthy, broken, monkeypatch):
    """The drift is computed when the report arrives, from the stored reports' facts and verdicts: pages, the
    diff page and the API's diff run no check."""
    import tfdoctor.checking.runner
    import tfdoctor.operations.explain

    with client_for(db_url) as client:
        first = post(client, healthy, "machine-once").json()
        second = post(client, broken, "machine-once").json()

        def refuse(*args, **kwargs):
            raise AssertionError("a page ran the checks again")

        monkeypatch.setattr(tfdoctor.checking.runner, "run_checks", refuse)
        monkeypatch.setattr(tfdoctor.operations.explain, "explain", refuse)
        for path in (f"/environments/{first['environment']}", f"/reports/{second['report']}",
                     f"/diff?a={first['report']}&b={second['report']}",
                     f"/api/v1/diff?a={first['report']}&b={second['report']}", "/", "/metrics"):
            assert client.get(path).status_code == 200, path
        diff = client.get("/api/v1/diff", params={"a": first["report"], "b": second["report"]}).json()
    assert diff["identical"] is False and diff["differences"][0]["field"] == "TensorFlow version"
    assert {c["id"]: (c["a"], c["b"]) for c in diff["checks"]}["cuda-build"] == ("pass", "fail")


def test_database_diff_and_paste_work_never_runs_on_the_event_loop(db_url, healthy, broken, monkeypatch):
    """Every store call and every paste's judging runs in a worker thread, never on the thread that runs the
    event loop (where it would hold every other request up)."""
    from tfdoctor.servers.team import store as store_module

    on_loop: list[str] = []

    def watched(name, method):
        def call(*args, **kwargs):
            try:
                asyncio.get_running_loop()
                on_loop.append(name)
            except RuntimeError:
                pass  # a worker thread: no loop runs here
            return method(*args, **kwargs)
        return call

    for name, method in list(vars(store_module.Store).items()):
        if inspect.isfunction(method) and not name.startswith("__"):
            monkeypatch.setattr(store_module.Store, name, watched(name, method))
    import tfdoctor.operations.explain

    monkeypatch.setattr(tfdoctor.operations.explain, "explain", watched("explain", tfdoctor.operations.explain.explain))
    import httpx

    with RunningServer(db_url, TOKEN) as server, httpx.Client(base_url=server.url, timeout=60) as http:
        first = http.post("/api/v1/reports", json={"machine_id": "machine-loop", "labels": {"team": "a"},
                                                   "report": healthy}, headers=AUTH).json()
        second = http.post("/api/v1/reports", json={"machine_id": "machine-loop", "labels": {"team": "a"},
                                                    "report": broken}, headers=AUTH).json()
        for path in ("/", f"/environments/{first['environment']}", f"/reports/{second['report']}",
                     f"/diff?a={first['report']}&b={second['report']}", "/baselines", "/metrics",
                     "/api/v1/environments", f"/api/v1/environments/{first['environment']}/reports",
                     f"/api/v1/reports/{second['report']}", f"/api/v1/reports/{second['report']}/drift",
                     f"/api/v1/diff?a={first['report']}&b={second['report']}", "/api/v1/baselines"):
            assert http.get(path).status_code == 200, path
        assert http.put("/api/v1/baselines/team=a", json={"report": first["report"]}, headers=AUTH).status_code == 200
        login = http.get("/login").text
        csrf = login.split('name="csrf" value="', 1)[1].split('"', 1)[0]
        assert http.post("/login", data={"csrf": csrf, "token": TOKEN, "next": "/"}).status_code in (200, 303)
        judged = http.post("/paste", data={"csrf": csrf, "report": json.dumps(broken)})
        assert judged.status_code == 200 and "Today's verdict" in judged.text
    assert on_loop == []


def test_the_fleet_says_what_is_broken_since_when_why_and_the_first_step(db_url, healthy, broken):
    with client_for(db_url) as client:
        for machine in ("machine-gpu07", "machine-gpu08"):  # both passed, then broke alike
            post(client, healthy, machine, {"team": "vision"}, machine[-5:])
            post(client, broken, machine, {"team": "vision"}, machine[-5:])
        never = post(client, broken, "machine-never", {"team": "nlp"}, "never-01").json()
        post(client, healthy, "machine-fine", {"team": "nlp"}, "fine-01")
        page = client.get("/").text
        listed = client.get("/api/v1/environments").json()
    rows = fleet_rows(page)
    assert [re.search(r"status-(\w+)", row)[1] for row in rows] == ["fail", "fail", "fail", "pass"]
    regressed = next(row for row in rows if "gpu07" in row)
    assert "does not find its own pip-installed CUDA libraries" in regressed  # the one-line cause
    assert "first step: <code>python3 -m pip install -- &#39;tensorflow[and-cuda]==2.16.2&#39;</code>" in regressed
    assert re.search(r'<span class="regressed">regressed <time [^>]*>just now</time></span>, '
                     r'<span class="meta">passing before', regressed)
    assert "never passed" in next(row for row in rows if "never-01" in row)
    assert "regressed" not in next(row for row in rows if "fine-01" in row)
    causes = page.split('id="causes"', 1)[1].split("</section>", 1)[0]
    (group,) = re.findall(r"<tr class=\"row-fail\">.*?</tr>", causes, re.S)  # the three share one cause
    assert ">3 machines</a>" in group and "2 regressed" in group and "cuda-build" in group
    by_machine = {e["machine"]: e for e in listed}
    assert by_machine["machine-gpu07"]["regressed_at"] and by_machine["machine-never"]["regressed_at"] is None
    assert by_machine["machine-gpu07"]["cause"].startswith("TensorFlow 2.16.1 does not find")
    assert by_machine["machine-never"]["first_step"] == "python3 -m pip install -- 'tensorflow[and-cuda]==2.16.2'"
    assert by_machine["machine-fine"]["cause"] is None and by_machine["machine-fine"]["first_step"] is None
    cause_key = re.search(r'href="/\?cause=([0-9a-f]{16})"', causes)[1]
    with client_for(db_url) as client:
        grouped = client.get("/", params={"cause": cause_key}).text
        assert len(fleet_rows(grouped)) == 3 and "never-01" in grouped and "fine-01" not in grouped
        assert never["environment"] in [e["id"] for e in listed]


def test_stale_machines_are_marked_and_filters_and_label_counts_work(db_url, healthy, broken):
    with client_for(db_url) as client:
        silent = post(client, healthy, "machine-silent", {"team": "vision"}, "silent-01").json()
        post(client, broken, "machine-loud", {"team": "vision"}, "loud-01")
        post(client, healthy, "machine-nlp1", {"team": "nlp"}, "nlp-01")
        age_environment(client.app, silent["environment"], days=2)
        page = client.get("/").text
        stale_only = client.get("/", params={"status": "stale"}).text
        failing_vision = client.get("/", params={"status": "fail", "label": "team=vision"}).text
        listed = {e["machine"]: e for e in client.get("/api/v1/environments").json()}
    silent_row = next(row for row in fleet_rows(page) if "silent-01" in row)
    assert silent_row.startswith('<tr class="row-pass stale">') and 'status-stale">stale</span></td></tr>' in silent_row
    assert re.search(r'<time datetime="[^"]+" title="\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC">2 days ago</time>', silent_row)
    assert [n for n in ("silent-01", "loud-01", "nlp-01") if n in "".join(fleet_rows(stale_only))] == ["silent-01"]
    assert [n for n in ("silent-01", "loud-01", "nlp-01") if n in "".join(fleet_rows(failing_vision))] == ["loud-01"]
    assert listed["machine-silent"]["stale"] is True and listed["machine-loud"]["stale"] is False
    counts = page.split('id="label-counts"', 1)[1].split("</table>", 1)[0]
    vision = re.search(r"team=vision</span></a></td>(.*?)</tr>", counts, re.S)[1]
    assert re.findall(r">(\d+)</td>", vision) == ["0", "1", "0", "1", "1", "2"]  # error fail warn pass stale all
    with client_for(db_url, stale_after_s=3 * 86400) as client:  # --stale-after 72: two days is not stale
        assert "stale" not in next(row for row in fleet_rows(client.get("/").text) if "silent-01" in row)


def test_a_label_with_an_invisible_character_filters_from_the_dropdown(db_url, healthy):
    """The dropdown sends the label itself (U+202E and all), not its spelled-out `\\u202e`, which names no label."""
    label = "team=\u202evision"
    with client_for(db_url) as client:
        post(client, healthy, "machine-bidi", {"team": "\u202evision"}, "bidi-01")
        post(client, healthy, "machine-plain", {"team": "plain"}, "plain-01")
        page = client.get("/").text
        value = re.search(r'<option value="([^"]*)">team=\\u202evision</option>', page)[1]
        assert value == label  # shown spelled out, sent as it is
        filtered = client.get("/", params={"label": value}).text
    assert [n for n in ("bidi-01", "plain-01") if n in "".join(fleet_rows(filtered))] == ["bidi-01"]


def test_the_environment_page_puts_the_problems_first_and_pages_its_history(db_url, healthy, broken, monkeypatch):
    import tfdoctor.servers.team.app as team_app

    monkeypatch.setattr(team_app, "HISTORY_SHOWN", 3)
    with client_for(db_url) as client:
        ids = [post(client, report, "machine-history").json() for report in (healthy,) * 3 + (broken,) * 2]
        environment = ids[0]["environment"]
        page = client.get(f"/environments/{environment}").text
        older = client.get(f"/environments/{environment}", params={"history": 2}).text
        report_page = client.get(f"/reports/{ids[-1]['report']}").text
    order = [page.index(marker) for marker in ('id="verdict"', 'id="drift"', 'id="plan"', 'id="problems"',
                                               '<details id="passed"', 'id="history"')]
    assert order == sorted(order)
    assert re.search(r'<pre class="commands" id="plan-commands">python3 -m pip install -- '
                     r"&#39;tensorflow\[and-cuda\]==2.16.2&#39;\n</pre>", page)  # copyable as it is
    problems = page.split('id="problems"', 1)[1].split("</section>", 1)[0]
    assert "cuda-build" in problems and "status-pass" not in problems and "status-skip" not in problems
    history = page.split('id="history"', 1)[1]
    shown = re.findall(r'<a href="/reports/(\d+)">', history)
    assert shown == [str(i["report"]) for i in ids[::-1][:3]] and 'id="history-older"' in history
    assert re.findall(r'<a href="/reports/(\d+)">', older.split('id="history"', 1)[1]) == \
        [str(i["report"]) for i in ids[::-1][3:]]
    assert "/api/v1/reports/" not in history.split("as JSON")[0]  # history rows open pages, not raw JSON
    assert 'name="a"' in history and f'href="/diff?a={ids[2]["report"]}&amp;b={ids[3]["report"]}">changes' in history
    assert report_page.index('id="verdict"') < report_page.index('id="drift"') < report_page.index('id="plan"')


def test_the_diff_page_compares_any_two_reports(db_url, healthy, broken):
    before, after = numpy_downgrade_reports()
    with client_for(db_url) as client:
        a = post(client, before, "machine-diff1").json()
        b = post(client, after, "machine-diff2").json()  # two machines: any two reports compare
        page = client.get("/diff", params={"a": a["report"], "b": b["report"]})
        missing = client.get("/diff", params={"a": a["report"], "b": 999999})
    assert page.status_code == 200 and missing.status_code == 404
    rows = drift_rows(page.text, "diff")
    assert rows[0][:3] == ["numpy packages", "2.4.6", "1.24.4"]
    changes = page.text.split('id="verdict-changes"', 1)[1]
    assert "dependencies" in changes and "tensorflow-import" in changes


def test_a_pass_to_warn_regression_has_its_drift_and_counts_as_a_regression(db_url):
    from tests.builders import IMPORTED, tensorflow_environment
    from tests.server_support import judged

    healthy = judged(tensorflow_environment(tensorflow=IMPORTED))
    warned = judged(tensorflow_environment({"protobuf": "5.28.0"}, tensorflow=IMPORTED))
    assert (healthy["totals"]["warn"], warned["totals"]["warn"], warned["totals"]["fail"]) == (0, 1, 0)
    with client_for(db_url) as client:
        post(client, healthy, "machine-warn")
        posted = post(client, warned, "machine-warn").json()
        page = client.get(f"/environments/{posted['environment']}").text
        (entry,) = client.get("/api/v1/environments").json()
    assert posted["status"] == "warn" and entry["regressions"] == 1 and entry["regressed_at"]
    assert drift_rows(page)[0][:3] == ["protobuf packages", "6.31.1", "5.28.0"]
