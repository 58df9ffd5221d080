"""What a team environment exports for the gates in users' stacks (`infra/gate.py` imports them by these
names; `infra/stack.py` exports them as baton-<team>-<suffix>)."""

from __future__ import annotations

REVIEW_GATE_WORKFLOW = "review_gate"
# (export name suffix, function) of what the gates call.
GATE_FUNCTION_EXPORTS: dict[str, str] = {
    "ParkFunctionArn": "park",
    "InterruptParkFunctionArn": "interrupt_park",
    "AwaitGateFunctionArn": "await_gate",
    "RunLifecycleFunctionArn": "run_lifecycle",  # granted machines report ends (infra/capabilities/lifecycle.py)
}


def role_export(function: str) -> str:
    """The export suffix of a token-sending function's role ARN: slack_worker -> SlackWorkerRoleArn."""
    return "".join(part.capitalize() for part in function.split("_")) + "RoleArn"
