"""What Baton deploys, declared once: the functions, their SNS subscriptions, the state machines and
the substitutions that wire them. The CDK stack and the local stack both build from this."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

# layers/baton/python/baton/resources.py -> the project root (a source checkout, not a Lambda).
PROJECT_ROOT = Path(__file__).resolve().parents[4]
FUNCTIONS_DIR = PROJECT_ROOT / "functions"
STATEMACHINES_DIR = PROJECT_ROOT / "statemachines"


@dataclass(frozen=True)
class FunctionSpec:
    name: str
    description: str
    timeout_seconds: int = 30
    memory_mb: int = 512
    # SNS channel whose notifications this function receives (a filtered topic subscription).
    subscribes_to_channel: str | None = None
    # Extra environment names this function reads (beyond the shared Baton settings).
    extra_env: tuple[str, ...] = field(default_factory=tuple)
    # AWS access the deployed function needs, by capability (see infra/permissions.py): "table",
    # "topic", "start_execution", "send_task", "merge_build", "slack_secret", "webhook_secret".
    # None = the deployment's default for this function name (table + topic for unknown names).
    aws_access: tuple[str, ...] | None = None

    @property
    def directory(self) -> Path:
        return FUNCTIONS_DIR / self.name

    @property
    def substitution(self) -> str:
        """ASL placeholder for this function's ARN: park -> ParkFunctionArn."""
        return "".join(part.capitalize() for part in self.name.split("_")) + "FunctionArn"


FUNCTIONS: tuple[FunctionSpec, ...] = (
    FunctionSpec("api", "Baton HTTP API (Powertools resolver)", timeout_seconds=29),
    FunctionSpec("park", "Registers a gate's task token and what it asks"),
    FunctionSpec("gate_timeout", "Records what timed out at a gate and returns the Fail cause"),
    FunctionSpec("notify_console", "Prints notifications (console channel)", subscribes_to_channel="console"),
    FunctionSpec(
        "notify_slack",
        "Posts notifications to Slack as Block Kit",
        subscribes_to_channel="slack",
        extra_env=("SLACK_WEBHOOK_URL", "SLACK_WEBHOOK_PARAMETER", "SLACK_WEBHOOK_SECRET_ARN"),
    ),
    FunctionSpec(
        "notify_webhook",
        "POSTs signed notifications to a webhook",
        subscribes_to_channel="webhook",
        extra_env=("WEBHOOK_URL", "WEBHOOK_SECRET", "WEBHOOK_SECRET_PARAMETER"),
    ),
)

# workflow name -> ASL file. Every file here is registered locally and deployed by CDK.
STATE_MACHINES: dict[str, str] = {
    "human_pause": "human_pause.asl.json",
}


# Input defaults per workflow, merged under the caller's input when a hosted run starts (ASL paths
# such as TimeoutSecondsPath must resolve, and a newcomer should not have to know every field).
WORKFLOW_DEFAULTS: dict[str, dict[str, object]] = {
    "human_pause": {"prompt": "Approve this run?", "timeout_seconds": 3600, "notify": ["console"]},
}


def function(name: str) -> FunctionSpec:
    for spec in FUNCTIONS:
        if spec.name == name:
            return spec
    raise KeyError(name)
