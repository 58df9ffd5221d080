"""Local stand-in for API Gateway: HTTP requests on 127.0.0.1 become REST-API proxy events for the
same API handler that runs in Lambda, and proxy results become HTTP responses."""

from __future__ import annotations

import base64
import re
import sys
import uuid
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlsplit

from baton.local.origin_guard import FORBIDDEN_CODE, LoopbackOnly, error_body

if TYPE_CHECKING:
    from baton.local.inbox import InboxSite

InvokeApi = Callable[[dict[str, Any]], dict[str, Any]]
# Which function serves a path, as the deployed API's resources do: /mcp is the MCP server, the rest the API.
MCP_PATH = "/mcp"
SLACK_INTERACTIONS_PATH = "/slack/interactions"  # the Slack app's interaction URL (its own function, no auth)


def function_for_path(path: str) -> str:
    if path == SLACK_INTERACTIONS_PATH:
        return "slack_interactions"
    return "mcp" if path == MCP_PATH or path.startswith(MCP_PATH + "/") else "api"


MAX_REQUEST_BYTES = 1024 * 1024  # above the API's own body limit, so it answers 413 in its own words
READ_TIMEOUT_SECONDS = 30  # a client that announces more than it sends is dropped, not waited for
_HEX = re.compile(rb"[0-9a-fA-F]+")  # a chunk's size
_REFUSAL_CODES = {400: "bad_request", 408: "request_timeout", 413: "payload_too_large", 501: "not_implemented"}


class _Refused(Exception):
    """A request body refused before the API sees it: the status and error answered, the connection closed."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status, self.body = status, error_body(_REFUSAL_CODES[status], message)


def to_proxy_event(method: str, raw_path: str, headers: dict[str, str], body: bytes, source_ip: str) -> dict[str, Any]:
    parts = urlsplit(raw_path)
    multi_query = parse_qs(parts.query, keep_blank_values=True)
    text: str | None = None
    is_b64 = False
    if body:
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError:
            text, is_b64 = base64.b64encode(body).decode(), True
    return {
        "resource": parts.path,
        "path": parts.path,
        "httpMethod": method,
        "headers": headers,
        "multiValueHeaders": {k: [v] for k, v in headers.items()},
        "queryStringParameters": {k: v[-1] for k, v in multi_query.items()} or None,
        "multiValueQueryStringParameters": multi_query or None,
        "pathParameters": None,
        "stageVariables": None,
        "requestContext": {
            "requestId": str(uuid.uuid4()),
            "stage": "local",
            "httpMethod": method,
            "path": parts.path,
            "resourcePath": parts.path,
            "identity": {"sourceIp": source_ip},
        },
        "body": text,
        "isBase64Encoded": is_b64,
    }


class _Handler(BaseHTTPRequestHandler):
    invoke_api: InvokeApi  # set by make_server
    inbox: InboxSite | None = None  # the web inbox's files and sign-in (baton/local/inbox.py), under /inbox

    server_version = "BatonLocal/1"
    protocol_version = "HTTP/1.1"

    timeout = READ_TIMEOUT_SECONDS
    # TCP_NODELAY on each connection: the status line and headers go out in one write and the body
    # in the next, and with Nagle on, the body waits for the client's delayed ACK (~40 ms a response).
    disable_nagle_algorithm = True

    def _send_json(self, status: int, data: bytes, headers: dict[str, Any] | None = None) -> None:
        self.send_response(status)
        for key, value in (headers or {"Content-Type": "application/json"}).items():
            if key.lower() not in ("content-length", "connection"):
                self.send_header(key, str(value))
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        # http.server's own refusals (a malformed request line, headers too long) in the API's shape.
        self.close_connection = True
        self.request_version = "HTTP/1.1"  # unparsed requests default to 0.9, which has no status line
        reason = message or self.responses.get(code, ("error",))[0]
        self._send_json(code, error_body("bad_request" if code < 500 else "server_error", reason))

    def _read_chunked(self) -> bytes:
        """A `Transfer-Encoding: chunked` body (RFC 9112 7.1), as API Gateway reads one: the chunks
        joined, extensions and trailers dropped, the same size limit as a Content-Length body."""
        body = bytearray()
        while True:
            size_line = self.rfile.readline(1024)
            size_text = size_line.split(b";", 1)[0].strip()
            if not size_line.endswith(b"\n") or not _HEX.fullmatch(size_text):
                raise _Refused(400, "a chunk of the request body has no valid size line")
            size = int(size_text, 16)
            if size == 0:
                break
            if len(body) + size > MAX_REQUEST_BYTES:
                raise _Refused(413, f"request body is over the limit of {MAX_REQUEST_BYTES} bytes")
            chunk = self.rfile.read(size)
            if len(chunk) < size or self.rfile.readline(3) not in (b"\r\n", b"\n"):
                raise _Refused(400, "a chunk of the request body is shorter than its size")
            body += chunk
        for _ in range(100):  # trailer fields, up to the empty line that ends the message
            if self.rfile.readline(8192) in (b"\r\n", b"\n", b""):
                return bytes(body)
        raise _Refused(400, "the request body's trailer does not end")

    def _read_body(self) -> bytes:
        encoding = (self.headers.get("Transfer-Encoding") or "").strip().lower()
        if encoding == "chunked":  # it wins over a Content-Length (RFC 9112 6.3)
            return self._read_chunked()
        if encoding:
            raise _Refused(501, f"Transfer-Encoding {encoding[:40]!r} is not supported")
        raw = self.headers.get("Content-Length")
        if raw is None:
            return b""
        if not raw.isdigit():
            raise _Refused(400, f"Content-Length {raw[:40]!r} is not a length")
        length = int(raw)
        if length > MAX_REQUEST_BYTES:
            raise _Refused(413, f"request body is {length} bytes; the limit is {MAX_REQUEST_BYTES}")
        body = self.rfile.read(length) if length else b""
        if len(body) < length:  # the client closed (or timed out) before sending what it announced
            raise _Refused(400, "request body shorter than its Content-Length")
        return body

    def _handle(self) -> None:
        try:
            body = self._read_body()
        except (_Refused, TimeoutError) as err:
            refused = err if isinstance(err, _Refused) else _Refused(408, "request body not received in time")
            self.close_connection = True  # what is left of the body cannot be told from the next request
            self._send_json(refused.status, refused.body)
            return
        # Only the owner's programs: no other site's page, directly or by DNS rebinding (origin_guard.py).
        # Slack's requests come through a tunnel under its name, each signed by Slack (docs/channels.md, Slack).
        own = LoopbackOnly(self.connection.getsockname()[1])
        tunnelled = urlsplit(self.path).path == SLACK_INTERACTIONS_PATH
        refusal = own.refusal(self.headers.get("Host"), self.headers.get("Origin"), any_host=tunnelled)
        if refusal is not None:
            self._send_json(403, error_body(FORBIDDEN_CODE, refusal))
            return
        if self.inbox is not None and self.inbox.handles(self.path):
            site = self.inbox.handle(
                self.command,
                self.path,
                self.headers.get("Authorization") or "",
                cookie=self.headers.get("Cookie") or "",
                body=body,
            )
            self._send_json(site.status, site.body if self.command != "HEAD" else b"", site.headers)
            return
        event = to_proxy_event(self.command, self.path, dict(self.headers.items()), body, self.client_address[0])
        try:
            result = type(self).invoke_api(event)
        except Exception:  # the handler crashed: API Gateway answers 502 (the cause stays in the server)
            result = {"statusCode": 502, "body": error_body("bad_gateway", "the API handler failed").decode()}
        payload = result.get("body") or ""
        data = base64.b64decode(payload) if result.get("isBase64Encoded") else payload.encode()
        out_headers = dict(result.get("headers") or {})
        for key, values in (result.get("multiValueHeaders") or {}).items():
            out_headers.setdefault(key, values[-1] if values else "")
        self._send_json(int(result.get("statusCode", 200)), data, out_headers)

    def __getattr__(self, name: str) -> Any:
        # Every method (do_TRACE, do_QUERY, ...) goes to the API, which answers as API Gateway does (no route: 404).
        if name.startswith("do_"):
            return self._handle
        raise AttributeError(name)

    def log_message(self, format: str, *args: Any) -> None:
        pass  # requests are visible in the events; keep the console for notifications


def make_server(host: str, port: int, invoke_api: InvokeApi, inbox: InboxSite | None = None) -> ThreadingHTTPServer:
    handler = type("Handler", (_Handler,), {"invoke_api": staticmethod(invoke_api), "inbox": inbox})

    class Server(ThreadingHTTPServer):
        request_queue_size = 128  # the default backlog of 5 resets bursts of concurrent clients

        def handle_error(self, request: Any, client_address: Any) -> None:
            # A client gone before its answer (a long-poll given up, Ctrl-C): API Gateway drops it too, no error
            if isinstance(sys.exc_info()[1], ConnectionError):
                return
            super().handle_error(request, client_address)

    server = Server((host, port), handler)
    server.daemon_threads = True
    return server
