"""Who may do what on the team server (issue 35): with a token set every write needs it, the "mark known-good"
form included, which also refuses a failing report and a label its environment lacks; with --private every
read needs it too, scripts as a bearer token, browsers through the sign-in form's session cookie. The same
tests on SQLite and a real PostgreSQL."""

from __future__ import annotations

import re
import time

import pytest

from tests.server_support import AUTH, TOKEN, client_for, csrf_of, post, sign_in
from tfdoctor.servers.team import security


def baseline_how(client) -> list[tuple[str, int, str]]:
    return [(b["label"], b["report_id"], b["how"]) for b in client.get("/api/v1/baselines", headers=AUTH).json()]


def test_the_known_good_form_needs_the_token_not_only_the_cookie_and_csrf(db_url, healthy):
    with client_for(db_url) as client:
        posted = post(client, healthy, "machine-form", {"team": "vision"}).json()
        page = client.get(f"/environments/{posted['environment']}").text
        form = {"label": "team=vision", "csrf": client.cookies[security.CSRF_COOKIE]}  # CSRF right, same origin
        refused = client.post(f"/reports/{posted['report']}/known-good", data=form, follow_redirects=False)
        assert refused.status_code == 401 and 'action="/login"' in refused.text
        assert baseline_how(client) == [("team=vision", posted["report"], "newest passing report")]
        assert "Sign in</a> to mark the last report known-good" in page and "/known-good" not in page
        assert sign_in(client, "not-the-token").status_code == 401
        assert client.post(f"/reports/{posted['report']}/known-good", data=form,
                           follow_redirects=False).status_code == 401
        assert sign_in(client, next_path=f"/environments/{posted['environment']}").headers["location"] == \
            f"/environments/{posted['environment']}"
        page = client.get(f"/environments/{posted['environment']}").text
        assert f'action="/reports/{posted["report"]}/known-good"' in page and 'id="sign-out"' in page
        assert client.post(f"/reports/{posted['report']}/known-good", data=form,
                           follow_redirects=False).status_code == 303
        assert baseline_how(client) == [("team=vision", posted["report"], "marked known-good")]


def test_a_failing_report_or_a_label_its_environment_lacks_is_never_known_good(db_url, healthy, broken):
    with client_for(db_url) as client:
        good = post(client, healthy, "machine-good", {"team": "vision"}).json()
        bad = post(client, broken, "machine-bad", {"team": "vision"}).json()
        post(client, healthy, "machine-nlp", {"team": "nlp"})
        before = baseline_how(client)
        for report_id, label, reason in ((bad["report"], "team=vision", "is fail: only a passing report"),
                                         (good["report"], "team=nlp", "does not carry the label team=nlp"),
                                         (good["report"], "site=lab", "does not carry the label site=lab")):
            answer = client.put(f"/api/v1/baselines/{label}", json={"report": report_id}, headers=AUTH)
            assert answer.status_code == 422 and reason in answer.json()["error"], answer.text
        assert sign_in(client).status_code == 303
        page = client.get(f"/environments/{bad['environment']}").text
        assert "Only a passing report can be marked known-good" in page and "/known-good" not in page
        token = csrf_of(client.get(f"/environments/{good['environment']}").text)
        for report_id, label in ((bad["report"], "team=vision"), (good["report"], "team=nlp")):
            answer = client.post(f"/reports/{report_id}/known-good", data={"label": label, "csrf": token},
                                 follow_redirects=False)
            assert answer.status_code == 422, answer.text
        assert baseline_how(client) == before  # nothing marked
        assert client.put("/api/v1/baselines/team=vision", json={"report": good["report"]},
                          headers=AUTH).json()["how"] == "marked known-good"


READS = ["/api/v1/environments", "/api/v1/environments/{environment}/reports", "/api/v1/reports/{report}",
         "/api/v1/diff?a={report}&b={report}", "/api/v1/baselines", "/metrics"]
PAGES = ["/", "/environments/{environment}", "/baselines", "/paste"]


def test_private_reads_and_pages_need_the_token(db_url, healthy):
    with client_for(db_url, private=True) as client:
        posted = post(client, healthy, "machine-private", {"team": "vision"}, "gpu-secret-07").json()
        for path in (p.format(**posted) for p in READS):
            refused = client.get(path)
            assert (refused.status_code, refused.headers.get("www-authenticate")) == (401, "Bearer"), path
            assert "gpu-secret-07" not in refused.text and "machine-private" not in refused.text
            assert client.get(path, headers={"Authorization": "Bearer wrong"}).status_code == 401, path
            assert client.get(path, headers=AUTH).status_code == 200, path
        for path in (p.format(**posted) for p in PAGES):
            sent = client.get(path, follow_redirects=False)
            assert sent.status_code == 303 and sent.headers["location"].startswith("/login?next="), path
            assert "gpu-secret-07" not in sent.text
        pasted = client.post("/paste", data={"report": "{}", "csrf": csrf_of(client.get("/login").text)},
                             follow_redirects=False)
        assert pasted.status_code == 401 and "Today's verdict" not in pasted.text
        signed = sign_in(client, next_path=f"/environments/{posted['environment']}")
        assert signed.headers["location"] == f"/environments/{posted['environment']}"
        for path in (p.format(**posted) for p in PAGES):
            assert client.get(path, follow_redirects=False).status_code == 200, path
        assert "gpu-secret-07" in client.get("/").text
        # the session opens the API's reads to the browser (the pages link to raw reports), never its writes
        assert client.get(f"/api/v1/reports/{posted['report']}").status_code == 200
        assert post(client, healthy, "machine-private", headers={}).status_code == 401
        assert client.put("/api/v1/baselines/team=vision", json={"report": posted["report"]}).status_code == 401


def test_a_server_with_a_token_but_not_private_keeps_its_reads_open(db_url, healthy):
    with client_for(db_url) as client:
        posted = post(client, healthy, "machine-open", {"team": "vision"}).json()
        for path in (p.format(**posted) for p in READS + PAGES):
            assert client.get(path, follow_redirects=False).status_code == 200, path
        assert 'id="sign-in-link"' in client.get("/").text


def test_private_without_a_token_is_refused(db_url):
    from tfdoctor.servers.team.app import Settings

    with pytest.raises(ValueError, match="--private needs --token-file"):
        Settings(db_url, None, private=True)


def test_signing_in_sets_an_httponly_strict_session_that_only_this_token_signs(db_url, healthy):
    with client_for(db_url, private=True) as client:
        form = client.get("/login").text
        assert client.post("/login", data={"token": TOKEN, "next": "/"}, follow_redirects=False).status_code == 403
        wrong = client.post("/login", data={"csrf": csrf_of(form), "token": TOKEN + "x", "next": "/"})
        assert wrong.status_code == 401 and security.SESSION_COOKIE not in wrong.headers.get("set-cookie", "")
        for target, lands in (("/baselines?x=1", "/baselines?x=1"), ("//evil.example/", "/"),
                              ("https://evil.example/", "/"), ("/\\evil.example", "/")):
            answer = sign_in(client, next_path=target)
            assert (answer.status_code, answer.headers["location"]) == (303, lands), target
        cookie = answer.headers["set-cookie"]
        assert re.search(r"(?i)\bHttpOnly\b", cookie) and re.search(r"(?i)SameSite=strict", cookie)
        assert f"Max-Age={security.SESSION_SECONDS}" in cookie and "Path=/" in cookie and TOKEN not in cookie
        assert client.get("/", follow_redirects=False).status_code == 200
        signed_out = client.post("/logout", data={"csrf": csrf_of(client.get("/").text)}, follow_redirects=False)
        assert signed_out.status_code == 303 and signed_out.headers["location"] == "/login"
        assert client.get("/", follow_redirects=False).status_code == 303
        # a cookie this server did not sign, one signed with another token, one expired: no way in
        expires = int(time.time()) + 3600
        for forged in (f"{expires}.{'0' * 64}", security.new_session("another-token"),
                       security.new_session(TOKEN, now=time.time() - security.SESSION_SECONDS - 1),
                       "99999999999999999999.x", "-5." + "0" * 64, ""):
            client.cookies.set(security.SESSION_COOKIE, forged)
            assert client.get("/", follow_redirects=False).status_code == 303, forged
