"""Benchmark of the inbox's first page on the embedded local stack (moto + our handlers, over HTTP):
1,000 pending questions across 100 runs (every run's await gate parked on them), then
`GET /api/inbox?kind=question&limit=50` and `GET /api/inbox?limit=50` (every kind) timed from the client
(median, p95), with the DynamoDB calls each page costs counted by a botocore `before-call` hook. The
every-kind page is ONE Query of the all-pending index (GSI3, `baton/workflows/table.py`); the
kind=question page is ONE Query of that kind's partition. What each item blocks is on the item (each
run's await gate names its questions when it parks, as `QuestionService.park_gate` writes it).

The items are written straight through the store (the same `put_interaction` the API's ask uses), so the
seeding is fast; what is timed is the whole page: HTTP, auth, the Queries, the merge and the JSON.

Usage: uv run python bench/parts/inbox_page.py [--items 1000] [--runs 100] [--samples 30] [--json]
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
from datetime import timedelta
from pathlib import Path
from typing import Any

_calls: Counter[str] = Counter()
_counting = threading.Event()
_in_aws = threading.local()  # seconds this thread spent inside DynamoDB calls (moto, here)


def _install_counter() -> None:
    """Every botocore client created from now on reports its DynamoDB calls to `_calls`."""
    import botocore.session

    original = botocore.session.Session.create_client

    def create_client(self: Any, *args: Any, **kwargs: Any) -> Any:
        client = original(self, *args, **kwargs)

        def count(params: Any, model: Any, **_: Any) -> None:
            # the scheduled reconciler and sweeper run on their own threads: not the page's calls
            if _counting.is_set() and not threading.current_thread().name.startswith("schedule-"):
                _calls[f"{model.name} on {params.get('IndexName', 'the table')}"] += 1

        def before(**_: Any) -> None:
            _in_aws.began = time.perf_counter()

        def after(**_: Any) -> None:
            _in_aws.total = getattr(_in_aws, "total", 0.0) + time.perf_counter() - getattr(_in_aws, "began", 0.0)

        client.meta.events.register("provide-client-params.dynamodb.*", count)
        client.meta.events.register("before-call.dynamodb.*", before)
        client.meta.events.register("after-call.dynamodb.*", after)
        return client

    botocore.session.Session.create_client = create_client  # type: ignore[method-assign]


def _seed(items: int, runs: int) -> None:
    from baton.ids import iso
    from baton.models import Interaction, ParkedWait, parse_request
    from baton.runtime.wiring import services

    core = services().core
    start = core.clock.now() - timedelta(hours=2)
    for n in range(items):
        core.store.put_interaction(
            Interaction(
                interaction_id=f"01BENCH{n:019d}",
                run_id=f"bench-{n % runs:03d}",
                created_at=iso(start + timedelta(seconds=n)),
                request=parse_request({"kind": "question", "node": f"node-{n % 5}", "prompt": f"Question {n}?"}),
            )
        )
    for r in range(runs):  # a park names the questions it waits on, and marks them (`put_wait`)
        core.store.put_wait(
            ParkedWait(
                run_id=f"bench-{r:03d}",
                gate="await_answers",
                task_token=f"bench-token-{r}",
                kind="await",
                interaction_ids=[f"01BENCH{n:019d}" for n in range(r, items, runs)],
                parked_at=iso(start),
            )
        )


def _time(http: Any, path: str, samples: int) -> dict[str, Any]:
    timings: list[float] = []
    _calls.clear()
    for _ in range(samples):
        _counting.set()
        began = time.perf_counter()
        response = http.get(path)
        timings.append((time.perf_counter() - began) * 1000)
        _counting.clear()
        response.raise_for_status()
    page = response.json()
    ordered = sorted(timings)
    return {
        "path": path,
        "items_on_page": page["count"],
        "items_naming_their_gate": sum(1 for item in page["items"] if item["blocks"]["gate"]),
        "has_next": page["next"] is not None,
        "median_ms": round(statistics.median(timings), 2),
        "p95_ms": round(ordered[max(0, int(len(ordered) * 0.95) - 1)], 2),
        "dynamodb_calls_per_page": {k: v / samples for k, v in sorted(_calls.items())},
    }


def _time_service(samples: int) -> dict[str, Any]:
    """The same first page in-process (no HTTP, no auth): the Queries on moto, the merge, the model."""
    from baton.runtime.wiring import services
    from baton.services.inbox import InboxQuery, InboxService

    service = InboxService(services().core)
    timings, outside = [], []
    for _ in range(samples):
        _in_aws.total = 0.0
        began = time.perf_counter()
        service.page(InboxQuery(kinds=("question",), limit=50), caller="bench")
        elapsed = time.perf_counter() - began
        timings.append(elapsed * 1000)
        outside.append((elapsed - _in_aws.total) * 1000)
    return {
        "median_ms": round(statistics.median(timings), 2),
        "max_ms": round(max(timings), 2),
        "outside_dynamodb_median_ms": round(statistics.median(outside), 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--items", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--samples", type=int, default=30)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    _install_counter()

    import httpx

    from baton.local.stack import LocalStack

    with tempfile.TemporaryDirectory() as state_dir:
        stack = LocalStack(api_port=0, state_dir=Path(state_dir), data="off")
        info = stack.start()
        try:
            began = time.perf_counter()
            _seed(args.items, args.runs)
            seeded_s = time.perf_counter() - began
            headers = {"Authorization": f"Bearer {info.token}"}
            with httpx.Client(base_url=info.api_url, headers=headers, timeout=60) as http:
                http.get("/api/inbox?limit=1").raise_for_status()  # warm: the API handler's cold start
                results = [
                    _time(http, "/api/inbox?kind=question&limit=50", args.samples),
                    _time(http, "/api/inbox?limit=50", args.samples),
                ]
            in_process = _time_service(args.samples)
        finally:
            stack.stop()
    load = round(os.getloadavg()[0], 2)
    report = {"items": args.items, "runs": args.runs, "samples": args.samples, "seeded_s": round(seeded_s, 2)}
    if args.json:
        print(json.dumps({**report, "load_1m": load, "pages": results, "in_process": in_process}, indent=2))
        return
    print(f"machine: {os.cpu_count()} cores, 1-minute load average {load}")
    print(f"inbox first page: {args.items} pending questions across {args.runs} runs ({args.samples} samples each)")
    for result in results:
        print(f"  GET {result['path']}")
        print(
            f"    {result['items_on_page']} items ({result['items_naming_their_gate']} naming the gate they block), "
            f"next page: {result['has_next']}"
        )
        print(f"    median {result['median_ms']} ms, p95 {result['p95_ms']} ms")
        calls = ", ".join(f"{k} x{v:g}" for k, v in result["dynamodb_calls_per_page"].items())
        print(f"    DynamoDB calls per page: {calls}")
    print(
        f"  the same kind=question page in-process (InboxService.page on moto, no HTTP): "
        f"median {in_process['median_ms']} ms, max {in_process['max_ms']} ms; outside the DynamoDB calls "
        f"(the merge, the items): median {in_process['outside_dynamodb_median_ms']} ms"
    )


if __name__ == "__main__":
    main()
