"""Runs: start a hosted run, read it, its events, and resume a human node."""

from __future__ import annotations

from typing import Annotated, Any

from aws_lambda_powertools.event_handler import Response, content_types
from aws_lambda_powertools.event_handler.openapi.params import Query
from aws_lambda_powertools.event_handler.router import APIGatewayRouter
from pydantic import BaseModel, Field

from baton.api import deps
from baton.api.contract import DELIVERY_PENDING, InteractionId, RunId, answered, responses
from baton.contracts import (
    BlockingAskRequest,
    BlockingAsks,
    BlockingAskView,
    EventPage,
    EventView,
    ResumeResult,
    ReviewActionResult,
    RunView,
    StartedRun,
)
from baton.domain import fields

router = APIGatewayRouter()


class StartRunRequest(BaseModel):
    workflow: str = Field(min_length=1, description="A registered workflow, e.g. 'human_pause' or 'demo'.")
    input: dict[str, Any] = Field(default_factory=dict, description="The workflow's input.")
    run_id: fields.RunId | None = Field(default=None, description="Caller-given run id; a ULID when omitted.")

    model_config = {"extra": "forbid"}


class EventsQuery(BaseModel):
    after: str | None = Field(default=None, description="Cursor: the last event id you have.")
    limit: int = Field(default=100, ge=1, le=500)


class ResumeRequest(BaseModel):
    answers: dict[str, Any] = Field(description="The operator's answers, delivered to the paused node.")
    node: fields.NodeName | None = Field(default=None, description="Which paused node, when the run waits at several.")

    model_config = {"extra": "forbid"}


class AskWaitQuery(BaseModel):
    # camelCase on the wire like the interrupts' long-poll, so the SDK's one long-poll call serves both
    wait_seconds: float = Field(
        default=0, ge=0, le=20, alias="waitSeconds", description="Long-poll: hold until answered (<= 20 s)."
    )

    model_config = {"populate_by_name": True}


@router.post(
    "/api/runs",
    summary="Start a hosted run",
    tags=["runs"],
    responses=responses({201: StartedRun}, 400, 403, 404, 409, 413),
)
def start_run(body: StartRunRequest) -> Response[StartedRun]:
    services = deps.get_services()
    caller = deps.require_operator("starting a hosted run")
    run = services.runs.start(body.workflow, body.input, run_id=body.run_id, caller=caller.principal)
    return Response(
        status_code=201,
        content_type=content_types.APPLICATION_JSON,
        body=StartedRun.model_validate(run.model_dump(exclude={"version"})),
    )


@router.get(
    "/api/runs/<run_id>",
    summary="Run summary: status, counts, merge fields",
    tags=["runs"],
    responses=responses({200: RunView}, 400, 403, 404),
)
def get_run(run_id: RunId) -> RunView:
    deps.require_run(run_id)
    return deps.get_services().runs.get(run_id)


@router.get(
    "/api/runs/<run_id>/events",
    summary="The run's event log, oldest first",
    tags=["runs"],
    responses=responses({200: EventPage}, 400, 403, 404),
)
def list_events(run_id: RunId, query: Annotated[EventsQuery, Query()]) -> EventPage:
    deps.require_run(run_id)
    events = deps.get_services().runs.events(run_id, after=query.after, limit=query.limit)
    return EventPage(
        events=[EventView.model_validate(e.model_dump()) for e in events],
        next=events[-1].event_id if events else query.after,
    )


@router.post(
    "/api/runs/<run_id>/resume",
    summary="Resume the run's paused human node (a review gate's action with the reserved __review_* keys)",
    tags=["runs"],
    responses=responses(
        {200: ReviewActionResult | ResumeResult, DELIVERY_PENDING: ReviewActionResult | ResumeResult},
        400,
        403,
        404,
        409,
        410,
        413,
    ),
)
def resume(run_id: RunId, body: ResumeRequest) -> Response[ReviewActionResult | ResumeResult]:
    caller = deps.require_operator("resuming a run")
    services = deps.get_services()
    # Review gates take the operator's action under the reserved __review_* keys (baton.services.review).
    # The same review action may be right twice (approve again after a rejected merge was fixed); the
    # review interaction's conditional writes guard them. Which gate waits is known from what is parked
    # (one read of the run's open part, handed on to the resume): a parked pause is resumed with no
    # review check; anything else asks the review wing first, as before.
    # not loaded at cold start
    from baton.domain.pause_rules import parked_pause
    from baton.domain.review_decision import ReviewDecision, is_review_answer

    snapshot = None if is_review_answer(body.answers) else services.core.store.snapshot_run(run_id)
    if snapshot is None or (
        parked_pause(snapshot, body.node) is None and services.review_service().waiting_at_review(run_id, body.node)
    ):
        decision = ReviewDecision.from_answers(body.answers)  # the __review_* keys, parsed once here
        acted = services.review_service().act(
            run_id, decision, caller=caller.principal, node=body.node, groups=caller.groups
        )
        return answered(acted)
    # A repeat of an accepted resume (same caller, same answers) gets the first one's 200 from the
    # stored answer (baton.services.pauses); different answers meet the deciding write's 409.
    from baton.services.pauses import Resume

    resume = Resume(run_id, body.answers, caller=caller.principal, node=body.node, groups=caller.groups)
    return answered(services.runs.resume(resume, snapshot=snapshot))


@router.post(
    "/api/runs/<run_id>/asks",
    summary="ask_user: the blocking ask of an agent that is not a workflow (answered with /resume)",
    tags=["runs"],
    responses=responses({201: BlockingAskView}, 400, 403, 404, 409, 413),
)
def blocking_ask(run_id: RunId, body: BlockingAskRequest) -> Response[BlockingAskView]:
    deps.require_run(run_id)
    from baton.services.asks import AskService

    asked = AskService(deps.get_services().core).ask(run_id, body, caller=deps.current_caller().principal)
    return Response(status_code=201, content_type=content_types.APPLICATION_JSON, body=BlockingAskView.of(asked))


@router.get(
    "/api/runs/<run_id>/asks/<interaction_id>",
    summary="One blocking ask; ?waitSeconds=0..20 long-polls until it is answered or timed out",
    tags=["runs"],
    responses=responses({200: BlockingAskView}, 400, 403, 404),
)
def get_blocking_ask(
    run_id: RunId, interaction_id: InteractionId, query: Annotated[AskWaitQuery, Query()]
) -> BlockingAskView:
    deps.require_run(run_id)
    from baton.services.asks import AskService

    found = AskService(deps.get_services().core).get(run_id, interaction_id, wait_seconds=query.wait_seconds)
    return BlockingAskView.of(found)


@router.get(
    "/api/runs/<run_id>/asks",
    summary="The run's pending blocking asks (an agent's ask_user, or a hosted run's pause), with how to answer",
    tags=["runs"],
    responses=responses({200: BlockingAsks}, 400, 403, 404),
)
def pending_asks(run_id: RunId) -> BlockingAsks:
    deps.require_run(run_id)
    from baton.services.asks import AskService

    found = AskService(deps.get_services().core).pending(run_id)
    return BlockingAsks(run_id=run_id, asks=[BlockingAskView.of(i) for i in found])
