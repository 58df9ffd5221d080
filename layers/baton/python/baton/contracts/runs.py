"""Responses of the run routes: a run's summary, its event log, the result of a resume."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from baton.contracts.base import Contract
from baton.models import RunState


class StartedRun(Contract):
    """A run as stored: POST /api/runs answers with it (201)."""

    run_id: str
    status: RunState
    workflow: str | None = None
    hosted: bool = False
    execution_arn: str | None = None
    created_at: str
    updated_at: str
    reason: str | None = None
    output: Any = Field(default=None, description="The workflow's output once it ended (any JSON).")
    final_commit: str | None = None
    final_branch: str | None = None
    merged_into: str | None = None
    merge_status: str | None = None
    ended_at: str | None = Field(default=None, description="When the run's execution stopped (its own stop time).")


class RunView(StartedRun):
    """GET /api/runs/{run_id}: the run, refreshed from Step Functions, with its interactions counted."""

    interactions: dict[str, int] = Field(default_factory=dict, description="Interactions per status.")


class EventView(Contract):
    event_id: str
    run_id: str
    type: str = Field(description="What happened, e.g. run_started, human_input_requested, interaction_answered.")
    at: str
    # The payload's keys depend on the event type; each writer in baton/services/ names them.
    data: dict[str, Any] = Field(default_factory=dict)


class EventPage(Contract):
    events: list[EventView]
    next: str | None = Field(default=None, description="Cursor: pass it as ?after= to read on.")


class ResumeResult(Contract):
    """POST /api/runs/{run_id}/resume: the answers are stored; `resumed` says the gate was released."""

    interaction_id: str
    node: str
    queued: bool
    resumed: bool


class ReviewActionResult(ResumeResult):
    """A resume carrying the reserved `__review_*` keys: the review gate took the operator's action."""

    action: str = Field(description="reply | approve_merge | force_merge | request_changes")
