"""The local HTTP adapter (issue 18): every method and every malformed request line or
Content-Length gets the API's JSON error shape, and a body shorter than announced never holds a
thread. An in-process server on 127.0.0.1 over the real resolver."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from baton.local import http_adapter
from baton.local.http_adapter import make_server
from tests.unit.conftest import LOCAL_TOKEN as TOKEN
from tests.unit.conftest import app

pytestmark = pytest.mark.e2e
__all__ = ["app"]  # the unit tests' local-token API fixture, served over HTTP here


@pytest.fixture
def server(app: Any) -> Iterator[int]:
    httpd = make_server("127.0.0.1", 0, lambda event: app.resolve(event, None))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield httpd.server_address[1]
    httpd.shutdown()
    httpd.server_close()


def _raw(port: int, request: bytes, timeout: float = 10) -> tuple[int, dict[str, Any]]:
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as conn:
        conn.sendall(request)
        conn.shutdown(socket.SHUT_WR)
        data = b""
        while chunk := conn.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split()[1]), json.loads(body)


@pytest.mark.parametrize("method", ["TRACE", "QUERY", "OPTIONS", "PROPFIND"])
def test_every_method_gets_the_json_error_shape(server: int, method: str) -> None:
    status, body = _raw(
        server,
        f"{method} /api/v1/interrupts HTTP/1.1\r\nHost: 127.0.0.1:{server}\r\nAuthorization: Bearer {TOKEN}\r\n"
        "Connection: close\r\n\r\n".encode(),
    )
    assert 400 <= status < 500 and {"error", "message"} <= body.keys()


@pytest.mark.parametrize(
    ("request_bytes", "status"),
    [
        (b"POST /api/runs HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n{}", 400),
        (b"POST /api/runs HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999\r\n\r\n{}", 413),
        (b"POST /api/runs HTTP/1.1\r\nHost: x\r\nContent-Length: 500\r\n\r\n{}", 400),  # shorter than announced
        (b"GARBAGE\r\n\r\n", 400),
        (b"GET /api/runs HTTP/9.9\r\n\r\n", 505),
        (b"POST /api/runs HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n", 400),
        (b"POST /api/runs HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n9\r\n{}\r\n", 400),  # short
        (b"POST /api/runs HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nFFFFFFF\r\n{}", 413),
        (b"POST /api/runs HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n{}", 501),
    ],
)
def test_malformed_requests_get_the_json_error_shape_and_never_hang(
    server: int, request_bytes: bytes, status: int
) -> None:
    got, body = _raw(server, request_bytes)
    assert got == status and {"error", "message"} <= body.keys()


_POST = b"POST /api/runs HTTP/1.1\r\nHost: x\r\n"


@pytest.mark.parametrize(
    ("request_bytes", "status", "error", "message"),
    [
        (_POST + b"Content-Length: -1\r\n\r\n{}", 400, "bad_request", "Content-Length '-1' is not a length"),
        (
            _POST + b"Content-Length: 1048577\r\n\r\n{}",
            413,
            "payload_too_large",
            "request body is 1048577 bytes; the limit is 1048576",
        ),
        (_POST + b"Content-Length: 500\r\n\r\n{}", 400, "bad_request", "request body shorter than its Content-Length"),
        (
            _POST + b"Transfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n",
            400,
            "bad_request",
            "a chunk of the request body has no valid size line",
        ),
        (
            _POST + b"Transfer-Encoding: chunked\r\n\r\n9\r\n{}\r\n",
            400,
            "bad_request",
            "a chunk of the request body is shorter than its size",
        ),
        (
            _POST + b"Transfer-Encoding: chunked\r\n\r\nFFFFFFF\r\n{}",
            413,
            "payload_too_large",
            "request body is over the limit of 1048576 bytes",
        ),
        (
            _POST + b"Transfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n" + b"X-Trailer: 1\r\n" * 100,
            400,
            "bad_request",
            "the request body's trailer does not end",
        ),
        (
            _POST + b"Transfer-Encoding: gzip\r\n\r\n{}",
            501,
            "not_implemented",
            "Transfer-Encoding 'gzip' is not supported",
        ),
    ],
)
def test_a_refused_body_is_answered_in_the_api_shape_and_closes_the_connection(
    server: int, request_bytes: bytes, status: int, error: str, message: str
) -> None:
    with socket.create_connection(("127.0.0.1", server), timeout=10) as conn:
        conn.sendall(request_bytes)
        if "shorter" in message:  # the client stops sending; else the write side stays open: the server closes
            conn.shutdown(socket.SHUT_WR)
        data = b""
        while chunk := conn.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    assert int(head.split()[1]) == status and json.loads(body) == {"error": error, "message": message}


def test_a_body_not_sent_in_time_is_a_408_and_the_connection_closes(app: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(http_adapter._Handler, "timeout", 0.5)
    httpd = make_server("127.0.0.1", 0, lambda event: app.resolve(event, None))
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        with socket.create_connection(("127.0.0.1", httpd.server_address[1]), timeout=10) as conn:
            conn.sendall(_POST + b"Content-Length: 10\r\n\r\n{}")
            data = b""
            while chunk := conn.recv(65536):
                data += chunk
    finally:
        httpd.shutdown()
        httpd.server_close()
    head, _, body = data.partition(b"\r\n\r\n")
    assert int(head.split()[1]) == 408
    assert json.loads(body) == {"error": "request_timeout", "message": "request body not received in time"}


def test_every_connection_has_nagle_off_so_a_response_is_not_held_for_an_ack(app: Any) -> None:
    httpd = make_server("127.0.0.1", 0, lambda event: app.resolve(event, None))
    handler_class: Any = httpd.RequestHandlerClass
    nodelay: list[int] = []
    setup = handler_class.setup

    def recording_setup(self: Any) -> None:
        setup(self)
        nodelay.append(self.connection.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))

    handler_class.setup = recording_setup
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        port = httpd.server_address[1]
        request = f"GET /api/runs/r-1 HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n"
        status, _ = _raw(port, request.encode())
    finally:
        httpd.shutdown()
        httpd.server_close()
    assert status == 401 and nodelay and all(nodelay), nodelay


def test_a_chunked_body_is_read_not_dropped(server: int) -> None:
    """`Transfer-Encoding: chunked` (what a client sends for a streamed body): the chunks joined reach the
    API. A dropped body would be a claim with the defaults (404: no such interrupt), not this 422."""
    head = (
        f"POST /api/v1/interrupts/i-1/claim HTTP/1.1\r\nHost: 127.0.0.1:{server}\r\nAuthorization: Bearer {TOKEN}\r\n"
        "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
    )
    chunks = b'9;ext=1\r\n{"leaseSe\r\nA\r\nconds": 1}\r\n0\r\nX-Trailer: t\r\n\r\n'
    status, body = _raw(server, head.encode() + chunks)
    assert status == 422 and "leaseSeconds" in body["message"], body
