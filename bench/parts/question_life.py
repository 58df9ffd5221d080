"""Benchmark of async questions and the await gate on the embedded local stack (moto + our handlers):

- answer → gate resumed latency (median, p95): from just before `POST .../answer` to (a) the answer's
  HTTP response (the task token has been sent by then) and (b) the execution having moved past the gate
  (SUCCEEDED: the gate is the workflow's last Task);
- how many AWS calls one question's whole life costs (ask by the demo_agent Lambda, gate park + re-check,
  answer + release, drain), counted with a botocore `before-call` event hook on every client, attributed
  to the Lambda handler that made them. Step Functions' own Lambda invokes are listed apart (on AWS they
  are state transitions, not calls Baton makes); the run's start and the bench's polling are excluded;
- the DynamoDB read and write capacity units of that life, from the items' sizes by DynamoDB's rules
  (`parts/capacity.py`: moto's own ConsumedCapacity figures are fixed ones).

Usage: uv run python bench/parts/question_life.py [--samples 30] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from life_meter import COUNT, label, start_stack


def _percentile(values: list[float], pct: float) -> float:
    ordered = sorted(values)
    k = max(0, min(len(ordered) - 1, round(pct / 100 * (len(ordered) - 1))))
    return ordered[k]


@dataclass
class _Samples:
    response_ms: list[float] = field(default_factory=list)
    resumed_ms: list[float] = field(default_factory=list)
    per_question: list[Counter[tuple[str, str]]] = field(default_factory=list)
    capacity: list[dict[str, Any]] = field(default_factory=list)


def _sample(client: Any, sfn: Any, n: int, samples: _Samples) -> None:
    """One question's whole life: start, park, ask, answer, resume, drain; its timings and AWS calls."""
    run_id = f"bench-q-{n}-{int(time.time() * 1000)}"
    COUNT.begin()
    run = client.start_run(
        "await_answers",
        {"node": "draft", "from": "draft", "timeout_seconds": 120, "questions": [{"question": f"Q{n}?"}]},
        run_id=run_id,
    )
    deadline = time.monotonic() + 30
    while client.get_run(run_id)["status"] != "paused_waiting_human":
        if time.monotonic() > deadline:
            raise RuntimeError(f"{run_id} never parked")
        time.sleep(0.01)
    [question] = client.pending_questions(run_id)
    t0 = time.perf_counter()
    result = client.answer(run_id, question["interaction_id"], f"A{n}")
    t1 = time.perf_counter()
    label("bench")
    while sfn.describe_execution(executionArn=run["execution_arn"])["status"] == "RUNNING":
        time.sleep(0.002)
    t2 = time.perf_counter()
    label(None)
    assert result["resumed"] is True, result
    messages = client.drain_messages(run_id, "draft")
    assert len(messages) == 1
    time.sleep(0.05)  # let the SNS → console delivery settle before closing the count
    COUNT.end()
    assert COUNT.meter is not None
    samples.capacity.append(COUNT.meter.figures())
    samples.response_ms.append((t1 - t0) * 1000)
    samples.resumed_ms.append((t2 - t0) * 1000)
    samples.per_question.append(COUNT.life_calls())


def _run_samples(count: int) -> _Samples:
    stack, info = start_stack("baton-bench-q-")
    import boto3

    from baton.client.sdk import Client

    sfn = boto3.client("stepfunctions")  # the bench's own polling: made before counting, labelled "bench"
    client = Client(info.api_url, info.token)
    samples = _Samples()
    try:
        for n in range(count):
            _sample(client, sfn, n, samples)
    finally:
        client.close()
        stack.stop()
    return samples


def _figures(count: int, samples: _Samples) -> dict[str, Any]:
    life = samples.per_question[-1]
    by_phase: Counter[str] = Counter()
    by_operation: Counter[str] = Counter()
    for (who, op), calls in life.items():
        by_phase[who] += calls
        by_operation[op] += calls
    response_ms, resumed_ms = samples.response_ms, samples.resumed_ms
    return {
        "samples": count,
        "answer_response_ms": {
            "median": round(statistics.median(response_ms), 1),
            "p95": round(_percentile(response_ms, 95), 1),
        },
        "answer_to_gate_resumed_ms": {
            "median": round(statistics.median(resumed_ms), 1),
            "p95": round(_percentile(resumed_ms, 95), 1),
        },
        "aws_calls_per_question_life": {
            "baton_total": sum(c for (who, _), c in life.items() if who != "stepfunctions-engine"),
            "by_phase": dict(sorted(by_phase.items())),
            "by_operation": dict(sorted(by_operation.items())),
            "same_every_sample": all(sum(q.values()) == sum(life.values()) for q in samples.per_question),
        },
        "capacity_units_per_question_life": samples.capacity[-1],
    }


def _print_figures(figures: dict[str, Any]) -> None:
    calls = figures["aws_calls_per_question_life"]
    print(f"async questions: {figures['samples']} samples on the local stack (moto, handlers in-process)")
    r, g = figures["answer_response_ms"], figures["answer_to_gate_resumed_ms"]
    print(f"  answer → HTTP response (token sent)     median {r['median']:7.1f} ms   p95 {r['p95']:7.1f} ms")
    print(f"  answer → gate resumed (execution ended) median {g['median']:7.1f} ms   p95 {g['p95']:7.1f} ms")
    print(f"  AWS calls, one question's whole life: {calls['baton_total']} by Baton code")
    for who, count in calls["by_phase"].items():
        print(f"    {who:<32} {count}")
    print("  by operation:")
    for op, count in calls["by_operation"].items():
        print(f"    {op:<32} {count}")
    units = figures["capacity_units_per_question_life"]
    print(
        "  DynamoDB capacity units, one question's whole life:"
        f" {units['read_units']} read, {units['write_units']} write"
    )
    for op, count in {**units["reads_by_operation"], **units["writes_by_operation"]}.items():
        print(f"    {op:<32} {count}")
    if units["filtered_queries"]:
        print(f"    ({units['filtered_queries']} filtered Query calls: measured by the items they returned)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=30)
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    figures = _figures(args.samples, _run_samples(args.samples))
    if args.json:
        print(json.dumps(figures, indent=2))
    else:
        _print_figures(figures)


if __name__ == "__main__":
    main()
