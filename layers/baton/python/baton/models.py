"""Records of the store: runs, interactions (a request, discriminated by kind, and its status), events,
messages, review turns and parked waits. Pure data: no boto3 here."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, computed_field, model_validator

from baton.domain.approval import ApprovalPolicy
from baton.domain.fields import RunState
from baton.domain.json_input import with_valid_text
from baton.domain.ladder import TIMED_OUT_DEFAULT, Ladder, LadderStep
from baton.domain.tool_calls import ToolApprovalSpec
from baton.events import PAYLOAD_OF_TYPE, EventPayload, EventType
from baton.pending_query import PendingQuery as PendingQuery  # its home before the store's queries moved

if TYPE_CHECKING:
    from datetime import datetime

InteractionKind = Literal["question", "ask", "await", "interrupt", "review", "tool_approval"]
InteractionState = Literal["pending", "answered", "cancelled", "timed_out"]
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
    ended_at: str | None = None  # the execution's stop time (baton.services.lifecycle)
    started_by: str | None = None  # who started a hosted run: it may not approve its pauses (baton.domain.approval)
    version: int = 0


class InteractionStatus(BaseModel):
    """What happened to it. Every change is a conditional write on `version`; build changes with
    `status_of` so the claim and the version always carry over."""

    status: InteractionState = "pending"
    answer: Any = None
    answered_by: str | None = None
    answered_at: str | None = None
    claimed_by: str | None = None
    claimed_at: str | None = None
    # The claim's lease (`baton.services.claims`): past it the claim is not held (nobody's), one clock
    # (`Core.clock`) deciding; a claim stored before leases has none and is not held either.
    lease_expires_at: str | None = None
    reason: str | None = None
    version: int = 0

    @computed_field  # type: ignore[prop-decorator]
    @property
    def outcome(self) -> str | None:
        """`timed_out_default`: nobody answered, the pause's declared default was taken at its deadline
        (`answered_by` is then empty: never a person's answer). None otherwise."""
        return TIMED_OUT_DEFAULT if self.status == "answered" and self.reason == TIMED_OUT_DEFAULT else None

    def claim_holder(self, now: str) -> str | None:
        """Who holds the claim at `now` (an ISO-8601 UTC time of `baton.ids.iso`): None when unclaimed or
        its lease has passed."""
        if self.claimed_by is None or self.lease_expires_at is None or self.lease_expires_at <= now:
            return None
        return self.claimed_by

    def without_lapsed_claim(self, now: str) -> InteractionStatus:
        """This status as a reader sees it at `now`: a claim past its lease is cleared (the item is free)."""
        if self.claimed_by is None or self.claim_holder(now) is not None:
            return self
        return self.model_copy(update={"claimed_by": None, "claimed_at": None, "lease_expires_at": None})


class _RequestBase(BaseModel):
    """What was asked: the fields every kind has. Written once, never updated."""

    node: str
    prompt: str
    options: list[str] | None = None
    allow_free_text: bool = True
    timeout_seconds: int | None = None
    notify: list[str] = Field(default_factory=lambda: ["console"])
    ladder: Ladder | None = None  # remind / escalate / on_timeout (baton.domain.ladder); absent: none

    model_config = ConfigDict(populate_by_name=True)

    # The kind's own fields, stored under `extra` (the stored form predates the union).
    _OWN_FIELDS: ClassVar[tuple[str, ...]] = ()
    _OMIT_WHEN_NONE: ClassVar[tuple[str, ...]] = ()

    @model_validator(mode="before")
    @classmethod
    def _lift_extra(cls, data: Any) -> Any:
        """Items stored before the union keep the kind's fields under `extra`: lift them up."""
        if isinstance(data, dict) and isinstance(data.get("extra"), dict):
            data = {k: v for k, v in data.items() if k != "extra"} | data["extra"]
        return data

    def ladder_steps(self, deadline: datetime) -> list[LadderStep]:
        """The steps of this pause's ladder before its deadline, in order (none without a ladder)."""
        return self.ladder.steps(deadline, self.timeout_seconds) if self.ladder is not None else []

    def stored(self) -> dict[str, Any]:
        """The stored form (unchanged by the union): the common fields, the interrupt's schema/state
        fields (None for the other kinds), and the kind's own fields under `extra`."""
        own = set(self._OWN_FIELDS)
        common = self.model_dump(by_alias=True, exclude=own | ({"ladder"} if self.ladder is None else set()))
        extra = {
            (type(self).model_fields[name].alias or name): value.model_dump() if isinstance(value, BaseModel) else value
            for name in self._OWN_FIELDS
            if (value := getattr(self, name)) is not None or name not in self._OMIT_WHEN_NONE
        }
        return {"schema": None, "json_schema": None, "state": None, "workflow_id": None} | common | {"extra": extra}


class QuestionRequest(_RequestBase):
    """An async question (`ask_user_async`): answered by an operator, queued for the asking node."""

    kind: Literal["question"] = "question"
    is_async: bool = Field(default=True, alias="async")
    asked_by: str | None = None
    # a quorum (baton.domain.approval); requested_by (the hosted run's starter, else the asker) may not vote
    approval: ApprovalPolicy | None = None
    requested_by: str | None = None

    _OWN_FIELDS = ("is_async", "asked_by", "approval", "requested_by")
    _OMIT_WHEN_NONE = ("approval", "requested_by")


class PauseRequest(_RequestBase):
    """A hosted run's plain human pause (the `park` Lambda; resumed with answers)."""

    kind: Literal["ask"] = "ask"
    # a quorum (baton.domain.approval, baton/services/pause_answers.py); requested_by (the hosted run's
    # starter, or the agent of a blocking ask) may not vote
    approval: ApprovalPolicy | None = None
    requested_by: str | None = None

    _OWN_FIELDS = ("approval", "requested_by")
    _OMIT_WHEN_NONE = ("approval", "requested_by")

    def with_quorum(self, approval: ApprovalPolicy | None, *, requested_by: str | None) -> PauseRequest:
        """This pause needing `approval` (`requested_by` may not vote); unchanged without one."""
        if approval is None:
            return self
        return self.model_copy(update={"approval": approval, "requested_by": requested_by})


class AwaitToolRequest(_RequestBase):
    """The await tool's pause: completed when no question in scope (`from_node`, or the run) is pending."""

    kind: Literal["await"] = "await"
    from_node: str | None = Field(default=None, alias="from")
    pending: list[str] = Field(default_factory=list)
    by: str | None = None

    _OWN_FIELDS = ("from_node", "pending", "by")


class InterruptRequest(_RequestBase):
    """A typed pause with a state snapshot. `gate` is set when a hosted task parked its token there."""

    kind: Literal["interrupt"] = "interrupt"
    schema_: dict[str, Any] | None = Field(default=None, alias="schema")
    json_schema: dict[str, Any] | None = None
    state: dict[str, Any] | None = None
    workflow_id: str | None = None
    created_by: str | None = None
    timeout_ms: int | None = None
    gate: str | None = None
    key: str | None = None
    approval: ApprovalPolicy | None = None  # a quorum: resume approves, cancel rejects (baton.domain.approval)
    requested_by: str | None = None

    _OWN_FIELDS = ("created_by", "timeout_ms", "gate", "key", "approval", "requested_by")
    _OMIT_WHEN_NONE = ("timeout_ms", "gate", "key", "approval", "requested_by")

    @property
    def hosted(self) -> bool:
        return bool(self.gate)


class ReviewRequest(_RequestBase):
    """A review gate's pause: its configuration (a GateConfig dump) and the diff's stats."""

    kind: Literal["review"] = "review"
    config: dict[str, Any] = Field(default_factory=dict)
    diff: dict[str, Any] | None = None

    _OWN_FIELDS = ("config", "diff")


class ToolApprovalPause(_RequestBase):
    """A tool call waiting for a person's decision (baton/services/tool_approvals.py)."""

    kind: Literal["tool_approval"] = "tool_approval"
    tool: ToolApprovalSpec

    _OWN_FIELDS = ("tool",)


InteractionRequest = Annotated[
    QuestionRequest | PauseRequest | AwaitToolRequest | InterruptRequest | ReviewRequest | ToolApprovalPause,
    Field(discriminator="kind"),
]
_REQUEST: TypeAdapter[InteractionRequest] = TypeAdapter(InteractionRequest)
RequestT = TypeVar("RequestT", QuestionRequest, PauseRequest, AwaitToolRequest, InterruptRequest, ReviewRequest)


def parse_request(data: Any) -> InteractionRequest:
    """A request from its stored form (a dict or its JSON text), old items included."""
    if not isinstance(data, str | bytes):
        return _REQUEST.validate_python(data)
    try:
        return _REQUEST.validate_json(data)
    except ValidationError as invalid:
        # Stored before the API refused lone surrogates: pydantic's JSON parser refuses their escapes,
        # json.loads reads them; shown with U+FFFD for each, so the item lists and can be cancelled.
        try:
            loaded = json.loads(data)
        except ValueError:
            raise invalid from None
        return _REQUEST.validate_python(with_valid_text(loaded))


def dump_request(request: InteractionRequest) -> str:
    """The stored form as JSON (what the DynamoDB adapter writes)."""
    return json.dumps(request.stored(), separators=(",", ":"))


def status_of(
    current: InteractionStatus,
    status: InteractionState,
    *,
    answer: Any = None,
    by: str | None = None,
    at: str | None = None,
    reason: str | None = None,
) -> InteractionStatus:
    """The one builder of a status change: the claim and the version carry over; the answer, who and
    when, and the reason are the new ones (None clears them: a re-opened review starts clean)."""
    return InteractionStatus(
        status=status,
        answer=answer,
        answered_by=by,
        answered_at=at,
        claimed_by=current.claimed_by,
        claimed_at=current.claimed_at,
        lease_expires_at=current.lease_expires_at,
        reason=reason,
        version=current.version,
    )


def _drop_none(value: dict[str, Any]) -> dict[str, Any]:
    """The API view of a request: its unset top-level fields left out (what is under `extra` stays whole)."""
    return {k: v for k, v in value.items() if v is not None}


class Interaction(BaseModel):
    interaction_id: str
    run_id: str
    created_at: str
    expires_at: str | None = None
    request: InteractionRequest
    state: InteractionStatus = Field(default_factory=InteractionStatus)
    # The parked gate this pending item holds up, written on the item by the park that waits on it
    # (`WaitStore.put_wait`, `mark_blocked`) so the inbox's page needs no read of the waits. Server side.
    blocks: str | None = None

    @property
    def kind(self) -> str:
        return self.request.kind

    @property
    def node(self) -> str:
        return self.request.node

    @model_validator(mode="after")
    def _one_timeout_status(self) -> Interaction:
        """Interrupts stored before the one timeout status said cancelled/"timeout" (nobody cancelled them)."""
        st = self.state
        if (
            self.request.kind == "interrupt"
            and st.status == "cancelled"
            and st.reason == "timeout"
            and not st.answered_by
        ):
            self.state = st.model_copy(update={"status": "timed_out"})
        return self

    def request_as(self, kind: type[RequestT]) -> RequestT:
        """The request as the kind the caller handles (a service reads only its own kind's fields)."""
        if not isinstance(self.request, kind):
            raise TypeError(f"interaction {self.interaction_id} is a {self.request.kind}, not a {kind.__name__}")
        return self.request

    def public(self) -> dict[str, Any]:
        """The API view: the request and its status, side by side."""
        return {
            "interaction_id": self.interaction_id,
            "run_id": self.run_id,
            "created_at": self.created_at,
            "expires_at": self.expires_at,
            "request": _drop_none(self.request.stored()),
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
    """One message of a review gate's dialogue, stored as its own item (SK=DLG#<iid>#<n>)."""

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
    # A companion turn: the run-branch commit whose diff it read, that diff's sha256 and its stats
    # (BoundedDiff without the text): the review shows the diff its latest turn read.
    reviewed_head: str | None = None
    diff_digest: str | None = None
    diff: dict[str, Any] | None = None


class ParkedWait(BaseModel):
    """A task token parked by a gate. Server side only: no API returns it."""

    run_id: str
    gate: str
    task_token: str
    kind: InteractionKind
    interaction_ids: list[str] = Field(default_factory=list)
    scope: dict[str, Any] = Field(default_factory=dict)
    parked_at: str
    # expiring: Baton's deadline path closed it to answers and is deciding (release or fail)
    status: Literal["parked", "expiring", "released", "timed_out"] = "parked"
    # When Baton stops accepting answers (`Core.deadline_of`: the task's entry + its declared timeout):
    # at it Baton ends the pause itself; Step Functions' own timeout, a grace later, is only the backstop.
    deadline: str | None = None
    # An await gate's answers, carried on its wait while it waits (`baton/domain/gate_answers.py`), so
    # the last answer knows the gate's output without reading the scope: "filling" from the park until
    # its re-check has merged what was answered before it, "complete" after, "off" when too large (or
    # a write did not carry itself); None: a wait stored before waits carried answers (the scope is read).
    carry: Literal["filling", "complete", "off"] | None = None
    answers: dict[str, str] = Field(default_factory=dict)  # interaction id -> its output entry, as JSON
    carry_version: int = 0  # advanced by every change to `answers` / `carry` (the deciding answer's guard)
    carried_bytes: int = 0

    @property
    def from_node(self) -> str | None:
        """An await gate's scope: the node whose questions it waits for (None: all of the run's)."""
        from_node: str | None = self.scope.get("from")
        return from_node
