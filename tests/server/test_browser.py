"""The team server in a real browser (issues 28 and 37): Playwright drives Debian's Chromium through the pages
as a lead would, on a seeded fleet: a venv without TensorFlow (a real `tfdoctor --report-to` run: never
passed), a CPU workstation (healthy), two GPU boxes that passed and then broke alike (one shared cause), a
training box whose numpy was downgraded under TensorFlow 2.21, and a CI runner that stopped reporting
(stale). Recorded machines' facts are judged by today's checks (a real run of the test setup's TensorFlow
would make the pages depend on whether its import beat the timeout on a loaded machine).

TFDOCTOR_SCREENSHOT=1 also saves the fleet, environment, diff and paste pages as docs/images/*.png (the
screenshots of docs/server.md and README)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli_support import run_cli
from tests.server_support import (AUTH, BROKEN_FIXTURE, CHROMIUM, CHROMIUM_ARGS, HEALTHY_FIXTURE, TOKEN,
                                  RunningServer, age_environment, envelope, fixture_report,
                                  numpy_downgrade_reports, unavailable)

HEALTHY_WORKSTATION = "linux/cpu-only-tensorflow-cpu-no-gpu"
ROOT = Path(__file__).resolve().parents[2]
SCREENSHOTS = os.environ.get("TFDOCTOR_SCREENSHOT") == "1"
FIRST_SCREEN = {"width": 1366, "height": 768}  # the most common laptop screen


def screenshot(page, name: str, full_page: bool = True) -> None:
    if SCREENSHOTS:
        page.screenshot(path=str(ROOT / "docs" / "images" / f"{name}.png"), full_page=full_page)


@pytest.fixture(scope="module")
def browser():
    if not CHROMIUM.exists():
        unavailable(f"no Chromium at {CHROMIUM} (apt-get install chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        unavailable("playwright is not installed (pip install -e '.[test]')")
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True)
        yield launched
        launched.close()


@pytest.fixture(scope="module")
def fleet(tmp_path_factory, browser):
    """A server holding the seeded fleet (module docstring)."""
    import httpx

    base = tmp_path_factory.mktemp("fleet")
    venv = base / "no-tensorflow"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    healthy_gpu, broken_gpu = fixture_report(HEALTHY_FIXTURE), fixture_report(BROKEN_FIXTURE)
    numpy_before, numpy_after = numpy_downgrade_reports()
    saved = {k: os.environ.get(k) for k in ("XDG_CONFIG_HOME", "TFDOCTOR_REPORT_TOKEN")}
    with RunningServer(f"sqlite:///{base / 'server.sqlite3'}", TOKEN) as server:
        with httpx.Client(base_url=server.url, headers=AUTH, timeout=60) as http:
            for machine, labels, report, host in (
                    ("machine-ci-runner2", {"team": "ci"}, healthy_gpu, "ci-runner-2"),
                    ("machine-workstation3", {"team": "vision"}, fixture_report(HEALTHY_WORKSTATION), "workstation-3"),
                    ("machine-gpubox07", {"team": "vision"}, healthy_gpu, "gpu-box-07"),
                    ("machine-gpubox08", {"team": "vision"}, healthy_gpu, "gpu-box-08"),
                    ("machine-train04", {"team": "nlp"}, numpy_before, "train-04"),
                    ("machine-gpubox07", {"team": "vision"}, broken_gpu, "gpu-box-07"),
                    ("machine-gpubox08", {"team": "vision"}, broken_gpu, "gpu-box-08"),
                    ("machine-train04", {"team": "nlp"}, numpy_after, "train-04")):
                answer = http.post("/api/v1/reports", json=envelope(report, machine, labels, host))
                assert answer.status_code == 201, answer.text
                if host == "ci-runner-2":
                    age_environment(server.app, answer.json()["environment"], days=3)
        try:
            os.environ["TFDOCTOR_REPORT_TOKEN"] = TOKEN
            os.environ["XDG_CONFIG_HOME"] = str(base / "laptop")
            code, _, err = run_cli(["--python", venv / "bin" / "python", "--no-probe", "--json",
                                    "--report-to", server.url, "--label", "team=nlp"])
            # issue 37: one line on success, the environment's page and its status there
            assert code == 1 and re.fullmatch(rf"tfdoctor: report posted: {re.escape(server.url)}/environments/\d+ "
                                              r"\(fail\)\n", err), err
        finally:
            for key, value in saved.items():
                os.environ.pop(key, None) if value is None else os.environ.__setitem__(key, value)
        yield server


@pytest.fixture()
def page(browser):
    context = browser.new_context(viewport={"width": 1400, "height": 800})
    opened = context.new_page()
    dialogs: list[str] = []
    opened.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    opened.dialogs = dialogs
    yield opened
    context.close()


def fleet_rows(page) -> dict[str, list[str]]:
    """The fleet table's rows by machine name: status, machine, why, since, TensorFlow, GPU, last seen."""
    rows = {}
    for row in page.locator("#fleet tbody tr").all():
        cells = [cell.inner_text().strip() for cell in row.locator("td").all()]
        rows[cells[1].split("\n", 1)[0]] = cells
    return rows


def test_the_fleet_says_what_is_broken_since_when_why_and_the_first_step(fleet, page):
    page.goto(fleet.url + "/")
    rows = fleet_rows(page)
    statuses = [cells[0] for cells in rows.values()]
    assert statuses == ["fail"] * 4 + ["pass"] * 2  # worst first
    box = rows["gpu-box-07"]
    assert box[2].startswith("cuda-build TensorFlow 2.16.1 does not find its own pip-installed CUDA libraries")
    assert "first step: python3 -m pip install -- 'tensorflow[and-cuda]==2.16.2'" in box[2]
    assert re.fullmatch(r"regressed (just now|\d+ s ago), passing before", box[3])
    assert rows[next(name for name in rows if rows[name][2].startswith("tensorflow-install"))][3].startswith(
        "never passed")  # the laptop without TensorFlow
    assert rows["workstation-3"][2] == "" and rows["workstation-3"][3] == "passing"
    hover = page.locator("#fleet tr", has_text="gpu-box-07").locator("td.last-seen time").get_attribute("title")
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC", hover)  # the absolute time on hover
    assert page.inner_text(".counts").startswith("fail 4 pass 2 stale 1")
    screenshot(page, "fleet")


def test_machines_failing_for_the_same_cause_are_grouped(fleet, page):
    page.goto(fleet.url + "/")
    group = page.locator("#causes tbody tr", has_text="cuda-build")
    assert group.count() == 1 and "2 machines" in group.inner_text() and "2 regressed" in group.inner_text()
    group.locator("a").click()
    page.wait_for_url("**/?cause=*")
    assert sorted(fleet_rows(page)) == ["gpu-box-07", "gpu-box-08"]


def test_a_stale_machine_is_marked_and_the_filters_find_it(fleet, page):
    page.goto(fleet.url + "/")
    row = page.locator("#fleet tbody tr", has_text="ci-runner-2")
    assert "stale" in row.get_attribute("class") and row.locator("td.last-seen").inner_text() == "3 days ago stale"
    page.select_option("#status", "stale")
    page.click("button:has-text('Filter')")
    page.wait_for_url(re.compile(r"/\?(label=&)?status=stale$"))  # a GET form sends its empty fields too
    assert list(fleet_rows(page)) == ["ci-runner-2"]


def test_filtering_by_label_shows_only_that_team(fleet, page):
    page.goto(fleet.url + "/")
    counts = page.locator("#label-counts tr", has_text="team=nlp").inner_text().split()
    assert counts == ["team=nlp", "0", "2", "0", "0", "0", "2"]  # error fail warn pass stale all
    page.select_option("#label", "team=nlp")
    page.click("button:has-text('Filter')")
    page.wait_for_url(re.compile(r"/\?label=team%3Dnlp&status=$"))
    rows = fleet_rows(page)
    assert len(rows) == 2 and "train-04" in rows and all(cells[0] == "fail" for cells in rows.values())


def test_the_label_dropdown_sends_a_label_with_an_invisible_character_as_it_is(browser, tmp_path):
    with RunningServer(f"sqlite:///{tmp_path / 'bidi.sqlite3'}", TOKEN) as server:
        import httpx

        with httpx.Client(base_url=server.url, headers=AUTH) as http:
            for machine, team in (("machine-bidi01", "\u202evision"), ("machine-plain1", "plain")):
                body = envelope(fixture_report(HEALTHY_FIXTURE), machine, {"team": team}, machine[8:])
                assert http.post("/api/v1/reports", json=body).status_code == 201
        context = browser.new_context()
        try:
            page = context.new_page()
            page.goto(server.url + "/")
            page.select_option("#label", label="team=\\u202evision")  # shown spelled out
            page.click("button:has-text('Filter')")
            page.wait_for_url(re.compile(r"/\?label=team%3D%E2%80%AEvision&status=$"))  # the character itself
            assert list(fleet_rows(page)) == ["bidi01"]
        finally:
            context.close()


def test_the_environment_pages_first_screen_holds_the_verdict_the_drift_and_the_plan(fleet, browser):
    context = browser.new_context(viewport=FIRST_SCREEN)
    try:
        page = context.new_page()
        page.goto(fleet.url + "/")
        page.click("#fleet a:has-text('train-04')")
        for section in ("#verdict", "#drift", "#plan"):
            box = page.locator(section).bounding_box()
            assert box is not None and box["y"] + box["height"] <= FIRST_SCREEN["height"], section
        first = page.locator("#drift table.diff tbody tr").first.inner_text().split("\t")
        assert first[:3] == ["numpy packages", "2.4.6", "1.24.4"] and "dependencies" in first[3]
        assert "TensorFlow version" not in page.inner_text("#drift")
        assert page.inner_text("#plan-commands").startswith("/env/bin/python -m pip install")
        assert not page.locator("details#passed").get_attribute("open")  # passes and skips folded
        screenshot(page, "environment", full_page=False)
    finally:
        context.close()


def test_a_broken_environment_shows_what_changed_since_it_last_passed(fleet, page):
    page.goto(fleet.url + "/")
    page.click("#fleet a:has-text('gpu-box-07')")
    drift = page.locator("#drift")
    assert "What changed since it last passed" in drift.inner_text()
    first = drift.locator("table.diff tbody tr").first.inner_text().split("\t")
    assert first == ["TensorFlow version tensorflow", "2.21.0", "2.16.1", "named by cuda-build"]
    assert "cuda-build" in drift.locator(".verdicts").inner_text()


def test_the_html_diff_page_compares_two_reports_from_the_history(fleet, page):
    page.goto(fleet.url + "/")
    page.click("#fleet a:has-text('gpu-box-08')")
    page.locator("#history").scroll_into_view_if_needed()
    page.click("#compare")  # the newest report against the one before it, as the radio buttons start
    page.wait_for_url(re.compile(r"/diff\?b=\d+&a=\d+$"))
    assert page.inner_text("h1").startswith("What changed from report")
    first = page.locator("#diff table.diff tbody tr").first.inner_text().split("\t")
    assert first == ["TensorFlow version tensorflow", "2.21.0", "2.16.1", "named by cuda-build"]
    assert "cuda-build" in page.inner_text("#verdict-changes")
    screenshot(page, "diff")


def test_a_pasted_hostile_report_is_shown_inert_and_problems_first(fleet, page):
    hostile = fixture_report(BROKEN_FIXTURE)
    hostile["facts"]["python"] = {**(hostile["facts"].get("python") or {}),
                                  "executable": "<script>alert('pasted')</script>\x1b[31m\x07/bin/<img src=x onerror=alert(2)>"}
    page.goto(fleet.url + "/paste")
    assert page.locator("#report").count() == 0  # with a token set, judging needs the sign-in
    page.click("main a:has-text('Sign in')")
    page.fill("#token", TOKEN)
    page.click("#sign-in")
    page.wait_for_url(fleet.url + "/paste")
    page.fill("#report", json.dumps(hostile))
    page.click("#judge")
    page.wait_for_selector("#verdict")
    shown = page.inner_text("#verdict .target")
    assert shown == "<script>alert('pasted')</script>/bin/<img src=x onerror=alert(2)>"  # as text, controls gone
    assert page.locator("script").count() == 0 and page.locator("img").count() == 0
    page.wait_for_timeout(300)
    assert page.dialogs == []
    assert "cuda-build" in page.inner_text("#verdict")
    tops = [page.locator(selector).bounding_box()["y"] for selector in ("#verdict", "#plan", "#problems",
                                                                        "details#passed", "#report")]
    assert tops == sorted(tops)  # the verdict, the plan and the problems before the passes and the form
    screenshot(page, "paste", full_page=False)


def test_a_private_server_asks_a_browser_for_the_token_once(browser, tmp_path):
    """--private in Chromium: every page leads to the sign-in form, which sets a session cookie that script cannot
    read (HttpOnly) and no other site sends (SameSite=Strict), and brings the browser back where it was going."""
    import httpx

    with RunningServer(f"sqlite:///{tmp_path / 'private.sqlite3'}", TOKEN, private=True) as server:
        body = envelope(fixture_report(HEALTHY_FIXTURE), "machine-secret01", {"team": "vision"}, "secret-box-01")
        assert httpx.post(server.url + "/api/v1/reports", json=body, headers=AUTH).status_code == 201
        context = browser.new_context()
        try:
            page = context.new_page()
            page.goto(server.url + "/baselines")
            assert page.url.startswith(server.url + "/login?next=") and "secret-box-01" not in page.content()
            page.fill("#token", "not-the-token")
            page.click("#sign-in")
            assert page.inner_text("#error") == "That is not this server's token."
            page.fill("#token", TOKEN)
            page.click("#sign-in")
            page.wait_for_url(server.url + "/baselines")
            assert "secret-box-01" in page.inner_text("main")
            session = [c for c in context.cookies() if c["name"] == "tfdoctor_session"]
            assert len(session) == 1 and session[0]["httpOnly"] and session[0]["sameSite"] == "Strict"
            assert "tfdoctor_session" not in page.evaluate("document.cookie") and TOKEN not in session[0]["value"]
            page.goto(server.url + "/")
            assert list(fleet_rows(page)) == ["secret-box-01"]
            page.click("#sign-out")
            page.wait_for_url(server.url + "/login")
            page.goto(server.url + "/")
            assert page.url.startswith(server.url + "/login")
        finally:
            context.close()
