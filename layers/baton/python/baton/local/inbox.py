"""The web inbox on the local stack: the built app (`inbox/dist`) at `/inbox/`, and its sign-in. `baton dev` prints
`/inbox/login?code=<code>`: a single-use, short-lived code (kept in memory, hashed) whose exchange sets an HttpOnly,
SameSite=Strict session cookie, honoured while the table records it open. Deployed, Cognito signs in instead."""

from __future__ import annotations

import hashlib
import hmac
import html
import json
import mimetypes
import secrets
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Final
from urllib.parse import parse_qs, urlsplit

from baton.api.auth import (
    INBOX_OPERATOR,
    SESSION_COOKIE,
    SESSION_SECONDS,
    inbox_session,
    inbox_session_token,
    local_bearer_operator,
    request_cookie,
)

if TYPE_CHECKING:
    from collections.abc import Callable

    from baton.ports import InboxSessionStore

PREFIX: Final = "/inbox"
CODE_SECONDS: Final = 15 * 60
MAX_CODES: Final = 32  # unexchanged codes kept; the oldest is dropped first
# Python's own table (not the machine's /etc/mime.types), with what it lacks or names otherwise before 3.12
_TYPES: Final = mimetypes.MimeTypes()
_TYPES.types_map[True].update({".js": "text/javascript", ".mjs": "text/javascript", ".map": "application/json"})
_TYPES.types_map[True].update({".ico": "image/x-icon", ".woff2": "font/woff2"})
# The app talks to this origin only; no inline script, no framing, no referrer (a login URL never leaks).
_PAGE_HEADERS: Final = {
    "Content-Security-Policy": "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; "
    "frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
}


@dataclass(frozen=True)
class SiteResponse:
    status: int
    headers: dict[str, str]
    body: bytes = b""


def _page(status: int, title: str, text: str, **headers: str) -> SiteResponse:
    body = (
        f"<!doctype html><html lang=en><meta charset=utf-8><title>{html.escape(title)}</title>"
        f"<body><h1>{html.escape(title)}</h1><p>{text}</p></body></html>"
    ).encode()
    return SiteResponse(
        status,
        {**_PAGE_HEADERS, "Content-Type": "text/html; charset=utf-8", "Cache-Control": "no-store", **headers},
        body,
    )


def _json(status: int, body: dict[str, object]) -> SiteResponse:
    return SiteResponse(
        status, {"Content-Type": "application/json", "Cache-Control": "no-store"}, json.dumps(body).encode()
    )


def _hash(code: str) -> str:
    return hashlib.sha256(code.encode()).hexdigest()


@dataclass
class InboxSite:
    """The inbox's static files and sign-in for one local stack (its operator token keys the sessions)."""

    operator_token: str
    dist_dir: Path
    base_url: str = ""
    # Where sessions are recorded open (the table, once the stack has provisioned it); None: not recorded
    sessions: Callable[[], InboxSessionStore] | None = None
    _codes: dict[str, float] = field(default_factory=dict)  # sha256(code) -> expiry; the codes are not kept
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def handles(self, path: str) -> bool:
        route = urlsplit(path).path
        return route == PREFIX or route.startswith(PREFIX + "/")

    def new_code(self, now: float | None = None) -> str:
        code = secrets.token_urlsafe(24)
        at = time.time() if now is None else now
        with self._lock:
            self._codes = {h: exp for h, exp in self._codes.items() if exp > at}
            while len(self._codes) >= MAX_CODES:
                self._codes.pop(next(iter(self._codes)))
            self._codes[_hash(code)] = at + CODE_SECONDS
        return code

    def login_url(self, now: float | None = None) -> str:
        return f"{self.base_url}{PREFIX}/login?code={self.new_code(now)}"

    def _take(self, code: str, now: float) -> bool:
        """Spend a code: true once, for a known code before its expiry."""
        with self._lock:
            expires = self._codes.pop(_hash(code), None)
        return expires is not None and expires > now

    def _login(self, query: str, now: float) -> SiteResponse:
        codes = parse_qs(query).get("code") or [""]
        if not self._take(codes[0], now):
            return _page(
                403,
                "This sign-in link was used or has expired",
                "A sign-in link works once, within 15 minutes. Get a new one with "
                "<code>uv run baton inbox-login</code> (the local stack must be running).",
            )
        token = inbox_session_token(self.operator_token, now)
        opened = inbox_session(token, self.operator_token, now)
        if self.sessions is not None and opened is not None:
            self.sessions().open_session(INBOX_OPERATOR, *opened)
        cookie = f"{SESSION_COOKIE}={token}; Path=/; HttpOnly; SameSite=Strict; Max-Age={SESSION_SECONDS}"
        headers = {**_PAGE_HEADERS, "Location": f"{PREFIX}/", "Set-Cookie": cookie, "Cache-Control": "no-store"}
        return SiteResponse(303, headers)

    def _mint(self, authorization: str) -> SiteResponse:
        scheme, _, token = authorization.partition(" ")
        if scheme.lower() != "bearer" or not hmac.compare_digest(token.strip().encode(), self.operator_token.encode()):
            message = "a new sign-in code needs the operator bearer token"
            return _json(401, {"error": "unauthorized", "message": message})
        return _json(201, {"url": self.login_url(), "expires_in": CODE_SECONDS})

    def _logout(self, cookie_header: str, now: float) -> SiteResponse:
        value = request_cookie({"cookie": cookie_header}, SESSION_COOKIE)
        session = inbox_session(value, self.operator_token, now) if value else None
        if session is not None and self.sessions is not None:
            self.sessions().end_session(INBOX_OPERATOR, session[0])
        cookie = f"{SESSION_COOKIE}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0"
        return _page(200, "Signed out", "The inbox session is ended and its cookie cleared.", **{"Set-Cookie": cookie})

    def _revoke(self, authorization: str, body: bytes) -> SiteResponse:
        """End the caller's operator's sessions; `{"all_operators": true}`: everyone's (the stack's own token only)."""
        operator = local_bearer_operator(authorization, self.operator_token)
        if operator is None:
            return _json(401, {"error": "unauthorized", "message": "ending sessions needs an operator bearer token"})
        try:
            request = json.loads(body or b"{}")
        except (json.JSONDecodeError, UnicodeDecodeError):
            request = None
        if not isinstance(request, dict) or not isinstance(request.get("all_operators", False), bool):
            return _json(400, {"error": "bad_request", "message": 'the body is {"all_operators": true|false}'})
        every = request.get("all_operators", False)
        if every and operator != INBOX_OPERATOR:
            message = "only the stack's own token ends every operator's sessions"
            return _json(403, {"error": "forbidden", "message": message})
        if self.sessions is None:
            return _json(503, {"error": "unavailable", "message": "the local stack is still starting"})
        ended = self.sessions().end_sessions(None if every else operator)
        return _json(200, {"ended": ended, "operator": None if every else operator})

    def _file(self, route: str) -> SiteResponse:
        index = self.dist_dir / "index.html"
        if not index.is_file():
            return _page(
                503,
                "The inbox is not built yet",
                f"There is no <code>{html.escape(str(index))}</code>. Build the app with <code>make inbox</code> "
                "(it runs <code>npm ci</code> and <code>npm run build</code> in <code>inbox/</code>), then reload.",
            )
        relative = route.removeprefix(PREFIX).lstrip("/")
        if relative.startswith("assets/") or "." in relative.rsplit("/", 1)[-1]:  # a file, not a screen
            target = (self.dist_dir / relative).resolve()
            if not target.is_relative_to(self.dist_dir.resolve()) or not target.is_file():
                return _page(404, "Not found", f"No file {html.escape(route)} in the built inbox.")
            hashed = relative.startswith("assets/")  # content-hashed names: a new build has new names
            cache = "public, max-age=31536000, immutable" if hashed else "no-cache"
            kind = _TYPES.guess_type(target.name)[0] or "application/octet-stream"
            kind += "; charset=utf-8" if kind.startswith("text/") else ""
            headers = {"Content-Type": kind, "Cache-Control": cache}
            return SiteResponse(200, {"X-Content-Type-Options": "nosniff", **headers}, target.read_bytes())
        # Every other path is a screen of the app (it routes in the browser): the page, never cached.
        headers = {**_PAGE_HEADERS, "Content-Type": "text/html; charset=utf-8", "Cache-Control": "no-cache"}
        return SiteResponse(200, headers, index.read_bytes())

    def handle(  # noqa: PLR0911 - one answer per route
        self,
        method: str,
        path: str,
        authorization: str = "",
        now: float | None = None,
        *,
        cookie: str = "",
        body: bytes = b"",
    ) -> SiteResponse:
        parts = urlsplit(path)
        at = time.time() if now is None else now
        if parts.path == f"{PREFIX}/login" and method == "GET":
            return self._login(parts.query, at)
        if parts.path == f"{PREFIX}/login-code" and method == "POST":
            return self._mint(authorization)
        if parts.path == f"{PREFIX}/logout" and method == "POST":
            return self._logout(cookie, at)
        if parts.path == f"{PREFIX}/sessions/revoke" and method == "POST":
            return self._revoke(authorization, body)
        if parts.path == f"{PREFIX}/config.json" and method == "GET":
            return _json(200, {"sign_in": "session_cookie"})  # no Cognito client: the app stays on the cookie
        if parts.path == PREFIX:
            return SiteResponse(308, {"Location": f"{PREFIX}/"})
        if method not in ("GET", "HEAD"):
            return _page(405, "Method not allowed", "The inbox's files are read with GET.", Allow="GET, HEAD")
        return self._file(parts.path)


def table_sessions() -> InboxSessionStore:
    """The sessions on the stack's table, where the API's handlers read them."""
    from baton.runtime.wiring import services

    return services().inbox_session_store()


def inbox_dist() -> Path:
    """Where the built web inbox is: `inbox/dist` of the source checkout (none outside one)."""
    from baton.workflows.source_tree import SourceTreeNotFoundError, source_tree

    try:
        return source_tree().root / "inbox" / "dist"
    except SourceTreeNotFoundError:
        return Path("inbox") / "dist"
