"""The scheduled sweeps read what is due, not everything pending (on moto, the real adapter): with 1,000
pending and none due, the interrupt sweep and the reconciler's question defaults read no item, and the
pending-age check reads one item per kind (its oldest) and counts the rest without receiving them.
Once some are due, exactly those are read (the sparse `due` index, baton/workflows/table.py GSI4)."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

import pytest

from baton.domain.ladder import Ladder, TimeoutDefault
from baton.ids import iso
from baton.local.moto_scale import dynamodb_at_scale
from baton.models import Interaction, InterruptRequest, QuestionRequest
from baton.runtime.parked_age import PENDING_KINDS, pending_ages
from tests.conftest import FixedClock

if TYPE_CHECKING:
    from collections.abc import Iterator

    from baton.services.core import Core
    from tests.integration.conftest import MotoStack

INTERRUPTS, WITH_DEFAULT, WITHOUT_DEFAULT = 400, 300, 300  # 1,000 pending
SOON = 3  # due once the clock passes their deadline


class ItemsRead:
    """What the store's own client received from DynamoDB, by index ("table" for the table itself): items
    returned, and entries DynamoDB looked at (ScannedCount)."""

    def __init__(self, core: Core, monkeypatch: pytest.MonkeyPatch) -> None:
        self.items: Counter[str] = Counter()
        self.scanned: Counter[str] = Counter()
        self.scans = 0
        db: Any = core.store._db  # type: ignore[attr-defined]  # the store's own client
        query, get_item = db.query, db.get_item

        def counted_query(**kwargs: Any) -> Any:
            resp = query(**kwargs)
            where = kwargs.get("IndexName", "table")
            self.items[where] += len(resp.get("Items", []))
            self.scanned[where] += int(resp.get("ScannedCount", 0))
            return resp

        def counted_get(**kwargs: Any) -> Any:
            resp = get_item(**kwargs)
            self.items["table"] += 1 if "Item" in resp else 0
            return resp

        def no_scan(**_: Any) -> Any:
            self.scans += 1
            raise AssertionError("a sweep scanned the table")

        monkeypatch.setattr(db, "query", counted_query)
        monkeypatch.setattr(db, "get_item", counted_get)
        monkeypatch.setattr(db, "scan", no_scan)


def _pending(core: Core, n: int, kind: str, *, expires_in: int, default: bool = False) -> Interaction:
    now = core.clock.now()
    ladder = Ladder(on_timeout=TimeoutDefault(default="yes")) if default else None
    request: InterruptRequest | QuestionRequest
    if kind == "interrupt":
        request = InterruptRequest(node="deploy", prompt=f"go {n}?", timeout_ms=expires_in * 1000, ladder=ladder)
    else:
        request = QuestionRequest(node="draft", prompt=f"ship {n}?", timeout_seconds=expires_in, ladder=ladder)
    return Interaction(
        interaction_id=f"{kind[:1]}{default:d}-{n:04d}",
        run_id=f"sweep-{n % 20:02d}",
        created_at=iso(now),
        expires_at=iso(now + timedelta(seconds=expires_in)),
        request=request,
    )


@pytest.fixture
def core(moto_stack: MotoStack) -> Iterator[Core]:
    with dynamodb_at_scale():  # the local stack's moto: a transaction copies its items, not the table
        yield _filled(moto_stack)


def _filled(moto_stack: MotoStack) -> Core:
    clock = FixedClock(datetime.now(UTC).replace(microsecond=0))
    moto_stack.services.core.clock = clock
    core = moto_stack.services.core
    for n in range(20):
        core.ensure_run(f"sweep-{n:02d}")
    store = core.store
    for n in range(INTERRUPTS):
        store.put_interaction(_pending(core, n, "interrupt", expires_in=SOON if n < 2 else 3600))
    for n in range(WITH_DEFAULT):
        store.put_interaction(_pending(core, n, "question", expires_in=SOON if n < 2 else 3600, default=True))
    for n in range(WITHOUT_DEFAULT):  # nothing happens at their deadline: no sweep reads them, even past it
        store.put_interaction(_pending(core, n, "question", expires_in=1))
    return core


def test_with_1000_pending_the_sweeps_read_only_what_is_due(
    moto_stack: MotoStack, core: Core, monkeypatch: pytest.MonkeyPatch
) -> None:
    read = ItemsRead(core, monkeypatch)
    assert moto_stack.services.interrupts.sweep() == []
    assert moto_stack.services.reconciler.take_question_defaults() == []
    assert sum(read.items.values()) == 0 and sum(read.scanned.values()) == 0  # not one item looked at

    ages = {a.kind: a for a in pending_ages(core.store, core.clock.now())}
    assert ages["interrupt"].count == INTERRUPTS and ages["question"].count == WITH_DEFAULT + WITHOUT_DEFAULT
    assert ages["question"].oldest_run_id is not None and ages["ask"].count == 0
    assert len(ages) == len(PENDING_KINDS)
    # the oldest of each kind with any pending received, nothing else (the counts: Select=COUNT, no items)
    assert +read.items == {"pending": 2}
    assert read.scans == 0

    # once some are due, exactly those are read
    clock = core.clock
    assert isinstance(clock, FixedClock)
    clock.advance(SOON + 1)  # two interrupts and two questions with a default are past their deadline
    read.items.clear()
    read.scanned.clear()
    assert sorted(moto_stack.services.interrupts.sweep()) == ["i0-0000", "i0-0001"]
    assert read.items["due"] == 2 and read.scanned["due"] == 2  # the two due, not the 398 still running
    taken = moto_stack.services.reconciler.take_question_defaults()
    assert sorted(t["interaction_id"] for t in taken) == ["q1-0000", "q1-0001"]
    # the two due questions with a default; not the 300 without one, though past their deadline too
    assert read.items["due"] == 4 and read.scanned["due"] == 4
    assert read.items["pending"] == 0 and read.scans == 0
