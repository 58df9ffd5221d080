"""How long things wait (`GET /api/stats/waits`) on the DynamoDB adapter (moto): pending items of several
kinds, runs of two workflows and one without, and settled items at known times under an injected clock,
so every figure is known: counts and oldest ages per kind and workflow, the oldest items in order,
p50/p95 by nearest rank, deadlines met and missed per window. Reads are Queries and one BatchGetItem,
never a Scan; the settled read is bounded and says so when it stops early."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import boto3
import pytest
from moto import mock_aws

from baton.adapters.dynamo import DynamoStore
from baton.domain.ladder import TIMED_OUT_DEFAULT
from baton.domain.wait_times import percentile
from baton.ids import iso
from baton.local.moto_fixes import atomic_dynamodb_writes
from baton.local.moto_scale import dynamodb_at_scale
from baton.models import Interaction, InteractionStatus, RunSummary, parse_request
from baton.services import waits
from baton.services.core import Core
from baton.services.waits import WaitStatsService
from baton.workflows.table import create_table_kwargs
from tests.conftest import FixedClock
from tests.fakes import FakeWorkflows, MemoryStore, RecordingNotifier, RecordingTaskTokens

HOUR, DAY = 3600, 86400


@pytest.fixture
def dynamo(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[DynamoStore, list[str]]]:
    for key in ("AWS_ENDPOINT_URL", "AWS_PROFILE"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    with mock_aws(), atomic_dynamodb_writes(), dynamodb_at_scale():
        client = boto3.client("dynamodb", region_name="us-east-1")
        client.create_table(**create_table_kwargs("waits-it"))
        calls: list[str] = []
        client.meta.events.register("provide-client-params.dynamodb.*", lambda model, **_: calls.append(model.name))
        yield DynamoStore("waits-it", client), calls


def _request(kind: str, n: int) -> Any:
    data: dict[str, Any] = {"kind": kind, "node": f"node-{n}", "prompt": f"{kind} {n}?"}
    if kind == "interrupt":
        data["schema"] = {"type": "string"}
    if kind == "review":
        data["config"] = {"run_branch": "feature", "merge_into": "main"}
        data["diff"] = {"files_changed": 2}
    if kind == "tool_approval":
        call = {"tool": "Bash", "arguments": {"command": "ls"}}
        data["tool"] = {"call": call, "digest": "0" * 64, "reason": "list the files"}
    return parse_request(data)


def _item(
    n: int,
    kind: str,
    run_id: str,
    created_s_ago: int,
    clock: FixedClock,
    *,
    status: Any = None,
    deadline_s: int | None = None,
) -> Interaction:
    created = clock.now() - timedelta(seconds=created_s_ago)
    return Interaction(
        interaction_id=f"01W{n:023d}",
        run_id=run_id,
        created_at=iso(created),
        expires_at=iso(created + timedelta(seconds=deadline_s)) if deadline_s is not None else None,
        request=_request(kind, n),
        state=status or InteractionStatus(),
    )


def _answered(clock: FixedClock, asked_s_ago: int, took_s: int, **more: Any) -> InteractionStatus:
    at = clock.now() - timedelta(seconds=asked_s_ago - took_s)
    return InteractionStatus(status="answered", answered_by="alice", answered_at=iso(at), answer="yes", **more)


def _core(store: Any, clock: FixedClock) -> Core:
    return Core(
        store=store, tokens=RecordingTaskTokens(), workflows=FakeWorkflows(), notifier=RecordingNotifier(), clock=clock
    )


def _seed(store: Any, clock: FixedClock) -> None:
    now = iso(clock.now())
    for run_id, workflow in (("run-deploy", "deploy"), ("run-triage", "triage"), ("run-bare", None)):
        store.create_run(RunSummary(run_id=run_id, workflow=workflow, created_at=now, updated_at=now))
    pending = [
        ("question", "run-deploy", 2 * HOUR),
        ("question", "run-triage", 30 * 60),
        ("interrupt", "run-triage", 3 * HOUR),
        ("review", "run-deploy", 10 * 60),
        ("tool_approval", "run-bare", 45),
    ]
    for n, (kind, run_id, ago) in enumerate(pending):
        store.put_interaction(_item(n, kind, run_id, ago, clock, deadline_s=4 * HOUR))
    # 20 answered in the last day, answer times 10, 20, ... 200 s, half with a deadline they met
    for n in range(20):
        status = _answered(clock, HOUR + n, 10 * (n + 1))
        kind = ("question", "interrupt", "ask")[n % 3]
        store.put_interaction(
            _item(100 + n, kind, "run-deploy", HOUR + n, clock, status=status, deadline_s=HOUR if n % 2 else None)
        )
    # two answered three days ago (in the week only): 1000 s and 2000 s, both before their deadlines
    for n, took in enumerate((1000, 2000)):
        status = _answered(clock, 3 * DAY, took)
        store.put_interaction(_item(200 + n, "question", "run-triage", 3 * DAY, clock, status=status, deadline_s=HOUR))
    # missed: one timed out today, one three days ago, one whose default was taken today (nobody answered)
    timed_out = InteractionStatus(status="timed_out")
    store.put_interaction(_item(300, "interrupt", "run-triage", 2 * HOUR, clock, status=timed_out, deadline_s=HOUR))
    store.put_interaction(_item(301, "question", "run-triage", 3 * DAY, clock, status=timed_out, deadline_s=HOUR))
    defaulted = InteractionStatus(
        status="answered", answered_at=iso(clock.now() - timedelta(seconds=HOUR)), reason=TIMED_OUT_DEFAULT, answer=1
    )
    store.put_interaction(_item(302, "question", "run-bare", 2 * HOUR, clock, status=defaulted, deadline_s=HOUR))
    # decided at once by a policy rule and by a remembered grant: nobody waited, in no figure below
    for n, by in enumerate(("policy:allow-ls", "grant:g-1")):
        at = iso(clock.now() - timedelta(seconds=HOUR))
        ruled = InteractionStatus(status="answered", answered_by=by, answered_at=at, answer={"decision": "approve"})
        store.put_interaction(_item(500 + n, "tool_approval", "run-bare", HOUR, clock, status=ruled, deadline_s=60))
    # settled more than a week ago: in no window
    store.put_interaction(_item(400, "question", "run-bare", 9 * DAY, clock, status=_answered(clock, 9 * DAY, 5)))


def test_the_figures_from_known_times(dynamo: tuple[DynamoStore, list[str]]) -> None:
    store, calls = dynamo
    clock = FixedClock()
    _seed(store, clock)
    calls.clear()
    stats = WaitStatsService(_core(store, clock)).stats()

    assert stats.as_of == iso(clock.now())
    pending = stats.pending
    assert (pending.count, pending.sampled, pending.truncated) == (5, 5, False)
    by_kind = {k.kind: (k.pending, k.oldest_age_s) for k in pending.by_kind}
    assert by_kind == {
        "question": (2, 2 * HOUR),
        "ask": (0, None),
        "await": (0, None),
        "interrupt": (1, 3 * HOUR),
        "review": (1, 600),
        "tool_approval": (1, 45),
    }
    assert [(w.workflow, w.pending, w.oldest_age_s) for w in pending.by_workflow] == [
        ("triage", 2, 3 * HOUR),
        ("deploy", 2, 2 * HOUR),
        (None, 1, 45),
    ]
    assert [(o.kind, o.run_id, o.age_s) for o in pending.oldest] == [
        ("interrupt", "run-triage", 3 * HOUR),
        ("question", "run-deploy", 2 * HOUR),
        ("question", "run-triage", 1800),
        ("review", "run-deploy", 600),
        ("tool_approval", "run-bare", 45),
    ]
    review = pending.oldest[3]
    assert review.title == "Review: run-deploy · feature → main · 2 files changed"
    assert review.expires_at == iso(clock.now() + timedelta(seconds=4 * HOUR - 600))

    answers = stats.answers
    assert (answers.sampled, answers.truncated) == (28, False)  # the 2 decided by rule are read, counted in no window
    day, week = answers.windows
    assert (day.window, day.since) == ("day", iso(clock.now() - timedelta(days=1)))
    # nearest rank over 10..200: p50 the 10th (100 s), p95 the 19th (190 s)
    assert (day.answered, day.p50_s, day.p95_s) == (20, 100, 190)
    # 10 met their deadline; missed: the timeout and the default taken today
    assert (day.deadlines_met, day.deadlines_missed) == (10, 2)
    # 22 times: 10..200, 1000, 2000: p50 the 11th (110 s), p95 the 21st (1000 s)
    assert (week.answered, week.p50_s, week.p95_s) == (22, 110, 1000)
    assert (week.deadlines_met, week.deadlines_missed) == (12, 3)

    # one Query of the all-pending index, one BatchGetItem of the runs, two by_status Queries per kind
    assert calls.count("Query") == 1 + 2 * 6 and calls.count("BatchGetItem") == 1
    assert set(calls) == {"Query", "BatchGetItem"}


def test_the_same_figures_from_the_in_memory_fake(dynamo: tuple[DynamoStore, list[str]]) -> None:
    store, _ = dynamo
    clock, memory = FixedClock(), MemoryStore()
    _seed(store, clock)
    _seed(memory, clock)
    assert WaitStatsService(_core(memory, clock)).stats() == WaitStatsService(_core(store, clock)).stats()


def test_a_read_past_its_page_limit_says_so(
    dynamo: tuple[DynamoStore, list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    store, _ = dynamo
    clock = FixedClock()
    _seed(store, clock)
    monkeypatch.setattr(waits, "PENDING_SAMPLE", 3)
    monkeypatch.setattr(waits, "SETTLED_PAGE", 4)
    stats = WaitStatsService(_core(store, clock)).stats()
    assert (stats.pending.sampled, stats.pending.truncated) == (3, True)
    # past the sample, per kind the alarms' reads: still exact
    assert stats.pending.count == 5 and sum(w.pending for w in stats.pending.by_workflow) == 3
    by_kind = {k.kind: (k.pending, k.oldest_age_s) for k in stats.pending.by_kind}
    assert by_kind["question"] == (2, 2 * HOUR) and by_kind["tool_approval"] == (1, 45)
    assert [o.age_s for o in stats.pending.oldest] == [3 * HOUR, 2 * HOUR, 1800]  # the oldest are read first
    assert stats.answers.truncated and stats.answers.sampled <= 4 * 2 * 6


def test_percentile_is_the_nearest_rank() -> None:
    assert percentile([], 0.5) is None
    assert percentile([7], 0.95) == 7
    assert percentile([1, 2, 3, 4], 0.5) == 2
    assert percentile(list(range(1, 101)), 0.95) == 95
