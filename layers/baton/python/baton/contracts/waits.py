"""The response of `GET /api/stats/waits` (operators): how long things wait for a person. Built by
`baton.services.waits`; the web inbox's Waits page reads it.

Both halves say how much they read: `sampled` items, `truncated` when the bounded read stopped before
the end (then the per-workflow and settled figures are of the sample: the read is never an unbounded
scan; the per-kind pending figures stay exact). There is no team
dimension: a deployment's table is one team's (`baton-<team>-...`), and a run carries no team."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from baton.contracts.base import Contract
from baton.contracts.inbox import InboxKind

Window = Literal["day", "week"]


class KindWaits(Contract):
    """One kind's pending items, the same figures as the pending-age alarms (`OldestPendingAgeSeconds`)."""

    kind: InboxKind
    pending: int = Field(ge=0)
    oldest_age_s: int | None = Field(default=None, ge=0, description="Null when none is pending.")


class WorkflowWaits(Contract):
    """The pending items of one workflow's runs."""

    workflow: str | None = Field(description="The run's workflow; null for a run started without one.")
    pending: int = Field(ge=0)
    oldest_age_s: int = Field(ge=0)


class OldestItem(Contract):
    """One of the longest-waiting pending items (its page: the inbox's item route for `kind` and `id`)."""

    kind: InboxKind
    run_id: str
    id: str
    title: str
    created_at: str
    age_s: int = Field(ge=0)
    expires_at: str | None = Field(default=None, description="Its deadline; null when it has none.")


class PendingWaits(Contract):
    """What is pending now, read oldest first from the all-pending index."""

    count: int = Field(ge=0, description="Pending items (the sum of `by_kind`: exact even when `truncated`).")
    sampled: int = Field(ge=0)
    truncated: bool
    by_kind: list[KindWaits]
    by_workflow: list[WorkflowWaits] = Field(description="Longest oldest wait first; of the sampled items.")
    oldest: list[OldestItem] = Field(description="The 10 longest-waiting, oldest first.")


class AnswerWindow(Contract):
    """Items settled in the window: how long a person took to answer, and deadlines met or missed."""

    window: Window
    since: str
    answered: int = Field(ge=0, description="Answered by a person in the window.")
    p50_s: int | None = Field(default=None, ge=0, description="Median seconds from asked to answered.")
    p95_s: int | None = Field(default=None, ge=0)
    deadlines_met: int = Field(ge=0, description="Answered by a person before its deadline.")
    deadlines_missed: int = Field(ge=0, description="Timed out, or took its default at its deadline.")


class AnswerTimes(Contract):
    """Settled items by kind and status (the by_status index; there is no index by answer time, so each
    kind's answered and timed-out items are read up to a page limit and filtered to the windows)."""

    sampled: int = Field(ge=0)
    truncated: bool
    windows: list[AnswerWindow]


class WaitStats(Contract):
    """How long things wait: now (`pending`) and over the last day and week (`answers`)."""

    as_of: str
    pending: PendingWaits
    answers: AnswerTimes
