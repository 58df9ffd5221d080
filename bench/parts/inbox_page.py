"""Benchmark of the inbox's first page and a run's listings on the embedded local stack (moto + our
handlers, over HTTP). Seeds `--items` pending questions across `--runs` runs (every run's await gate
parked on them; node `node-rare` on 10 of them, the rest on five common nodes; 10 claimed by the caller),
then times each first page (median, p95) and counts what it costs in DynamoDB: the calls, and the items
they read (`ScannedCount` of each Query's response, summed: a count, not a time).

Cases: every kind; kind=question; node rare and common; claimed=me and unclaimed; min_age_s; one run.
With `--history N`, one more run holds N items of history (N events, a tenth of them chained decisions,
and N/10 answered asks beside one pending): its asks, audit and events pages, and one item's reads
(GET the ask, GET the run's pending questions) at history 0 and N.

The items are written straight through the store (`put_interaction`, as the API's ask) or, for the
history, `BatchWriteItem` of the items `append_event` writes, so the seeding is fast; what is timed is
the whole page: HTTP, auth, the Queries, the merge and the JSON.

Usage: uv run python bench/parts/inbox_page.py [--items 1000] [--runs 100] [--history 0] [--samples 30] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import threading
import time
from collections import Counter
from datetime import timedelta
from pathlib import Path
from typing import Any

_calls: Counter[str] = Counter()
_scanned: Counter[str] = Counter()
_counting = threading.Event()
_in_aws = threading.local()  # seconds this thread spent inside DynamoDB calls (moto, here)
RARE_NODE = "node-rare"
HISTORY_RUN = "bench-history"
EMPTY_RUN = "bench-fresh"


def _install_counter() -> None:
    """Every botocore client created from now on reports its DynamoDB calls and the items they read."""
    import botocore.session

    original = botocore.session.Session.create_client

    def counted() -> bool:  # the scheduled reconciler and sweeper run on their own threads: not the page's
        return _counting.is_set() and not threading.current_thread().name.startswith("schedule-")

    def create_client(self: Any, *args: Any, **kwargs: Any) -> Any:
        client = original(self, *args, **kwargs)

        def count(params: Any, model: Any, **_: Any) -> None:
            if counted():
                _calls[f"{model.name} on {params.get('IndexName', 'the table')}"] += 1

        def before(**_: Any) -> None:
            _in_aws.began = time.perf_counter()

        def after(parsed: Any = None, model: Any = None, **_: Any) -> None:
            _in_aws.total = getattr(_in_aws, "total", 0.0) + time.perf_counter() - getattr(_in_aws, "began", 0.0)
            if counted() and isinstance(parsed, dict) and model is not None:
                read = parsed.get("ScannedCount", 1 if parsed.get("Item") else len(parsed.get("Responses", {})))
                _scanned[model.name] += int(read)

        client.meta.events.register("provide-client-params.dynamodb.*", count)
        client.meta.events.register("before-call.dynamodb.*", before)
        client.meta.events.register("after-call.dynamodb.*", after)
        return client

    botocore.session.Session.create_client = create_client  # type: ignore[method-assign]


def _seed(items: int, runs: int, me: str) -> None:
    from baton.ids import iso
    from baton.models import Interaction, InteractionStatus, ParkedWait, parse_request
    from baton.runtime.wiring import services

    core = services().core
    start = core.clock.now() - timedelta(hours=2)
    lease = iso(core.clock.now() + timedelta(hours=1))
    rare = {n * (items // 10) for n in range(10)}
    for n in range(items):
        claimed = n in {n * (items // 10) + 1 for n in range(10)}
        core.store.put_interaction(
            Interaction(
                interaction_id=f"01BENCH{n:019d}",
                run_id=f"bench-{n % runs:03d}",
                created_at=iso(start + timedelta(seconds=n / max(1, items / 3600))),
                request=parse_request(
                    {"kind": "question", "node": RARE_NODE if n in rare else f"node-{n % 5}", "prompt": f"Q {n}?"}
                ),
                state=InteractionStatus(claimed_by=me, claimed_at=iso(start), lease_expires_at=lease)
                if claimed
                else InteractionStatus(),
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


def _seed_history(run_id: str, history: int) -> str:
    """A run with `history` events (every tenth a chained decision) and history/10 answered asks beside
    one pending ask, written as `append_event` and `put_interaction` write them; returns the pending ask's id."""
    from baton.adapters.dynamo_items import AUDIT_HEAD_SK, interaction_values, to_item
    from baton.domain.audit import EMPTY_HEAD, chain
    from baton.ids import UlidGenerator, iso
    from baton.models import Event, Interaction, InteractionStatus, RunSummary, parse_request
    from baton.runtime.wiring import services

    core = services().core
    store: Any = core.store  # the DynamoStore: the bench writes its items in batches
    ids, at = UlidGenerator(), iso(core.clock.now())
    store.create_run(RunSummary(run_id=run_id, workflow="bench", status="running", created_at=at, updated_at=at))
    writes: list[dict[str, Any]] = []
    head = EMPTY_HEAD
    for n in range(history):
        decision = n % 10 == 0
        event = Event(
            event_id=ids.new_id(),
            run_id=run_id,
            type="interaction_answered" if decision else "human_input_requested",
            at=at,
            data={"n": n},
        )
        chained, head = chain([event], head) if decision else ([], head)
        writes.append(store._event_values(event, chained[0] if chained else None))
        if n % 10 == 5:
            request = parse_request({"kind": "ask", "node": "agent", "prompt": f"Ask {n}?"})
            answered = InteractionStatus(status="answered", answer="yes", answered_by="bench", answered_at=at)
            asked = Interaction(
                interaction_id=ids.new_id(), run_id=run_id, created_at=at, request=request, state=answered
            )
            writes.append(interaction_values(asked))
    if head.seq:
        writes.append({"PK": f"RUN#{run_id}", "SK": AUDIT_HEAD_SK, "record": "audit_head", **head.model_dump()})
    for n in range(0, len(writes), 25):
        batch = [{"PutRequest": {"Item": to_item(v)}} for v in writes[n : n + 25]]
        store._db.batch_write_item(RequestItems={store._table: batch})
    pending = Interaction(
        interaction_id=ids.new_id(),
        run_id=run_id,
        created_at=at,
        request=parse_request({"kind": "ask", "node": "agent", "prompt": "Still open?"}),
    )
    store.put_interaction(pending)
    return pending.interaction_id


def _time(http: Any, path: str, samples: int, *, name: str | None = None) -> dict[str, Any]:
    import httpx

    timings: list[float] = []
    _calls.clear()
    _scanned.clear()
    body: Any = {}
    for _ in range(samples):
        _counting.set()
        began = time.perf_counter()
        try:
            response = http.get(path)
        except httpx.TimeoutException:  # a page slower than the client's timeout: say so, go on
            timings.append((time.perf_counter() - began) * 1000)
            break
        finally:
            _counting.clear()
        timings.append((time.perf_counter() - began) * 1000)
        response.raise_for_status()
        body = response.json()
    ordered = sorted(timings)
    listed = next((v for v in body.values() if isinstance(v, list)), [body]) if isinstance(body, dict) else body
    print(f"  ... {name or path}: {statistics.median(timings):.0f} ms", file=sys.stderr, flush=True)
    return {
        "case": name or path,
        "path": path,
        "items_on_page": len(listed) if body else "timed out",
        "has_next": body.get("next") is not None if isinstance(body, dict) else False,
        "median_ms": round(statistics.median(timings), 2),
        "p95_ms": round(ordered[max(0, int(len(ordered) * 0.95) - 1)], 2),
        "dynamodb_calls_per_page": {k: v / len(timings) for k, v in sorted(_calls.items())},
        "items_read_per_page": sum(_scanned.values()) / len(timings),
    }


def _inbox_cases(http: Any, samples: int) -> list[dict[str, Any]]:
    cases = {
        "every kind": "/api/inbox?limit=50",
        "kind=question": "/api/inbox?kind=question&limit=50",
        "node rare (10 items)": f"/api/inbox?kind=question&node={RARE_NODE}&limit=50",
        "node common (a fifth)": "/api/inbox?node=node-2&limit=50",
        "claimed=me (10 items)": "/api/inbox?kind=question&claimed=me&limit=50",
        "claimed=unclaimed": "/api/inbox?claimed=unclaimed&limit=50",
        "min_age_s=3600": "/api/inbox?kind=question&min_age_s=3600&limit=50",
        "one run": "/api/inbox?kind=question&run=bench-007&limit=50",
    }
    return [_time(http, path, samples, name=name) for name, path in cases.items()]


def _history_cases(http: Any, samples: int, history: int, asks: dict[str, str]) -> list[dict[str, Any]]:
    results = []
    for run_id, label in ((EMPTY_RUN, "history 0"), (HISTORY_RUN, f"history {history}")):
        base = f"/api/runs/{run_id}"
        results += [
            _time(http, f"{base}/asks", samples, name=f"{label}: the run's asks"),
            _time(http, f"{base}/audit?limit=100", samples, name=f"{label}: audit first page"),
            _time(http, f"{base}/events?limit=100", samples, name=f"{label}: events first page"),
            _time(http, f"{base}/asks/{asks[run_id]}", samples, name=f"{label}: one ask"),
            _time(http, f"{base}/interactions/pending", samples, name=f"{label}: pending questions"),
        ]
    return results


def _time_service(samples: int) -> dict[str, Any]:
    """The kind=question first page in-process (no HTTP, no auth): the Queries on moto, the merge, the model."""
    from baton.contracts.inbox import InboxQuery
    from baton.runtime.wiring import services
    from baton.services.inbox import InboxService

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
    parser.add_argument("--history", type=int, default=0, help="items of history in one run (0: no history cases)")
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
            headers = {"Authorization": f"Bearer {info.token}"}
            with httpx.Client(base_url=info.api_url, headers=headers, timeout=300) as http:
                me = http.get("/api/me").json()["principal"]  # warm: the API handler's cold start
                began = time.perf_counter()
                _seed(args.items, args.runs, me)
                asks = {EMPTY_RUN: _seed_history(EMPTY_RUN, 0)}
                if args.history:
                    asks[HISTORY_RUN] = _seed_history(HISTORY_RUN, args.history)
                seeded_s = time.perf_counter() - began
                results = _inbox_cases(http, args.samples)
                if args.history:
                    results += _history_cases(http, args.samples, args.history, asks)
            in_process = _time_service(args.samples)
        finally:
            stack.stop()
    load = round(os.getloadavg()[0], 2)
    report = {"items": args.items, "runs": args.runs, "history": args.history, "samples": args.samples}
    if args.json:
        print(
            json.dumps(
                {**report, "seeded_s": round(seeded_s, 2), "load_1m": load, "pages": results, "in_process": in_process},
                indent=2,
            )
        )
        return
    print(f"machine: {os.cpu_count()} cores, 1-minute load average {load}; seeded in {seeded_s:.1f} s")
    print(f"first pages: {args.items} pending questions across {args.runs} runs, history {args.history}")
    print(f"  {'case':<34} {'items':>5} {'next':>5} {'median ms':>10} {'p95 ms':>8} {'read':>7}  calls")
    for r in results:
        calls = ", ".join(f"{k} x{v:g}" for k, v in r["dynamodb_calls_per_page"].items())
        print(
            f"  {r['case']:<34} {r['items_on_page']:>5} {r['has_next']!s:>5} {r['median_ms']:>10} "
            f"{r['p95_ms']:>8} {r['items_read_per_page']:>7g}  {calls}"
        )
    print(
        f"  the kind=question page in-process (InboxService.page on moto, no HTTP): "
        f"median {in_process['median_ms']} ms, max {in_process['max_ms']} ms; outside the DynamoDB calls "
        f"(the merge, the items): median {in_process['outside_dynamodb_median_ms']} ms"
    )


if __name__ == "__main__":
    main()
