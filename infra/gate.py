"""Baton gates in YOUR state machine, each one Task state with a mandatory timeout.

    from infra.gate import BatonGate, BatonRef

    baton = BatonRef.from_exports(self, "Baton", team="alpha")      # or BatonRef.from_stack(baton_stack)
    approve = BatonGate.ask(self, "Approve", baton=baton, node="approve", prompt="Ship it?",
                            timeout=Duration.hours(4))
    edit = BatonGate.interrupt(self, "Edit", baton=baton, node="edit", prompt="Fix the plan",
                               state_path="$.plan", timeout=Duration.hours(1))
    answers = BatonGate.await_answers(self, "Sync", baton=baton, gate="sync", from_node="draft",
                                      timeout=Duration.minutes(30))
    review = BatonGate.review(self, "Review", baton=baton, config={"gate": "ship", "run_branch": "baton/run-42"},
                              timeout=Duration.days(2))
    approve.add_catch(on_timeout, errors=[sfn.Errors.TIMEOUT])         # recommended on every gate
    machine = sfn.StateMachine(self, "Flow", definition_body=sfn.DefinitionBody.from_chainable(...))
    BatonGate.grant_resume(machine, baton=baton)                       # lets Baton's API resume it

- `ask`: waitForTaskToken on the `park` Lambda (an `ask` interaction); result: the answers (`$.human`).
- `interrupt`: waitForTaskToken on the `interrupt_park` Lambda (a real interrupt: GET/resume/claim/cancel
  by id work); result `{interrupt_id, input, state, state_edits, resolved_by}` (`$.interrupt`); a cancel
  fails the Task with InterruptCancelled.
- `await_answers`: waitForTaskToken on the `await_gate` Lambda (until no question in scope is pending);
  result `{answers, gate, from}` (`$.await`).
- `review`: `states:startExecution.sync:2` of Baton's `review_gate` state machine with input
  `{run_id, input: config}`; result `{output, execution_arn}` (`$.review`).

Their payloads are built from the Lambda payload models (`baton.domain.gate_payloads`), so a typo or a
bad name fails the synth, and `baton check`'s gate checks (C100, C101, C240-C245) run on them
(infra/gate_checks.py): a finding fails the synth with its code and reason. One module for the four helpers
(over 400 lines: about 500, most of it their documented options) so a user reads one file.

Every Task's timeout is mandatory (no silent infinity); the token waits send it as `timeout_seconds`
and the task's `$$.State.EnteredTime` as `entered_at`, so Baton's deadline is the task's entry + that
timeout; the Task's own TimeoutSeconds is a grace later (`baton.domain.deadline.GRACE_SECONDS`, 5 s). At
that deadline Baton delivers an answer stored in time, or fails the `ask` and `await_answers` tasks
itself with the error `BatonDeadlinePassed` (Step Functions' States.Timeout is the backstop): catch both
(`baton.workflows.gate_states.TIMEOUT_ERRORS`).
The run id comes from `$.run_id` unless `run_id_path=` says otherwise. Grants: CDK's LambdaInvoke
grant (lambda:InvokeFunction on the one Baton function) and, for
`review`, CDK's startExecution.sync grant (states:StartExecution on the review_gate state machine,
DescribeExecution/StopExecution on its executions, events:PutTargets/PutRule/DescribeRule on the managed
rule StepFunctionsGetEventsForStepFunctionsExecutionRule). `grant_resume` gives every Baton function
that sends gates' task tokens (the API, the Slack worker, the await gate's immediate release, the
deadline timer, the reconciler: their `send_task` capability, infra/permissions.py) states:SendTaskSuccess/
Failure on that one state machine and DescribeExecution of its executions (a release whose task is gone
asks whether the run ended), in the state machine's stack (needed by ask, interrupt and await_answers;
the review gate's own tokens live in Baton's state machine).
It also adds a rule sending the ends of the machine's executions to Baton's `run_lifecycle`
(infra/capabilities/lifecycle.py), so runs of that machine end on time.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypedDict

from aws_cdk import Arn, ArnFormat, Duration, Fn, Stack
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_stepfunctions as sfn
from aws_cdk import aws_stepfunctions_tasks as tasks
from constructs import Construct
from pydantic import ValidationError

from baton.domain.deadline import task_timeout_seconds
from baton.domain.gate_payloads import (
    ENTERED_TIME,
    TASK_TOKEN,
    InterruptParkPayload,
    ParkPayload,
    StatePath,
    gate_payload,
)
from baton.domain.review_gate import GateConfig
from baton.workflows.gate_states import await_gate_payloads
from infra.capabilities.functions import SEND_TASK_ACTIONS
from infra.capabilities.lifecycle import report_ends
from infra.config import TeamConfig
from infra.exports import GATE_FUNCTION_EXPORTS, REVIEW_GATE_WORKFLOW, role_export
from infra.gate_checks import (
    asks_as,
    check_await_from_at_synth,
    check_await_ladder,
    check_await_timeout,
    check_machines_at_synth,
    check_review,
)
from infra.permissions import token_senders

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Unpack

__all__ = ["GATE_FUNCTION_EXPORTS", "REVIEW_GATE_WORKFLOW", "BatonGate", "BatonRef"]


class _FunctionsLike(Protocol):
    @property
    def functions(self) -> Mapping[str, lambda_.IFunction]: ...
    @property
    def roles(self) -> Mapping[str, iam.IRole]: ...


class _GatesLike(Protocol):
    @property
    def state_machines(self) -> Mapping[str, sfn.IStateMachine]: ...


class BatonStackLike(Protocol):
    """What `BatonRef.from_stack` reads of a Baton stack (infra/stack.py's BatonStack)."""

    @property
    def functions(self) -> _FunctionsLike: ...
    @property
    def gates(self) -> _GatesLike: ...
    @property
    def config(self) -> TeamConfig: ...


class TaskOptions(TypedDict, total=False):
    """Options every gate helper takes: where the run id is read, where the result goes, the comment."""

    run_id_path: str
    result_path: str
    comment: str | None


class InterruptOptions(TaskOptions, total=False):
    """An interrupt's optional parts (at most one of schema / json_schema, of state / state_path)."""

    schema: Mapping[str, Any] | None
    json_schema: Mapping[str, Any] | None
    state: Mapping[str, Any] | None
    state_path: str | None
    notify: Sequence[str] | None


def _options(given: Mapping[str, Any], allowed: type, helper: str) -> None:
    """TypedDict keywords are not checked at run time: a misspelt option must still fail the synth."""
    unknown = set(given) - set(allowed.__annotations__) - set(TaskOptions.__annotations__)
    if unknown:
        raise TypeError(f"BatonGate.{helper}() got unexpected keyword argument(s) {sorted(unknown)}")


def _cdk_payload(payload: Mapping[str, Any]) -> dict[str, Any]:
    """A `gate_payload()` for CDK: each StatePath becomes a JsonPath token (rendered `"key.$": path`)."""
    rendered: dict[str, Any] = {}
    for key, value in payload.items():
        if value is TASK_TOKEN:
            rendered[key] = sfn.JsonPath.task_token
        elif isinstance(value, StatePath):
            rendered[key] = sfn.JsonPath.string_at(value.path)
        elif isinstance(value, dict):
            rendered[key] = _cdk_payload(value)
        else:
            rendered[key] = value
    return rendered


@dataclass(frozen=True)
class BatonRef:
    """What a user's stack needs of a Baton team environment."""

    park_function: lambda_.IFunction
    interrupt_park_function: lambda_.IFunction
    await_gate_function: lambda_.IFunction
    review_gate: sfn.IStateMachine
    api_role: iam.IRole
    # Every other function that sends gates' task tokens (grant_resume lets each resume the machine).
    token_sender_roles: tuple[iam.IRole, ...] = ()
    # Where the ends of a granted machine's executions go (`grant_resume`), and the team's name prefix.
    run_lifecycle_function: lambda_.IFunction | None = None
    prefix: str | None = None

    @classmethod
    def from_stack(cls, stack: BatonStackLike) -> BatonRef:
        fns = stack.functions.functions
        return cls(
            park_function=fns["park"],
            interrupt_park_function=fns["interrupt_park"],
            await_gate_function=fns["await_gate"],
            review_gate=stack.gates.state_machines[REVIEW_GATE_WORKFLOW],
            api_role=stack.functions.roles["api"],
            token_sender_roles=tuple(stack.functions.roles[name] for name in _token_senders() if name != "api"),
            run_lifecycle_function=fns["run_lifecycle"],
            prefix=stack.config.prefix,
        )

    @classmethod
    def from_exports(cls, scope: Construct, construct_id: str, *, team: str) -> BatonRef:
        """From the exports of a deployed team environment (`baton-<team>-ParkFunctionArn`,
        `-InterruptParkFunctionArn`, `-AwaitGateFunctionArn`, `-WorkflowReviewGate`, `-ApiRoleArn`)."""
        prefix = TeamConfig(team=team).prefix
        holder = Construct(scope, construct_id)

        def function(export: str, construct: str) -> lambda_.IFunction:
            return lambda_.Function.from_function_attributes(
                holder, construct, function_arn=Fn.import_value(f"{prefix}-{export}"), same_environment=True
            )

        review_gate = sfn.StateMachine.from_state_machine_arn(
            holder, "ReviewGate", Fn.import_value(f"{prefix}-WorkflowReviewGate")
        )

        def role(function: str) -> iam.IRole:
            arn = Fn.import_value(f"{prefix}-{role_export(function)}")
            return iam.Role.from_role_arn(holder, role_export(function).removesuffix("Arn"), arn, mutable=True)

        return cls(
            park_function=function("ParkFunctionArn", "Park"),
            interrupt_park_function=function("InterruptParkFunctionArn", "InterruptPark"),
            await_gate_function=function("AwaitGateFunctionArn", "AwaitGate"),
            review_gate=review_gate,
            api_role=role("api"),
            token_sender_roles=tuple(role(name) for name in _token_senders() if name != "api"),
            run_lifecycle_function=function("RunLifecycleFunctionArn", "RunLifecycle"),
            prefix=prefix,
        )


def _token_senders() -> tuple[str, ...]:
    from baton.workflows.resources import FUNCTIONS

    return token_senders(FUNCTIONS)


def _baton_functions(baton: BatonRef) -> dict[str, str]:
    """Baton's parking functions by their ASL placeholders (what `baton check` recognises them by)."""
    return {
        "${ParkFunctionArn}": baton.park_function.function_arn,
        "${InterruptParkFunctionArn}": baton.interrupt_park_function.function_arn,
        "${AwaitGateFunctionArn}": baton.await_gate_function.function_arn,
    }


def _seconds(timeout: Duration, what: str) -> int:
    seconds = int(timeout.to_seconds())
    if seconds < 1:
        raise ValueError(f"a Baton {what} needs a positive timeout (no silent infinity)")
    return seconds


def _text(value: str | None, path: str | None, name: str) -> str | StatePath:
    if (value is None) == (path is None):
        raise ValueError(f"give exactly one of {name} (text) or {name}_path (a JSONPath into the state input)")
    return value if value is not None else StatePath(str(path))


def _token_wait(
    scope: Construct,
    construct_id: str,
    *,
    baton: BatonRef,
    function: lambda_.IFunction,
    payload: Mapping[str, Any],
    timeout: Duration,
    result_path: str,
    comment: str,
) -> tasks.LambdaInvoke:
    task = tasks.LambdaInvoke(
        scope,
        construct_id,
        lambda_function=function,
        integration_pattern=sfn.IntegrationPattern.WAIT_FOR_TASK_TOKEN,
        payload=sfn.TaskInput.from_object(_cdk_payload(payload)),
        # Baton ends the pause at `timeout` (the payload's timeout_seconds); this is the backstop after it.
        task_timeout=sfn.Timeout.duration(Duration.seconds(task_timeout_seconds(int(timeout.to_seconds())))),
        result_path=result_path,
        comment=comment,
    )
    check_machines_at_synth(task, _baton_functions(baton))  # C240, C243, C244, C245 on the whole machine
    # CDK's own retry (retry_on_service_exceptions) leaves out a throttle; the parks are idempotent
    # (`baton check` C300, baton.workflows.asl_rules).
    task.add_retry(
        errors=["Lambda.TooManyRequestsException"], interval=Duration.seconds(1), max_attempts=3, backoff_rate=2
    )
    return task


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
        notify: Sequence[str] | None = None,
        **options: Unpack[TaskOptions],
    ) -> tasks.LambdaInvoke:
        """A question to an operator (`park` Lambda): parks until answered, or fails with States.Timeout.
        Result at `result_path` (default `$.human`)."""
        _options(options, TaskOptions, "ask")
        seconds = _seconds(timeout, "gate")
        fields: dict[str, Any] = {"notify": list(notify)} if notify is not None else {}
        payload = gate_payload(
            ParkPayload,
            token=TASK_TOKEN,
            entered_at=ENTERED_TIME,
            run_id=StatePath(options.get("run_id_path", "$.run_id")),
            node=node,
            kind="ask",
            prompt=_text(prompt, prompt_path, "prompt"),
            timeout_seconds=seconds,
            **fields,
        )
        task = _token_wait(
            scope,
            construct_id,
            baton=baton,
            function=baton.park_function,
            payload=payload,
            timeout=timeout,
            result_path=options.get("result_path", "$.human"),
            comment=options.get("comment")
            or f"Baton ask gate '{node}': parks until answered (timeout {timeout.to_human_string()})",
        )
        asks_as(task, node)
        return task

    @staticmethod
    def interrupt(
        scope: Construct,
        construct_id: str,
        *,
        baton: BatonRef,
        timeout: Duration,
        node: str = "interrupt",
        prompt: str | None = None,
        prompt_path: str | None = None,
        **options: Unpack[InterruptOptions],
    ) -> tasks.LambdaInvoke:
        """An interrupt (`interrupt_park` Lambda, as statemachines/interrupt.asl.json): a prompt, an optional
        schema (`schema` or `json_schema`) and a state snapshot (`state`, or `state_path` into the state
        input) the operator may edit. Resumed with `{interrupt_id, input, state, state_edits,
        resolved_by}` at `result_path` (default `$.interrupt`); a cancel fails the task with
        InterruptCancelled; the timeout with States.Timeout."""
        _options(options, InterruptOptions, "interrupt")
        seconds = _seconds(timeout, "interrupt")
        payload = gate_payload(
            InterruptParkPayload,
            token=TASK_TOKEN,
            entered_at=ENTERED_TIME,
            run_id=StatePath(options.get("run_id_path", "$.run_id")),
            node=node,
            request=_interrupt_request(_text(prompt, prompt_path, "prompt"), seconds, options),
        )
        task = _token_wait(
            scope,
            construct_id,
            baton=baton,
            function=baton.interrupt_park_function,
            payload=payload,
            timeout=timeout,
            result_path=options.get("result_path", "$.interrupt"),
            comment=options.get("comment")
            or f"Baton interrupt '{node}': parks until resumed or cancelled (timeout {timeout.to_human_string()})",
        )
        asks_as(task, node)
        return task

    @staticmethod
    def await_answers(
        scope: Construct,
        construct_id: str,
        *,
        baton: BatonRef,
        gate: str,
        timeout: Duration,
        from_node: str | None = None,
        map_item_path: str | None = None,
        ladder: Mapping[str, Any] | None = None,
        **options: Unpack[TaskOptions],
    ) -> tasks.LambdaInvoke:
        """An await gate (`await_gate` Lambda, as statemachines/await_answers.asl.json): parks until no
        question in scope (`from_node`'s, or the whole run's) is pending; returns `{answers, gate, from}`
        at `result_path` (default `$.await`). Inside a Map pass `map_item_path` (where the item index is)
        so each item parks its own token. A `ladder` (baton.domain.ladder: remind / escalate about the
        unanswered questions, on_timeout "fail" | "use_question_defaults") is checked at synth (C261)."""
        _options(options, TaskOptions, "await_answers")
        check_await_timeout(f"{scope.node.path}/{construct_id}", int(timeout.to_seconds()))  # C241
        seconds = _seconds(timeout, "await gate")
        if ladder is not None:
            check_await_ladder(f"{scope.node.path}/{construct_id}", seconds, ladder)  # C261
        payload, _ = await_gate_payloads(
            gate=gate,
            from_node=from_node,
            timeout=seconds,
            run_id_path=options.get("run_id_path", "$.run_id"),
            map_item_path=map_item_path,
            ladder=ladder,
        )
        task = _token_wait(
            scope,
            construct_id,
            baton=baton,
            function=baton.await_gate_function,
            payload=payload,
            timeout=timeout,
            result_path=options.get("result_path", "$.await"),
            comment=options.get("comment")
            or f"Baton await gate '{gate}': parks until no question in scope is pending "
            f"(timeout {timeout.to_human_string()})",
        )
        check_await_from_at_synth(task, seconds, from_node)  # C242, once the whole stack is known
        return task

    @staticmethod
    def review(
        scope: Construct,
        construct_id: str,
        *,
        baton: BatonRef,
        timeout: Duration,
        config: Mapping[str, Any] | None = None,
        config_path: str | None = None,
        **options: Unpack[TaskOptions],
    ) -> tasks.StepFunctionsStartExecution:
        """The review-and-merge gate: Baton's review_gate state machine run as one `startExecution.sync:2`
        Task with input `{run_id, input: config}`. `config` is checked against the gate's schema at synth
        (a typo fails the synth); `config_path` takes it from the state input instead. `timeout` bounds the
        whole dialogue and merge (each pause also has the config's own timeout_seconds). The result is the
        `{output: {run_id, gate, decision, action, answered_by, verdict, merge}, execution_arn}`; a refused
        or timed-out gate fails the Task with the child's error (ReviewGateMisconfigured, ...)."""
        _options(options, TaskOptions, "review")
        seconds = _seconds(timeout, "review gate")
        run_id_path = options.get("run_id_path", "$.run_id")
        if (config is None) == (config_path is None):
            raise ValueError("give exactly one of config (the review gate's configuration) or config_path")
        gate_input: Any
        if config is not None:
            check_review(f"{scope.node.path}/{construct_id}", config)  # C100, C101
            try:
                GateConfig.model_validate(dict(config))
            except ValidationError as err:
                raise ValueError(f"invalid review gate config: {err.errors(include_url=False)}") from None
            gate_input = dict(config)
        else:
            gate_input = sfn.JsonPath.object_at(str(config_path))
        return tasks.StepFunctionsStartExecution(
            scope,
            construct_id,
            state_machine=baton.review_gate,
            integration_pattern=sfn.IntegrationPattern.RUN_JOB,
            input=sfn.TaskInput.from_object({"run_id": sfn.JsonPath.string_at(run_id_path), "input": gate_input}),
            task_timeout=sfn.Timeout.duration(timeout),
            result_selector={
                "output": sfn.JsonPath.object_at("$.Output"),
                "execution_arn": sfn.JsonPath.string_at("$.ExecutionArn"),
            },
            result_path=options.get("result_path", "$.review"),
            comment=options.get("comment")
            or f"Baton review gate: Baton's review_gate state machine (timeout {seconds} s)",
        )

    @staticmethod
    def grant_resume(state_machine: sfn.IStateMachine, *, baton: BatonRef) -> iam.Policy:
        """Let every Baton function that sends task tokens resume (SendTaskSuccess/Failure) the gates of
        this state machine only, and describe its executions (Core.release_gate, when a task is gone).

        The policy lives in the state machine's stack, so the user's stack depends on Baton's and not the
        other way round."""
        scope = Stack.of(state_machine)
        machine = state_machine.state_machine_arn
        name = Arn.split(machine, ArnFormat.COLON_RESOURCE_NAME).resource_name
        executions = scope.format_arn(
            service="states", resource="execution", resource_name=f"{name}:*", arn_format=ArnFormat.COLON_RESOURCE_NAME
        )
        policy = iam.Policy(
            scope,
            f"BatonResume{state_machine.node.id}",
            statements=[
                iam.PolicyStatement(actions=SEND_TASK_ACTIONS, resources=[machine]),
                iam.PolicyStatement(actions=["states:DescribeExecution"], resources=[executions]),
            ],
        )
        for role in (baton.api_role, *baton.token_sender_roles):
            policy.attach_to_role(role)
        if baton.run_lifecycle_function is not None and baton.prefix is not None:
            report_ends(state_machine, function=baton.run_lifecycle_function, prefix=baton.prefix)  # runs end on time
        return policy


def _interrupt_request(prompt: str | StatePath, seconds: int, options: InterruptOptions) -> dict[str, Any]:
    """The `request` of an interrupt payload (HostedInterruptRequest's fields), from the helper's options."""
    schema, json_schema = options.get("schema"), options.get("json_schema")
    state, state_path = options.get("state"), options.get("state_path")
    if state is not None and state_path is not None:
        raise ValueError("give at most one of state (a snapshot) or state_path (a JSONPath into the state input)")
    if schema is not None and json_schema is not None:
        raise ValueError("give at most one of schema or json_schema")
    request: dict[str, Any] = {"prompt": prompt, "timeout_seconds": seconds}
    if schema is not None:
        request["schema_"] = dict(schema)
    if json_schema is not None:
        request["json_schema"] = dict(json_schema)
    if state is not None:
        request["state"] = dict(state)
    elif state_path is not None:
        request["state"] = StatePath(state_path)
    notify = options.get("notify")
    if notify is not None:
        request["notify"] = list(notify)
    return request
