"""The web inbox on the local stack (`baton/local/inbox.py`): the one-time sign-in code exchanged for a
session cookie, the cookie as the local operator in `resolve_caller` (writes need X-Baton-Inbox: 1), and
the built app's files with their types and cache headers."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from baton.api import deps
from baton.api.auth import SESSION_COOKIE, SESSION_SECONDS, inbox_session_token, operator_token
from baton.local.http_adapter import to_proxy_event
from baton.local.inbox import CODE_SECONDS, InboxSite
from tests.unit.conftest import LOCAL_TOKEN

TOKEN = LOCAL_TOKEN  # the `app` fixture's (tests/unit/conftest.py)


@pytest.fixture
def dist(tmp_path: Path) -> Path:
    (tmp_path / "assets").mkdir()
    (tmp_path / "index.html").write_text("<!doctype html><div id=app></div>")
    (tmp_path / "assets" / "index-abc123.js").write_text("console.log('inbox')")
    (tmp_path / "assets" / "index-abc123.css").write_text("body{}")
    (tmp_path / "assets" / "logo.svg").write_text("<svg/>")
    (tmp_path / "favicon.svg").write_text("<svg/>")
    return tmp_path


@pytest.fixture
def site(dist: Path) -> InboxSite:
    return InboxSite(TOKEN, dist, base_url="http://127.0.0.1:8787")


def _cookie_value(set_cookie: str) -> str:
    return set_cookie.split(";")[0].partition("=")[2]


def test_a_code_signs_in_once_with_a_strict_httponly_cookie(site: InboxSite) -> None:
    url = site.login_url()
    assert url.startswith("http://127.0.0.1:8787/inbox/login?code=")
    path = url.removeprefix("http://127.0.0.1:8787")
    first = site.handle("GET", path)
    assert first.status == 303 and first.headers["Location"] == "/inbox/"
    cookie = first.headers["Set-Cookie"]
    assert cookie.startswith(f"{SESSION_COOKIE}=s1.")
    assert {"HttpOnly", "SameSite=Strict", "Path=/", f"Max-Age={SESSION_SECONDS}"} <= {
        part.strip() for part in cookie.split(";")
    }
    assert first.headers["Cache-Control"] == "no-store" and first.headers["Referrer-Policy"] == "no-referrer"
    assert TOKEN not in cookie  # the session is derived from the operator token, never the token
    again = site.handle("GET", path)
    assert again.status == 403 and b"used or has expired" in again.body and "Set-Cookie" not in again.headers


def test_codes_expire_and_unknown_ones_are_refused(site: InboxSite) -> None:
    start = time.time()
    code = site.new_code(now=start)
    assert site.handle("GET", f"/inbox/login?code={code}", now=start + CODE_SECONDS + 1).status == 403
    assert site.handle("GET", "/inbox/login?code=made-up").status == 403
    assert site.handle("GET", "/inbox/login").status == 403


def test_a_new_code_needs_the_operator_bearer_token(site: InboxSite) -> None:
    assert site.handle("POST", "/inbox/login-code").status == 401
    assert site.handle("POST", "/inbox/login-code", authorization="Bearer wrong").status == 401
    minted = site.handle("POST", "/inbox/login-code", authorization=f"Bearer {TOKEN}")
    assert minted.status == 201
    url = json.loads(minted.body)["url"]
    assert site.handle("GET", url.removeprefix(site.base_url)).status == 303


def test_the_built_app_is_served_with_types_and_cache_headers(site: InboxSite) -> None:
    index = site.handle("GET", "/inbox/")
    assert index.status == 200 and index.body.startswith(b"<!doctype html>")
    assert index.headers["Content-Type"].startswith("text/html") and index.headers["Cache-Control"] == "no-cache"
    assert "default-src 'self'" in index.headers["Content-Security-Policy"]
    screen = site.handle("GET", "/inbox/runs/demo-1?tab=events")  # a screen the app routes in the browser
    assert screen.status == 200 and screen.body == index.body
    js = site.handle("GET", "/inbox/assets/index-abc123.js")
    assert js.status == 200 and js.headers["Content-Type"] == "text/javascript; charset=utf-8"
    assert js.headers["Cache-Control"] == "public, max-age=31536000, immutable"
    assert site.handle("GET", "/inbox/assets/index-abc123.css").headers["Content-Type"].startswith("text/css")
    assert site.handle("GET", "/inbox/assets/logo.svg").headers["Content-Type"] == "image/svg+xml"
    assert site.handle("GET", "/inbox").status == 308
    assert site.handle("GET", "/inbox/assets/missing.js").status == 404
    assert site.handle("GET", "/inbox/assets/../../etc/passwd").status == 404
    assert site.handle("GET", "/inbox/assets/%2e%2e/index.html").status == 404
    assert site.handle("DELETE", "/inbox/").status == 405
    icon = site.handle("GET", "/inbox/favicon.svg")  # a file of the build outside assets/: by name, revalidated
    assert icon.status == 200 and icon.headers["Cache-Control"] == "no-cache"
    assert icon.headers["Content-Type"] == "image/svg+xml"
    local = site.handle("GET", "/inbox/config.json")  # the app's first read: here, the session cookie's sign-in
    assert local.status == 200 and json.loads(local.body) == {"sign_in": "session_cookie"}


@pytest.mark.parametrize(
    ("name", "content_type"),
    [
        ("app.js", "text/javascript; charset=utf-8"),
        ("app.mjs", "text/javascript; charset=utf-8"),
        ("app.css", "text/css; charset=utf-8"),
        ("page.html", "text/html; charset=utf-8"),
        ("data.json", "application/json"),
        ("app.js.map", "application/json"),
        ("logo.svg", "image/svg+xml"),
        ("icon.png", "image/png"),
        ("favicon.ico", "image/x-icon"),
        ("font.woff2", "font/woff2"),
        ("manifest.webmanifest", "application/manifest+json"),
        ("robots.txt", "text/plain; charset=utf-8"),
        ("LOUD.JS", "text/javascript; charset=utf-8"),
        ("blob.unknown-kind", "application/octet-stream"),
    ],
)
def test_each_file_of_a_build_has_its_content_type(dist: Path, site: InboxSite, name: str, content_type: str) -> None:
    # Python's table and the overrides, the same on 3.11 and 3.13 and whatever the machine's /etc/mime.types says.
    (dist / name).write_bytes(b"x")
    served = site.handle("GET", f"/inbox/{name}")
    assert served.status == 200 and served.headers["Content-Type"] == content_type


def test_without_a_build_a_page_says_how_to_make_it(tmp_path: Path) -> None:
    page = InboxSite(TOKEN, tmp_path / "dist").handle("GET", "/inbox/")
    assert page.status == 503 and b"make inbox" in page.body and page.headers["Content-Type"].startswith("text/html")


# ---- the cookie at the API ------------------------------------------------------------------------
def _call(app: Any, method: str, path: str, headers: dict[str, str], body: Any = None) -> tuple[int, Any]:
    data = json.dumps(body).encode() if body is not None else b""
    event = to_proxy_event(method, path, {"Content-Type": "application/json", **headers}, data, "127.0.0.1")
    result = app.resolve(event, None)
    return result["statusCode"], json.loads(result["body"]) if result.get("body") else None


@pytest.fixture
def signed_site(app: Any, site: InboxSite) -> InboxSite:
    """The site recording its sessions where the `app`'s API reads them (an in-memory store)."""
    site.sessions = deps.get_services().inbox_session_store
    return site


def test_the_session_cookie_is_the_local_operator_and_writes_need_the_header(app: Any, signed_site: InboxSite) -> None:
    site = signed_site
    signed_in = site.handle("GET", site.login_url().removeprefix(site.base_url))
    cookie = {"Cookie": f"theme=dark; {SESSION_COOKIE}={_cookie_value(signed_in.headers['Set-Cookie'])}"}
    status, me = _call(app, "GET", "/api/me", cookie)
    assert status == 200 and me == {
        "principal": "local-operator",
        "role": "operator",
        "via": "local-session",
        "run_id": None,
        "session": True,
        "passkeys": False,
    }
    assert _call(app, "GET", "/api/inbox", cookie)[0] == 200
    status, asked = _call(
        app, "POST", "/api/runs/run-a/questions", {"Authorization": f"Bearer {TOKEN}"}, {"node": "n", "question": "Q?"}
    )
    assert status == 201
    answer = f"/api/runs/run-a/interactions/{asked['interaction_id']}/answer"
    status, body = _call(app, "POST", answer, cookie, {"answer": "yes"})
    assert status == 403 and body["header"] == "X-Baton-Inbox"
    assert _call(app, "GET", "/api/inbox", cookie)[1]["count"] == 1  # the refused write changed nothing
    status, body = _call(app, "POST", answer, {**cookie, "X-Baton-Inbox": "1"}, {"answer": "yes"})
    assert status == 200 and body["status"] == "answered"


def test_a_forged_or_expired_session_is_401(app: Any) -> None:
    expired = inbox_session_token(TOKEN, now=time.time() - SESSION_SECONDS - 5)
    forged = inbox_session_token("another-stack's-token")
    for value in (expired, forged, "s1.99999999999.nonce.mac", "garbage"):
        status, body = _call(app, "GET", "/api/me", {"Cookie": f"{SESSION_COOKIE}={value}"})
        assert status == 401 and body["error"] == "unauthorized", value
    assert _call(app, "GET", "/api/me", {})[0] == 401


# ---- ending sessions on the server (issue 29, item 6) -----------------------------------------------
def _sign_in(site: InboxSite) -> dict[str, str]:
    signed_in = site.handle("GET", site.login_url().removeprefix(site.base_url))
    assert signed_in.status == 303
    return {"Cookie": f"{SESSION_COOKIE}={_cookie_value(signed_in.headers['Set-Cookie'])}"}


def test_logout_ends_the_session_on_the_server_not_only_the_cookie(app: Any, signed_site: InboxSite) -> None:
    mine, other_browser = _sign_in(signed_site), _sign_in(signed_site)
    assert _call(app, "GET", "/api/me", mine)[0] == 200
    out = signed_site.handle("POST", "/inbox/logout", cookie=mine["Cookie"])
    assert out.status == 200 and "Max-Age=0" in out.headers["Set-Cookie"]
    status, body = _call(app, "GET", "/api/me", mine)  # the old value, replayed after the logout
    assert status == 401 and "ended" in body["message"], body
    assert _call(app, "GET", "/api/me", other_browser)[0] == 200  # another browser's session is its own


def test_revoke_all_ends_every_earlier_session_and_a_new_login_works(app: Any, signed_site: InboxSite) -> None:
    earlier = [_sign_in(signed_site) for _ in range(3)]
    assert all(_call(app, "GET", "/api/inbox", cookie)[0] == 200 for cookie in earlier)
    assert signed_site.handle("POST", "/inbox/sessions/revoke").status == 401  # needs an operator token
    revoked = signed_site.handle("POST", "/inbox/sessions/revoke", authorization=f"Bearer {TOKEN}")
    assert revoked.status == 200 and json.loads(revoked.body) == {"ended": 3, "operator": "local-operator"}
    assert all(_call(app, "GET", "/api/inbox", cookie)[0] == 401 for cookie in earlier)
    fresh = _sign_in(signed_site)
    assert _call(app, "GET", "/api/inbox", fresh)[0] == 200


def test_only_the_stacks_own_token_ends_every_operators_sessions(app: Any, signed_site: InboxSite) -> None:
    cookie = _sign_in(signed_site)
    bob = f"Bearer {operator_token(TOKEN, 'bob')}"
    every = json.dumps({"all_operators": True}).encode()
    refused = signed_site.handle("POST", "/inbox/sessions/revoke", authorization=bob, body=every)
    assert refused.status == 403 and _call(app, "GET", "/api/me", cookie)[0] == 200
    own = signed_site.handle("POST", "/inbox/sessions/revoke", authorization=bob)  # bob's own: none
    assert json.loads(own.body) == {"ended": 0, "operator": "bob"} and _call(app, "GET", "/api/me", cookie)[0] == 200
    ended = signed_site.handle("POST", "/inbox/sessions/revoke", authorization=f"Bearer {TOKEN}", body=every)
    assert json.loads(ended.body) == {"ended": 1, "operator": None} and _call(app, "GET", "/api/me", cookie)[0] == 401
    bad = signed_site.handle("POST", "/inbox/sessions/revoke", authorization=f"Bearer {TOKEN}", body=b"[1]")
    assert bad.status == 400
