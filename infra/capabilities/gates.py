"""gates: the state machines of `statemachines/*.asl.json` listed in `baton.resources.STATE_MACHINES`,
with `DefinitionSubstitutions` = {FunctionSpec.substitution: function ARN} exactly as the local stack
substitutes them, logging (ALL, with execution data) and X-Ray tracing on."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from aws_cdk import RemovalPolicy
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk import aws_stepfunctions as sfn
from constructs import Construct

from baton.asl import AslError, check_file, placeholders
from baton.resources import FunctionSpec
from infra.config import TeamConfig
from infra.naming import state_machine_name


def substitutions_for(specs: Sequence[FunctionSpec], functions: Mapping[str, lambda_.IFunction]) -> dict[str, str]:
    """The same mapping `baton.local.provision` builds, with deployed function ARNs."""
    return {spec.substitution: functions[spec.name].function_arn for spec in specs}


class Gates(Construct):
    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        config: TeamConfig,
        machines: Mapping[str, str],
        directory: Path,
        specs: Sequence[FunctionSpec],
        functions: Mapping[str, lambda_.IFunction],
    ) -> None:
        super().__init__(scope, construct_id)
        substitutions = substitutions_for(specs, functions)
        by_substitution = {spec.substitution: spec.name for spec in specs}
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
                raise AslError(f"{filename}: no function for {sorted(missing)} in baton.resources.FUNCTIONS")
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
            invoked = sorted(used)
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
                definition_body=sfn.DefinitionBody.from_file(str(path)),
                definition_substitutions=substitutions,
                role=role,
                logs=sfn.LogOptions(destination=log_group, level=sfn.LogLevel.ALL, include_execution_data=False),
                tracing_enabled=True,
            )
            self.state_machines[workflow] = machine
            self.log_groups[workflow] = log_group
