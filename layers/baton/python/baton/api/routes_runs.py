"""Runs: start a hosted run, read it, its events, and resume a human node."""

from __future__ import annotations

from typing import Annotated, Any

from aws_lambda_powertools.event_handler import Response, content_types
from aws_lambda_powertools.event_handler.openapi.params import Path, Query
from aws_lambda_powertools.event_handler.router import APIGatewayRouter
from pydantic import BaseModel, Field

from baton.api import deps
from baton.domain import fields
from baton.services.review import is_review_answer

router = APIGatewayRouter()

RunId = Annotated[fields.RunId, Path(description="The run id (the Step Functions execution name).")]


class StartRunRequest(BaseModel):
    workflow: str = Field(min_length=1, description="A registered workflow, e.g. 'human_pause' or 'demo'.")
    input: dict[str, Any] = Field(default_factory=dict, description="The workflow's input.")
    run_id: fields.RunId | None = Field(default=None, description="Caller-given run id; a ULID when omitted.")

    model_config = {"extra": "forbid"}


class ResumeRequest(BaseModel):
    answers: dict[str, Any] = Field(description="The operator's answers, delivered to the paused node.")
    node: fields.NodeName | None = Field(default=None, description="Which paused node, when the run waits at several.")

    model_config = {"extra": "forbid"}


@router.post("/api/runs", summary="Start a hosted run", tags=["runs"])
def start_run(body: StartRunRequest) -> Response[dict[str, Any]]:
    services = deps.get_services()
    caller = deps.require_operator("starting a hosted run")
    run = services.runs.start(body.workflow, body.input, run_id=body.run_id, caller=caller.principal)
    return Response(
        status_code=201,
        content_type=content_types.APPLICATION_JSON,
        body=run.model_dump(exclude={"version"}),
    )


@router.get("/api/runs/<run_id>", summary="Run summary: status, counts, merge fields", tags=["runs"])
def get_run(run_id: RunId) -> dict[str, Any]:
    deps.require_run(run_id)
    return deps.get_services().runs.get(run_id)


@router.get("/api/runs/<run_id>/events", summary="The run's event log, oldest first", tags=["runs"])
def list_events(
    run_id: RunId,
    after: Annotated[str | None, Query(description="Cursor: the last event id you have.")] = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 100,
) -> dict[str, Any]:
    deps.require_run(run_id)
    events = deps.get_services().runs.events(run_id, after=after, limit=limit)
    return {
        "events": [e.model_dump() for e in events],
        "next": events[-1].event_id if events else after,
    }


@router.post("/api/runs/<run_id>/resume", summary="Resume the run's paused human node", tags=["runs"])
def resume(run_id: RunId, body: ResumeRequest) -> dict[str, Any]:
    caller = deps.require_operator("resuming a run")
    services = deps.get_services()
    # Review gates take the operator's action under the reserved __review_* keys (baton.services.review).
    # They stay outside Idempotency on purpose: the same action may be right twice (approve again
    # after a rejected merge was fixed); the review interaction's conditional writes guard them.
    if is_review_answer(body.answers) or services.review_service().waiting_at_review(run_id, body.node):
        return services.review_service().act(run_id, body.answers, caller=caller.principal, node=body.node)
    request = {"run_id": run_id, "answers": body.answers, "node": body.node, "caller": caller.principal}
    return services.idempotency.run(
        "resume",
        request,
        lambda: services.runs.resume(run_id, body.answers, caller=caller.principal, node=body.node),
    )
