"""What creating an interrupt asks for, validated at the one door every creator goes through (the API
route, the SDK through it, the hosted task's Lambda): `InterruptSpec`, built from the field types the
API's request model shares with it (`baton/domain/interrupt_fields.py`). Each check raises the Baton
error of its status code: a bad run id 400, a bad node name, timeout, channel, key or prompt 422, a
malformed schema 400, a too-large state 413. An interrupt may declare the action it gates
(`GateAction`): the policy in force then decides it at creation (issue 31, `baton/domain/gate_ruling.py`).
"""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from baton.domain.answer_schema import check_schema_definition, check_state_size
from baton.domain.approval import ApprovalPolicy
from baton.domain.fields import NodeName, RunId, check_json_depth
from baton.domain.interrupt_fields import GateAction, InterruptKey, NotifyChannels, Prompt, TimeoutMs
from baton.domain.ladder import AnswerCheck, Ladder
from baton.errors import BadRequestError, ValidationFailedError

if TYPE_CHECKING:
    from baton.contracts.policy import PolicyQuery
    from baton.models import InterruptRequest, RunSummary

__all__ = ["DEFAULT_NODE", "DEFAULT_TIMEOUT_MS", "GateAction", "InterruptSpec"]

DEFAULT_NODE = "interrupt"
DEFAULT_TIMEOUT_MS = 86400 * 1000  # an SDK interrupt created without timeoutMs: every pause has a deadline


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
    action: GateAction | None = None  # the policy decides it at creation (none: the policy is not asked)

    # Built with the first interrupt created (its ladder and quorum models with it), not at import.
    model_config = ConfigDict(populate_by_name=True, frozen=True, defer_build=True)

    @model_validator(mode="before")
    @classmethod
    def _state_is_an_object(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("state") is not None and not isinstance(data["state"], dict):
            raise BadRequestError("state must be a JSON object", details={"field": "state"})
        if isinstance(data, dict):  # before any recursive walk of state or schemas
            for field in ("state", "schema", "json_schema", "jsonSchema", "action"):
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
        if self.action is not None:
            self._check_action(self.action)
        return self

    def _check_action(self, action: GateAction) -> None:
        """422 at the field: each resume value must be one a person's resume would pass, and a deny must
        not pass the gate with the allow's value."""
        from baton.domain.answer_schema import validate_answer  # (with the schemas, as the ladder's check)

        accepted = []
        for field, value in (("onAllow", action.on_allow), ("onDeny", action.on_deny)):
            try:
                accepted.append(validate_answer(value, schema=self.schema_, json_schema=self.json_schema))
            except ValidationFailedError as err:
                raise ValidationFailedError(
                    f"action.{field} is not a valid resume value: {err.message}",
                    details={**err.details, "path": f"action.{field}"},
                ) from None
        if accepted[0] == accepted[1]:
            raise ValidationFailedError(
                "action.onDeny must differ from action.onAllow: a denied action must not pass the gate as allowed",
                details={"path": "action.onDeny"},
            )

    def gate_query(self, action: GateAction, run: RunSummary, *, caller: str, at: str) -> PolicyQuery:
        """The policy's question on the declared `action`: may `caller` pass this gate (`pass_gate`)?"""
        from baton.contracts.policy import PolicyQuery

        return PolicyQuery(
            action="pass_gate",
            target=action.name,
            arguments=action.arguments,
            agent=caller,
            run_id=self.session_id,
            workflow=self.workflow_id or ((run.workflow or "") if run.hosted else ""),
            session=self.session_id,
            at=at,
        )

    def request(self, *, caller: str, hosted: bool) -> InterruptRequest:
        """The request to store: the defaults filled in (24 hours, the console), a light enum schema's
        values as the options a channel offers, the node as the hosted task's gate."""
        from baton.models import InterruptRequest

        timeout_ms = self.timeout_ms or DEFAULT_TIMEOUT_MS
        enum = self.schema_.get("enum") if isinstance(self.schema_, dict) and self.json_schema is None else None
        return InterruptRequest(
            node=self.node,
            prompt=self.prompt,
            options=[v if isinstance(v, str) else json.dumps(v) for v in enum] if isinstance(enum, list) else None,
            schema_=self.schema_,
            json_schema=self.json_schema,
            state=self.state,
            timeout_seconds=math.ceil(timeout_ms / 1000),
            notify=list(self.notify) if self.notify else ["console"],
            workflow_id=self.workflow_id,
            created_by=caller,
            timeout_ms=timeout_ms,
            gate=self.node if hosted else None,
            key=self.key or None,
            ladder=self.ladder,
            approval=self.approval,
        )
