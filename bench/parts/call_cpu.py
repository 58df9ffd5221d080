"""CPU per AWS call inside the local stack, split into where it goes.

Starts a LocalStack in this process (as `bench/parts/critical_path.py` does: moto as AWS, the stack's
moto fixes on, the process's own calls handed to moto in process by `baton/local/in_process.py`), then
times single calls from this thread with `time.thread_time` (CPU of this thread only: the Step Functions
engine's worker threads, the persister and the API server do not count), n samples each, and prints the
median of each part:

- total:   the whole `client.<operation>(...)` call;
- client:  botocore's own side (parameter validation, serialization, endpoint resolution, signing,
           events, response parsing): total minus the two below;
- routing: from the in-process hook handing the request to moto until moto calls the service's handler
           (moto's URL matching over its services, then over the service's URLs);
- moto:    the service's handler (request normalization, moto's response class parsing and dispatching
           the action, the backend's work, the response serialized).

Each call is timed twice per sample, interleaved: `plain` (moto's stubber routes the request, botocore
computes its SigV4 signature: the in-process path before `DirectRoutes` and `unsigned_in_process` of
`baton/local/in_process.py`) and `fixed` (as the stack runs now); `saved` is the difference of the
medians. Read the two side by side: on a shared machine each moves with the load, the difference less.

The calls: DynamoDB Query (a partition of 3 items), TransactWriteItems (2 conditional Updates and 2 Puts),
a conditional UpdateItem, GetItem; Step Functions DescribeExecution and SendTaskSuccess (a parked
`human_pause` execution's token each; the execution is awaited to SUCCEEDED between samples, untimed).
CPU times on a shared machine still move with cache pressure; the load average is printed at the end.
`--profile OP` prints where one operation's CPU goes (cProfile, top functions by own time) instead.
Figures are printed, never asserted.

Usage: uv run python bench/parts/call_cpu.py [--samples 200] [--sends 200] [--quick] [--profile Query]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable

_marks = threading.local()  # thread-CPU stamps of the call being timed, set by the wrappers below


class _Variant:
    """Which in-process path a call takes: this branch's (`fixed`) or moto's stubber and botocore's own
    signing (`plain`, as before `DirectRoutes` and `unsigned_in_process`), switched between samples."""

    def __init__(self) -> None:
        from botocore.auth import SigV4Auth
        from moto.core.models import botocore_stubber

        from baton.local import in_process

        self._signing = SigV4Auth
        self._fixed_signing = SigV4Auth.__dict__["add_auth"]
        self._plain_signing = getattr(self._fixed_signing, "__wrapped__", self._fixed_signing)
        direct = getattr(in_process, "DirectRoutes", None)
        self._fixed_route = direct.process_request if direct is not None else None
        self._plain_route = lambda _routes, request: botocore_stubber.process_request(request)
        self.route: Any = self._fixed_route

    def use(self, name: str) -> None:
        fixed = name == "fixed"
        self.route = self._fixed_route if fixed else self._plain_route
        self._signing.add_auth = self._fixed_signing if fixed else self._plain_signing  # type: ignore[method-assign]


def _install_stamps() -> _Variant:
    """Stamp the thread's CPU time where the request enters moto and where moto calls the handler."""
    import moto.core.botocore_stubber as stubber_module
    import moto.core.request as request_module

    from baton.local import in_process

    variant = _Variant()
    normalize_request = request_module.normalize_request

    def stamped_process_request(*args: Any) -> Any:
        _marks.routed = time.thread_time()
        answered = variant.route(*args)
        _marks.answered = time.thread_time()
        return answered

    def stamped_normalize_request(request: Any) -> Any:
        _marks.handled = time.thread_time()  # the first thing moto does once it found the handler
        return normalize_request(request)

    in_process.DirectRoutes.process_request = stamped_process_request  # type: ignore[method-assign]
    stubber_module.normalize_request = stamped_normalize_request  # type: ignore[attr-defined]
    request_module.normalize_request = stamped_normalize_request  # type: ignore[attr-defined]
    return variant


def _timed(call: Callable[[], Any]) -> tuple[float, float, float, float]:
    """(total, client, routing, moto) CPU seconds of one call."""
    _marks.routed = _marks.handled = _marks.answered = None
    started = time.thread_time()
    call()
    total = time.thread_time() - started
    routed, handled, answered = _marks.routed, _marks.handled, _marks.answered
    if routed is None or handled is None or answered is None:
        raise RuntimeError("the call did not go through moto in process")
    routing, moto = handled - routed, answered - handled
    return total, total - routing - moto, routing, moto


class _Calls:
    def __init__(self, db: Any, sfn: Any, table: str, client: Any, store: Any) -> None:
        self.db, self.sfn, self.table, self.client, self.store = db, sfn, table, client, store
        self.n = 0
        self.partition = "BENCHCALLS#query"
        for sk in ("A", "B", "C"):
            db.put_item(TableName=table, Item=self._item(self.partition, sk))
        self.db.put_item(TableName=table, Item=self._item("BENCHCALLS#get", "X"))
        self.parked: list[tuple[str, str]] = []  # (execution arn, task token)

    @staticmethod
    def _item(pk: str, sk: str) -> dict[str, Any]:
        return {
            "PK": {"S": pk},
            "SK": {"S": sk},
            "status": {"S": "pending"},
            "kind": {"S": "question"},
            "created_at": {"S": "2026-01-01T00:00:00.000Z"},
            "payload": {"M": {"question": {"S": "Q?"}, "n": {"N": "1"}}},
        }

    def query(self) -> None:
        self.db.query(
            TableName=self.table,
            KeyConditionExpression="PK = :pk",
            ExpressionAttributeValues={":pk": {"S": self.partition}},
        )

    def get_item(self) -> None:
        self.db.get_item(TableName=self.table, Key={"PK": {"S": "BENCHCALLS#get"}, "SK": {"S": "X"}})

    def _update(self, pk: str) -> None:
        self.db.update_item(
            TableName=self.table,
            Key={"PK": {"S": pk}, "SK": {"S": "I"}},
            UpdateExpression="SET bench_answer = :a, #st = :answered",
            ConditionExpression="#st = :pending",
            ExpressionAttributeNames={"#st": "status"},
            ExpressionAttributeValues={":a": {"S": "ok"}, ":pending": {"S": "pending"}, ":answered": {"S": "answered"}},
        )

    def transact_prepare(self) -> None:
        self.n += 1
        for sk in ("I", "W"):
            self.db.put_item(TableName=self.table, Item={**self._item(f"BENCHCALLS#t{self.n}", sk), "SK": {"S": sk}})

    def transact(self) -> None:
        pk = f"BENCHCALLS#t{self.n}"
        update = {
            "TableName": self.table,
            "UpdateExpression": "SET #st = :answered, answer = :a",
            "ConditionExpression": "#st = :pending",
            "ExpressionAttributeNames": {"#st": "status"},
            "ExpressionAttributeValues": {
                ":a": {"S": "ok"},
                ":pending": {"S": "pending"},
                ":answered": {"S": "answered"},
            },
        }
        self.db.transact_write_items(
            TransactItems=[
                {"Update": {**update, "Key": {"PK": {"S": pk}, "SK": {"S": "I"}}}},
                {"Update": {**update, "Key": {"PK": {"S": pk}, "SK": {"S": "W"}}}},
                {
                    "Put": {
                        "TableName": self.table,
                        "Item": self._item(pk, "E#1"),
                        "ConditionExpression": "attribute_not_exists(PK)",
                    }
                },
                {
                    "Put": {
                        "TableName": self.table,
                        "Item": self._item(pk, "E#2"),
                        "ConditionExpression": "attribute_not_exists(PK)",
                    }
                },
            ]
        )

    def park(self, count: int) -> None:
        """`count` human_pause executions parked on their task token (untimed)."""
        started: list[str] = []
        for _ in range(count):
            self.n += 1
            run_id = f"bench-calls-{self.n}-{int(time.time() * 1000)}"
            self.client.start_run("human_pause", {"prompt": "bench?", "timeout_seconds": 600}, run_id=run_id)
            started.append(run_id)
        for run_id in started:
            deadline = time.monotonic() + 120
            while True:
                waits = [w for w in self.store.list_run_waits(run_id) if w.status == "parked" and w.task_token]
                if waits:
                    break
                if time.monotonic() > deadline:
                    raise RuntimeError(f"{run_id} did not park")
                time.sleep(0.01)
            arn = self.client.get_run(run_id).execution_arn
            self.parked.append((arn, waits[0].task_token))

    def operations(self) -> dict[str, tuple[Callable[[], None] | None, Callable[[], None]]]:
        """The timed calls but SendTaskSuccess: name -> (untimed preparation, the call)."""
        return {
            "dynamodb.Query": (None, self.query),
            "dynamodb.GetItem": (None, self.get_item),
            "dynamodb.UpdateItem": (self.update_prepare, lambda: self._update(f"BENCHCALLS#u{self.n}")),
            "dynamodb.TransactWriteItems": (self.transact_prepare, self.transact),
            "stepfunctions.DescribeExecution": (None, self.describe),
        }

    def update_prepare(self) -> None:
        self.n += 1
        self.db.put_item(TableName=self.table, Item=self._item(f"BENCHCALLS#u{self.n}", "I"))

    def describe(self) -> None:
        self.sfn.describe_execution(executionArn=self.parked[0][0])

    def send_next(self) -> Callable[[], None]:
        arn, token = self.parked.pop()
        output = json.dumps({"answers": {"ok": True}, "answered_by": "bench"})
        self._last = arn
        return lambda: self.sfn.send_task_success(taskToken=token, output=output)

    def until_ended(self) -> None:
        while self.sfn.describe_execution(executionArn=self._last)["status"] == "RUNNING":
            time.sleep(0.002)


def _measure(samples: int, sends: int) -> dict[str, dict[str, dict[str, float]]]:
    """name -> variant ("plain", "fixed") -> samples and the median ms of each part."""
    parts: dict[tuple[str, str], list[tuple[float, float, float, float]]] = {}
    with _stack() as (calls, variant):
        calls.park(2 * max(sends, 1))
        try:
            # interleaved, variant by variant, so a slow moment of the machine hits every figure alike
            for _ in range(samples):
                for name, (prepare, call) in calls.operations().items():
                    for which in VARIANTS:
                        if prepare is not None:
                            prepare()
                        variant.use(which)
                        parts.setdefault((name, which), []).append(_timed(call))
                        variant.use("fixed")
            for _ in range(sends):
                for which in VARIANTS:
                    send = calls.send_next()
                    variant.use(which)
                    parts.setdefault(("stepfunctions.SendTaskSuccess", which), []).append(_timed(send))
                    variant.use("fixed")
                    calls.until_ended()
        finally:
            variant.use("fixed")
    figures: dict[str, dict[str, dict[str, float]]] = {}
    for (name, which), values in parts.items():
        medians = {part: statistics.median(v[i] for v in values) * 1000 for i, part in enumerate(PARTS)}
        figures.setdefault(name, {})[which] = {"samples": len(values), **medians}
    return figures


VARIANTS = ("plain", "fixed")
PARTS = ("total", "client", "routing", "moto")


class _stack:
    def __enter__(self) -> tuple[_Calls, _Variant]:
        import boto3

        from baton.client.sdk import Client
        from baton.local.stack import LocalStack
        from baton.runtime.settings import get_settings
        from baton.runtime.wiring import services

        self.stack = LocalStack(api_port=0, state_dir=Path(tempfile.mkdtemp(prefix="baton-bench-calls-")), data="off")
        info = self.stack.start()
        self.stack.wait_for_workflows()
        variant = _install_stamps()
        self.client = Client(info.api_url, info.token, timeout=60)
        calls = _Calls(
            boto3.client("dynamodb"),
            boto3.client("stepfunctions"),
            get_settings().table_name,
            self.client,
            services().core.store,
        )
        return calls, variant

    def __exit__(self, *_: object) -> None:
        self.client.close()
        self.stack.stop()


def _profile(operation: str, samples: int, out: str | None) -> None:
    import cProfile
    import pstats

    profiler = cProfile.Profile()
    with _stack() as (calls, _variant):
        calls.park(samples if operation == "SendTaskSuccess" else 1)  # DescribeExecution describes one
        if operation == "SendTaskSuccess":
            for _ in range(samples):
                profiler.runcall(calls.send_next())
                calls.until_ended()
        else:
            prepare, call = calls.operations()[
                f"dynamodb.{operation}" if operation != "DescribeExecution" else "stepfunctions.DescribeExecution"
            ]
            for _ in range(samples):
                if prepare is not None:
                    prepare()
                profiler.runcall(call)
    stats = pstats.Stats(profiler)
    if out:
        stats.dump_stats(out)
    stats.sort_stats("tottime").print_stats(40)
    stats.sort_stats("cumulative").print_stats(60)


def _print(figures: dict[str, dict[str, dict[str, float]]]) -> None:
    print("CPU per AWS call in process (this thread's CPU, median ms): the local stack, its moto fixes on;")
    print("  plain: moto's stubber routes and botocore signs (as before); fixed: baton/local/in_process.py now")
    print(f"  {'call':<34} {'':<6} {'n':>4} {'total':>8} {'client':>8} {'routing':>8} {'moto':>8}")
    for name, variants in figures.items():
        for which, figure in variants.items():
            label = name if which == VARIANTS[0] else ""
            print(
                f"  {label:<34} {which:<6} {figure['samples']:>4.0f} {figure['total']:8.2f} {figure['client']:8.2f}"
                f" {figure['routing']:8.2f} {figure['moto']:8.2f}"
            )
        plain, fixed = variants["plain"]["total"], variants["fixed"]["total"]
        print(
            f"  {'':<34} {'saved':<6} {'':>4} {plain - fixed:8.2f}   ({(plain - fixed) / plain:.0%} of the plain call)"
        )
    print("  load average at the end: " + " ".join(f"{v:.2f}" for v in os.getloadavg()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--samples", type=int, default=200, help="samples of each DynamoDB call and DescribeExecution")
    parser.add_argument("--sends", type=int, default=200, help="SendTaskSuccess samples (one parked execution each)")
    parser.add_argument("--quick", action="store_true", help="5 samples of each (CI: it runs, figures not meaningful)")
    parser.add_argument("--profile", metavar="OPERATION", help="profile one operation (Query, GetItem, ...) instead")
    parser.add_argument("--profile-out", metavar="PATH", help="with --profile: also write the pstats file there")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if args.profile:
        _profile(args.profile, args.samples, args.profile_out)
        return
    samples, sends = (5, 5) if args.quick else (args.samples, args.sends)
    figures = _measure(samples, sends)
    if args.json:
        print(json.dumps(figures, indent=2))
    else:
        _print(figures)


if __name__ == "__main__":
    main()
