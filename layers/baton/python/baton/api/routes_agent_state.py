"""An agent's opaque state kept with its run (issue 30; `baton.services.agent_state`): only the run's own
agent or an operator reads or writes it, and the inbox never shows it (no operator listing reads it)."""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler.openapi.params import Path
from aws_lambda_powertools.event_handler.router import APIGatewayRouter

from baton.api import deps
from baton.api.contract import RunId, responses
from baton.contracts.agent_state import (
    AgentStateDeleted,
    AgentStateKey,
    AgentStateView,
    AgentStateWrite,
    AgentStateWritten,
)
from baton.services.agent_state import AgentStateService

router = APIGatewayRouter()
StateKey = Annotated[AgentStateKey, Path(description="The state's key in its run.")]


def _service() -> AgentStateService:
    return AgentStateService(deps.get_services().core)


@router.put(
    "/api/runs/<run_id>/agent-state/<key>",
    summary="Keep an agent's state with its run (409 naming the current version when `version` moved)",
    tags=["agent-state"],
    responses=responses({200: AgentStateWritten}, 400, 403, 404, 409, 413),
)
def put_state(run_id: RunId, key: StateKey, body: AgentStateWrite) -> AgentStateWritten:
    deps.require_run(run_id)
    return _service().put(run_id, key, body)


@router.get(
    "/api/runs/<run_id>/agent-state/<key>",
    summary="An agent's state kept with its run (404 when none is kept)",
    tags=["agent-state"],
    responses=responses({200: AgentStateView}, 400, 403, 404),
)
def get_state(run_id: RunId, key: StateKey) -> AgentStateView:
    deps.require_run(run_id)
    return _service().get(run_id, key)


@router.delete(
    "/api/runs/<run_id>/agent-state/<key>",
    summary="Remove an agent's state (`deleted` is false when none was kept)",
    tags=["agent-state"],
    responses=responses({200: AgentStateDeleted}, 400, 403),
)
def delete_state(run_id: RunId, key: StateKey) -> AgentStateDeleted:
    deps.require_run(run_id)
    return _service().delete(run_id, key)
