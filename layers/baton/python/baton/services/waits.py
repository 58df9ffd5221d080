"""How long things wait (`GET /api/stats/waits`): pending count and oldest age per kind and per workflow,
the oldest items, and answer times (p50/p95) and deadlines met or missed over the last day and week.

Every read is bounded, never a Scan:
- pending: the inbox's every-kind page (`page_all_pending`, the all-pending index), oldest first, up to
  `PENDING_SAMPLE` items; the workflows of their runs in BatchGetItems of 100. Past the sample the
  per-kind figures come from the pending-age alarms' reads (oldest and `Select=COUNT` per kind), so
  they and `count` stay exact; per workflow counts only the sample;
- settled: no index orders items by answer time, so each kind's `answered` and `timed_out` items are
  read from the by_status index, one page of `SETTLED_PAGE` each (`page_interactions`), and filtered to
  the windows (`baton.domain.wait_times`). A read that stopped early says so (`truncated`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from baton.contracts.inbox import INBOX_KINDS
from baton.contracts.waits import AnswerTimes, KindWaits, PendingWaits, WaitStats
from baton.domain.wait_times import (
    WINDOWS,
    answer_window,
    oldest_item,
    pending_by_kind,
    pending_by_workflow,
    seconds_between,
)
from baton.ids import iso
from baton.models import PendingQuery

if TYPE_CHECKING:
    from datetime import datetime

    from baton.services.core import Core

PENDING_SAMPLE = 500
SETTLED_PAGE = 200
OLDEST_SHOWN = 10


class WaitStatsService:
    def __init__(self, core: Core) -> None:
        self.core = core

    def stats(self) -> WaitStats:
        now = self.core.clock.now()
        return WaitStats(as_of=iso(now), pending=self._pending(now), answers=self._answers(now))

    def _pending(self, now: datetime) -> PendingWaits:
        items, resume_after = self.core.store.page_all_pending(PendingQuery(newest_first=False, limit=PENDING_SAMPLE))
        truncated, as_of = resume_after is not None, iso(now)
        ages = {i.interaction_id: seconds_between(as_of, i.created_at) for i in items}
        by_kind = self._by_kind_counted(now) if truncated else pending_by_kind(items, ages)
        workflows = {run.run_id: run.workflow for run in self.core.store.get_runs({i.run_id for i in items})}
        return PendingWaits(
            count=sum(k.pending for k in by_kind),
            sampled=len(items),
            truncated=truncated,
            by_kind=by_kind,
            by_workflow=pending_by_workflow(items, ages, workflows),
            oldest=[oldest_item(i, as_of, ages[i.interaction_id]) for i in items[:OLDEST_SHOWN]],
        )

    def _by_kind_counted(self, now: datetime) -> list[KindWaits]:
        from baton.runtime.parked_age import pending_ages  # the metrics library: loaded only on this path

        return [
            KindWaits(kind=a.kind, pending=a.count, oldest_age_s=a.oldest_age_seconds if a.oldest_run_id else None)
            for a in pending_ages(self.core.store, now, INBOX_KINDS)
        ]

    def _answers(self, now: datetime) -> AnswerTimes:
        store, statuses = self.core.store, ("answered", "timed_out")
        pages = [store.page_interactions(kind, status=s, limit=SETTLED_PAGE) for kind in INBOX_KINDS for s in statuses]
        settled = [i for found, _ in pages for i in found]
        windows = [answer_window(window, now, settled) for window in WINDOWS]
        return AnswerTimes(sampled=len(settled), truncated=any(more is not None for _, more in pages), windows=windows)
