"""Responses of the run routes (a run's summary, its event log, the result of a resume) and what a plain
pause's tasks return to their state machine."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import Field

from baton.contracts.base import DELIVERY_DESCRIPTION, Contract, Delivery
from baton.contracts.questions import ApprovalView
from baton.domain.fields import RunState

if TYPE_CHECKING:
    from baton.models import Interaction


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
    status: str | None = Field(
        default=None, description="A quorum pause: pending until the quorum is met, then answered."
    )
    approval: ApprovalView | None = Field(default=None, description="A quorum pause: the count and who voted.")
    delivery: Delivery | None = Field(default=None, description=DELIVERY_DESCRIPTION)


class PauseOutput(Contract):
    """What an answered pause sends its workflow (the task token's output; a blocking ask's waiter reads it)."""

    interaction_id: str
    node: str
    answers: Any
    answered_by: str | None
    answered_at: str | None

    @classmethod
    def of(cls, answered: Interaction) -> PauseOutput:
        st = answered.state
        return cls(
            interaction_id=answered.interaction_id,
            node=answered.request.node,
            answers=st.answer,
            answered_by=st.answered_by,
            answered_at=st.answered_at,
        )


class GateTimedOut(Contract):
    """The `gate_timeout` task's output (its Catch on States.Timeout): the Fail state reads `cause`."""

    cause: str
    unanswered: list[str]


def _how_to_answer(run_id: str, interaction_id: str, options: list[str] | None) -> str:
    # The notification model's module, imported by the first ask shown (a route module's import need not
    # build that model).
    from baton.notify.model import how_to_answer_for

    return how_to_answer_for("ask", run_id, interaction_id, options=options)


class BlockingAskView(Contract):
    """POST /api/runs/{run_id}/asks (201) and GET /api/runs/{run_id}/asks/{interaction_id}: the blocking
    ask of an agent that is not a workflow, answered with POST /api/runs/{run_id}/resume."""

    interaction_id: str
    run_id: str
    node: str
    question: str
    options: list[str] | None = None
    status: str = Field(description="pending | answered | timed_out | cancelled")
    answers: Any = Field(default=None, description="The operator's answers (the resume's `answers`), once answered.")
    answered_by: str | None = None
    answered_at: str | None = None
    created_at: str
    expires_at: str | None = Field(default=None, description="Baton's deadline: after it, the ask is timed_out.")
    outcome: str | None = Field(
        default=None,
        description="timed_out_default: nobody answered; the pause's declared default was taken at its deadline "
        "(answered_by is then empty). Absent otherwise.",
    )
    how_to_answer: str = Field(description="The CLI command and API call an operator answers with.")

    @classmethod
    def of(cls, i: Interaction) -> BlockingAskView:
        return cls(
            interaction_id=i.interaction_id,
            run_id=i.run_id,
            node=i.request.node,
            question=i.request.prompt,
            options=i.request.options,
            status=i.state.status,
            answers=i.state.answer,
            answered_by=i.state.answered_by,
            answered_at=i.state.answered_at,
            created_at=i.created_at,
            expires_at=i.expires_at,
            outcome=i.state.outcome,
            how_to_answer=_how_to_answer(i.run_id, i.interaction_id, i.request.options),
        )


class BlockingAsks(Contract):
    """GET /api/runs/{run_id}/asks: the run's pending blocking asks, oldest first."""

    run_id: str
    asks: list[BlockingAskView]


class ReviewActionResult(ResumeResult):
    """A resume carrying the reserved `__review_*` keys: the review gate took the operator's action."""

    action: str = Field(description="reply | approve_merge | force_merge | request_changes")
    reviewed_head: str | None = Field(
        default=None, description="The commit the decision names (a merge takes exactly it); None for a reply."
    )
