"""A fake Slack: its Web API (`/api/<method>`) and response URLs (`/response/<id>`) on 127.0.0.1, every POST
recorded, every call answered `ok` (the e2e and integration tests of the Slack app point SLACK_API_URL here)."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs


class FakeSlack:
    """Slack's Web API and its response URLs on 127.0.0.1: every POST recorded, every call `ok`."""

    def __init__(self) -> None:
        self.posts: list[tuple[str, dict[str, Any]]] = []
        self._lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0)).decode()
                if self.headers.get("Content-Type", "").startswith("application/json"):
                    body = json.loads(raw or "{}")
                else:
                    body = {k: v[-1] for k, v in parse_qs(raw).items()}
                with fake._lock:
                    fake.posts.append((self.path, body))
                data = json.dumps({"ok": True, "ts": "1700000000.000100", "channel": "C0BATON"}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def to(self, path: str) -> list[dict[str, Any]]:
        with self._lock:
            return [body for p, body in self.posts if p == path]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
