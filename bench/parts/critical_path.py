"""The answer's critical path against its floors, measured side by side in one run on one local stack
(moto as AWS, Baton's handlers in-process). Each Baton request is divided by the floors of its own
workflow:

- human_pause (a plain pause):
  bare:        `SendTaskSuccess` of the parked token -> the execution SUCCEEDED (what Step Functions costs);
  one write:   one conditional DynamoDB write, then the send (the floor of any correct resume);
  resume:      `POST /api/runs/{id}/resume` -> SUCCEEDED;
- await_answers (an await gate waiting on one question):
  bare, one write: the same on the gate's parked token, with the output the state machine reads;
  last answer: `POST .../interactions/{id}/answer` of the gate's only question -> SUCCEEDED.

Each is timed from just before the request to the moment moto's engine sets the execution's status
(`BaseExecutionWorkerCommunication._reflect_execution_status`, hooked in this process): no poller. A
poller here would run botocore and moto under the GIL the engine needs, slowing what it times, and
unevenly (a request that returns after the end never polls). The bench waits on a threading.Event the
hook sets, then confirms SUCCEEDED with one `describe_execution`. Each sample starts once the process is
idle (what the untimed park left running would otherwise run beside it). Median and p95 over n samples; beside
them when the send started and when the response came back (the last answer's request releases its gate
after the send, so it can return after the end).

CPU figures, which depend far less on the machine's load than the wall times: the CPU time of the
request's own thread (the HTTP server's thread, from parsing the request line to writing the response,
for Baton's; the bench's, for the floors), split into the time inside AWS calls (botocore's
`provide-client-params` -> `after-call`: parameters, serializing, endpoint, signing, moto's handling,
parsing; per operation, with moto's share) and the rest (for Baton's: the HTTP adapter and the API Gateway
event outside the handler; inside it, outside the service method the route calls, the Powertools resolver,
logging, validation, auth and the route's own code; and the service's own code); how much of it ran before
the send and before the end; and the whole process's CPU from the request to the end (the engine's work
included). With `--history N` each Baton sample's run first has N rounds asked and answered on it (a
question at another node, answered; untimed), so the figures show whether the path stays flat as a run's
history grows. The AWS calls of each request are counted with botocore hooks (those before the send
listed apart), and the DynamoDB items its reads read with `after-call` hooks (a Query's ScannedCount):
counts that do not depend on the machine's load. Figures are printed, never asserted.

Usage: uv run python bench/parts/critical_path.py [--samples 50] [--history 0] [--quick] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable

SEND = "stepfunctions.SendTaskSuccess"
HISTORY_NODE = "history"  # outside every measured gate's scope (the await gate waits on "draft")
# Each Baton request and the floors it is divided by: (workflow, bare, one write, Baton's request).
WORKFLOWS = (
    ("human_pause", "bare, pause", "one write, pause", "resume"),
    ("await_answers", "bare, await", "one write, await", "last answer"),
)
FLOORS = {baton: {"bare": bare, "one write": write} for _, bare, write, baton in WORKFLOWS}
_request = threading.local()  # .sample: the Sample whose request this thread is serving


@dataclass
class Call:
    operation: str
    depth: int  # 0 for a call the request made itself
    in_service: bool  # made inside the service method the route calls
    started: float  # the request thread's CPU at provide-client-params
    moto_started: float | None = None  # ... at before-send, before the local stack hands it to moto
    moto_ended: float | None = None  # ... once moto answered (the last before-send handler)
    cpu: float = 0.0  # provide-client-params -> after-call: botocore and moto
    moto: float = 0.0  # of which moto's (baton/local/in_process.py answers at before-send)
    error: str | None = None  # the error code of a call that failed (a condition not met, say)


@dataclass
class Sample:
    """One request under measure: wall (perf_counter) and CPU marks, and its AWS calls."""

    started: float = field(default_factory=time.perf_counter)
    process_started: float = field(default_factory=time.process_time)
    ended: threading.Event = field(default_factory=threading.Event)
    clock: int | None = None  # the request thread's CPU clock (time.pthread_getcpuclockid)
    thread_started: float = 0.0  # its CPU at the request's start
    sent: float | None = None  # wall when the send began
    cpu_before_send: float | None = None  # the request thread's CPU by then
    end: float | None = None  # wall when the engine set the execution's status
    process_to_end: float | None = None  # process CPU from the start to then
    cpu_before_end: float | None = None  # the request thread's CPU by then
    status: str | None = None
    responded: float | None = None  # wall when the request returned
    thread_cpu: float | None = None  # the request thread's CPU, the whole request
    handler_cpu: float | None = None  # of which inside the API handler (Baton's requests)
    service_cpu: float | None = None  # of which inside the service method the route calls
    in_service: bool = False
    calls: list[Call] = field(default_factory=list)
    open_calls: list[Call] = field(default_factory=list)
    items: int = 0  # DynamoDB items its reads read

    def thread_now(self) -> float:
        assert self.clock is not None
        return time.clock_gettime(self.clock) - self.thread_started

    def serve_here(self) -> None:
        """The calling thread serves this request from now on."""
        self.clock = time.pthread_getcpuclockid(threading.get_ident())
        self.thread_started = time.clock_gettime(self.clock)
        _request.sample = self

    def served(self) -> None:
        self.thread_cpu = self.thread_now()
        _request.sample = None


ACTIVE: list[Sample] = []  # the sample whose request the HTTP server's next request is
ENDING: dict[str, Sample] = {}  # execution ARN -> the sample waiting for its end
_ending_lock = threading.Lock()


def _served_sample() -> Sample | None:
    sample: Sample | None = getattr(_request, "sample", None)
    return sample


def _operation(model: Any) -> str:
    return f"{model.service_model.service_name}.{model.name}"


def _call_began(model: Any, **_: Any) -> None:
    sample = _served_sample()
    if sample is None:
        return
    operation = _operation(model)
    now = sample.thread_now()
    if operation == SEND and sample.sent is None:
        sample.sent, sample.cpu_before_send = time.perf_counter(), now
    sample.open_calls.append(Call(operation, len(sample.open_calls), sample.in_service, now))


def _moto_starts(**_: Any) -> None:
    sample = _served_sample()
    if sample is not None and sample.open_calls:
        sample.open_calls[-1].moto_started = sample.thread_now()


def _moto_answered(**_: Any) -> None:
    sample = _served_sample()
    if sample is not None and sample.open_calls:
        sample.open_calls[-1].moto_ended = sample.thread_now()


def _call_ended(model: Any = None, parsed: Any = None, **_: Any) -> None:
    sample = _served_sample()
    if sample is None or not sample.open_calls:
        return
    call = sample.open_calls.pop()
    now = sample.thread_now()
    call.cpu = now - call.started
    if call.moto_started is not None and call.moto_ended is not None:
        call.moto = call.moto_ended - call.moto_started
    sample.calls.append(call)
    if model is None or not isinstance(parsed, dict):
        return
    if "Error" in parsed:
        reasons = [str(r.get("Code")) for r in parsed.get("CancellationReasons") or []]  # a transaction's, item by item
        call.error = str(parsed["Error"].get("Code")) + (f" [{', '.join(reasons)}]" if reasons else "")
    if model.name == "Query":
        sample.items += int(parsed.get("ScannedCount", parsed.get("Count", 0)))
    elif model.name == "GetItem":
        sample.items += 1 if parsed.get("Item") else 0
    elif model.name == "BatchGetItem":
        sample.items += sum(len(found) for found in (parsed.get("Responses") or {}).values())


def _install_hooks() -> None:
    """Every botocore client created from now on reports its calls to the sample its thread serves, the
    HTTP server's thread marks the request it serves, and moto's engine reports each execution's end."""
    import botocore.session
    from moto.stepfunctions.parser.backend.execution import BaseExecutionWorkerCommunication

    from baton.local.http_adapter import _Handler

    create_client = botocore.session.Session.create_client

    def counted_client(self: Any, *args: Any, **kwargs: Any) -> Any:
        client = create_client(self, *args, **kwargs)
        client.meta.events.register("provide-client-params", _call_began)
        # before-send: the local stack's handler answers from moto there (baton/local/in_process.py);
        # the first and last handlers of the event bracket it
        client.meta.events.register_first("before-send", _moto_starts)
        client.meta.events.register_last("before-send", _moto_answered)
        client.meta.events.register("after-call", _call_ended)
        client.meta.events.register("after-call-error", _call_ended)
        return client

    botocore.session.Session.create_client = counted_client  # type: ignore[method-assign]

    parse_request, handle = _Handler.parse_request, _Handler._handle

    def parse_marked(self: Any) -> bool:
        if ACTIVE and _served_sample() is None:  # the request line is read: the request starts here
            ACTIVE.pop().serve_here()
        return parse_request(self)

    def handle_marked(self: Any) -> None:
        try:
            handle(self)
        finally:
            sample = _served_sample()
            if sample is not None:
                sample.served()

    _Handler.parse_request = parse_marked  # type: ignore[method-assign]
    _Handler._handle = handle_marked  # type: ignore[method-assign]

    reflect = BaseExecutionWorkerCommunication._reflect_execution_status

    def reflect_marked(self: Any) -> None:
        reflect(self)  # the status, stop date and output are set: describe_execution now reads the end
        with _ending_lock:
            sample = ENDING.pop(self.execution.exec_arn, None)
        if sample is None:
            return
        sample.end, sample.process_to_end = time.perf_counter(), time.process_time() - sample.process_started
        sample.cpu_before_end = sample.thread_now() if sample.clock is not None else None
        sample.status = self.execution.exec_status.value
        sample.ended.set()

    BaseExecutionWorkerCommunication._reflect_execution_status = reflect_marked  # type: ignore[method-assign]


def _time_handler(stack: Any) -> None:
    """The API handler's own CPU within the request's thread (the rest is the HTTP adapter's)."""
    invoke = stack.dispatcher.invoke

    def timed(function_name: str, event: Any) -> Any:
        sample = _served_sample() if function_name == "api" else None
        if sample is None:
            return invoke(function_name, event)
        began = sample.thread_now()
        try:
            return invoke(function_name, event)
        finally:
            sample.handler_cpu = sample.thread_now() - began

    stack.dispatcher.invoke = timed


# The service methods the measured routes call (baton/api/routes_runs.py resume, routes_questions.py
# answer): inside them Baton's own code and most of its AWS calls; outside them, in the handler, the
# Powertools resolver, validation, auth and the route's own reads.
SERVICE_METHODS = (
    ("baton.services.runs", "RunService", "resume"),
    ("baton.services.questions", "QuestionService", "answer"),
)


def _time_services() -> list[str]:
    """The service methods timed (a method renamed elsewhere is left out, and its figure with it)."""
    import importlib

    timed_methods = []
    for module, owner_name, method in SERVICE_METHODS:
        owner = getattr(importlib.import_module(module), owner_name, None)
        original = getattr(owner, method, None)
        if owner is not None and original is not None:
            setattr(owner, method, _timed_service(original))
            timed_methods.append(f"{owner_name}.{method}")
    return timed_methods


def _timed_service(original: Callable[..., Any]) -> Callable[..., Any]:
    def timed(*args: Any, **kwargs: Any) -> Any:
        sample = _served_sample()
        if sample is None or sample.in_service:
            return original(*args, **kwargs)
        sample.in_service, began = True, sample.thread_now()
        try:
            return original(*args, **kwargs)
        finally:
            sample.service_cpu = (sample.service_cpu or 0.0) + sample.thread_now() - began
            sample.in_service = False

    return timed


def _percentile(values: list[float], pct: float) -> float:
    ordered = sorted(values)
    return ordered[max(0, min(len(ordered) - 1, round(pct / 100 * (len(ordered) - 1))))]


def _pause_output(wait: Any) -> dict[str, Any]:
    """What Baton's resume sends for a plain pause (the state machine reads these fields)."""
    at = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime())
    return {
        "interaction_id": wait.interaction_ids[0],
        "node": wait.gate,
        "answers": {"ok": True},
        "answered_by": "bench",
        "answered_at": at,
    }


def _await_output(wait: Any, question: Any) -> dict[str, Any]:
    """What Baton's release sends for an await gate (baton/services/questions.py `_send_release`)."""
    answer = {"interaction_id": question.interaction_id, "node": "draft", "question": "Q?", "answer": "A"}
    return {"answers": [answer], "gate": wait.gate, "from": "draft"}


class _Bench:
    def __init__(self, client: Any, sfn: Any, db: Any, store: Any, table: str, *, history: int = 0) -> None:
        self.client, self.sfn, self.db, self.store, self.table = client, sfn, db, store, table
        self.n = 0
        self.history = history
        self.samples: dict[str, list[Sample]] = {}
        self.unsettled = 0  # samples started without the process idle first (3 s of waiting)

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

    def _parked(self, workflow: str, payload: dict[str, Any]) -> tuple[str, str, Any]:
        self.n += 1
        run_id = f"bench-cp-{workflow}-{self.n}-{int(time.time() * 1000)}"
        run = self.client.start_run(workflow, payload, run_id=run_id)
        wait = self._until(lambda: [w for w in self.store.list_run_waits(run_id) if w.status == "parked"], "park")[0]
        self._until(lambda: self.client.get_run(run_id).status == "paused_waiting_human", "paused", timeout=30)
        return run_id, run.execution_arn, wait

    def _pause(self) -> tuple[str, str, Any]:
        return self._parked("human_pause", {"prompt": "bench?", "timeout_seconds": 120})

    def _await(self) -> tuple[str, str, Any, Any]:
        payload = {"node": "draft", "from": "draft", "timeout_seconds": 120, "questions": [{"question": "Q?"}]}
        run_id, arn, _ = self._parked("await_answers", payload)
        [question] = self._until(lambda: self.client.pending_questions(run_id), "question")
        # A person answers seconds after the park, not amid it: its re-check has merged what its scope
        # answered before it into the answers its wait carries (baton/domain/gate_answers.py).
        wait = self._until(lambda: self._settled(run_id), "park")
        return run_id, arn, wait, question

    def _settled(self, run_id: str) -> Any:
        wait = self.store.get_wait(run_id, "await")
        return wait if wait is not None and getattr(wait, "carry", None) != "filling" else None

    def _quiet(self, window: float = 0.02, most: float = 0.001, timeout: float = 3.0) -> bool:
        """Until the process is idle (under `most` CPU seconds in a `window`): what the untimed set-up
        left running (the park's notifications and deadline timer, the last execution's lifecycle
        event) would otherwise run under the GIL beside the timed request, unevenly."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            before = time.process_time()
            time.sleep(window)
            if time.process_time() - before < most:
                return True
        return False

    def _measured(self, name: str, arn: str, request: Callable[[], Any], *, served_here: bool) -> Any:
        """`request` timed to the execution's end (the hook's Event: no CPU while waiting)."""
        if not self._quiet():
            self.unsettled += 1
        sample = Sample()
        with _ending_lock:
            ENDING[arn] = sample
        if served_here:
            sample.serve_here()
        else:
            ACTIVE.append(sample)  # the HTTP server's thread takes it when it reads the request line
        try:
            result = request()
        finally:
            sample.responded = time.perf_counter()
            if served_here:
                sample.served()
            ACTIVE.clear()
        if not sample.ended.wait(60):
            raise RuntimeError(f"{arn} did not end within 60 s")
        status = self.sfn.describe_execution(executionArn=arn)["status"]
        if status != "SUCCEEDED" or sample.status != "SUCCEEDED":
            raise RuntimeError(f"{arn} ended {status} (engine: {sample.status})")
        self.samples.setdefault(name, []).append(sample)
        return result

    def _bare(self, name: str, arn: str, token: str, output: dict[str, Any]) -> None:
        """The send alone."""
        text = json.dumps(output)
        self._measured(name, arn, lambda: self.sfn.send_task_success(taskToken=token, output=text), served_here=True)

    def _one_write(
        self, name: str, arn: str, token: str, output: dict[str, Any], *, run_id: str, interaction_id: str
    ) -> None:
        """One conditional write on the interaction (it is still pending), then the send."""
        text = json.dumps(output)

        def write_then_send() -> None:
            self.db.update_item(
                TableName=self.table,
                Key={"PK": {"S": f"RUN#{run_id}"}, "SK": {"S": f"INT#{interaction_id}"}},
                UpdateExpression="SET bench_answer = :a",
                ConditionExpression="#st = :pending",
                ExpressionAttributeNames={"#st": "status"},
                ExpressionAttributeValues={":a": {"S": "ok"}, ":pending": {"S": "pending"}},
            )
            self.sfn.send_task_success(taskToken=token, output=text)

        self._measured(name, arn, write_then_send, served_here=True)

    def bare_pause(self) -> None:
        _run_id, arn, wait = self._pause()
        self._bare("bare, pause", arn, wait.task_token, _pause_output(wait))

    def one_write_pause(self) -> None:
        run_id, arn, wait = self._pause()
        output = _pause_output(wait)
        self._one_write(
            "one write, pause", arn, wait.task_token, output, run_id=run_id, interaction_id=wait.interaction_ids[0]
        )

    def resume(self) -> None:
        run_id, arn, _ = self._pause()
        self._with_history(run_id)
        result = self._measured("resume", arn, lambda: self.client.resume(run_id, {"ok": True}), served_here=False)
        assert result.resumed, result

    def bare_await(self) -> None:
        _run_id, arn, wait, question = self._await()
        self._bare("bare, await", arn, wait.task_token, _await_output(wait, question))

    def one_write_await(self) -> None:
        run_id, arn, wait, question = self._await()
        output = _await_output(wait, question)
        self._one_write(
            "one write, await", arn, wait.task_token, output, run_id=run_id, interaction_id=question.interaction_id
        )

    def last_answer(self) -> None:
        run_id, arn, _wait, question = self._await()
        self._with_history(run_id)
        answer = lambda: self.client.answer(run_id, question.interaction_id, "A")  # noqa: E731
        result = self._measured("last answer", arn, answer, served_here=False)
        assert result.resumed, result


def _median(values: list[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return statistics.median(present) if present else None


def _figures(samples: list[Sample]) -> dict[str, Any]:
    """Wall (ms from the request's start), CPU (ms, medians over the samples) and the AWS calls."""
    to_end = [(s.end or 0.0) - s.started for s in samples]
    ms = {"median": statistics.median(to_end) * 1000, "p95": _percentile(to_end, 95) * 1000}

    def ms_of(values: list[float | None]) -> float | None:
        found = _median(values)
        return None if found is None else found * 1000

    per_operation: dict[str, dict[str, float]] = {}
    for operation in dict.fromkeys(c.operation for s in samples for c in s.calls if c.depth == 0):
        mine = [[c for c in s.calls if c.depth == 0 and c.operation == operation] for s in samples]
        per_operation[operation] = {
            "calls": statistics.median(len(calls) for calls in mine),
            "cpu": ms_of([sum(c.cpu for c in calls) for calls in mine]) or 0.0,
            "moto": ms_of([sum(c.moto for c in calls) for calls in mine]) or 0.0,
        }
    aws = [sum(c.cpu for c in s.calls if c.depth == 0) for s in samples]
    cpu = {
        "request": ms_of([s.thread_cpu for s in samples]),
        "before_send": ms_of([s.cpu_before_send for s in samples]),
        "before_succeeded": ms_of([s.cpu_before_end for s in samples]),
        "to_succeeded": ms_of([s.process_to_end for s in samples]),
        "aws_calls": ms_of(list(aws)),
        "aws_moto": ms_of([sum(c.moto for c in s.calls if c.depth == 0) for s in samples]),
        "outside_aws_calls": ms_of([(s.thread_cpu or 0.0) - a for s, a in zip(samples, aws, strict=True)]),
        "handler_outside_aws_calls": ms_of(
            [None if s.handler_cpu is None else s.handler_cpu - a for s, a in zip(samples, aws, strict=True)]
        ),
        "service_outside_aws_calls": ms_of(
            [
                None
                if s.service_cpu is None
                else s.service_cpu - sum(c.cpu for c in s.calls if c.depth == 0 and c.in_service)
                for s in samples
            ]
        ),
        "handler_outside_service": ms_of(
            [
                None
                if s.handler_cpu is None or s.service_cpu is None
                else s.handler_cpu - s.service_cpu - sum(c.cpu for c in s.calls if c.depth == 0 and not c.in_service)
                for s in samples
            ]
        ),
        "http_adapter": ms_of(
            [None if s.handler_cpu is None else (s.thread_cpu or 0.0) - s.handler_cpu for s in samples]
        ),
        "per_operation": per_operation,
    }
    in_order = [sorted((c for c in s.calls if c.depth == 0), key=lambda c: c.started) for s in samples]
    ordered = [c.operation for c in in_order[-1]]
    alike = [made for made in in_order if [c.operation for c in made] == ordered]  # the last sample's sequence
    cpu["per_call"] = [
        {
            "operation": op,
            "cpu": ms_of([made[n].cpu for made in alike]),
            "moto": ms_of([made[n].moto for made in alike]),
        }
        for n, op in enumerate(ordered)
    ]
    items = [s.items for s in samples]
    calls = {
        "total": len(ordered),
        "before_send": ordered.index(SEND) if SEND in ordered else None,
        "sequence": ordered,
        "sequences_seen": len({tuple(c.operation for c in made) for made in in_order}),
        "sequences": {
            " ".join(key): n
            for key, n in Counter(tuple(c.operation.split(".")[1] for c in made) for made in in_order).items()
        },
        "failed": dict(Counter(f"{c.operation} {c.error}" for s in samples for c in s.calls if c.error)),
        "items_read": {"min": min(items, default=0), "max": max(items, default=0)},
    }
    wall = {
        "send_starts": ms_of([None if s.sent is None else s.sent - s.started for s in samples]),
        "response": ms_of([(s.responded or 0.0) - s.started for s in samples]),
    }
    return {"ms": ms, "wall_ms": wall, "cpu_ms": cpu, "calls": calls}


def _measure(samples: int, history: int = 0) -> dict[str, Any]:
    _install_hooks()
    timed_services = _time_services()
    import boto3

    from baton.client.sdk import Client
    from baton.local.stack import LocalStack
    from baton.runtime.settings import get_settings
    from baton.runtime.wiring import services

    stack = LocalStack(api_port=0, state_dir=Path(tempfile.mkdtemp(prefix="baton-bench-cp-")), data="off")
    info = stack.start()
    _time_handler(stack)
    client = Client(info.api_url, info.token, timeout=60)
    bench = _Bench(
        client,
        boto3.client("stepfunctions"),
        boto3.client("dynamodb"),
        services().core.store,
        get_settings().table_name,
        history=history,
    )
    steps = [
        bench.bare_pause,
        bench.one_write_pause,
        bench.resume,
        bench.bare_await,
        bench.one_write_await,
        bench.last_answer,
    ]
    try:
        for _ in range(samples):  # interleaved, so a slow moment of the machine hits every figure alike
            for step in steps:
                step()
    finally:
        client.close()
        stack.stop()
    figures: dict[str, Any] = {
        "samples": samples,
        "history": history,
        "timing": "request start -> the engine sets the execution's status (hooked; no poller)",
        "floors": FLOORS,
        "workflows": {workflow: [bare, write, baton] for workflow, bare, write, baton in WORKFLOWS},
        "ms": {},
        "wall_ms": {},
        "cpu_ms": {},
        "calls": {},
        "ratios": {},
        "unsettled": bench.unsettled,
        "timed_services": timed_services,
    }
    for name, measured in bench.samples.items():
        for key, value in _figures(measured).items():
            figures[key][name] = value
    for baton, floor in FLOORS.items():
        mine, bare, write = (figures["ms"][n] for n in (baton, floor["bare"], floor["one write"]))
        figures["ratios"][baton] = {
            "x_bare": mine["median"] / bare["median"],
            "x_one_write": mine["median"] / write["median"],
            "p95_x_one_write": mine["p95"] / write["p95"],
            "cpu_x_one_write": figures["cpu_ms"][baton]["to_succeeded"]
            / figures["cpu_ms"][floor["one write"]]["to_succeeded"],
        }
    return figures


def _ms(value: float | None, width: int = 6) -> str:
    return f"{value:{width}.1f}" if value is not None else " " * (width - 1) + "-"


def _print(figures: dict[str, Any]) -> None:
    ms, wall, cpu = figures["ms"], figures["wall_ms"], figures["cpu_ms"]
    print(
        f"critical path: request -> the execution's end (SUCCEEDED, hooked in moto's engine: no poller), "
        f"{figures['samples']} samples each, one local stack, history {figures.get('history', 0)} rounds per run"
    )
    print("  each Baton request divided by the floors of its own workflow; wall ms from the request's start:")
    print(
        f"    {'':<17} {'median':>7} {'p95':>7}  {'send at':>7} {'response':>8}"
        f"   {'x bare':>6} {'x one-write':>11} {'p95 x one-write':>15}"
    )
    for workflow, names in figures["workflows"].items():
        print(f"  {workflow}")
        baton = names[-1]
        floor = figures["floors"][baton]
        for name in names:
            figure = ms[name]
            ratios = (
                figure["median"] / ms[floor["bare"]]["median"],
                figure["median"] / ms[floor["one write"]]["median"],
                figure["p95"] / ms[floor["one write"]]["p95"],
            )
            print(
                f"    {name:<17} {figure['median']:7.1f} {figure['p95']:7.1f}  {_ms(wall[name]['send_starts'], 7)}"
                f" {_ms(wall[name]['response'], 8)}   {ratios[0]:5.2f}x {ratios[1]:10.2f}x {ratios[2]:14.2f}x"
            )
    print("  load average at the end: " + " ".join(f"{v:.2f}" for v in figures.get("load_average", [])))
    print(f"  samples started before the process was idle (3 s at most): {figures.get('unsettled', 0)}")
    print("  CPU ms, medians (far less sensitive to the machine's load than the wall times). The request's own")
    print("  thread (Baton: the HTTP server's; floors: the bench's): all of it, by the send, by the end; inside")
    print("  AWS calls (botocore and, of that, moto) and outside them; then the process to the end:")
    print(
        f"    {'':<17} {'request':>7} {'by send':>7} {'by end':>7}  {'AWS calls':>9} {'(moto)':>6}"
        f" {'outside':>7}   {'process to end':>14} {'x one-write':>11}"
    )
    for workflow, names in figures["workflows"].items():
        print(f"  {workflow}")
        floor = figures["floors"][names[-1]]["one write"]
        for name in names:
            c = cpu[name]
            print(
                f"    {name:<17} {_ms(c['request'], 7)} {_ms(c['before_send'], 7)} {_ms(c['before_succeeded'], 7)}"
                f"  {_ms(c['aws_calls'], 9)} {_ms(c['aws_moto'])} {_ms(c['outside_aws_calls'], 7)}"
                f"   {_ms(c['to_succeeded'], 14)} {c['to_succeeded'] / cpu[floor]['to_succeeded']:10.2f}x"
            )
    print("  outside the AWS calls of a Baton request: the HTTP adapter (request line, headers, body, the API")
    print("  Gateway event, the response) and, in the API handler, the resolver, validation and Baton's code:")
    for name in (names[-1] for names in figures["workflows"].values()):
        c = cpu[name]
        adapter, handler = _ms(c["http_adapter"], 4), _ms(c["handler_outside_aws_calls"], 4)
        route, service = _ms(c.get("handler_outside_service"), 4), _ms(c.get("service_outside_aws_calls"), 4)
        print(
            f"    {name:<17} HTTP adapter {adapter}   API handler outside its AWS calls {handler}: resolver, logging,"
            f" validation, auth, route {route}; the service's own code {service}"
        )
    print("  AWS calls per request (botocore hooks); CPU ms of each operation in the request's thread, of")
    print("  which moto's, medians:")
    for name, calls in figures["calls"].items():
        read = calls["items_read"]
        operations = ", ".join(
            f"{op} {int(f['calls'])}x {f['cpu']:.1f} ({f['moto']:.1f})" for op, f in cpu[name]["per_operation"].items()
        )
        print(
            f"    {name:<17} {calls['total']:>2} calls, {calls['before_send']} before the send, "
            f"{read['min']}-{read['max']} DynamoDB items read: {operations}"
        )
        if name in figures["floors"]:
            each = ", ".join(
                f"{c['operation']} {_ms(c['cpu'], 1)} ({_ms(c['moto'], 1)})" for c in cpu[name]["per_call"]
            )
            seen = calls.get("sequences_seen", 1)
            print(f"    {'':<17} in order ({len(calls['sequence'])} calls in {seen} sequence(s) seen): {each}")
            if seen > 1 or calls.get("failed"):
                print(f"    {'':<17} sequences over the samples: {calls['sequences']}; failed calls: {calls['failed']}")


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
