"""How on time does an async question's ladder walk? On the embedded local stack (moto runs the timer's
Waits for real), `--questions` async questions with a ladder (remind at `--remind`, escalate at
`--escalate`, a default at their own `--timeout`) are posted together and nobody answers; the reconciler
is pushed out of the way, so only the interaction timers act. For each step: how long after its due time
(the question's creation + the step's seconds; its expiry) its event was recorded, and how many questions
ended answered with the default (`timed_out_default`, nobody's answer).

Usage: uv run python scripts/bench_ladder_questions.py [--questions 8] [--timeout 8] [--remind 2] [--escalate 4]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from datetime import timedelta
from pathlib import Path

from baton.domain.ladder import Ladder
from baton.ids import parse_iso
from baton.local.stack import LocalStack


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=8)
    parser.add_argument("--timeout", type=int, default=8)
    parser.add_argument("--remind", type=int, default=2)
    parser.add_argument("--escalate", type=int, default=4)
    args = parser.parse_args()
    ladder = Ladder(
        remind_after=args.remind, escalate_after=args.escalate, escalate_to=["console"], on_timeout={"default": "no"}
    )
    stack = LocalStack(api_port=0, state_dir=Path(tempfile.mkdtemp()), data="off")
    stack.schedule_overrides = {"reconcile": 3600, "interrupt_sweeper": 3600}  # only the timers act
    stack.start()
    try:
        from baton.runtime.wiring import services

        svc = services()
        svc.core.ensure_run("bench-q")
        posted = [
            svc.questions.ask(
                "bench-q",
                node=f"agent{n}",
                question=f"Question {n}?",
                options=["yes", "no"],
                caller="bench",
                timeout_seconds=args.timeout,
                ladder=ladder,
            )["interaction_id"]
            for n in range(args.questions)
        ]
        time.sleep(args.timeout + 4)
        offsets = {"reminder_sent": args.remind, "escalated": args.escalate, "timed_out_default": args.timeout}
        late: dict[str, list[float]] = {name: [] for name in offsets}
        events = svc.core.store.list_events("bench-q", limit=10_000)
        defaulted = 0
        for iid in posted:
            question = svc.core.store.get_interaction("bench-q", iid)
            assert question is not None
            created = parse_iso(question.created_at)
            defaulted += question.state.outcome == "timed_out_default"
            for e in events:
                ids = e.data.get("interaction_ids") or [e.data.get("interaction_id")]
                if e.type in offsets and iid in ids:
                    due = created + timedelta(seconds=offsets[e.type])
                    late[e.type].append((parse_iso(e.at) - due).total_seconds())
        steps = f"remind {args.remind}s, escalate {args.escalate}s, default at {args.timeout}s"
        print(f"{args.questions} questions, {steps}")
        for name, seconds in late.items():
            if seconds:
                print(
                    f"  {name:18} n={len(seconds):3}  late median {statistics.median(seconds):.2f}s  "
                    f"max {max(seconds):.2f}s"
                )
            else:
                print(f"  {name:18} n=  0")
        print(f"  answered with the default (timed_out_default, answered_by null): {defaulted}/{args.questions}")
    finally:
        stack.stop()


if __name__ == "__main__":
    main()
