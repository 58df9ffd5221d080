"""Stop a hosted run: its execution is stopped and `run_aborted` recorded at once (baton.services.run_stop)."""

from __future__ import annotations

from aws_lambda_powertools.event_handler.router import APIGatewayRouter
from pydantic import BaseModel, Field

from baton.api import deps
from baton.api.contract import RunId, responses
from baton.contracts import RunView

router = APIGatewayRouter()


class StopRunRequest(BaseModel):
    reason: str | None = Field(default=None, max_length=1000, description="Why: kept as the run's reason.")

    model_config = {"extra": "forbid"}


@router.post(
    "/api/runs/<run_id>/stop",
    summary="Stop a hosted run (StopExecution): it ends aborted and run_aborted is recorded at once",
    tags=["runs"],
    responses=responses({200: RunView}, 400, 403, 404, 409),
)
def stop_run(run_id: RunId, body: StopRunRequest) -> RunView:
    caller = deps.require_operator("stopping a run")
    from baton.services.run_stop import stop_run as stop

    return stop(deps.get_services().runs, run_id, caller=caller.principal, reason=body.reason)
