"""What creating an interrupt asks for, validated at the one door every creator goes through (the API
route, the SDK through it, the hosted task's Lambda): `InterruptSpec`, and the field types the API's
request model shares with it. Each check raises the Baton error of its status code: a bad run id 400, a
bad node name, timeout, channel, key or prompt 422, a malformed schema 400, a too-large state 413.
"""

from __future__ import annotations

import math
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, model_validator

from baton.domain.answer_schema import check_schema_definition, check_state_size
from baton.domain.approval import ApprovalPolicy
from baton.domain.fields import NodeName, RunId, check_json_depth, refuse_non_numbers
from baton.domain.ladder import AnswerCheck, Ladder
from baton.errors import BadRequestError, ValidationFailedError
from baton.notify.model import CHANNELS

MAX_TIMEOUT_MS = 7 * 86400 * 1000
MAX_PROMPT_CHARS = 4000
MAX_KEY_CHARS = 200
DEFAULT_NODE = "interrupt"


def _check_prompt(prompt: str) -> str:
    prompt = prompt.strip()
    if not prompt:
        raise ValidationFailedError("prompt must be a non-empty string", details={"field": "prompt"})
    if len(prompt) > MAX_PROMPT_CHARS:
        raise ValidationFailedError(f"prompt is longer than {MAX_PROMPT_CHARS} characters", details={"field": "prompt"})
    return prompt


def _check_timeout_ms(timeout_ms: int | None) -> int | None:
    if timeout_ms is not None and (isinstance(timeout_ms, bool) or not 0 < timeout_ms <= MAX_TIMEOUT_MS):
        raise ValidationFailedError(
            f"timeoutMs must be an integer in 1..{MAX_TIMEOUT_MS}", details={"field": "timeoutMs"}
        )
    return timeout_ms


def _check_notify(notify: list[str] | None) -> list[str] | None:
    for n, channel in enumerate(notify or []):
        if channel not in CHANNELS:
            raise ValidationFailedError(
                f"unknown notify channel {channel!r}; expected some of {', '.join(CHANNELS)}",
                details={"path": f"notify[{n}]", "field": "notify"},
            )
    return notify


def _check_key(key: str | None) -> str | None:
    if key is not None and not 0 < len(key) <= MAX_KEY_CHARS:
        raise ValidationFailedError(f"key must be 1-{MAX_KEY_CHARS} characters", details={"field": "key"})
    return key


# The interrupt's own field types, shared by the API's request model and `InterruptSpec`.
Prompt = Annotated[str, AfterValidator(_check_prompt)]
TimeoutMs = Annotated[int | None, BeforeValidator(refuse_non_numbers), AfterValidator(_check_timeout_ms)]
NotifyChannels = Annotated[list[str] | None, AfterValidator(_check_notify)]
InterruptKey = Annotated[str | None, AfterValidator(_check_key)]


class InterruptSpec(BaseModel):
    """What a creator asks for (the API body, the SDK call, or the hosted task's input), validated here:
    the one door. Each check raises the Baton error of its status code (a bad run id 400, a bad name,
    timeout, channel or prompt 422, a bad schema 400, a too-large state 413)."""

    session_id: RunId
    prompt: Prompt
    workflow_id: str | None = None
    schema_: Any = Field(default=None, alias="schema")
    json_schema: Any = None
    state: dict[str, Any] | None = None
    notify: NotifyChannels = None
    timeout_ms: TimeoutMs = None
    key: InterruptKey = None
    node: NodeName = DEFAULT_NODE
    approval: ApprovalPolicy | None = None  # a quorum: resume approves, cancel rejects
    ladder: Ladder | None = None  # remind / escalate / on_timeout (baton.domain.ladder)

    model_config = ConfigDict(populate_by_name=True, frozen=True)

    @model_validator(mode="before")
    @classmethod
    def _state_is_an_object(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("state") is not None and not isinstance(data["state"], dict):
            raise BadRequestError("state must be a JSON object", details={"field": "state"})
        if isinstance(data, dict):  # before any recursive walk of state or schemas
            for field in ("state", "schema", "json_schema", "jsonSchema"):
                check_json_depth(data.get(field), field)
        return data

    @model_validator(mode="after")
    def _schema_and_state(self) -> InterruptSpec:
        check_schema_definition(self.schema_, self.json_schema)
        check_state_size(self.state if self.state is not None else {})
        if self.ladder is not None:  # a default must be a value the resume would accept (422 otherwise)
            seconds = math.ceil(self.timeout_ms / 1000) if self.timeout_ms else None
            check = AnswerCheck(kind="interrupt", schema_=self.schema_, json_schema=self.json_schema)
            self.ladder.check_for(seconds, answer_is=check)
        return self
