"""The deployed sign-in, in Chromium, offline: the built app served as CloudFront would serve it (from
`inbox/dist`, with the `/inbox/config.json` the deployment writes, infra/capabilities/inbox.py), and
Cognito's authorize and token endpoints played by the test (Playwright answers every request; nothing
leaves the machine). The app must use the authorization code flow with PKCE (S256), keep the ID token
out of storage, and send it as the Authorization header the API's Cognito authorizer reads."""

from __future__ import annotations

import base64
import hashlib
import json
import mimetypes
from urllib.parse import parse_qs, urlencode, urlsplit

from playwright.sync_api import Browser, Route, expect

from tests.browser.conftest import DESKTOP, ROOT

ORIGIN = "https://inbox.example.test"
COGNITO = "https://team.auth.eu-west-1.amazoncognito.com"
CONFIG = {
    "region": "eu-west-1",
    "user_pool_id": "eu-west-1_TEST",
    "client_id": "client-123",
    "sign_in_url": COGNITO,
    "redirect_uri": f"{ORIGIN}/inbox/",
    "api_url": "/api",
}
ID_TOKEN = "header.payload.signature"


def _challenge(verifier: str) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).decode().rstrip("=")


def test_the_deployed_app_signs_in_with_pkce_and_keeps_the_token_in_memory(browser: Browser) -> None:
    dist = ROOT / "inbox" / "dist"
    seen: dict[str, dict[str, list[str]]] = {}
    api_auth: list[str | None] = []

    def site(route: Route) -> None:
        path = urlsplit(route.request.url).path
        if path == "/inbox/config.json":
            route.fulfill(status=200, content_type="application/json", body=json.dumps(CONFIG))
            return
        file = dist / path.removeprefix("/inbox/")
        if not path.startswith("/inbox/assets/"):
            file = dist / "index.html"  # the distribution's viewer-request function does the same
        content_type = mimetypes.guess_type(file.name)[0] or "application/octet-stream"
        route.fulfill(status=200, content_type=content_type, body=file.read_bytes())

    def authorize(route: Route) -> None:
        query = parse_qs(urlsplit(route.request.url).query)
        seen["authorize"] = query
        back = f"{query['redirect_uri'][0]}?{urlencode({'code': 'auth-code-1', 'state': query['state'][0]})}"
        route.fulfill(status=302, headers={"Location": back})

    def token(route: Route) -> None:
        seen["token"] = parse_qs(route.request.post_data or "")
        route.fulfill(
            status=200,
            content_type="application/json",
            headers={"Access-Control-Allow-Origin": ORIGIN},
            body=json.dumps({"id_token": ID_TOKEN, "access_token": "a", "token_type": "Bearer"}),
        )

    def api(route: Route) -> None:
        api_auth.append(route.request.headers.get("authorization"))
        path = urlsplit(route.request.url).path
        body = (
            {"principal": "ada@example.com", "role": "operator", "via": "cognito", "session": False}
            if path == "/api/me"
            else {"items": [], "count": 0, "next": None, "as_of": "2026-12-01T00:00:00Z"}
        )
        route.fulfill(status=200, content_type="application/json", body=json.dumps(body))

    context = browser.new_context(viewport=DESKTOP)
    context.route(f"{ORIGIN}/api/**", api)
    context.route(f"{ORIGIN}/inbox/**", site)
    context.route(f"{COGNITO}/oauth2/authorize**", authorize)
    context.route(f"{COGNITO}/oauth2/token", token)
    page = context.new_page()
    page.goto(f"{ORIGIN}/inbox/")
    expect(page.get_by_text("ada@example.com")).to_be_visible()
    expect(page.get_by_role("status").filter(has_text="Nothing is waiting")).to_be_visible()
    # Deployed there is no /inbox/logout (Cognito holds the session): the header offers no Sign out.
    expect(page.get_by_role("button", name="Sign out")).to_have_count(0)

    asked = seen["authorize"]
    assert asked["response_type"] == ["code"] and asked["client_id"] == ["client-123"]
    assert asked["redirect_uri"] == [f"{ORIGIN}/inbox/"] and asked["code_challenge_method"] == ["S256"]
    redeemed = seen["token"]
    assert redeemed["grant_type"] == ["authorization_code"] and redeemed["code"] == ["auth-code-1"]
    assert _challenge(redeemed["code_verifier"][0]) == asked["code_challenge"][0]  # the verifier matches
    assert api_auth and set(api_auth) == {ID_TOKEN}  # every API call carries the ID token
    assert "code=" not in page.url  # the code left the address bar
    stored = page.evaluate("JSON.stringify([Object.entries(localStorage), Object.entries(sessionStorage)])")
    assert ID_TOKEN not in stored and "auth-code-1" not in stored and "verifier" not in stored
    assert not [c for c in context.cookies() if ID_TOKEN in c["value"]]
    context.close()
