"""Local stand-in for API Gateway: HTTP requests on 127.0.0.1 become REST-API proxy events for the
same API handler that runs in Lambda, and proxy results become HTTP responses."""

from __future__ import annotations

import base64
import json
import uuid
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

InvokeApi = Callable[[dict[str, Any]], dict[str, Any]]


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


def make_server(host: str, port: int, invoke_api: InvokeApi) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        server_version = "BatonLocal/1"
        protocol_version = "HTTP/1.1"

        def _handle(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            headers = {k: v for k, v in self.headers.items()}
            event = to_proxy_event(self.command, self.path, headers, body, self.client_address[0])
            try:
                result = invoke_api(event)
            except Exception as err:  # the handler crashed: API Gateway answers 502
                result = {
                    "statusCode": 502,
                    "body": json.dumps({"error": "bad_gateway", "message": str(err)}),
                    "headers": {"Content-Type": "application/json"},
                }
            payload = result.get("body") or ""
            data = base64.b64decode(payload) if result.get("isBase64Encoded") else payload.encode()
            self.send_response(int(result.get("statusCode", 200)))
            out_headers = dict(result.get("headers") or {})
            for key, values in (result.get("multiValueHeaders") or {}).items():
                out_headers.setdefault(key, values[-1] if values else "")
            for key, value in out_headers.items():
                if key.lower() not in ("content-length", "connection"):
                    self.send_header(key, str(value))
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = _handle

        def log_message(self, format: str, *args: Any) -> None:
            pass  # requests are visible in the events; keep the console for notifications

    class Server(ThreadingHTTPServer):
        request_queue_size = 128  # the default backlog of 5 resets bursts of concurrent clients

    server = Server((host, port), Handler)
    server.daemon_threads = True
    return server
