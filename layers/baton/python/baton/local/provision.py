"""Creates Baton's resources in the emulator from the same definitions the CDK stack deploys:
the table (baton.workflows.table), the topic with per-channel filtered subscriptions, the functions
(baton.workflows.resources.FUNCTIONS) and the state machines (statemachines/*.asl.json, substituted)."""

from __future__ import annotations

import io
import json
import zipfile
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from baton.notify.sns import subscription_attributes_for
from baton.workflows.asl import load_definition
from baton.workflows.resources import FUNCTIONS, STATE_MACHINES, substitutions
from baton.workflows.source_tree import source_tree
from baton.workflows.table import create_table_kwargs

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

ROLE_TRUST = {
    "Version": "2012-10-17",
    "Statement": [
        {
            "Effect": "Allow",
            "Principal": {"Service": ["lambda.amazonaws.com", "states.amazonaws.com"]},
            "Action": "sts:AssumeRole",
        }
    ],
}


@dataclass
class Provisioned:
    table_name: str
    topic_arn: str
    function_arns: dict[str, str] = field(default_factory=dict)
    state_machine_arns: dict[str, str] = field(default_factory=dict)

    def environment(self) -> dict[str, str]:
        """The shared Baton settings every function reads (see baton.runtime.settings.Settings)."""
        return {
            "BATON_TABLE_NAME": self.table_name,
            "BATON_TOPIC_ARN": self.topic_arn,
            "BATON_WORKFLOWS": json.dumps(self.state_machine_arns),
        }


def _placeholder_zip() -> bytes:
    # moto needs code to create a function; the dispatcher runs the real handler instead.
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("handler.py", "def lambda_handler(event, context):\n    return event\n")
    return buf.getvalue()


def local_substitutions(function_arns: Mapping[str, str], state_machine_arn: Callable[[str], str]) -> dict[str, str]:
    """What the local stack substitutes into every ASL file (tests/infra/test_parity.py checks that the
    CDK stack substitutes the same placeholders)."""
    return substitutions(lambda spec: function_arns[spec.name], state_machine_arn)


def provision(
    clients: dict[str, Any],
    *,
    prefix: str = "baton-local",
    env: dict[str, str] | None = None,
    subscribe_channels: tuple[str, ...] = ("console",),
) -> Provisioned:
    """`clients`: boto3 clients for iam, dynamodb, sns, lambda, stepfunctions."""
    table_name = f"{prefix}-table"
    clients["dynamodb"].create_table(**create_table_kwargs(table_name))
    topic_arn = clients["sns"].create_topic(Name=f"{prefix}-notifications")["TopicArn"]
    role_arn = clients["iam"].create_role(RoleName=f"{prefix}-role", AssumeRolePolicyDocument=json.dumps(ROLE_TRUST))[
        "Role"
    ]["Arn"]
    out = Provisioned(table_name=table_name, topic_arn=topic_arn)

    # Function ARNs are needed for the state machines; environment needs the state machine ARNs, so
    # the ARNs are computed first and the environment is set after the state machines exist.
    code = _placeholder_zip()
    for spec in FUNCTIONS:
        arn = clients["lambda"].create_function(
            FunctionName=f"{spec.name}",
            Runtime="python3.12",
            Role=role_arn,
            Handler="handler.lambda_handler",
            Code={"ZipFile": code},
            Description=spec.description,
            Timeout=spec.timeout_seconds,
            MemorySize=spec.memory_mb,
        )["FunctionArn"]
        out.function_arns[spec.name] = arn
    # State machine ARNs are known before they exist (region, account, name), so a workflow can
    # start another one (a whole gate as one Task) whatever the creation order.
    account = role_arn.split(":")[4]
    region = clients["stepfunctions"].meta.region_name
    subs = local_substitutions(
        out.function_arns, lambda workflow: f"arn:aws:states:{region}:{account}:stateMachine:{prefix}-{workflow}"
    )
    for workflow, filename in STATE_MACHINES.items():
        definition = load_definition(source_tree().statemachines_dir / filename, subs)
        out.state_machine_arns[workflow] = clients["stepfunctions"].create_state_machine(
            name=f"{prefix}-{workflow}", definition=definition, roleArn=role_arn
        )["stateMachineArn"]

    variables = {**out.environment(), **(env or {})}
    for spec in FUNCTIONS:
        clients["lambda"].update_function_configuration(FunctionName=spec.name, Environment={"Variables": variables})
        if spec.subscribes_to_channel in subscribe_channels:
            clients["sns"].subscribe(
                TopicArn=topic_arn,
                Protocol="lambda",
                Endpoint=out.function_arns[spec.name],
                Attributes=subscription_attributes_for(spec.subscribes_to_channel),
            )
    return out
