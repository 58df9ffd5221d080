"""A Baton gate in YOUR state machine, as one Task state.

    from infra.gate import BatonGate, BatonRef

    baton = BatonRef.from_exports(self, "Baton", team="alpha")      # or BatonRef.from_stack(baton_stack)
    approve = BatonGate.ask(
        self, "Approve", baton=baton, node="approve", prompt="Ship it?", timeout=Duration.hours(4)
    )
    approve.add_catch(on_timeout, errors=[sfn.Errors.TIMEOUT])         # recommended
    machine = sfn.StateMachine(self, "Flow", definition_body=sfn.DefinitionBody.from_chainable(...))
    BatonGate.grant_resume(machine, baton=baton)                       # lets Baton's API resume it

The task is `lambda:invoke.waitForTaskToken` on Baton's `park` Lambda with `$$.Task.Token`, the run id
(`$.run_id` by default), the node, the kind and the prompt; its `task_timeout` is mandatory (no silent
infinity). Operators answer through Baton (CLI, web inbox, API); Baton's API calls SendTaskSuccess with
the answers, which become the task's result (`$.human` by default). The state machine's role gets
lambda:InvokeFunction on `park` (CDK's LambdaInvoke grant); `grant_resume` gives Baton's API role
states:SendTaskSuccess/Failure/Heartbeat on that one state machine, in the state machine's stack.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from aws_cdk import Duration, Fn, Stack
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_stepfunctions as sfn
from aws_cdk import aws_stepfunctions_tasks as tasks
from constructs import Construct

from infra.capabilities.functions import SEND_TASK_ACTIONS
from infra.config import TeamConfig

if TYPE_CHECKING:
    from infra.stack import BatonStack

GateKind = Literal["ask", "await", "interrupt", "review"]
GATE_KINDS: tuple[str, ...] = ("ask", "await", "interrupt", "review")


@dataclass(frozen=True)
class BatonRef:
    """What a user's stack needs of a Baton team environment."""

    park_function: lambda_.IFunction
    api_role: iam.IRole

    @classmethod
    def from_stack(cls, stack: BatonStack) -> BatonRef:
        return cls(park_function=stack.functions.functions["park"], api_role=stack.functions.roles["api"])

    @classmethod
    def from_exports(cls, scope: Construct, construct_id: str, *, team: str) -> BatonRef:
        """From the exports of a deployed team environment (`baton-<team>-ParkFunctionArn`, `-ApiRoleArn`)."""
        prefix = TeamConfig(team=team).prefix
        holder = Construct(scope, construct_id)
        park = lambda_.Function.from_function_attributes(
            holder, "Park", function_arn=Fn.import_value(f"{prefix}-ParkFunctionArn"), same_environment=True
        )
        role = iam.Role.from_role_arn(holder, "ApiRole", Fn.import_value(f"{prefix}-ApiRoleArn"), mutable=True)
        return cls(park_function=park, api_role=role)


class BatonGate:
    @staticmethod
    def ask(
        scope: Construct,
        construct_id: str,
        *,
        baton: BatonRef,
        node: str,
        timeout: Duration,
        prompt: str | None = None,
        prompt_path: str | None = None,
        kind: GateKind = "ask",
        run_id_path: str = "$.run_id",
        notify: Sequence[str] | None = None,
        extra: Mapping[str, Any] | None = None,
        result_path: str = "$.human",
        comment: str | None = None,
    ) -> tasks.LambdaInvoke:
        """One Task state that parks at Baton until an operator answers, or fails with States.Timeout."""
        if timeout.to_seconds() < 1:
            raise ValueError("a Baton gate needs a positive timeout (no silent infinity)")
        if kind not in GATE_KINDS:
            raise ValueError(f"kind must be one of {GATE_KINDS}, got {kind!r}")
        if (prompt is None) == (prompt_path is None):
            raise ValueError("give exactly one of prompt (text) or prompt_path (a JSONPath into the state input)")
        payload: dict[str, Any] = {
            **dict(extra or {}),
            "token": sfn.JsonPath.task_token,
            "run_id": sfn.JsonPath.string_at(run_id_path),
            "node": node,
            "kind": kind,
            "prompt": prompt if prompt is not None else sfn.JsonPath.string_at(str(prompt_path)),
            "timeout_seconds": int(timeout.to_seconds()),
        }
        if notify is not None:
            payload["notify"] = list(notify)
        return tasks.LambdaInvoke(
            scope,
            construct_id,
            lambda_function=baton.park_function,
            integration_pattern=sfn.IntegrationPattern.WAIT_FOR_TASK_TOKEN,
            payload=sfn.TaskInput.from_object(payload),
            task_timeout=sfn.Timeout.duration(timeout),
            result_path=result_path,
            comment=comment
            or f"Baton {kind} gate '{node}': parks until answered (timeout {timeout.to_human_string()})",
        )

    @staticmethod
    def grant_resume(state_machine: sfn.IStateMachine, *, baton: BatonRef) -> iam.Policy:
        """Let Baton's API resume (SendTaskSuccess/Failure/Heartbeat) the gates of this state machine only.

        The policy lives in the state machine's stack, so the user's stack depends on Baton's and not the
        other way round."""
        scope = Stack.of(state_machine)
        policy = iam.Policy(
            scope,
            f"BatonResume{state_machine.node.id}",
            statements=[iam.PolicyStatement(actions=SEND_TASK_ACTIONS, resources=[state_machine.state_machine_arn])],
        )
        policy.attach_to_role(baton.api_role)
        return policy
