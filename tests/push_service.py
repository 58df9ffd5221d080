"""A test push service (RFC 8030's role, for Web Push tests): a small HTTP server that takes the POST a push
service would, checks the VAPID JWT's signature against the key it names (and that key against the one the
test expects), and DECRYPTS the body (aes128gcm, RFC 8291) with the subscription's private key, as the
browser would. `gone` endpoints answer 410 (the subscription expired).

    with PushService() as service:
        browser = service.browser()          # a subscription keypair and its PushSubscription.toJSON()
        ... subscribe browser.subscription, make Baton push ...
        payload = service.received(timeout=10)[0].payload
"""

from __future__ import annotations

import base64
import json
import os
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import http_ece
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature


def b64url_decode(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


@dataclass
class Browser:
    """One subscription's private half (what the browser keeps) and its public `toJSON()`."""

    endpoint: str
    private_key: ec.EllipticCurvePrivateKey
    auth: bytes

    @property
    def subscription(self) -> dict[str, Any]:
        point = self.private_key.public_key().public_bytes(
            serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint
        )
        return {
            "endpoint": self.endpoint,
            "expirationTime": None,
            "keys": {"p256dh": b64url(point), "auth": b64url(self.auth)},
        }


@dataclass
class Received:
    path: str
    headers: dict[str, str]  # names lowercased
    vapid_key: str  # the `k=` of the Authorization header: the server's application key
    claims: dict[str, Any]
    payload: dict[str, Any]


def verify_vapid(authorization: str) -> tuple[str, dict[str, Any]]:
    """`vapid t=<jwt>,k=<key>` checked: the JWT's ES256 signature by `k`. Returns (k, the JWT's claims)."""
    scheme, _, params = authorization.partition(" ")
    assert scheme.lower() == "vapid", f"not a VAPID authorization: {authorization!r}"
    values = dict(part.strip().split("=", 1) for part in params.split(","))
    token, key = values["t"], values["k"]
    header_b64, claims_b64, signature_b64 = token.split(".")
    header = json.loads(b64url_decode(header_b64))
    assert header["alg"] == "ES256", f"not ES256: {header}"
    signature = b64url_decode(signature_b64)
    der = encode_dss_signature(int.from_bytes(signature[:32], "big"), int.from_bytes(signature[32:], "big"))
    public = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), b64url_decode(key))
    public.verify(der, f"{header_b64}.{claims_b64}".encode(), ec.ECDSA(hashes.SHA256()))  # raises if forged
    return key, json.loads(b64url_decode(claims_b64))


@dataclass
class PushService:
    """The server; `browser()` makes a subscription whose endpoint is here."""

    gone: set[str] = field(default_factory=set)  # paths that answer 410
    _browsers: dict[str, Browser] = field(default_factory=dict)
    _received: list[Received] = field(default_factory=list)
    _errors: list[str] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __enter__(self) -> PushService:
        service = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                status = service._take(self.path, {k.lower(): v for k, v in self.headers.items()}, body)
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *_: Any) -> None:
                return

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True).start()
        return self

    def __exit__(self, *_: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def browser(self) -> Browser:
        path = f"/push/{b64url(os.urandom(12))}"
        browser = Browser(
            endpoint=self.url + path, private_key=ec.generate_private_key(ec.SECP256R1()), auth=os.urandom(16)
        )
        self._browsers[path] = browser
        return browser

    def _take(self, path: str, headers: dict[str, str], body: bytes) -> int:
        if path in self.gone:
            return 410
        browser = self._browsers.get(path)
        if browser is None:
            return 404
        try:
            key, claims = verify_vapid(headers.get("authorization", ""))
            assert headers.get("content-encoding") == "aes128gcm", f"not aes128gcm: {headers}"
            plain = http_ece.decrypt(
                body, private_key=browser.private_key, auth_secret=browser.auth, version="aes128gcm"
            )
            received = Received(path, headers, key, claims, json.loads(plain))
        except Exception as exc:  # a push the browser could not read: the test fails on it
            with self._lock:
                self._errors.append(f"{type(exc).__name__}: {exc}")
            return 400
        with self._lock:
            self._received.append(received)
        return 201

    def received(self, count: int = 1, timeout: float = 0.0) -> list[Received]:
        """The pushes decrypted so far, waiting up to `timeout` for `count` of them; a push that failed to
        verify or decrypt fails here."""
        deadline = time.monotonic() + timeout
        while True:
            with self._lock:
                assert not self._errors, self._errors
                if len(self._received) >= count or time.monotonic() >= deadline:
                    return list(self._received)
            time.sleep(0.05)
