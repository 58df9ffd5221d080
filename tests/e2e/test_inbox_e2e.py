"""The inbox's back end on the local stack over HTTP (`baton dev` in its own process): the printed
one-time link signs a browser in, the cookie reads the inbox and answers through the public routes (with
X-Baton-Inbox: 1), `baton inbox-login` prints a fresh link, and `/inbox/` is served by the stack."""

from __future__ import annotations

import re
import subprocess
import sys

import httpx
import pytest

from baton.api.auth import SESSION_COOKIE
from tests.e2e.conftest import LocalStackProcess, wait_for

pytestmark = pytest.mark.e2e
LINK = re.compile(r"(http://127\.0\.0\.1:\d+/inbox/login\?code=[A-Za-z0-9_-]+)")


def _sign_in(url: str) -> str:
    response = httpx.get(url, follow_redirects=False, timeout=30)
    assert response.status_code == 303, response.text
    assert response.headers["location"] == "/inbox/"
    return str(response.cookies[SESSION_COOKIE])


def test_the_printed_link_signs_in_once_and_the_cookie_answers(local_stack: LocalStackProcess) -> None:
    url = wait_for(lambda: (LINK.search(local_stack.log()) or [None])[0])
    assert url.startswith(local_stack.api_url)
    session = _sign_in(url)
    assert httpx.get(url, follow_redirects=False, timeout=30).status_code == 403  # once only
    browser = httpx.Client(base_url=local_stack.api_url, cookies={SESSION_COOKIE: session}, timeout=30)
    me = browser.get("/api/me").json()
    assert me["role"] == "operator" and me["session"] is True

    with local_stack.http() as operator:
        asked = operator.post("/api/runs/inbox-e2e/questions", json={"node": "draft", "question": "Ship it?"})
        assert asked.status_code == 201, asked.text
    iid = asked.json()["interaction_id"]
    page = browser.get("/api/inbox", params={"run": "inbox-e2e"}).json()
    assert [(i["id"], i["prompt"]) for i in page["items"]] == [(iid, "Ship it?")]
    answer = f"/api/runs/inbox-e2e/interactions/{iid}/answer"
    refused = browser.post(answer, json={"answer": "yes"})
    assert refused.status_code == 403 and refused.json()["header"] == "X-Baton-Inbox"
    done = browser.post(answer, json={"answer": "yes"}, headers={"X-Baton-Inbox": "1"})
    assert done.status_code == 200 and done.json()["status"] == "answered"
    assert browser.get("/api/inbox", params={"run": "inbox-e2e"}).json()["items"] == []


def test_inbox_login_prints_a_fresh_link(local_stack: LocalStackProcess) -> None:
    printed = subprocess.run(
        [sys.executable, "-m", "baton.cli.main", "inbox-login", "--state-dir", str(local_stack.state_dir)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    found = LINK.search(printed)
    assert found is not None, printed
    assert _sign_in(found[1])
    with httpx.Client(base_url=local_stack.api_url, timeout=30) as anyone:
        assert anyone.post("/inbox/login-code").status_code == 401  # a code needs the operator's token


def test_the_stack_serves_the_inbox_page(local_stack: LocalStackProcess) -> None:
    page = httpx.get(f"{local_stack.api_url}/inbox/", timeout=30)
    assert page.headers["content-type"].startswith("text/html")
    assert page.headers["x-frame-options"] == "DENY"
    if page.status_code == 503:  # no `make inbox` yet: the page says how to build it
        assert "make inbox" in page.text
    else:
        assert page.status_code == 200 and page.headers["cache-control"] == "no-cache"


def _inbox_login(local_stack: LocalStackProcess, *flags: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "baton.cli.main", "inbox-login", "--state-dir", str(local_stack.state_dir), *flags],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )


def _signed_in_browser(local_stack: LocalStackProcess) -> httpx.Client:
    found = LINK.search(_inbox_login(local_stack).stdout)
    assert found is not None
    return httpx.Client(base_url=local_stack.api_url, cookies={SESSION_COOKIE: _sign_in(found[1])}, timeout=30)


def test_logout_ends_the_session_on_the_server(local_stack: LocalStackProcess) -> None:
    """The session is ended in the table (issue 29): the cookie's value replayed after a logout is a 401."""
    browser, other = _signed_in_browser(local_stack), _signed_in_browser(local_stack)
    value = browser.cookies[SESSION_COOKIE]
    assert browser.get("/api/me").status_code == 200
    assert browser.post("/inbox/logout").status_code == 200
    replayed = httpx.get(f"{local_stack.api_url}/api/me", cookies={SESSION_COOKIE: value}, timeout=30)
    assert replayed.status_code == 401, replayed.text
    assert other.get("/api/me").status_code == 200


def test_revoke_all_ends_every_earlier_session_and_a_new_login_works(local_stack: LocalStackProcess) -> None:
    earlier = [_signed_in_browser(local_stack) for _ in range(2)]
    assert all(b.get("/api/inbox").status_code == 200 for b in earlier)
    revoked = _inbox_login(local_stack, "--revoke-all")
    assert "inbox session(s) of local-operator" in revoked.stderr
    assert all(b.get("/api/inbox").status_code == 401 for b in earlier)
    found = LINK.search(revoked.stdout)  # the fresh link it printed signs in
    assert found is not None
    fresh = httpx.Client(base_url=local_stack.api_url, cookies={SESSION_COOKIE: _sign_in(found[1])}, timeout=30)
    assert fresh.get("/api/inbox").status_code == 200
    _inbox_login(local_stack, "--revoke-all", "--all-operators")
    assert fresh.get("/api/inbox").status_code == 401
