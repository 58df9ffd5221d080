"""lifecycle: a run's end recorded when its execution ends, not when someone reads the run.

An EventBridge rule on "Step Functions Execution Status Change" (SUCCEEDED, FAILED, TIMED_OUT, ABORTED)
for Baton's own state machines targets the `run_lifecycle` function (functions/run_lifecycle/handler.py,
baton.services.lifecycle). The machines granted to Baton (`infra.gate.BatonGate.grant_resume`) get a
rule of their own in their stack (`report_ends`), named `<prefix>-lifecycle-...`; the function lets rules
of that name in its account invoke it, so no permission has to reach back across stacks (which would be
a cycle: the user's stack depends on Baton's).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from aws_cdk import Duration, Stack
from aws_cdk import aws_events as events
from aws_cdk import aws_events_targets as targets
from aws_cdk import aws_iam as iam
from constructs import Construct

from baton.domain.execution_events import DETAIL_TYPE, ENDED_STATUSES, SOURCE

if TYPE_CHECKING:
    from collections.abc import Sequence

    from aws_cdk import aws_lambda as lambda_
    from aws_cdk import aws_sqs as sqs
    from aws_cdk import aws_stepfunctions as sfn

    from infra.config import TeamConfig

RULE_NAME_MAX = 64
# EventBridge retries a failed target for this long; every delivery records the end at most once.
MAX_EVENT_AGE = Duration.hours(6)
RETRY_ATTEMPTS = 8


def granted_rule_prefix(prefix: str) -> str:
    return f"{prefix}-lifecycle-"


def execution_ended_pattern(state_machine_arns: Sequence[str]) -> events.EventPattern:
    return events.EventPattern(
        source=[SOURCE],
        detail_type=[DETAIL_TYPE],
        detail={"status": list(ENDED_STATUSES), "stateMachineArn": list(state_machine_arns)},
    )


class Lifecycle(Construct):
    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        config: TeamConfig,
        function: lambda_.IFunction,
        state_machine_arns: Sequence[str],
        dead_letter_queue: sqs.IQueue | None = None,  # an end EventBridge could not deliver waits there
    ) -> None:
        super().__init__(scope, construct_id)
        self.rule = events.Rule(
            self,
            "ExecutionEnded",
            rule_name=f"{config.prefix}-run-lifecycle",
            description="A Baton run's execution ended: record run_succeeded/failed/timed_out/aborted",
            event_pattern=execution_ended_pattern(state_machine_arns),
            targets=[
                targets.LambdaFunction(
                    function,
                    retry_attempts=RETRY_ATTEMPTS,
                    max_event_age=MAX_EVENT_AGE,
                    dead_letter_queue=dead_letter_queue,
                )
            ],
        )
        stack = Stack.of(self)
        function.add_permission(
            "InvokeFromGrantedMachineRules",
            principal=iam.ServicePrincipal("events.amazonaws.com"),
            source_account=stack.account,
            source_arn=stack.format_arn(
                service="events", resource="rule", resource_name=f"{granted_rule_prefix(config.prefix)}*"
            ),
        )


def report_ends(state_machine: sfn.IStateMachine, *, function: lambda_.IFunction, prefix: str) -> events.CfnRule:
    """A rule in the state machine's own stack: its executions' ends go to Baton's `run_lifecycle`
    (an execution names its run in its input's `run_id`). An L1 rule on purpose: the L2 target would add
    the invoke permission in Baton's stack, pointing back at this one."""
    scope = Stack.of(state_machine)
    node_id = state_machine.node.id
    name = f"{granted_rule_prefix(prefix)}{scope.stack_name}-{node_id}"[:RULE_NAME_MAX]
    pattern = {
        "source": [SOURCE],
        "detail-type": [DETAIL_TYPE],
        "detail": {"status": list(ENDED_STATUSES), "stateMachineArn": [state_machine.state_machine_arn]},
    }
    return events.CfnRule(
        scope,
        f"BatonLifecycle{node_id}",
        name=name,
        description=f"Ends of {node_id}'s executions, to Baton's run_lifecycle",
        event_pattern=pattern,
        targets=[
            events.CfnRule.TargetProperty(
                id="run-lifecycle",
                arn=function.function_arn,
                retry_policy=events.CfnRule.RetryPolicyProperty(
                    maximum_retry_attempts=RETRY_ATTEMPTS, maximum_event_age_in_seconds=int(MAX_EVENT_AGE.to_seconds())
                ),
            )
        ],
    )
