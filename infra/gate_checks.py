"""`baton check`'s gate checks (baton/workflows/gate_checks.py) run on the CDK helpers of infra/gate.py, so a
bad helper configuration fails the synth with the same code and reason as a bad ASL file:

- C100 / C101 (review gate: nothing to merge, a `review_url` naming a missing output) and C241 (an await
  gate without a positive timeout) are known when the helper is called: it raises `GateCheckError` then.
- C242 (an await gate whose `from` names a node that never asks) needs the whole stack: each await gate
  gets a construct validation, run at synth, judging `from` against the nodes the stack's Baton gates ask
  as (`ask` and `interrupt`), the way the ASL check judges it against the machine's Tasks; a stack where no
  Baton gate asks gets its questions from agents over the API and is not judged, as in the ASL check.
- C240 (questions posted as a node that is a person's pause), C243 / C244 (a Baton gate inside a Map:
  without its item, or holding a bounded Map's slot) and C245 (a pause's TimeoutSeconds without the grace)
  need the state machine the helpers' Tasks end up in: the first helper of a stack adds one validation to
  the stack, run at synth, that gives each of its state machines' definitions to `baton check`
  (`check_definition`), Baton's functions written back as their ASL placeholders.

Each helper's state is given to the ASL checks in the ASL shape they read (the same placeholders).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import jsii
from aws_cdk import Stack
from aws_cdk import aws_stepfunctions as sfn
from constructs import IValidation

from baton.workflows.asl import check_definition
from baton.workflows.gate_checks import (
    AWAIT_GATE_ARN,
    REVIEW_GATE_ARN,
    await_findings,
    ladder_findings,
    review_findings,
)

if TYPE_CHECKING:
    from collections.abc import Mapping

    from constructs import Construct

ASKS_AS = "_baton_asks_as"  # attribute on an ask/interrupt gate's Task: the node it asks as
MACHINE_CHECKS = "_baton_machine_checks"  # attribute on a stack: its _MachineChecks validation
# The findings that need the whole definition (the others are judged when the helper is called).
MACHINE_CODES = frozenset({"C240", "C243", "C244", "C245"})


class GateCheckError(ValueError):
    """A helper configuration `baton check` would refuse: the message starts with the finding's code."""


def _refuse(findings: list[tuple[str, str, str]]) -> None:
    if findings:
        raise GateCheckError("; ".join(f"{code} {where}: {reason}" for where, code, reason in findings))


def check_review(where: str, config: Mapping[str, Any]) -> None:
    """C100 / C101 on a review helper's literal configuration."""
    state = {
        "Type": "Task",
        "Resource": "arn:aws:states:::states:startExecution.sync:2",
        "Parameters": {"StateMachineArn": REVIEW_GATE_ARN, "Input": {"input": dict(config)}},
    }
    _refuse(review_findings(where, state, None))


def _await_state(seconds: int, from_node: str | None) -> dict[str, Any]:
    payload = {"timeout_seconds": seconds, **({"from": from_node} if from_node is not None else {})}
    return {
        "Type": "Task",
        "Resource": "arn:aws:states:::lambda:invoke.waitForTaskToken",
        "TimeoutSeconds": seconds,
        "Parameters": {"FunctionName": AWAIT_GATE_ARN, "Payload": payload},
    }


def check_await_timeout(where: str, seconds: int) -> None:
    """C241 on an await helper's timeout."""
    _refuse([f for f in await_findings(where, _await_state(seconds, None), set()) if f[1] == "C241"])


def check_await_ladder(where: str, seconds: int, ladder: Mapping[str, Any]) -> None:
    """C261 on an await helper's ladder (its park would refuse it)."""
    state = _await_state(seconds, None)
    state["Parameters"] = {
        "FunctionName": AWAIT_GATE_ARN,
        "Payload": {"timeout_seconds": seconds, "ladder": dict(ladder)},
    }
    _refuse(ladder_findings(where, state))


def asks_as(task: Construct, node: str) -> None:
    """Mark an ask/interrupt gate's Task as asking as `node` (what C242 compares `from` with)."""
    setattr(task, ASKS_AS, node)


@jsii.implements(IValidation)
class _FromNodeAsks:
    """C242 at synth: once the stack is built, does any Baton gate of it ask as `from_node`?"""

    def __init__(self, task: Construct, seconds: int, from_node: str) -> None:
        self._task, self._seconds, self._from = task, seconds, from_node

    def validate(self) -> list[str]:
        asking = {str(getattr(c, ASKS_AS)) for c in Stack.of(self._task).node.find_all() if hasattr(c, ASKS_AS)}
        where = self._task.node.path
        found = await_findings(where, _await_state(self._seconds, self._from), asking)
        return [f"{code} {where}: {reason}" for _, code, reason in found if code == "C242"]


def check_await_from_at_synth(task: Construct, seconds: int, from_node: str | None) -> None:
    if from_node is not None:
        task.node.add_validation(_FromNodeAsks(task, seconds, from_node))


@jsii.implements(IValidation)
class _MachineChecks:
    """C240, C243, C244, C245 at synth: `baton check` on each state machine of the stack."""

    def __init__(self, stack: Stack) -> None:
        self._stack = stack
        self._placeholders: dict[str, str] = {}  # a Baton function's ARN token -> its ASL placeholder

    def add_functions(self, arns: Mapping[str, str]) -> None:
        """`arns`: ASL placeholder (`${ParkFunctionArn}`) -> that Baton function's ARN in this stack."""
        for placeholder, arn in arns.items():
            self._placeholders[json.dumps(self._stack.resolve(arn), sort_keys=True)] = placeholder

    def _asl(self, machine: sfn.StateMachine) -> dict[str, Any] | None:
        """The definition in the ASL shape `baton check` reads: Baton's functions as their placeholders,
        every other deploy-time value (a partition, another ARN) as a neutral placeholder."""
        cfn = machine.node.default_child
        resolved = self._stack.resolve(cfn.definition_string) if isinstance(cfn, sfn.CfnStateMachine) else None
        parts = resolved.get("Fn::Join", ["", []])[1] if isinstance(resolved, dict) else [resolved]
        text = "".join(
            part if isinstance(part, str) else self._placeholders.get(json.dumps(part, sort_keys=True), "${Deployed}")
            for part in parts
        )
        try:
            definition = json.loads(text)
        except (TypeError, ValueError):
            return None  # not a JSON definition we can read (a definition from S3): nothing to judge
        return definition if isinstance(definition, dict) else None

    def validate(self) -> list[str]:
        errors: list[str] = []
        for machine in self._stack.node.find_all():
            definition = self._asl(machine) if isinstance(machine, sfn.StateMachine) else None
            if definition is None:
                continue
            for problem in check_definition(definition, machine.node.path):
                if problem.code in MACHINE_CODES:
                    errors.append(f"{problem.code} {machine.node.path}/{problem.state}: {problem.message}")
        return errors


def check_machines_at_synth(task: Construct, functions: Mapping[str, str]) -> None:
    """Judge the state machines of `task`'s stack at synth (once per stack); `functions` maps Baton's ASL
    placeholders to the ARNs the helpers call."""
    stack = Stack.of(task)
    checks = getattr(stack, MACHINE_CHECKS, None)
    if not isinstance(checks, _MachineChecks):
        checks = _MachineChecks(stack)
        setattr(stack, MACHINE_CHECKS, checks)
        stack.node.add_validation(checks)
    checks.add_functions(functions)
