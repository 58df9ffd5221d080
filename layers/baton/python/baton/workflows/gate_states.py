"""The await gate as states you drop into your own workflow (the same shape as
`statemachines/await_answers.asl.json`): one `waitForTaskToken` Task calling the `await_gate` Lambda,
its mandatory timeout, and the Catch → `await_timeout` Lambda → Fail whose cause lists the unanswered
questions. Use `${AwaitGateFunctionArn}` / `${AwaitTimeoutFunctionArn}` placeholders (substituted by the
local stack and CDK alike) or pass deployed ARNs.

    states.update(await_gate_states("Sync", gate="sync", from_node="draft", timeout_seconds=1800, next="Ship"))

Inside a Map's ItemProcessor pass `map_item_path="$.index"` (with an ItemSelector putting
`$$.Map.Item.Index` there): each item parks its own token (`<gate>-<index>`) and is released on its own.
"""

from __future__ import annotations

from typing import Any

AWAIT_GATE_ARN = "${AwaitGateFunctionArn}"
AWAIT_TIMEOUT_ARN = "${AwaitTimeoutFunctionArn}"


def await_gate_states(
    name: str,
    *,
    gate: str,
    next: str | None,
    from_node: str | None = None,
    timeout_seconds: int | None = None,
    timeout_seconds_path: str | None = None,
    run_id_path: str = "$.run_id",
    result_path: str = "$.await",
    map_item_path: str | None = None,
    gate_arn: str = AWAIT_GATE_ARN,
    timeout_arn: str = AWAIT_TIMEOUT_ARN,
) -> dict[str, dict[str, Any]]:
    """`{name: Task, name+"TimedOut": Task, name+"Failed": Fail}`. The Task's result (at `result_path`)
    is `{answers: [{interaction_id, node, question, answer}, …], gate, from}`."""
    if (timeout_seconds is None) == (timeout_seconds_path is None):
        raise ValueError("an await gate needs exactly one of timeout_seconds / timeout_seconds_path (it must end)")
    payload: dict[str, Any] = {"token.$": "$$.Task.Token", "run_id.$": run_id_path, "gate": gate, "from": from_node}
    if timeout_seconds is not None:
        payload["timeout_seconds"] = timeout_seconds
    else:
        payload["timeout_seconds.$"] = timeout_seconds_path
    timeout_payload: dict[str, Any] = {"run_id.$": run_id_path, "gate": gate, "error.$": "$.error"}
    if map_item_path:
        payload["map_item.$"] = map_item_path
        timeout_payload["map_item.$"] = map_item_path
    task: dict[str, Any] = {
        "Type": "Task",
        "Comment": "Baton await gate: parks until no question in scope is pending; the timeout is mandatory.",
        "Resource": "arn:aws:states:::lambda:invoke.waitForTaskToken",
        "Parameters": {"FunctionName": gate_arn, "Payload": payload},
        "ResultPath": result_path,
        "Catch": [{"ErrorEquals": ["States.Timeout"], "ResultPath": "$.error", "Next": f"{name}TimedOut"}],
    }
    if timeout_seconds is not None:
        task["TimeoutSeconds"] = timeout_seconds
    else:
        task["TimeoutSecondsPath"] = timeout_seconds_path
    if next is None:
        task["End"] = True
    else:
        task["Next"] = next
    return {
        name: task,
        f"{name}TimedOut": {
            "Type": "Task",
            "Resource": "arn:aws:states:::lambda:invoke",
            "Parameters": {"FunctionName": timeout_arn, "Payload": timeout_payload},
            "ResultSelector": {"cause.$": "$.Payload.cause"},
            "ResultPath": "$.timeout",
            "Next": f"{name}Failed",
        },
        f"{name}Failed": {"Type": "Fail", "Error": "AwaitAnswersTimedOut", "CausePath": "$.timeout.cause"},
    }
