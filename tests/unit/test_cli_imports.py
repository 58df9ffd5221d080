"""The CLI starts fast: `baton --help` and the read-only commands import neither boto3/botocore, moto,
nor the local stack. Each command runs in a fresh interpreter against a stand-in API (a stdlib HTTP
server in that interpreter answering 404), so the request and the error path are part of what is
checked. `bench/summary.py` prints how long the CLI takes against a bare Typer app."""

from __future__ import annotations

import pytest

from tests.probe import run_probe

_PROBE = """
import json, os, sys, threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class NotFound(BaseHTTPRequestHandler):
    def do_GET(self):
        body = json.dumps({"error": "not_found", "message": "no such run"}).encode()
        self.send_response(404)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


server = ThreadingHTTPServer(("127.0.0.1", 0), NotFound)
threading.Thread(target=server.serve_forever, daemon=True).start()
os.environ.update(BATON_API_URL=f"http://127.0.0.1:{server.server_address[1]}", BATON_TOKEN="local-token")
before = set(sys.modules)
from baton.cli.main import app

code = 0
try:
    app(json.loads(sys.argv[1]), prog_name="baton")
except SystemExit as exit_:
    code = exit_.code
server.shutdown()
print(json.dumps({"exit": code, "loaded": sorted(set(sys.modules) - before)}))
"""
# Not for a command that only reads through the API: the AWS SDK, the emulator, the local stack.
HEAVY = ("boto3", "botocore", "moto", "baton.local", "aws_cdk", "aws_lambda_powertools")


def _run(argv: list[str]) -> tuple[int, list[str]]:
    report, _ = run_probe(_PROBE, argv)
    return int(report["exit"] or 0), list(report["loaded"])


def _heavy(loaded: list[str]) -> list[str]:
    return [m for m in loaded if m in HEAVY or m.startswith(tuple(h + "." for h in HEAVY))]


def test_baton_help_imports_no_aws_sdk_no_emulator_no_local_stack_and_no_sdk() -> None:
    code, loaded = _run(["--help"])
    assert code == 0
    assert _heavy(loaded) == []
    assert not [m for m in loaded if m.startswith(("baton.client", "httpx", "pydantic"))], loaded


@pytest.mark.parametrize(
    "argv",
    [
        ["runs", "show", "r-1"],
        ["runs", "events", "r-1"],
        ["runs", "questions", "r-1"],
        ["workflow", "inspect", "s-1"],
        ["review", "show", "r-1"],
        ["dev", "--help"],
        ["synth", "--help"],
        ["redrive", "--help"],
    ],
)
def test_read_only_commands_import_no_aws_sdk_no_emulator_and_no_local_stack(argv: list[str]) -> None:
    code, loaded = _run(argv)
    if argv[-1] != "--help":
        # The request reached the stand-in API (the SDK and its HTTP client ran) and its 404 came back.
        assert code == 1 and "baton.client.transport" in loaded and "httpx" in loaded
    assert _heavy(loaded) == [], argv
