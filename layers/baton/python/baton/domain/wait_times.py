"""How long a pause waited, as the Waits page (`baton.services.waits`) and the answer-time metrics
(`baton.runtime.answer_times`) both count it: when an item stopped waiting, how long that took, one
window's figures (answered by a person, p50/p95, deadlines met or missed), and the pending sample's
figures per kind and per workflow. No port: pure rules."""

from __future__ import annotations

import math
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from baton.contracts.inbox import INBOX_KINDS, InboxItem
from baton.contracts.waits import AnswerWindow, KindWaits, OldestItem, Window, WorkflowWaits
from baton.domain.approval import answered_by_rule
from baton.domain.ladder import TIMED_OUT_DEFAULT
from baton.ids import iso, parse_iso

if TYPE_CHECKING:
    from baton.models import Interaction

WINDOWS: dict[Window, timedelta] = {"day": timedelta(days=1), "week": timedelta(days=7)}


def percentile(sorted_values: list[int], q: float) -> int | None:
    """The nearest-rank percentile (the smallest value with at least `q` of them at or below it)."""
    if not sorted_values:
        return None
    return sorted_values[max(0, math.ceil(q * len(sorted_values)) - 1)]


def seconds_between(later: str, earlier: str) -> int:
    """Whole seconds from `earlier` to `later` (ISO times), never negative."""
    return max(0, int((parse_iso(later) - parse_iso(earlier)).total_seconds()))


def settled_at(i: Interaction) -> str:
    """When it stopped waiting: its answer's time, or for a timed-out one without it, its deadline."""
    return i.state.answered_at or i.expires_at or i.created_at


def answer_window(window: Window, now: datetime, settled: list[Interaction]) -> AnswerWindow:
    """The figures of one window over the settled items read (answered and timed out)."""
    since = iso(now - WINDOWS[window])
    # a rule's or a grant's answer at once is nobody's wait: neither answered by a person nor a deadline missed
    in_window = [i for i in settled if settled_at(i) >= since and not answered_by_rule(i.state.answered_by)]
    by_person = [i for i in in_window if i.state.status == "answered" and i.state.reason != TIMED_OUT_DEFAULT]
    times = sorted(seconds_between(settled_at(i), i.created_at) for i in by_person)
    met = sum(1 for i in by_person if i.expires_at is not None and settled_at(i) <= i.expires_at)
    return AnswerWindow(
        window=window,
        since=since,
        answered=len(by_person),
        p50_s=percentile(times, 0.50),
        p95_s=percentile(times, 0.95),
        deadlines_met=met,
        deadlines_missed=len(in_window) - len(by_person),
    )


def pending_by_kind(items: list[Interaction], ages: dict[str, int]) -> list[KindWaits]:
    """Per kind of the inbox, the pending items read (`ages`: seconds waited by id) and the oldest age."""
    of_kind = {kind: [ages[i.interaction_id] for i in items if i.kind == kind] for kind in INBOX_KINDS}
    return [
        KindWaits(kind=k, pending=len(found), oldest_age_s=max(found, default=None)) for k, found in of_kind.items()
    ]


def pending_by_workflow(
    items: list[Interaction], ages: dict[str, int], workflows: dict[str, str | None]
) -> list[WorkflowWaits]:
    """Per workflow of the items' runs (`workflows`: by run id), the longest-waiting first."""
    per_workflow: dict[str | None, list[int]] = {}
    for i in items:
        per_workflow.setdefault(workflows.get(i.run_id), []).append(ages[i.interaction_id])
    found = [WorkflowWaits(workflow=name, pending=len(a), oldest_age_s=max(a)) for name, a in per_workflow.items()]
    return sorted(found, key=lambda w: (-w.oldest_age_s, w.workflow or ""))


def oldest_item(i: Interaction, as_of: str, age: int) -> OldestItem:
    listed = InboxItem.of(i, as_of)  # its title as the inbox lists it (a review's run and branch)
    return OldestItem(
        kind=listed.kind,
        run_id=i.run_id,
        id=i.interaction_id,
        title=listed.title,
        created_at=i.created_at,
        age_s=age,
        expires_at=i.expires_at,
    )
