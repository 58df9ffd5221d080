"""Baton's benchmark: prints figures, asserts nothing about speed (targets live here, not in tests).

  local-stack startup        seconds from LocalStack.start() to a ready API (in this process)
  pause→resume round trip    resume request sent → execution SUCCEEDED (median, p95 over N runs)
  API handler cold import    `import functions.api.handler` in a fresh interpreter (median of 5)

Usage: uv run python scripts/bench.py [--runs 50]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def percentile(values: list[float], pct: float) -> float:
    ordered = sorted(values)
    index = max(0, min(len(ordered) - 1, round(pct / 100 * len(ordered) + 0.5) - 1))
    return ordered[index]


def cold_import_seconds(samples: int = 5) -> list[float]:
    code = (
        "import time, sys; t = time.perf_counter(); sys.path.insert(0, '.');"
        "import functions.api.handler; print(time.perf_counter() - t)"
    )
    env_prefix = {"BATON_TABLE_NAME": "bench", "AWS_DEFAULT_REGION": "us-east-1"}
    import os

    out = []
    for _ in range(samples):
        result = subprocess.run(
            [sys.executable, "-c", code],
            cwd=ROOT,
            capture_output=True,
            text=True,
            env={**os.environ, **env_prefix},
            check=True,
        )
        out.append(float(result.stdout.strip().splitlines()[-1]))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=50, help="pause→resume round trips to measure (default 50)")
    args = parser.parse_args()

    imports = cold_import_seconds()
    print(f"API handler cold import      median {statistics.median(imports) * 1000:7.1f} ms  (5 fresh interpreters)")

    import boto3

    from baton.client.sdk import Client
    from baton.local.stack import LocalStack

    with tempfile.TemporaryDirectory() as state_dir:
        stack = LocalStack(api_port=0, state_dir=Path(state_dir))
        info = stack.start()
        print(f"local-stack startup          {info.startup_seconds:7.2f} s")
        try:
            sfn = boto3.client("stepfunctions")
            client = Client(info.api_url, info.token)
            round_trips: list[float] = []
            for n in range(args.runs):
                run_id = f"bench-{n}-{int(time.time())}"
                run = client.start_run(
                    "human_pause", {"prompt": "bench", "timeout_seconds": 120, "notify": ["email"]}, run_id=run_id
                )
                while client.get_run(run_id).status != "paused_waiting_human":
                    time.sleep(0.005)
                started = time.perf_counter()
                client.resume(run_id, {"ok": True})
                while sfn.describe_execution(executionArn=str(run.execution_arn))["status"] != "SUCCEEDED":
                    time.sleep(0.002)
                round_trips.append(time.perf_counter() - started)
                print(f"\r  round trips: {n + 1}/{args.runs}", end="", file=sys.stderr, flush=True)
            print(file=sys.stderr)
            print(
                f"pause→resume round trip      median {statistics.median(round_trips) * 1000:7.1f} ms   "
                f"p95 {percentile(round_trips, 95) * 1000:7.1f} ms   (n={len(round_trips)}, resume request → SUCCEEDED)"
            )
        finally:
            stack.stop()


if __name__ == "__main__":
    main()
