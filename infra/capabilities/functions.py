"""functions: one Lambda per `baton.workflows.resources.FUNCTIONS` entry (new entries are picked up on the next
synth), each with its own role and log group, the `layers/baton` layer and the runtime layer (Powertools,
pydantic and what they need, at uv.lock's versions: infra/runtime_layer.py)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING

from aws_cdk import Duration, RemovalPolicy, Stack
from aws_cdk import aws_codebuild as codebuild
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_events as events
from aws_cdk import aws_events_targets as targets
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk import aws_sns as sns
from constructs import Construct

from baton.domain.deadline import TIMER_STATE_MACHINE
from infra.assets import asset_options
from infra.naming import executions_arn, parameter_arn
from infra.permissions import access_for, schedule_for
from infra.runtime_layer import build as build_runtime_layer
from infra.runtime_layer import description as runtime_layer_description

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from baton.workflows.resources import FunctionSpec
    from infra.config import TeamConfig

RUNTIME = lambda_.Runtime.PYTHON_3_13
ARCHITECTURE = lambda_.Architecture.ARM_64
TABLE_ACTIONS = [
    "dynamodb:GetItem",
    "dynamodb:BatchGetItem",
    "dynamodb:Query",
    "dynamodb:PutItem",
    "dynamodb:UpdateItem",
    "dynamodb:DeleteItem",
    "dynamodb:BatchWriteItem",
    "dynamodb:ConditionCheckItem",
]
SEND_TASK_ACTIONS = ["states:SendTaskSuccess", "states:SendTaskFailure"]


@dataclass(frozen=True)
class FunctionInputs:
    """What the functions are wired to (built before them, so nothing here depends on a function)."""

    table: dynamodb.ITable
    topic: sns.ITopic
    state_machine_arns: Mapping[str, str]  # workflow -> ARN built from its known name
    merge_project: codebuild.IProject | None
    extra_env: Mapping[str, str]  # values for FunctionSpec.extra_env names


class Functions(Construct):
    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        config: TeamConfig,
        specs: Sequence[FunctionSpec],
        layer_dir: str,
        inputs: FunctionInputs,
    ) -> None:
        super().__init__(scope, construct_id)
        self.config = config
        self.layer = lambda_.LayerVersion(
            self,
            "BatonLayer",
            layer_version_name=f"{config.prefix}-baton",
            description="The baton package (layers/baton/python/baton) without the CLI, local stack and SDK",
            code=lambda_.Code.from_asset(layer_dir, **asset_options(layer_dir)),
            compatible_runtimes=[RUNTIME],
            compatible_architectures=[ARCHITECTURE],
            removal_policy=RemovalPolicy.RETAIN,
        )
        # Not the AWS-managed Powertools layer: its versions are not the ones the tests run.
        self.runtime_layer = lambda_.LayerVersion(
            self,
            "RuntimeLayer",
            layer_version_name=f"{config.prefix}-runtime",
            description=runtime_layer_description(),
            code=lambda_.Code.from_asset(str(build_runtime_layer())),
            compatible_runtimes=[RUNTIME],
            compatible_architectures=[ARCHITECTURE],
            removal_policy=RemovalPolicy.RETAIN,
        )
        shared_env = {
            "BATON_TABLE_NAME": inputs.table.table_name,
            "BATON_TOPIC_ARN": inputs.topic.topic_arn,
            "BATON_WORKFLOWS": json.dumps(dict(inputs.state_machine_arns), separators=(",", ":")),
            "POWERTOOLS_SERVICE_NAME": "baton",
            "POWERTOOLS_METRICS_NAMESPACE": f"Baton/{config.team}",
        }
        self.functions: dict[str, lambda_.Function] = {}
        self.roles: dict[str, iam.Role] = {}
        for spec in specs:
            role = iam.Role(
                self,
                f"{spec.name}Role",
                assumed_by=iam.ServicePrincipal("lambda.amazonaws.com"),
                description=f"{config.prefix}-{spec.name}: least-privilege role",
            )
            log_group = logs.LogGroup(
                self,
                f"{spec.name}Logs",
                log_group_name=f"/aws/lambda/{config.prefix}-{spec.name}",
                retention=logs.RetentionDays.THREE_MONTHS,
                removal_policy=RemovalPolicy.DESTROY,
            )
            log_group.grant_write(role)
            env = dict(shared_env)
            env.update({name: inputs.extra_env[name] for name in spec.extra_env if inputs.extra_env.get(name)})
            fn = lambda_.Function(
                self,
                spec.name,
                function_name=f"{config.prefix}-{spec.name}",
                description=spec.description,
                runtime=RUNTIME,
                architecture=ARCHITECTURE,
                handler="handler.lambda_handler",
                code=lambda_.Code.from_asset(str(spec.directory), **asset_options(str(spec.directory))),
                layers=[self.layer, self.runtime_layer],
                timeout=Duration.seconds(spec.timeout_seconds),
                memory_size=spec.memory_mb,
                role=role,
                log_group=log_group,
                tracing=lambda_.Tracing.ACTIVE,
                environment=env,
            )
            self.functions[spec.name] = fn
            self.roles[spec.name] = role
            self._grant(spec, role, inputs)
            self._grant_timer_stop(spec, role, inputs)
            schedule = schedule_for(spec)
            if schedule:
                events.Rule(
                    self,
                    f"{spec.name}Schedule",
                    rule_name=f"{config.prefix}-{spec.name}",
                    description=f"Runs {config.prefix}-{spec.name} {schedule}",
                    schedule=events.Schedule.expression(schedule),
                    targets=[targets.LambdaFunction(fn, retry_attempts=0)],
                )

    def _grant_send_task(self, role: iam.Role, workflows: dict[str, str]) -> None:
        """Resume a gate: send its token; a release whose task is gone asks whether the run ended
        (Core.release_gate)."""
        stack = Stack.of(self)
        role.add_to_principal_policy(iam.PolicyStatement(actions=SEND_TASK_ACTIONS, resources=list(workflows.values())))
        executions = [executions_arn(stack, self.config, wf) for wf in workflows]
        role.add_to_principal_policy(iam.PolicyStatement(actions=["states:DescribeExecution"], resources=executions))

    def _grant_timer_stop(self, spec: FunctionSpec, role: iam.Role, inputs: FunctionInputs) -> None:
        """A settled pause stops its deadline timer (StopExecution of the timer machine's executions): a
        token sender's release its gate's, and whoever settles a pause no gate parks (an answer, a cancel,
        a stop, an agent's withdrawal: the functions that send tokens or start timers) its own."""
        if TIMER_STATE_MACHINE in inputs.state_machine_arns and {"send_task", "deadline_timer"} & set(access_for(spec)):
            timers = executions_arn(Stack.of(self), self.config, TIMER_STATE_MACHINE)
            role.add_to_principal_policy(iam.PolicyStatement(actions=["states:StopExecution"], resources=[timers]))

    def _grant(self, spec: FunctionSpec, role: iam.Role, inputs: FunctionInputs) -> None:
        stack = Stack.of(self)
        # The gates' timer machine is started only through its own capability, and has no task tokens.
        workflows = {wf: arn for wf, arn in inputs.state_machine_arns.items() if wf != TIMER_STATE_MACHINE}
        machines = list(workflows.values())
        for capability in access_for(spec):
            if capability == "table":
                # Item reads/writes and queries on the table and its GSIs; no Scan (no API scans).
                inputs.table.grant(role, *TABLE_ACTIONS)
            elif capability == "topic":
                inputs.topic.grant_publish(role)
            elif capability == "start_execution" and machines:
                role.add_to_principal_policy(iam.PolicyStatement(actions=["states:StartExecution"], resources=machines))
                executions = [executions_arn(stack, self.config, wf) for wf in workflows]
                role.add_to_principal_policy(
                    iam.PolicyStatement(
                        actions=["states:DescribeExecution", "states:StopExecution"], resources=executions
                    )
                )
            elif capability == "send_task" and machines:
                self._grant_send_task(role, workflows)
            elif capability == "merge_build" and inputs.merge_project is not None:
                role.add_to_principal_policy(
                    iam.PolicyStatement(actions=["codebuild:StartBuild"], resources=[inputs.merge_project.project_arn])
                )
            elif capability == "deadline_timer" and TIMER_STATE_MACHINE in inputs.state_machine_arns:
                timer = inputs.state_machine_arns[TIMER_STATE_MACHINE]
                role.add_to_principal_policy(iam.PolicyStatement(actions=["states:StartExecution"], resources=[timer]))
            elif capability == "slack_secret":
                if self.config.slack_secret_arn:
                    role.add_to_principal_policy(
                        iam.PolicyStatement(
                            actions=["secretsmanager:GetSecretValue"], resources=[self.config.slack_secret_arn]
                        )
                    )
                else:
                    role.add_to_principal_policy(_read_parameter(stack, self.config.slack_parameter_name))
            elif capability == "companion_model" and self.config.companion_model:
                role.add_to_principal_policy(
                    iam.PolicyStatement(
                        actions=["bedrock:InvokeModel", "bedrock:InvokeModelWithResponseStream"],
                        resources=bedrock_model_arns(stack, self.config.companion_model),
                    )
                )
            elif capability == "webhook_secret":
                role.add_to_principal_policy(_read_parameter(stack, self.config.webhook_secret_parameter_name))


def _read_parameter(stack: Stack, name: str) -> iam.PolicyStatement:
    return iam.PolicyStatement(actions=["ssm:GetParameter"], resources=[parameter_arn(stack, name)])


def bedrock_model_arns(stack: Stack, model_id: str) -> list[str]:
    """A foundation model id -> its ARN; a cross-region inference profile id ("us.anthropic...") -> the
    profile's ARN plus the model in the profile's regions (Bedrock routes the call to any of them)."""
    partition = stack.partition
    geo, _, rest = model_id.partition(".")
    if geo in ("us", "eu", "apac", "global", "us-gov", "ca", "jp", "au") and rest:
        profile = stack.format_arn(service="bedrock", resource="inference-profile", resource_name=model_id)
        return [profile, f"arn:{partition}:bedrock:*::foundation-model/{rest}"]
    return [f"arn:{partition}:bedrock:{stack.region}::foundation-model/{model_id}"]
