"""Physical names and ARNs built from them. State machines get explicit names so the functions can
know their ARNs without referencing them (functions <-> state machines would otherwise be a cycle:
the definitions reference function ARNs, and the API function needs the state machine ARNs)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from aws_cdk import ArnFormat, Stack

if TYPE_CHECKING:
    from infra.config import TeamConfig


def state_machine_name(config: TeamConfig, workflow: str) -> str:
    return f"{config.prefix}-{workflow}"


def state_machine_arn(stack: Stack, config: TeamConfig, workflow: str) -> str:
    return stack.format_arn(
        service="states",
        resource="stateMachine",
        resource_name=state_machine_name(config, workflow),
        arn_format=ArnFormat.COLON_RESOURCE_NAME,
    )


def executions_arn(stack: Stack, config: TeamConfig, workflow: str) -> str:
    """Every execution of one of Baton's state machines."""
    return stack.format_arn(
        service="states",
        resource="execution",
        resource_name=f"{state_machine_name(config, workflow)}:*",
        arn_format=ArnFormat.COLON_RESOURCE_NAME,
    )


def parameter_arn(stack: Stack, name: str) -> str:
    return stack.format_arn(service="ssm", resource="parameter", resource_name=name.lstrip("/"))
