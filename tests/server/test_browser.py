"""The team server in a real browser (issue 28): Playwright drives Debian's Chromium through the pages as a
user would, after three environments posted: a venv without TensorFlow (a real `tfdoctor --report-to` run,
broken), a CPU workstation (healthy) and a GPU box that passed and then broke (recorded machines' facts
judged by today's checks; a real run of the test setup's TensorFlow would make the page's verdict depend
on whether the import beat its timeout on a loaded machine).

TFDOCTOR_SCREENSHOT=1 also saves the fleet page as docs/images/fleet.png (README's screenshot)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli_support import run_cli
from tests.server_support import (BROKEN_FIXTURE, CHROMIUM, CHROMIUM_ARGS, HEALTHY_FIXTURE, TOKEN,
                                  RunningServer, fixture_report, unavailable)
from tfdoctor.posting import client as report_to

HEALTHY_WORKSTATION = "linux/cpu-only-tensorflow-cpu-no-gpu"
ROOT = Path(__file__).resolve().parents[2]


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
    """A server holding three environments: one healthy, two broken (one of which passed before)."""
    base = tmp_path_factory.mktemp("fleet")
    venv = base / "no-tensorflow"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    healthy = fixture_report(HEALTHY_WORKSTATION)
    saved = {k: os.environ.get(k) for k in ("XDG_CONFIG_HOME", "TFDOCTOR_REPORT_TOKEN")}
    with RunningServer(f"sqlite:///{base / 'server.sqlite3'}", TOKEN) as server:
        try:
            os.environ["TFDOCTOR_REPORT_TOKEN"] = TOKEN
            for name, labels, report, host in (
                    ("workstation", ["team=vision"], healthy, "workstation-3"),
                    ("gpu-box", ["team=vision"], fixture_report(HEALTHY_FIXTURE), "gpu-box-07"),
                    ("gpu-box", ["team=vision"], fixture_report(BROKEN_FIXTURE), "gpu-box-07")):
                os.environ["XDG_CONFIG_HOME"] = str(base / name)  # each machine its own random id
                body = report_to.envelope(report, report_to.parse_labels(labels), host)
                assert report_to.post(server.url, body, TOKEN).page
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
    context = browser.new_context(viewport={"width": 1400, "height": 700})
    opened = context.new_page()
    dialogs: list[str] = []
    opened.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    opened.dialogs = dialogs
    yield opened
    context.close()


def fleet_rows(page) -> list[list[str]]:
    return [[cell.inner_text().strip() for cell in row.locator("td").all()]
            for row in page.locator("#fleet tbody tr").all()]


def test_the_fleet_table_lists_the_broken_environments_first(fleet, page):
    page.goto(fleet.url + "/")
    rows = fleet_rows(page)
    assert [row[0] for row in rows] == ["fail", "fail", "pass"]
    assert rows[2][1] == "workstation-3" and rows[2][4] == "" and rows[2][5] == "2.21.0"  # tensorflow-cpu
    assert {rows[0][4], rows[1][4]} == {"cuda-build", "tensorflow-install"}
    assert page.inner_text(".counts").startswith("fail 2 pass 1")
    if os.environ.get("TFDOCTOR_SCREENSHOT") == "1":
        page.screenshot(path=str(ROOT / "docs" / "images" / "fleet.png"), full_page=True)


def test_filtering_by_label_shows_only_that_team(fleet, page):
    page.goto(fleet.url + "/")
    page.select_option("#label", "team=nlp")
    page.click("button:has-text('Filter')")
    page.wait_for_url("**/?label=team%3Dnlp")
    rows = fleet_rows(page)
    assert len(rows) == 1 and rows[0][0] == "fail" and rows[0][4] == "tensorflow-install"
    assert rows[0][3] == "team=nlp"


def test_a_broken_environment_shows_what_changed_since_it_last_passed(fleet, page):
    page.goto(fleet.url + "/")
    page.click("#fleet a:has-text('gpu-box-07')")
    drift = page.locator("#drift")
    assert "What changed since it last passed" in drift.inner_text()
    first = [cell.inner_text() for cell in drift.locator("table.diff tbody tr").first.locator("td").all()]
    assert first == ["tensorflow", "TensorFlow version", "2.21.0", "2.16.1"]  # the row that matters first
    changed = drift.locator("ul li").all_inner_texts()
    assert any("pass" in item and "fail" in item for item in changed)


def test_a_pasted_hostile_report_is_shown_inert(fleet, page):
    hostile = fixture_report(BROKEN_FIXTURE)
    hostile["facts"]["python"] = {**(hostile["facts"].get("python") or {}),
                                  "executable": "<script>alert('pasted')</script>\x1b[31m\x07/bin/<img src=x onerror=alert(2)>"}
    page.goto(fleet.url + "/paste")
    page.fill("#report", json.dumps(hostile))
    page.click("#judge")
    page.wait_for_selector("#verdict")
    shown = page.inner_text("#verdict .target")
    assert shown == "<script>alert('pasted')</script>/bin/<img src=x onerror=alert(2)>"  # as text, controls gone
    assert page.locator("script").count() == 0 and page.locator("img").count() == 0
    page.wait_for_timeout(300)
    assert page.dialogs == []
    assert "cuda-build" in page.inner_text("#verdict")


def test_a_private_server_asks_a_browser_for_the_token_once(browser, tmp_path):
    """--private in Chromium: every page leads to the sign-in form, which sets a session cookie that script cannot
    read (HttpOnly) and no other site sends (SameSite=Strict), and brings the browser back where it was going."""
    with RunningServer(f"sqlite:///{tmp_path / 'private.sqlite3'}", TOKEN, private=True) as server:
        body = report_to.envelope(fixture_report(HEALTHY_FIXTURE), {"team": "vision"}, "secret-box-01")
        assert report_to.post(server.url, body, TOKEN).page
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
            assert fleet_rows(page)[0][1] == "secret-box-01"
            page.click("#sign-out")
            page.wait_for_url(server.url + "/login")
            page.goto(server.url + "/")
            assert page.url.startswith(server.url + "/login")
        finally:
            context.close()
