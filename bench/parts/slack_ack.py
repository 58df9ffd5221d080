"""Benchmark of the Slack app's ack on the embedded local stack (moto + our handlers): how long
`POST /slack/interactions` takes to answer a signed button click (Slack's limit is 3 s), and how long
until the worker, after the ack, has answered and updated the message (a fake Slack API on 127.0.0.1
records the `response_url` post). The first click is the function's cold start; the rest are warm.

`--cold` measures instead what a cold container of `slack_interactions` spends in Python before its
first ack: a fresh interpreter (bytecode compiled first, tracing off, as deployed) imports the handler,
builds its service and answers one signed click, with the replay guard and the worker queue in memory
(the first request's two AWS calls are the same cold or warm). `--baseline <git rev>` measures that
revision's handler too (exported with `git archive`), side by side. Wall and CPU time, median of
`--samples` interpreters; on a shared machine CPU is the figure to compare.

Usage: uv run python bench/parts/slack_ack.py [--samples 20] [--json]
       uv run python bench/parts/slack_ack.py --cold [--samples 7] [--baseline <rev>]
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

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # tests.fakes.slack_api

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


ROOT = Path(__file__).resolve().parents[2]
COLD_ENV = {
    "BATON_TABLE_NAME": "bench",
    "BATON_TOPIC_ARN": "arn:aws:sns:us-east-1:123456789012:bench",  # what older handlers' wiring required
    "BATON_STATE_MACHINE_ARN": "arn:aws:states:us-east-1:123456789012:stateMachine:bench",
    "AWS_DEFAULT_REGION": "us-east-1",
    "AWS_ACCESS_KEY_ID": "bench",
    "AWS_SECRET_ACCESS_KEY": "bench",
    "POWERTOOLS_TRACE_DISABLED": "true",
    "SLACK_SIGNING_SECRET": SECRET,
    "BATON_SLACK_OPERATORS": json.dumps({"U0BENCH": "bench@example.com"}),
}
# One cold container: import the handler, then its first request (the service built on it).
COLD_CODE = """
import json, sys, time, importlib.util
from types import SimpleNamespace
t, c = time.perf_counter(), time.process_time()
spec = importlib.util.spec_from_file_location("handler", sys.argv[1])
handler = importlib.util.module_from_spec(spec)
spec.loader.exec_module(handler)
t1, c1 = time.perf_counter(), time.process_time()
service = handler._service()
class Memory:
    jobs = []
    def first_use(self, signature, *, expires_at): return True
    def submit(self, job): self.jobs.append(job)
service._replay = service._jobs = Memory()
event = json.loads(sys.argv[2])
context = SimpleNamespace(function_name="slack_interactions", memory_limit_in_mb=512, aws_request_id="bench",
                          invoked_function_arn="arn:aws:lambda:us-east-1:123456789012:function:slack_interactions")
reply = handler.lambda_handler(event, context)
t2, c2 = time.perf_counter(), time.process_time()
assert reply["statusCode"] == 200 and len(Memory.jobs) == 1, reply
print(json.dumps({"import": [t1 - t, c1 - c], "first_click": [t2 - t1, c2 - c1], "total": [t2 - t, c2 - c],
                  "modules": len(sys.modules), "pydantic": "pydantic" in sys.modules}))
"""


def _cold_event() -> str:
    payload = {
        "type": "block_actions",
        "user": {"id": "U0BENCH"},
        "response_url": "https://hooks.slack.test/bench",
        "actions": [{"action_id": "baton_option_0", "value": json.dumps({"r": "bench-run", "i": "q1", "o": 0})}],
    }
    body, headers = _signed(payload)
    return json.dumps({"body": body.decode(), "headers": headers, "isBase64Encoded": False})


def _cold_once(tree: Path) -> dict[str, Any]:
    import subprocess

    env = {**os.environ, **COLD_ENV, "PYTHONPATH": str(tree / "layers" / "baton" / "python")}
    handler = str(tree / "functions" / "slack_interactions" / "handler.py")
    done = subprocess.run(
        [sys.executable, "-c", COLD_CODE, handler, _cold_event()],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def _compiled(tree: Path) -> None:
    """Bytecode for the tree and the libraries a handler imports (what the bootstrap and the layer ship)."""
    import compileall
    import sysconfig

    for folder in (tree / "layers", tree / "functions", Path(sysconfig.get_paths()["purelib"])):
        compileall.compile_dir(str(folder), quiet=1, workers=1)


def cold(samples: int, baseline: str | None, as_json: bool) -> None:
    import subprocess

    trees = {"this tree": ROOT}
    if baseline:
        target = Path(tempfile.mkdtemp(prefix="baton-bench-slack-base-"))
        archive = subprocess.run(["git", "archive", baseline], cwd=ROOT, capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(target)], input=archive, check=True)
        trees[f"baseline {baseline}"] = target
    figures: dict[str, dict[str, Any]] = {}
    for label, tree in trees.items():
        _compiled(tree)
        runs = [_cold_once(tree) for _ in range(samples)]
        figures[label] = {
            part: {
                "wall_ms": round(statistics.median(r[part][0] for r in runs) * 1000, 1),
                "cpu_ms": round(statistics.median(r[part][1] for r in runs) * 1000, 1),
            }
            for part in ("import", "first_click", "total")
        } | {"modules": runs[0]["modules"], "pydantic": runs[0]["pydantic"]}
    if as_json:
        print(json.dumps(figures))
        return
    print(f"slack_interactions cold start in Python, median of {samples} fresh interpreters, bytecode compiled:")
    for label, f in figures.items():
        print(
            f"  {label:<22} import {f['import']['cpu_ms']:7.1f} ms CPU ({f['import']['wall_ms']:.1f} wall) · "
            f"first click {f['first_click']['cpu_ms']:7.1f} ms CPU ({f['first_click']['wall_ms']:.1f} wall) · "
            f"total {f['total']['cpu_ms']:7.1f} ms CPU · {f['modules']} modules, pydantic loaded: {f['pydantic']}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=20)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--cold", action="store_true", help="the handler's cold start in fresh interpreters")
    parser.add_argument("--baseline", help="with --cold: also measure this git revision's handler")
    args = parser.parse_args()
    if args.cold:
        cold(args.samples, args.baseline, args.json)
        return
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
