"""How on time is the answer nobody gives? On the embedded local stack (moto runs the timers' Step Functions
Waits for real), three sets start together and nobody answers; the reconciler is pushed out of the way, so
only the timers act:

  deadline          `--gates` human_pause gates with `--timeout`: each task's ending (expected: TaskFailed
                    BatonDeadlinePassed, never TaskTimedOut), how long after Baton's deadline it came, and
                    the margin left before Step Functions' own TimeoutSeconds (entered + timeout +
                    the grace, `baton.domain.deadline.task_timeout_seconds`)
  gate ladder       `--gates` gates with a ladder (remind at `--remind`, escalate at `--escalate`, a default
                    at `--ladder-timeout`): each step's event after its due time (the task's entry + the
                    step's seconds; the deadline), and how many runs went on with the default
  question ladder   `--questions` async questions with the same ladder, a default at `--timeout`: each step
                    after its due time (the question's creation + the step's seconds), and how many ended
                    answered with the default (`timed_out_default`, nobody's answer)

(Formerly three scripts: bench_deadlines.py, bench_ladder.py, bench_ladder_questions.py.)

Usage: uv run python bench/parts/timers.py [--gates 8] [--questions 8] [--timeout 10] [--ladder-timeout 12]
       [--remind 2] [--escalate 4]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections import Counter
from datetime import timedelta
from pathlib import Path
from typing import Any

import boto3

from baton.contracts import AskRequest
from baton.domain.deadline import task_timeout_seconds
from baton.ids import parse_iso
from baton.local.stack import LocalStack

QUESTION_RUN = "bench-q"


def _history(sfn: Any, run: Any) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = sfn.get_execution_history(executionArn=run.execution_arn or "", maxResults=1000)[
        "events"
    ]
    return events


def _print_late(late: dict[str, list[float]], total: int) -> None:
    for step, seconds in late.items():
        if seconds:
            print(
                f"  {step:18} {len(seconds)}/{total} recorded, after due: median "
                f"{statistics.median(seconds):.3f} s, max {max(seconds):.3f} s"
            )
        else:
            print(f"  {step:18} none recorded")


def report_deadlines(svc: Any, sfn: Any, runs: list[Any], timeout: int) -> None:
    late, margin, endings = [], [], Counter[str]()
    for run in runs:
        wait = svc.core.store.get_wait(run.run_id, "approve")
        history = _history(sfn, run)
        entered = next(e["timestamp"] for e in history if e["type"] == "TaskStateEntered")
        ended = next(e for e in history if e["type"] in ("TaskFailed", "TaskTimedOut"))
        endings[f"{ended['type']} {ended.get('taskFailedEventDetails', {}).get('error', '')}".strip()] += 1
        assert wait is not None and wait.deadline is not None
        late.append((ended["timestamp"] - parse_iso(wait.deadline)).total_seconds())
        margin.append((entered + timedelta(seconds=task_timeout_seconds(timeout)) - ended["timestamp"]).total_seconds())
    print(f"deadline: gates={len(runs)} timeout={timeout}s endings={dict(endings)}")
    print(f"  after Baton's deadline: median {statistics.median(late):.3f} s, max {max(late):.3f} s")
    print(f"  before Step Functions' timeout: min {min(margin):.3f} s, median {statistics.median(margin):.3f} s")


def report_gate_ladder(svc: Any, sfn: Any, runs: list[Any], args: argparse.Namespace) -> None:
    late: dict[str, list[float]] = {"reminder_sent": [], "escalated": [], "timed_out_default": []}
    succeeded = 0
    for run in runs:
        entered = next(e["timestamp"] for e in _history(sfn, run) if e["type"] == "TaskStateEntered")
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
    steps = f"remind {args.remind}s, escalate {args.escalate}s, default at {args.ladder_timeout}s"
    print(f"gate ladder: gates={len(runs)}, {steps}")
    _print_late(late, len(runs))
    print(f"  runs that went on with the default: {succeeded}/{len(runs)}")


def report_question_ladder(svc: Any, posted: list[str], args: argparse.Namespace) -> None:
    offsets = {"reminder_sent": args.remind, "escalated": args.escalate, "timed_out_default": args.timeout}
    late: dict[str, list[float]] = {name: [] for name in offsets}
    events = svc.core.store.list_events(QUESTION_RUN, limit=10_000)
    defaulted = 0
    for iid in posted:
        question = svc.core.store.get_interaction(QUESTION_RUN, iid)
        assert question is not None
        created = parse_iso(question.created_at)
        defaulted += question.state.outcome == "timed_out_default"
        for e in events:
            ids = e.data.get("interaction_ids") or [e.data.get("interaction_id")]
            if e.type in offsets and iid in ids:
                late[e.type].append((parse_iso(e.at) - (created + timedelta(seconds=offsets[e.type]))).total_seconds())
    steps = f"remind {args.remind}s, escalate {args.escalate}s, default at {args.timeout}s"
    print(f"question ladder: {len(posted)} questions, {steps}")
    _print_late(late, len(posted))
    print(f"  answered with the default (timed_out_default, answered_by null): {defaulted}/{len(posted)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--gates", type=int, default=8)
    parser.add_argument("--questions", type=int, default=8)
    parser.add_argument("--timeout", type=int, default=10, help="plain gates' and questions' timeout (s)")
    parser.add_argument("--ladder-timeout", type=int, default=12, help="laddered gates' timeout (s)")
    parser.add_argument("--remind", type=int, default=2)
    parser.add_argument("--escalate", type=int, default=4)
    args = parser.parse_args()
    gate_ladder = {
        "remind_after": args.remind,
        "escalate_after": args.escalate,
        "escalate_to": ["console"],
        "on_timeout": {"default": {"approved": "no"}},
    }
    question_ladder = {
        "remind_after": args.remind,
        "escalate_after": args.escalate,
        "escalate_to": ["console"],
        "on_timeout": {"default": "no"},
    }
    stack = LocalStack(api_port=0, state_dir=Path(tempfile.mkdtemp()), data="off")
    stack.schedule_overrides = {"reconcile": 3600, "interrupt_sweeper": 3600}  # only the timers act
    stack.start()
    try:
        from baton.runtime.wiring import services

        svc = services()
        sfn = boto3.client("stepfunctions")
        plain = [
            svc.runs.start(
                "human_pause", {"prompt": "x", "timeout_seconds": args.timeout}, run_id=f"dl-{n}", caller="op"
            )
            for n in range(args.gates)
        ]
        laddered = [
            svc.runs.start(
                "human_pause",
                {"prompt": "x", "timeout_seconds": args.ladder_timeout, "ladder": gate_ladder},
                run_id=f"ld-{n}",
                caller="op",
            )
            for n in range(args.gates)
        ]
        svc.core.ensure_run(QUESTION_RUN)
        posted = [
            svc.questions.ask(
                QUESTION_RUN,
                AskRequest(
                    node=f"agent{n}",
                    question=f"Question {n}?",
                    options=["yes", "no"],
                    timeout_seconds=args.timeout,
                    **question_ladder,
                ),
                caller="bench",
            )["interaction_id"]
            for n in range(args.questions)
        ]
        time.sleep(max(args.timeout, args.ladder_timeout) + 4)
        report_deadlines(svc, sfn, plain, args.timeout)
        report_gate_ladder(svc, sfn, laddered, args)
        report_question_ladder(svc, posted, args)
    finally:
        stack.stop()


if __name__ == "__main__":
    main()
