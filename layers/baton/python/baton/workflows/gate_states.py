"""The await gate as states you drop into your own workflow (the same shape as
`statemachines/await_answers.asl.json`): one `waitForTaskToken` Task calling the `await_gate` Lambda,
its mandatory timeout, and the Catch (Baton's own deadline `BatonDeadlinePassed` at the declared
timeout, or States.Timeout, the backstop a grace later: `baton.domain.deadline`) → `await_timeout`
Lambda → Fail whose cause lists the unanswered questions. Use `${AwaitGateFunctionArn}` /
`${AwaitTimeoutFunctionArn}` placeholders (substituted by the local stack and CDK alike) or pass
deployed ARNs.

    states.update(await_gate_states("Sync", gate="sync", from_node="draft", timeout_seconds=1800, next="Ship"))

Inside a Map's ItemProcessor pass `map_item_path=MAP_ITEM_PATH` with the Map's ItemSelector built by
`map_item_selector()` (it puts `$$.Map.Item.Index`, from the execution context, at `$.map_item`): each
item parks its own token (`<gate>-<index>`) and is released on its own. `baton check` refuses an await
gate or an asking Task inside a Map without it (C243; baton.workflows.map_rules).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypedDict

from baton.domain.deadline import GRACE_SECONDS, task_timeout_seconds
from baton.domain.gate_payloads import (
    ENTERED_TIME,
    TASK_TOKEN,
    AwaitGatePayload,
    AwaitTimeoutPayload,
    StatePath,
    asl_payload,
    gate_payload,
)
from baton.workflows.asl_rules import LAMBDA_RETRIER

if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Unpack

# What ends a parked gate at its timeout: Baton's deadline (a task failure sent at the declared timeout;
# `baton.services.core.DEADLINE_ERROR`), or Step Functions' own timer, the backstop a grace later.
TIMEOUT_ERRORS = ["States.Timeout", "BatonDeadlinePassed"]
AWAIT_GATE_ARN = "${AwaitGateFunctionArn}"
AWAIT_TIMEOUT_ARN = "${AwaitTimeoutFunctionArn}"
MAP_INDEX = "$$.Map.Item.Index"  # the execution context's item index; only a Map's ItemSelector can read it
MAP_ITEM_PATH = "$.map_item"  # where `map_item_selector()` puts it for the iteration's states


def map_item_selector(fields: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """A Map's ItemSelector giving each iteration its item index from the execution context at
    `MAP_ITEM_PATH`, plus `fields` (ItemSelector entries: `"key.$": path` or literals). Baton's Tasks in the
    iteration then pass `"map_item.$": MAP_ITEM_PATH`, so the item cannot be forgotten."""
    return {**(fields or {}), f"{MAP_ITEM_PATH.removeprefix('$.')}.$": MAP_INDEX}


class AwaitGatePaths(TypedDict, total=False):
    """Where the gate reads and writes, and which functions it calls (defaults in `await_gate_states`)."""

    run_id_path: str
    result_path: str
    map_item_path: str | None
    gate_arn: str
    timeout_arn: str


def await_gate_payloads(
    *,
    gate: str | StatePath,
    from_node: str | StatePath | None,
    timeout: int | StatePath,
    run_id_path: str = "$.run_id",
    map_item_path: str | None = None,
    ladder: Mapping[str, Any] | StatePath | None = None,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The await gate's two ASL payloads (the gate's, its timeout handler's), built from their models:
    the one place the await-gate payload is written (`infra/gate.py` and the tests use it too)."""
    run_id = StatePath(run_id_path)
    map_item = {"map_item": StatePath(map_item_path)} if map_item_path else {}
    # remind / escalate about the unanswered questions (baton.domain.ladder); the gate's payload only
    own: dict[str, Any] = (
        {} if ladder is None else {"ladder": ladder if isinstance(ladder, StatePath) else dict(ladder)}
    )
    park = gate_payload(
        AwaitGatePayload,
        token=TASK_TOKEN,
        run_id=run_id,
        gate=gate,
        from_node=from_node,
        timeout_seconds=timeout,
        entered_at=ENTERED_TIME,
        **map_item,
        **own,
    )
    timed_out = gate_payload(AwaitTimeoutPayload, run_id=run_id, gate=gate, error=StatePath("$.error"), **map_item)
    return park, timed_out


def await_gate_states(
    name: str,
    *,
    gate: str | StatePath,
    next: str | None,
    from_node: str | StatePath | None = None,
    timeout_seconds: int | None = None,
    timeout_seconds_path: str | None = None,
    ladder: Mapping[str, Any] | None = None,
    **paths: Unpack[AwaitGatePaths],
) -> dict[str, dict[str, Any]]:
    """`{name: Task, name+"TimedOut": Task, name+"Failed": Fail}`; with `timeout_seconds_path`, `name` is a
    Pass state that adds Baton's grace to the path's timeout for the Task, `name+"Park"`. The Task's
    result (at `result_path`, default `$.await`) is `{answers: [{interaction_id, node, question, answer}, …],
    gate, from}`.
    `paths` may set run_id_path (`$.run_id`), map_item_path, gate_arn and timeout_arn."""
    if (timeout_seconds is None) == (timeout_seconds_path is None):
        raise ValueError("an await gate needs exactly one of timeout_seconds / timeout_seconds_path (it must end)")
    timeout: int | StatePath = timeout_seconds if timeout_seconds is not None else StatePath(str(timeout_seconds_path))
    park, timed_out = await_gate_payloads(
        gate=gate,
        from_node=from_node,
        timeout=timeout,
        run_id_path=paths.get("run_id_path", "$.run_id"),
        map_item_path=paths.get("map_item_path"),
        ladder=ladder,
    )
    task: dict[str, Any] = {
        "Type": "Task",
        "Comment": "Baton await gate: parks until no question in scope is pending; the timeout is mandatory.",
        "Resource": "arn:aws:states:::lambda:invoke.waitForTaskToken",
        "Parameters": {"FunctionName": paths.get("gate_arn", AWAIT_GATE_ARN), "Payload": asl_payload(park)},
        "ResultPath": paths.get("result_path", "$.await"),
        # A retried park re-parks idempotently (baton.services.await_gates.park_gate; `baton check` C300).
        "Retry": [dict(LAMBDA_RETRIER)],
        "Catch": [{"ErrorEquals": TIMEOUT_ERRORS, "ResultPath": "$.error", "Next": f"{name}TimedOut"}],
    }
    # Baton ends the gate at the declared timeout; Step Functions' own timeout, the grace after it, is
    # the backstop (baton.domain.deadline). A path's value gets the grace added by a Pass state first.
    entry: dict[str, dict[str, Any]] = {}
    task_name = name
    if timeout_seconds is not None:
        task["TimeoutSeconds"] = task_timeout_seconds(timeout_seconds)
    else:
        task_name = f"{name}Park"
        entry[name] = {
            "Type": "Pass",
            "Comment": "The gate's Step Functions timeout: the declared one + Baton's grace.",
            "Parameters": {"seconds.$": f"States.MathAdd({timeout_seconds_path}, {GRACE_SECONDS})"},
            "ResultPath": f"$.{name}_task_timeout",
            "Next": task_name,
        }
        task["TimeoutSecondsPath"] = f"$.{name}_task_timeout.seconds"
    if next is None:
        task["End"] = True
    else:
        task["Next"] = next
    return {
        **entry,
        task_name: task,
        f"{name}TimedOut": {
            "Type": "Task",
            "Resource": "arn:aws:states:::lambda:invoke",
            "Parameters": {
                "FunctionName": paths.get("timeout_arn", AWAIT_TIMEOUT_ARN),
                "Payload": asl_payload(timed_out),
            },
            "ResultSelector": {"cause.$": "$.Payload.cause"},
            "ResultPath": "$.timeout",
            "Retry": [dict(LAMBDA_RETRIER)],
            "Next": f"{name}Failed",
        },
        f"{name}Failed": {"Type": "Fail", "Error": "AwaitAnswersTimedOut", "CausePath": "$.timeout.cause"},
    }
