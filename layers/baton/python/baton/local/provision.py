"""Creates Baton's resources in the emulator from the definitions the CDK stack deploys: the table, the
topic with per-channel filtered subscriptions, the functions and the state machines. Creating the state
machines is most of the cost (~2 s), and their ARNs are known before they exist, so the local stack runs
`create_state_machines` after its API is up."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from baton.notify.sns import subscription_attributes_for
from baton.workflows.asl import load_definition
from baton.workflows.resources import FUNCTIONS, STATE_MACHINES, substitutions
from baton.workflows.source_tree import source_tree
from baton.workflows.table import create_table_kwargs

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

# The role Lambda and Step Functions assume (its trust policy, as sent)
ROLE_TRUST = (
    '{"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": {"Service": ["lambda.amazonaws.com", '
    '"states.amazonaws.com"]}, "Action": "sts:AssumeRole"}]}'
)


@dataclass
class Provisioned:
    table_name: str
    topic_arn: str
    function_arns: dict[str, str] = field(default_factory=dict)
    state_machine_arns: dict[str, str] = field(default_factory=dict)
    role_arn: str = ""
    # workflow -> its substituted ASL, until `create_state_machines` has created it
    pending_definitions: dict[str, str] = field(default_factory=dict, repr=False)

    def environment(self) -> dict[str, str]:
        """The shared Baton settings every function reads (see baton.runtime.settings.Settings)."""
        return {
            "BATON_TABLE_NAME": self.table_name,
            "BATON_TOPIC_ARN": self.topic_arn,
            "BATON_WORKFLOWS": json.dumps(self.state_machine_arns),
        }


def local_substitutions(function_arns: Mapping[str, str], state_machine_arn: Callable[[str], str]) -> dict[str, str]:
    """What the local stack substitutes into every ASL file (the CDK stack's too: tests/infra/test_parity.py)."""
    return substitutions(lambda spec: function_arns[spec.name], state_machine_arn)


def provision(
    clients: dict[str, Any],
    *,
    prefix: str = "baton-local",
    env: dict[str, str] | None = None,
    subscribe_channels: tuple[str, ...] = ("console",),
    create_workflows: bool = True,
) -> Provisioned:
    """`clients`: boto3 clients for iam, dynamodb, sns, lambda, stepfunctions. With `create_workflows`
    false the state machines' ARNs are set but the machines are not created yet (`create_state_machines`)."""
    table_name = f"{prefix}-table"
    clients["dynamodb"].create_table(**create_table_kwargs(table_name))
    topic_arn = clients["sns"].create_topic(Name=f"{prefix}-notifications")["TopicArn"]
    role_arn = clients["iam"].create_role(RoleName=f"{prefix}-role", AssumeRolePolicyDocument=ROLE_TRUST)["Role"]["Arn"]
    out = Provisioned(table_name=table_name, topic_arn=topic_arn, role_arn=role_arn)

    # State machine ARNs are known before they exist (region, account, name), so a workflow can
    # start another one (a whole gate as one Task) whatever the creation order, and each function is
    # created with its environment (which names them) in one call.
    account = role_arn.split(":")[4]
    region = clients["stepfunctions"].meta.region_name

    def state_machine_arn(workflow: str) -> str:
        return f"arn:aws:states:{region}:{account}:stateMachine:{prefix}-{workflow}"

    out.state_machine_arns = {workflow: state_machine_arn(workflow) for workflow in STATE_MACHINES}
    variables = {**out.environment(), **(env or {})}
    for spec in FUNCTIONS:
        out.function_arns[spec.name] = clients["lambda"].create_function(
            FunctionName=f"{spec.name}",
            Runtime="python3.12",
            Role=role_arn,
            Handler="handler.lambda_handler",
            Code={"ZipFile": b"placeholder"},  # moto needs code (it never unzips it); the dispatcher runs ours
            Description=spec.description,
            Timeout=spec.timeout_seconds,
            MemorySize=spec.memory_mb,
            Environment={"Variables": variables},
        )["FunctionArn"]
        if spec.subscribes_to_channel in subscribe_channels:
            clients["sns"].subscribe(
                TopicArn=topic_arn,
                Protocol="lambda",
                Endpoint=out.function_arns[spec.name],
                Attributes=subscription_attributes_for(spec.subscribes_to_channel),
            )
    subs = local_substitutions(out.function_arns, state_machine_arn)
    for workflow, filename in STATE_MACHINES.items():
        out.pending_definitions[workflow] = load_definition(source_tree().statemachines_dir / filename, subs)
    if create_workflows:
        create_state_machines(clients["stepfunctions"], out)
    return out


def create_state_machines(stepfunctions: Any, provisioned: Provisioned) -> None:
    """Create the state machines `provision` left pending, at the ARNs it announced."""
    for workflow, definition in list(provisioned.pending_definitions.items()):
        arn = provisioned.state_machine_arns[workflow]
        created = stepfunctions.create_state_machine(
            name=arn.rsplit(":", 1)[1], definition=definition, roleArn=provisioned.role_arn
        )["stateMachineArn"]
        if created != arn:
            raise RuntimeError(f"state machine {workflow} was created at {created}, not at {arn}")
        del provisioned.pending_definitions[workflow]
