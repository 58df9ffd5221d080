"""What a gate's Step Functions task sends its Lambda: one model per payload, written once.

The handlers under `functions/` parse their event with these models; the ASL builders
(`baton.workflows.gate_states`) and the CDK gate helpers (`infra/gate.py`) build their `Payload` with
`gate_payload()`, which refuses a field the model does not have or a missing required one and validates
every literal value by the field's own type; `tests/unit/test_gate_payloads.py` checks every `Payload` in
`statemachines/*.asl.json` against the model of the function it calls.

| Lambda (`functions/<name>`) | model                   | sent by                                  |
|-----------------------------|-------------------------|------------------------------------------|
| park                        | `ParkPayload`           | ask gates (human_pause, `BatonGate.ask`) |
| gate_timeout                | `GateTimeoutPayload`    | their Catch on States.Timeout            |
| await_gate                  | `AwaitGatePayload`      | await gates (`await_gate_states`, ...)   |
| await_timeout               | `AwaitTimeoutPayload`   | their Catch on States.Timeout            |
| interrupt_park              | `InterruptParkPayload`  | hosted interrupts                        |
| interrupt_fail              | `InterruptFailPayload`  | their Catch (timeout, InterruptCancelled)|
| review_park / review_turn / merge_start / merge_record | `Review*`, `Merge*` | statemachines/review_gate.asl.json |
| diff_start                  | `DiffStartPayload`      | statemachines/review_gate.asl.json       |
| gate_deadline               | `GateDeadlinePayload`   | a gate's timer (gate_deadline.asl.json)  |

Every parking payload (park, await_gate, interrupt_park, review_park) takes `entered_at`
(`ENTERED_TIME`, the state's `$$.State.EnteredTime`): Baton's deadline starts when the task started
(`baton.services.core.Core.deadline_of`), not when its Lambda ran.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, TypeAdapter

from baton.domain.approval import ApprovalPolicy
from baton.domain.fields import GateName, NodeName, RunId, ScopeNode, TaskToken, TimeoutSeconds
from baton.domain.interrupt_fields import GateAction
from baton.domain.ladder import Ladder
from baton.domain.merge_contracts import MergeOutcome, StatesError

MapItem = Annotated[int | str | None, Field(default=None, description="$$.Map.Item.Index inside a Map iteration")]
EnteredAt = Annotated[
    AwareDatetime | None,
    Field(
        default=None,
        description="$$.State.EnteredTime: when the task started, where Baton's deadline starts (absent: the park)",
    ),
]
StepError = Annotated[dict[str, Any] | None, Field(default=None, description="The Catch's error ($.error)")]


class GatePayload(BaseModel):
    """Base of every gate payload: the wire names are the aliases (`from`), Python names the fields."""

    # Built on the first parse (each function parses one payload), not at import.
    model_config = ConfigDict(populate_by_name=True, defer_build=True)


class ParkPayload(GatePayload):
    token: TaskToken
    run_id: RunId
    node: NodeName
    kind: Literal["ask"] = "ask"
    prompt: str = Field(min_length=1)
    timeout_seconds: TimeoutSeconds
    notify: list[str] | None = None
    entered_at: EnteredAt = None
    ladder: Ladder | None = Field(default=None, description="remind / escalate / on_timeout (baton.domain.ladder)")
    approval: ApprovalPolicy | None = Field(
        default=None, description="A quorum: N approvals of a set release the pause (baton.domain.approval)"
    )


class GateTimeoutPayload(GatePayload):
    run_id: RunId
    node: NodeName
    error: StepError = None


class AwaitGatePayload(GatePayload):
    token: TaskToken
    run_id: RunId
    gate: GateName = Field(description="The gate's name (inside a Map the item index is appended)")
    from_node: ScopeNode = Field(default=None, alias="from", description="One node's questions; empty = whole run")
    timeout_seconds: TimeoutSeconds
    map_item: MapItem = None
    entered_at: EnteredAt = None
    ladder: Ladder | None = Field(
        default=None,
        description='remind / escalate about the unanswered questions; on_timeout "fail" | "use_question_defaults"',
    )


class AwaitTimeoutPayload(GatePayload):
    run_id: RunId
    gate: GateName
    error: StepError = None
    map_item: MapItem = None


class HostedInterruptRequest(GatePayload):
    """The interrupt a hosted task asks for (the workflow's `$.input`, camelCase like the REST API)."""

    prompt: str = Field(min_length=1)
    timeout_seconds: TimeoutSeconds
    schema_: dict[str, Any] | None = Field(default=None, alias="schema")
    json_schema: dict[str, Any] | None = Field(default=None, alias="jsonSchema")
    state: dict[str, Any] | None = None
    notify: list[str] | None = None
    workflow_id: str | None = Field(default=None, alias="workflowId")
    approval: ApprovalPolicy | None = None  # a quorum (baton/domain/approval.py); `baton check` reads literal ones
    ladder: Ladder | None = None  # remind / escalate / on_timeout (baton.domain.ladder)
    action: GateAction | None = None  # the gated action the policy decides (baton/domain/gate_ruling.py)

    model_config = ConfigDict(extra="ignore", populate_by_name=True, defer_build=True)


class InterruptParkPayload(GatePayload):
    token: TaskToken
    run_id: RunId
    node: NodeName
    request: HostedInterruptRequest
    entered_at: EnteredAt = None


class InterruptFailPayload(GatePayload):
    run_id: RunId
    node: NodeName
    outcome: Literal["timeout", "cancelled"]
    error: StepError = None


class InterruptFailResult(BaseModel):
    """What the `interrupt_fail` Lambda returns: the cause its Fail state reports (`$.ended.cause`)."""

    cause: str
    interrupt_id: str | None


class ReviewParkPayload(GatePayload):
    token: TaskToken
    run_id: RunId
    gate: GateName
    entered_at: EnteredAt = None


class ReviewTurnPayload(GatePayload):
    mode: Literal["first", "reply"]
    run_id: RunId
    config: dict[str, Any] | None = None  # first: the gate's configuration
    gate: str | None = None  # reply: the gate's name


class DiffStartPayload(GatePayload):
    token: TaskToken
    run_id: RunId
    config: dict[str, Any] | None = None  # the gate's configuration (the review_turn's first turn reads it too)


class MergeStartPayload(GatePayload):
    token: TaskToken
    run_id: RunId
    gate: GateName


class MergeRecordPayload(GatePayload):
    run_id: RunId
    gate: GateName
    outcome: MergeOutcome | None = None  # the merge's SendTaskSuccess output
    error: StatesError | None = None  # the merge task's caught error (a timeout, MergeCrashed, ...)


class GateDeadlinePayload(GatePayload):
    """A gate's timer, at the deadline of the wait it was started for (`baton.services.deadlines`). No
    task token: the timer's input is visible in Step Functions; the wait is found by run and gate."""

    run_id: RunId
    gate: str = Field(
        min_length=1,
        max_length=256,
        description="The parked wait's gate (tool awaits: 'tool'; a pause no gate parks: 'interaction')",
    )
    deadline: AwareDatetime = Field(description="The deadline the timer was started for (a re-parked gate has another)")
    interaction_id: str | None = Field(default=None, max_length=64, description="The tool-form await it ends")
    step: Literal["remind", "escalate", "deadline"] = Field(
        default="deadline", description="Which step of the pause's ladder fired (baton.domain.ladder)"
    )


# Which payload each gate Lambda takes (by function name, as in baton.workflows.resources.FUNCTIONS).
PAYLOAD_OF_FUNCTION: dict[str, type[GatePayload]] = {
    "park": ParkPayload,
    "gate_timeout": GateTimeoutPayload,
    "await_gate": AwaitGatePayload,
    "await_timeout": AwaitTimeoutPayload,
    "interrupt_park": InterruptParkPayload,
    "interrupt_fail": InterruptFailPayload,
    "review_park": ReviewParkPayload,
    "review_turn": ReviewTurnPayload,
    "merge_start": MergeStartPayload,
    "merge_record": MergeRecordPayload,
    "diff_start": DiffStartPayload,
    "gate_deadline": GateDeadlinePayload,
}


@dataclass(frozen=True)
class StatePath:
    """A value the task reads from its state input or context at run time (`"key.$": path`)."""

    path: str


TASK_TOKEN = StatePath("$$.Task.Token")
ENTERED_TIME = StatePath("$$.State.EnteredTime")  # every parking task passes it as `entered_at`


def wire_name(model: type[BaseModel], field: str) -> str:
    info = model.model_fields[field]
    return info.alias or field


def gate_payload(model: type[GatePayload], **fields: Any) -> dict[str, Any]:
    """The payload `model` takes, keyed by wire name, each value a literal or a `StatePath` (a dict of
    field values for a nested payload model). Unknown fields, missing required ones and literals the
    field's type refuses raise ValueError: a typo fails the synth, not the run."""
    unknown = set(fields) - set(model.model_fields)
    if unknown:
        raise ValueError(f"{model.__name__} has no field(s) {sorted(unknown)}")
    missing = [name for name, info in model.model_fields.items() if info.is_required() and name not in fields]
    if missing:
        raise ValueError(f"{model.__name__} needs {missing}")
    payload: dict[str, Any] = {}
    for name, value in fields.items():
        info = model.model_fields[name]
        nested = info.annotation if isinstance(info.annotation, type) else None
        if isinstance(value, dict) and nested is not None and issubclass(nested, GatePayload):
            value = gate_payload(nested, **value)
        elif not isinstance(value, StatePath):
            _check_literal(model, name, value)
        payload[wire_name(model, name)] = value
    return payload


def _check_literal(model: type[BaseModel], name: str, value: Any) -> None:
    info = model.model_fields[name]
    annotation: Any = Annotated[(info.annotation, *info.metadata)] if info.metadata else info.annotation
    try:
        TypeAdapter(annotation).validate_python(value)
    except Exception as err:  # pydantic's ValidationError, or the Baton error a shared field type raises
        raise ValueError(f"{model.__name__}.{name} = {value!r}: {err}") from None


def asl_payload(payload: dict[str, Any]) -> dict[str, Any]:
    """ASL's form of a `gate_payload()`: a `StatePath` becomes `"key.$": path`."""
    rendered: dict[str, Any] = {}
    for key, value in payload.items():
        if isinstance(value, StatePath):
            rendered[f"{key}.$"] = value.path
        elif isinstance(value, dict):
            rendered[key] = asl_payload(value)
        else:
            rendered[key] = value
    return rendered
