"""gates: the state machines of `statemachines/*.asl.json` listed in `baton.workflows.resources.STATE_MACHINES`,
with `DefinitionSubstitutions` built by `baton.workflows.resources.substitutions` exactly as the local stack
builds them, logging (level ALL, without execution data: answers and state snapshots stay out of the
logs) and X-Ray tracing on."""

from __future__ import annotations

from typing import TYPE_CHECKING

from aws_cdk import RemovalPolicy, Stack
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk import aws_stepfunctions as sfn
from constructs import Construct

from baton.workflows.asl import AslError, check_file, placeholders
from baton.workflows.resources import FunctionSpec, state_machine_substitution, substitutions
from infra.naming import executions_arn, state_machine_name

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from pathlib import Path

    from infra.config import TeamConfig


def substitutions_for(
    specs: Sequence[FunctionSpec],
    functions: Mapping[str, lambda_.IFunction],
    state_machine_arns: Mapping[str, str],
) -> dict[str, str]:
    """The same mapping `baton.local.provision` builds (one builder, `baton.workflows.resources.substitutions`):
    every function's ARN and every Baton state machine's ARN (built from its name, so a workflow can
    start another whatever the order)."""
    return substitutions(
        lambda spec: functions[spec.name].function_arn,
        lambda workflow: state_machine_arns[workflow],
        specs=specs,
        workflows=state_machine_arns,
    )


class Gates(Construct):
    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        config: TeamConfig,
        machines: Mapping[str, str],
        state_machine_arns: Mapping[str, str],
        directory: Path,
        specs: Sequence[FunctionSpec],
        functions: Mapping[str, lambda_.IFunction],
    ) -> None:
        super().__init__(scope, construct_id)
        substitutions = substitutions_for(specs, functions, state_machine_arns)
        by_substitution = {spec.substitution: spec.name for spec in specs}
        by_machine = {state_machine_substitution(wf): wf for wf in state_machine_arns}
        stack = Stack.of(self)
        self.starts: dict[str, list[str]] = {}  # workflow -> the Baton workflows it starts
        self.state_machines: dict[str, sfn.StateMachine] = {}
        self.log_groups: dict[str, logs.LogGroup] = {}
        for workflow, filename in machines.items():
            path = directory / filename
            problems = check_file(path)
            if problems:
                raise AslError("\n".join(str(p) for p in problems))
            used = placeholders(path.read_text())
            missing = used - set(substitutions)
            if missing:
                raise AslError(f"{filename}: no function for {sorted(missing)} in baton.workflows.resources.FUNCTIONS")
            name = state_machine_name(config, workflow)
            log_group = logs.LogGroup(
                self,
                f"{workflow}Logs",
                log_group_name=f"/aws/vendedlogs/states/{name}",
                retention=logs.RetentionDays.THREE_MONTHS,
                removal_policy=RemovalPolicy.DESTROY,
            )
            role = iam.Role(
                self,
                f"{workflow}Role",
                assumed_by=iam.ServicePrincipal("states.amazonaws.com"),
                description=f"{name}: invokes only the functions its definition names",
            )
            invoked = sorted(s for s in used if s in by_substitution)
            started = sorted(by_machine[s] for s in used if s in by_machine)
            self.starts[workflow] = started
            if started:
                # states:startExecution(.sync:2): start, watch and stop the child, through the managed rule.
                role.add_to_principal_policy(
                    iam.PolicyStatement(
                        actions=["states:StartExecution"], resources=[state_machine_arns[wf] for wf in started]
                    )
                )
                role.add_to_principal_policy(
                    iam.PolicyStatement(
                        actions=["states:DescribeExecution", "states:StopExecution"],
                        resources=[executions_arn(stack, config, wf) for wf in started],
                    )
                )
                rule = stack.format_arn(
                    service="events",
                    resource="rule",
                    resource_name="StepFunctionsGetEventsForStepFunctionsExecutionRule",
                )
                role.add_to_principal_policy(
                    iam.PolicyStatement(
                        actions=["events:PutTargets", "events:PutRule", "events:DescribeRule"], resources=[rule]
                    )
                )
            if invoked:
                role.add_to_principal_policy(
                    iam.PolicyStatement(
                        actions=["lambda:InvokeFunction"],
                        resources=[functions[by_substitution[s]].function_arn for s in invoked],
                    )
                )
            machine = sfn.StateMachine(
                self,
                workflow,
                state_machine_name=name,
                state_machine_type=sfn.StateMachineType.STANDARD,
                definition_body=sfn.DefinitionBody.from_string(path.read_text()),
                definition_substitutions=substitutions,
                role=role,
                logs=sfn.LogOptions(destination=log_group, level=sfn.LogLevel.ALL, include_execution_data=False),
                tracing_enabled=True,
            )
            self.state_machines[workflow] = machine
            self.log_groups[workflow] = log_group
