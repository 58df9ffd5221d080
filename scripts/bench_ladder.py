"""How on time does a deadline ladder walk? On the embedded local stack (moto runs the timer's Waits for
real), `--gates` ask gates with a ladder (remind at `--remind`, escalate at `--escalate`, a default at the
deadline) start together and nobody answers; the reconciler is pushed out of the way, so only the timers
act. For each step: how long after its due time (the task's entry + the step's seconds; the deadline)
its event was recorded, and how many runs went on with the default.

Usage: uv run python scripts/bench_ladder.py [--gates 8] [--timeout 12] [--remind 2] [--escalate 4]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from datetime import timedelta
from pathlib import Path

import boto3

from baton.ids import parse_iso
from baton.local.stack import LocalStack


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gates", type=int, default=8)
    parser.add_argument("--timeout", type=int, default=12)
    parser.add_argument("--remind", type=int, default=2)
    parser.add_argument("--escalate", type=int, default=4)
    args = parser.parse_args()
    ladder = {
        "remind_after": args.remind,
        "escalate_after": args.escalate,
        "escalate_to": ["console"],
        "on_timeout": {"default": {"approved": "no"}},
    }
    stack = LocalStack(api_port=0, state_dir=Path(tempfile.mkdtemp()), data="off")
    stack.schedule_overrides = {"reconcile": 3600, "interrupt_sweeper": 3600}  # only the timers act
    stack.start()
    try:
        from baton.runtime.wiring import services

        svc = services()
        sfn = boto3.client("stepfunctions")
        started = [
            svc.runs.start(
                "human_pause",
                {"prompt": "x", "timeout_seconds": args.timeout, "ladder": ladder},
                run_id=f"ld-{n}",
                caller="op",
            )
            for n in range(args.gates)
        ]
        time.sleep(args.timeout + 4)
        late: dict[str, list[float]] = {"reminder_sent": [], "escalated": [], "timed_out_default": []}
        succeeded = 0
        for run in started:
            history = sfn.get_execution_history(executionArn=run.execution_arn or "", maxResults=1000)["events"]
            entered = next(e["timestamp"] for e in history if e["type"] == "TaskStateEntered")
            wait = svc.core.store.get_wait(run.run_id, "approve")
            assert wait is not None and wait.deadline is not None
            due = {
                "reminder_sent": entered + timedelta(seconds=args.remind),
                "escalated": entered + timedelta(seconds=args.escalate),
                "timed_out_default": parse_iso(wait.deadline),
            }
            for event in svc.core.store.list_events(run.run_id, limit=500):
                if event.type in due:
                    late[event.type].append((parse_iso(event.at) - due[event.type]).total_seconds())
            succeeded += sfn.describe_execution(executionArn=run.execution_arn or "")["status"] == "SUCCEEDED"
        print(f"gates={args.gates} timeout={args.timeout}s remind={args.remind}s escalate={args.escalate}s")
        for step, values in late.items():
            if values:
                print(
                    f"{step}: {len(values)}/{args.gates} recorded, after due: median "
                    f"{statistics.median(values):.3f} s, max {max(values):.3f} s"
                )
            else:
                print(f"{step}: none recorded")
        print(f"runs that went on with the default: {succeeded}/{args.gates}")
    finally:
        stack.stop()


if __name__ == "__main__":
    main()
