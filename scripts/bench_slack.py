"""Benchmark of the Slack app's ack on the embedded local stack (moto + our handlers): how long
`POST /slack/interactions` takes to answer a signed button click (Slack's limit is 3 s), and how long
until the worker, after the ack, has answered and updated the message (a fake Slack API on 127.0.0.1
records the `response_url` post). The first click is the function's cold start; the rest are warm.

Usage: uv run python scripts/bench_slack.py [--samples 20] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import httpx
from slack_sdk.signature import SignatureVerifier

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.fakes.slack_api

from tests.fakes.slack_api import FakeSlack

SECRET = "bench-signing-secret"


def _signed(payload: dict[str, Any]) -> tuple[bytes, dict[str, str]]:
    body = urlencode({"payload": json.dumps(payload)})
    ts = str(int(time.time()))
    signature = SignatureVerifier(SECRET).generate_signature(timestamp=ts, body=body) or ""
    return body.encode(), {
        "Content-Type": "application/x-www-form-urlencoded",
        "X-Slack-Request-Timestamp": ts,
        "X-Slack-Signature": signature,
    }


def _click(api: httpx.Client, slack: FakeSlack, n: int) -> tuple[float, float]:
    run_id = f"bench-{uuid.uuid4().hex[:10]}"
    asked = api.post(f"/api/runs/{run_id}/questions", json={"node": "n", "question": "Go?", "options": ["go", "stop"]})
    iid = asked.json()["interaction_id"]
    payload = {
        "type": "block_actions",
        "user": {"id": "U0BENCH"},
        "response_url": f"{slack.url}/response/{n}",
        "actions": [{"action_id": "baton_option_0", "value": json.dumps({"r": run_id, "i": iid, "o": 0})}],
    }
    body, headers = _signed(payload)
    started = time.perf_counter()
    response = api.post("/slack/interactions", content=body, headers=headers)
    acked = time.perf_counter() - started
    assert response.status_code == 200, response.text
    while not slack.to(f"/response/{n}"):
        if time.perf_counter() - started > 30:
            raise RuntimeError("the worker did not update the message in 30 s")
        time.sleep(0.005)
    return acked, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=20)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    slack = FakeSlack()
    os.environ.update(
        {
            "SLACK_SIGNING_SECRET": SECRET,
            "SLACK_BOT_TOKEN": "xoxb-bench",
            "SLACK_API_URL": f"{slack.url}/api/",
            "BATON_SLACK_OPERATORS": json.dumps({"U0BENCH": "bench@example.com"}),
        }
    )
    from baton.local.stack import LocalStack

    stack = LocalStack(api_port=0, state_dir=Path(tempfile.mkdtemp(prefix="baton-bench-slack-")), data="off")
    info = stack.start()
    stack.wait_for_workflows()
    try:
        with httpx.Client(base_url=info.api_url, headers={"Authorization": f"Bearer {info.token}"}, timeout=30) as api:
            samples = [_click(api, slack, n) for n in range(args.samples + 1)]
    finally:
        stack.stop()
        slack.close()
    (cold_ack, cold_done), warm = samples[0], samples[1:]
    acks = sorted(a for a, _ in warm)
    dones = sorted(d for _, d in warm)

    def p95(values: list[float]) -> float:
        return values[min(len(values) - 1, int(len(values) * 0.95))]

    figures = {
        "samples": len(warm),
        "cold_ack_ms": round(cold_ack * 1000, 1),
        "cold_updated_ms": round(cold_done * 1000, 1),
        "ack_median_ms": round(statistics.median(acks) * 1000, 1),
        "ack_p95_ms": round(p95(acks) * 1000, 1),
        "updated_median_ms": round(statistics.median(dones) * 1000, 1),
        "updated_p95_ms": round(p95(dones) * 1000, 1),
    }
    if args.json:
        print(json.dumps(figures))
        return
    print(f"Slack click on the local stack, {len(warm)} warm samples (+1 cold):")
    print(
        f"  ack (HTTP 200 to Slack)     cold {figures['cold_ack_ms']} ms · median {figures['ack_median_ms']} ms"
        f" · p95 {figures['ack_p95_ms']} ms"
    )
    print(
        f"  answered + message updated  cold {figures['cold_updated_ms']} ms · median {figures['updated_median_ms']} ms"
        f" · p95 {figures['updated_p95_ms']} ms"
    )


if __name__ == "__main__":
    main()
