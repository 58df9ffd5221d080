"""The answer's critical path against its floors, measured side by side in one run on one local stack
(moto as AWS, Baton's handlers in-process):

- bare:       `SendTaskSuccess` of a parked token -> the execution SUCCEEDED (what Step Functions costs);
- one write:  one conditional DynamoDB write, then the send (the floor of any correct resume);
- resume:     `POST /api/runs/{id}/resume` of a plain pause (human_pause) -> SUCCEEDED;
- last answer: `POST .../answer` of an await gate's only question (await_answers) -> SUCCEEDED.

Each is timed from just before the request to the execution reaching SUCCEEDED (median, p95 over n
samples), then divided by the floors. Beside the wall times, two CPU figures that do not depend on how
loaded the machine is: the CPU time of the thread that made the request (the API handler's, for Baton's;
the bench's own, for the floors) and the whole process's CPU time from the request to SUCCEEDED (the
Step Functions engine's work included). With `--history N` each Baton sample's run first has N rounds
asked and answered on it (a question at another node, answered; untimed), so the figures show whether
the path stays flat as a run's history grows. The AWS calls of each Baton request are counted with botocore
`before-call` hooks (those before the send listed apart), and the DynamoDB items its reads read with
`after-call` hooks (a Query's ScannedCount): counts that do not depend on the machine's load. Figures
are printed, never asserted.

Usage: uv run python scripts/bench_critical_path.py [--samples 50] [--history 0] [--quick] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable

SEND = "stepfunctions.SendTaskSuccess"
_counting = threading.local()


@dataclass
class _Calls:
    """The AWS calls of the request being counted (the API handler's thread), in order."""

    current: list[str] = field(default_factory=list)
    per_operation: dict[str, list[str]] = field(default_factory=dict)
    items: int = 0  # DynamoDB items the counted request's reads read
    items_per_operation: dict[str, list[int]] = field(default_factory=dict)

    def hook(self, model: Any, **_: Any) -> None:
        if getattr(_counting, "on", False):
            self.current.append(f"{model.service_model.service_name}.{model.name}")

    def after(self, model: Any, parsed: Any = None, **_: Any) -> None:
        if getattr(_counting, "on", False) and isinstance(parsed, dict):
            if model.name == "Query":
                self.items += int(parsed.get("ScannedCount", parsed.get("Count", 0)))
            elif model.name == "GetItem":
                self.items += 1 if parsed.get("Item") else 0
            elif model.name == "BatchGetItem":
                self.items += sum(len(found) for found in (parsed.get("Responses") or {}).values())

    def start(self) -> None:
        self.current, self.items = [], 0

    def keep(self, name: str, calls: list[str]) -> None:
        self.per_operation[name] = calls
        self.items_per_operation.setdefault(name, []).append(self.items)


CALLS = _Calls()
API_CPU: list[float] = []  # CPU seconds of each counted API request, in the handler's own thread


def _install_counter() -> None:
    """Every botocore client created from now on reports its calls to CALLS (only while counting)."""
    import botocore.session

    original = botocore.session.Session.create_client

    def create_client(self: Any, *args: Any, **kwargs: Any) -> Any:
        client = original(self, *args, **kwargs)
        client.meta.events.register("before-call.*.*", CALLS.hook)
        client.meta.events.register("after-call.dynamodb.*", CALLS.after)
        return client

    botocore.session.Session.create_client = create_client  # type: ignore[method-assign]


def _count_api_calls(stack: Any) -> None:
    original = stack.dispatcher.invoke

    def invoke(function_name: str, event: Any) -> Any:
        if function_name != "api":
            return original(function_name, event)
        _counting.on = True
        started = time.thread_time()
        try:
            return original(function_name, event)
        finally:
            API_CPU.append(time.thread_time() - started)
            _counting.on = False

    stack.dispatcher.invoke = invoke


def _percentile(values: list[float], pct: float) -> float:
    ordered = sorted(values)
    return ordered[max(0, min(len(ordered) - 1, round(pct / 100 * (len(ordered) - 1))))]


def _output(wait: Any) -> dict[str, Any]:
    """What Baton's resume sends for a plain pause (the state machine reads these fields)."""
    at = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime())
    return {
        "interaction_id": wait.interaction_ids[0],
        "node": wait.gate,
        "answers": {"ok": True},
        "answered_by": "bench",
        "answered_at": at,
    }


HISTORY_NODE = "history"  # outside every measured gate's scope (the await gate waits on "draft")


class _Bench:
    def __init__(self, client: Any, sfn: Any, db: Any, store: Any, table: str, *, history: int = 0) -> None:
        self.client, self.sfn, self.db, self.store, self.table = client, sfn, db, store, table
        self.n = 0
        self.history = history
        self.cpu: dict[str, list[tuple[float, float]]] = {}  # name -> (request CPU, process CPU to SUCCEEDED)

    def _cpu(self, name: str, request: float, process_started: float) -> None:
        self.cpu.setdefault(name, []).append((request, time.process_time() - process_started))

    def _with_history(self, run_id: str) -> None:
        """`history` rounds on the run before the sample: a question asked at another node, answered."""
        for n in range(self.history):
            asked = self.client.ask_async(run_id, HISTORY_NODE, f"round {n}?")
            self.client.answer(run_id, asked.interaction_id, f"answer {n}")

    def _until(self, predicate: Callable[[], Any], what: str, timeout: float = 60) -> Any:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = predicate()
            if found:
                return found
            time.sleep(0.005)
        raise RuntimeError(f"timed out waiting for {what}")

    def _succeeded(self, arn: str) -> None:
        while (status := self.sfn.describe_execution(executionArn=arn)["status"]) == "RUNNING":
            time.sleep(0.002)
        if status != "SUCCEEDED":
            raise RuntimeError(f"{arn} ended {status}")

    def _parked(self, workflow: str, payload: dict[str, Any]) -> tuple[str, str, Any]:
        self.n += 1
        run_id = f"bench-cp-{workflow}-{self.n}-{int(time.time() * 1000)}"
        run = self.client.start_run(workflow, payload, run_id=run_id)
        wait = self._until(lambda: [w for w in self.store.list_run_waits(run_id) if w.status == "parked"], "park")[0]
        self._until(lambda: self.client.get_run(run_id).status == "paused_waiting_human", "paused", timeout=30)
        return run_id, run.execution_arn, wait

    def bare(self) -> float:
        _run_id, arn, wait = self._parked("human_pause", {"prompt": "bench?", "timeout_seconds": 120})
        output = _output(wait)
        process, thread = time.process_time(), time.thread_time()
        started = time.perf_counter()
        self.sfn.send_task_success(taskToken=wait.task_token, output=json.dumps(output))
        request = time.thread_time() - thread
        self._succeeded(arn)
        took = time.perf_counter() - started
        self._cpu("bare", request, process)
        return took

    def one_write(self) -> float:
        run_id, arn, wait = self._parked("human_pause", {"prompt": "bench?", "timeout_seconds": 120})
        output = _output(wait)
        process, thread = time.process_time(), time.thread_time()
        started = time.perf_counter()
        self.db.update_item(
            TableName=self.table,
            Key={"PK": {"S": f"RUN#{run_id}"}, "SK": {"S": f"INT#{wait.interaction_ids[0]}"}},
            UpdateExpression="SET bench_answer = :a",
            ConditionExpression="#st = :pending",
            ExpressionAttributeNames={"#st": "status"},
            ExpressionAttributeValues={":a": {"S": "ok"}, ":pending": {"S": "pending"}},
        )
        self.sfn.send_task_success(taskToken=wait.task_token, output=json.dumps(output))
        request = time.thread_time() - thread
        self._succeeded(arn)
        took = time.perf_counter() - started
        self._cpu("one write", request, process)
        return took

    def resume(self) -> float:
        run_id, arn, _ = self._parked("human_pause", {"prompt": "bench?", "timeout_seconds": 120})
        self._with_history(run_id)
        CALLS.start()
        API_CPU.clear()
        process = time.process_time()
        started = time.perf_counter()
        result = self.client.resume(run_id, {"ok": True})
        calls = list(CALLS.current)
        self._succeeded(arn)
        took = time.perf_counter() - started
        self._cpu("resume", sum(API_CPU), process)
        assert result.resumed, result
        CALLS.keep("resume", calls)
        return took

    def last_answer(self) -> float:
        payload = {"node": "draft", "from": "draft", "timeout_seconds": 120, "questions": [{"question": "Q?"}]}
        run_id, arn, _ = self._parked("await_answers", payload)
        [question] = self._until(lambda: self.client.pending_questions(run_id), "question")
        # A person answers seconds after the park, not amid it: its re-check has merged what its scope
        # answered before it into the answers its wait carries (baton/services/gate_answers.py).
        self._until(lambda: getattr(self.store.get_wait(run_id, "await"), "carry", None) != "filling", "park")
        self._with_history(run_id)
        CALLS.start()
        API_CPU.clear()
        process = time.process_time()
        started = time.perf_counter()
        result = self.client.answer(run_id, question.interaction_id, "A")
        calls = list(CALLS.current)
        self._succeeded(arn)
        took = time.perf_counter() - started
        self._cpu("last answer", sum(API_CPU), process)
        assert result.resumed, result
        CALLS.keep("last answer", calls)
        return took


def _measure(samples: int, history: int = 0) -> dict[str, Any]:
    _install_counter()
    import boto3

    from baton.client.sdk import Client
    from baton.local.stack import LocalStack
    from baton.runtime.settings import get_settings
    from baton.runtime.wiring import services

    stack = LocalStack(api_port=0, state_dir=Path(tempfile.mkdtemp(prefix="baton-bench-cp-")), data="off")
    info = stack.start()
    _count_api_calls(stack)
    client = Client(info.api_url, info.token, timeout=60)
    bench = _Bench(
        client,
        boto3.client("stepfunctions"),
        boto3.client("dynamodb"),
        services().core.store,
        get_settings().table_name,
        history=history,
    )
    timings: dict[str, list[float]] = {"bare": [], "one write": [], "resume": [], "last answer": []}
    steps = {"bare": bench.bare, "one write": bench.one_write, "resume": bench.resume, "last answer": bench.last_answer}
    try:
        for _ in range(samples):  # interleaved, so a slow moment of the machine hits every figure alike
            for name, step in steps.items():
                timings[name].append(step() * 1000)
    finally:
        client.close()
        stack.stop()
    figures: dict[str, Any] = {"samples": samples, "history": history, "ms": {}, "cpu_ms": {}, "calls": {}}
    for name, values in timings.items():
        figures["ms"][name] = {"median": statistics.median(values), "p95": _percentile(values, 95)}
    for name, pairs in bench.cpu.items():
        figures["cpu_ms"][name] = {
            "request": statistics.median(p[0] * 1000 for p in pairs),
            "to_succeeded": statistics.median(p[1] * 1000 for p in pairs),
        }
    for name, calls in CALLS.per_operation.items():
        before = calls.index(SEND) if SEND in calls else None
        items = CALLS.items_per_operation.get(name, [])
        figures["calls"][name] = {
            "total": len(calls),
            "before_send": before,
            "sequence": calls,
            "items_read": {"min": min(items, default=0), "max": max(items, default=0)},
        }
    return figures


def _print(figures: dict[str, Any]) -> None:
    ms = figures["ms"]
    floor, bare = ms["one write"], ms["bare"]
    print(
        f"critical path: request -> execution SUCCEEDED, {figures['samples']} samples each, one local stack, "
        f"history {figures.get('history', 0)} rounds per run"
    )
    print(f"  {'':<12} {'median':>9} {'p95':>9}   {'x bare':>7} {'x one-write':>12}   {'p95 x one-write':>15}")
    for name, figure in ms.items():
        ratio_bare = figure["median"] / bare["median"]
        ratio_floor = figure["median"] / floor["median"]
        ratio_p95 = figure["p95"] / floor["p95"]
        print(
            f"  {name:<12} {figure['median']:7.1f}ms {figure['p95']:7.1f}ms   {ratio_bare:6.2f}x {ratio_floor:11.2f}x"
            f"   {ratio_p95:14.2f}x"
        )
    print("  load average at the end: " + " ".join(f"{v:.2f}" for v in figures.get("load_average", [])))
    print("  CPU ms (median; much less sensitive to the machine's load than the wall times):")
    print(f"  {'':<12} {'request':>9} {'to SUCCEEDED':>13}   (request: its own thread; to SUCCEEDED: the process)")
    for name, cpu in figures.get("cpu_ms", {}).items():
        print(f"  {name:<12} {cpu['request']:7.1f}ms {cpu['to_succeeded']:11.1f}ms")
    print("  AWS calls per Baton request (botocore before-call hooks):")
    for name, calls in figures["calls"].items():
        read = calls["items_read"]
        print(
            f"    {name:<12} {calls['total']:>2} calls, {calls['before_send']} before the send, "
            f"{read['min']}-{read['max']} DynamoDB items read: {calls['sequence']}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=50)
    parser.add_argument("--history", type=int, default=0, help="rounds asked and answered on each run first")
    parser.add_argument("--quick", action="store_true", help="3 samples (CI: the figures are printed, not judged)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    figures = _measure(3 if args.quick else args.samples, max(0, args.history))
    figures["load_average"] = list(os.getloadavg())  # at the end of the run; the machine may be shared
    if args.json:
        print(json.dumps(figures, indent=2))
    else:
        _print(figures)


if __name__ == "__main__":
    main()
