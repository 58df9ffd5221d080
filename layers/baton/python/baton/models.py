"""Records of the store (DESIGN.md §1, §3). Pure data: no boto3 here."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from baton.events import PAYLOAD_OF_TYPE, EventPayload, EventType

InteractionKind = Literal["question", "ask", "await", "interrupt", "review"]
InteractionState = Literal["pending", "answered", "cancelled", "timed_out"]
RunState = Literal["created", "running", "paused_waiting_human", "succeeded", "failed", "timed_out", "aborted"]
TERMINAL_RUN_STATES: frozenset[str] = frozenset({"succeeded", "failed", "timed_out", "aborted"})


class RunSummary(BaseModel):
    run_id: str
    status: RunState = "created"
    workflow: str | None = None
    hosted: bool = False
    execution_arn: str | None = None
    created_at: str
    updated_at: str
    reason: str | None = None
    output: Any = None
    final_commit: str | None = None
    final_branch: str | None = None
    merged_into: str | None = None
    merge_status: str | None = None
    version: int = 0


class InteractionRequest(BaseModel):
    """What was asked. Written once, never updated."""

    kind: InteractionKind
    node: str
    prompt: str
    options: list[str] | None = None
    allow_free_text: bool = True
    schema_: dict[str, Any] | None = Field(default=None, alias="schema")
    json_schema: dict[str, Any] | None = None
    state: dict[str, Any] | None = None
    timeout_seconds: int | None = None
    notify: list[str] = Field(default_factory=lambda: ["console"])
    workflow_id: str | None = None
    extra: dict[str, Any] = Field(default_factory=dict)

    model_config = {"populate_by_name": True}


class InteractionStatus(BaseModel):
    """What happened to it. Every change is a conditional write on `version`."""

    status: InteractionState = "pending"
    answer: Any = None
    answered_by: str | None = None
    answered_at: str | None = None
    claimed_by: str | None = None
    claimed_at: str | None = None
    reason: str | None = None
    version: int = 0


class Interaction(BaseModel):
    interaction_id: str
    run_id: str
    created_at: str
    expires_at: str | None = None
    request: InteractionRequest
    state: InteractionStatus = Field(default_factory=InteractionStatus)

    @property
    def kind(self) -> str:
        return self.request.kind

    @property
    def node(self) -> str:
        return self.request.node

    def public(self) -> dict[str, Any]:
        """The API view: the request and its status, side by side."""
        return {
            "interaction_id": self.interaction_id,
            "run_id": self.run_id,
            "created_at": self.created_at,
            "expires_at": self.expires_at,
            "request": self.request.model_dump(by_alias=True, exclude_none=True),
            **self.state.model_dump(),
        }


class Event(BaseModel):
    """One thing that happened to a run. `data` is the stored form of the type's payload model."""

    event_id: str
    run_id: str
    type: EventType
    at: str
    data: dict[str, Any] = Field(default_factory=dict)

    def payload(self) -> EventPayload:
        return PAYLOAD_OF_TYPE[self.type].model_validate(self.data)


class Message(BaseModel):
    message_id: str
    run_id: str
    node: str
    text: str
    created_at: str
    interaction_id: str | None = None


class ReviewTurn(BaseModel):
    """One message of a review gate's dialogue, stored as its own item (SK=TURN#<iid>#<n>)."""

    run_id: str
    interaction_id: str
    n: int = Field(ge=0, description="position in the thread, 0-based")
    role: Literal["companion", "operator"]
    text: str
    at: str
    by: str | None = None
    model: str | None = None
    is_model: bool = False
    test_steps: list[str] = Field(default_factory=list)
    verdict: dict[str, Any] | None = None


class ParkedWait(BaseModel):
    """A task token parked by a gate. Server side only: no API returns it."""

    run_id: str
    gate: str
    task_token: str
    kind: InteractionKind
    interaction_ids: list[str] = Field(default_factory=list)
    scope: dict[str, Any] = Field(default_factory=dict)
    parked_at: str
    status: Literal["parked", "released", "timed_out"] = "parked"
