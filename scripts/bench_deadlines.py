"""How late does a gate's timer end its pause? On the embedded local stack (moto runs the timer's
Step Functions Wait for real), `--gates` ask gates with a `--timeout` start together and nobody answers;
the reconciler is pushed out of the way, so only the timers end them. For each gate: the task's ending
(expected: TaskFailed BatonDeadlinePassed, never TaskTimedOut), how long after Baton's deadline it
came, and the margin left before Step Functions' own TimeoutSeconds (entered + timeout).

Usage: uv run python scripts/bench_deadlines.py [--gates 8] [--timeout 10]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections import Counter
from datetime import timedelta
from pathlib import Path

import boto3

from baton.ids import parse_iso
from baton.local.stack import LocalStack


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gates", type=int, default=8)
    parser.add_argument("--timeout", type=int, default=10)
    args = parser.parse_args()
    stack = LocalStack(api_port=0, state_dir=Path(tempfile.mkdtemp()), data="off")
    stack.schedule_overrides = {"reconcile": 3600, "interrupt_sweeper": 3600}  # only the timers end pauses
    stack.start()
    try:
        from baton.runtime.wiring import services

        svc = services()
        sfn = boto3.client("stepfunctions")
        runs = [
            svc.runs.start(
                "human_pause", {"prompt": "x", "timeout_seconds": args.timeout}, run_id=f"dl-{n}", caller="op"
            )
            for n in range(args.gates)
        ]
        time.sleep(args.timeout + 4)
        late, margin, endings = [], [], Counter[str]()
        for run in runs:
            wait = svc.core.store.get_wait(run.run_id, "approve")
            history = sfn.get_execution_history(executionArn=run.execution_arn or "", maxResults=1000)["events"]
            entered = next(e["timestamp"] for e in history if e["type"] == "TaskStateEntered")
            ended = next(e for e in history if e["type"] in ("TaskFailed", "TaskTimedOut"))
            endings[f"{ended['type']} {ended.get('taskFailedEventDetails', {}).get('error', '')}".strip()] += 1
            assert wait is not None and wait.deadline is not None
            late.append((ended["timestamp"] - parse_iso(wait.deadline)).total_seconds())
            margin.append((entered + timedelta(seconds=args.timeout) - ended["timestamp"]).total_seconds())
        print(f"gates={args.gates} timeout={args.timeout}s endings={dict(endings)}")
        print(f"after Baton's deadline: median {statistics.median(late):.3f} s, max {max(late):.3f} s")
        print(f"before Step Functions' timeout: min {min(margin):.3f} s, median {statistics.median(margin):.3f} s")
    finally:
        stack.stop()


if __name__ == "__main__":
    main()
