"""The MCP server's figures: prints them, asserts nothing about speed.

  mcp handler cold import    `import functions.mcp.handler` in a fresh interpreter (median of 3)
  ask_user_async             one tool call over HTTP with the SDK client (median, p95 of N)
  await_answers (pending)    how long a call is held with a question open, at the deployed bound (20 s
                             unless --bound is smaller): each sample is one call, wall clock at the client

Usage: uv run python bench/parts/mcp_door.py [--calls 20] [--waits 2] [--bound 20]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def cold_import_seconds(samples: int = 3) -> list[float]:
    code = (
        "import time, sys; t = time.perf_counter(); sys.path.insert(0, '.');"
        "import functions.mcp.handler; print(time.perf_counter() - t)"
    )
    env = {**os.environ, "BATON_TABLE_NAME": "bench", "AWS_DEFAULT_REGION": "us-east-1"}
    out = []
    for _ in range(samples):
        done = subprocess.run(
            [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, env=env, check=True
        )
        out.append(float(done.stdout.strip().splitlines()[-1]))
    return out


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * len(ordered) + 0.5) - 1)]


async def measure(api_url: str, token: str, calls: int, waits: int) -> tuple[list[float], list[float], list[float]]:
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    from baton.api.auth import agent_token

    run = f"bench-mcp-{int(time.time())}"
    headers = {"Authorization": f"Bearer {agent_token(token, run)}"}
    asks, held, waited = [], [], []
    async with (
        create_mcp_http_client(headers=headers) as http,
        Client(streamable_http_client(f"{api_url}/mcp", http_client=http)) as client,
    ):
        for n in range(calls):
            started = time.perf_counter()
            await client.call_tool("ask_user_async", {"question": f"bench question {n}?"})
            asks.append(time.perf_counter() - started)
        for _ in range(waits):
            started = time.perf_counter()
            result = await client.call_tool("await_answers", {"timeout_seconds": 3600})
            held.append(time.perf_counter() - started)
            waited.append(float((result.structured_content or {}).get("waited_s", 0)))
    return asks, held, waited


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=20, help="ask_user_async calls to time (default 20)")
    parser.add_argument("--waits", type=int, default=2, help="pending await_answers calls to time (default 2)")
    parser.add_argument("--bound", type=float, default=20.0, help="the per-call bound to run with (default 20 s)")
    args = parser.parse_args()

    imports = cold_import_seconds()
    print(f"mcp handler cold import      median {statistics.median(imports) * 1000:7.1f} ms  (3 fresh interpreters)")

    import anyio

    os.environ["BATON_MCP_MAX_WAIT_SECONDS"] = str(args.bound)
    from baton.local.stack import LocalStack

    with tempfile.TemporaryDirectory() as state_dir:
        stack = LocalStack(api_port=0, state_dir=Path(state_dir))
        info = stack.start()
        try:
            asks, held, waited = anyio.run(measure, info.api_url, info.token, args.calls, args.waits)
        finally:
            stack.stop()
    print(
        f"ask_user_async over HTTP     median {statistics.median(asks) * 1000:7.1f} ms  p95 {p95(asks) * 1000:7.1f} ms"
        f"  ({len(asks)} calls)"
    )
    print(
        f"await_answers held (pending) max {max(held):6.2f} s   server waited_s max {max(waited):5.1f} s"
        f"  bound {args.bound:g} s  ({len(held)} calls: {', '.join(f'{h:.2f}' for h in held)})"
    )


if __name__ == "__main__":
    main()
