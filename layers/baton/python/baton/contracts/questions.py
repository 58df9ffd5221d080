"""The asks' requests (`AskRequest`: the one typed ask the API, MCP tools and demo agent build for
`QuestionService.ask`; `AwaitRequest` for the await tool; `BlockingAskRequest` for `AskService.ask`) and
the async-question routes' responses: ask, pending, answer, drain, the await tool and the gate's Lambdas."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import ConfigDict, Field, SerializerFunctionWrapHandler, StrictBool, model_serializer

from baton.contracts.base import DELIVERY_DESCRIPTION, Contract, Delivery
from baton.domain import fields
from baton.domain.answer_replies import delivery_of
from baton.domain.approval import ApprovalPolicy
from baton.domain.interrupt_fields import NotifyChannels
from baton.domain.ladder import AwaitLadderFields, LadderFields, OnTimeout

if TYPE_CHECKING:
    from baton.models import Interaction, Message

POSTED = "question posted; keep working"  # what an ask tells the agent (`AskResult.message`)
MAP_ITEM_DESCRIPTION = (
    "`$$.Map.Item.Index` when the caller runs inside a Map iteration. Questions and the await tool are refused "
    "there (422): one node id would be shared by every item."
)


class AskRequest(LadderFields):
    """`ask_user_async`. A ladder (remind_after, escalate_after/escalate_to, on_timeout) needs the
    question's own `timeout_seconds` (422 without); see docs/workflows.md, "Deadline ladders"."""

    node: fields.NodeName = Field(description="The asking node; answers are queued for it.")
    question: str = Field(
        description="The question (at most 4000 characters; longer is a 413).",
        json_schema_extra={"pattern": r"\S"},  # the service refuses a question without text (422)
    )
    options: list[str] | None = Field(default=None, description="Choices offered to the operator.")
    allow_free_text: StrictBool | None = Field(
        default=None, description="Accept answers outside the options. Default: true without options, false with."
    )
    map_item: int | str | None = Field(default=None, description=MAP_ITEM_DESCRIPTION)
    notify: NotifyChannels = Field(
        default=None, description="Notification channels: console, email, webhook, slack (default console)."
    )
    approval: ApprovalPolicy | None = Field(
        default=None,
        description="A quorum: each answer is a vote (the approving option, default the first; or "
        "approve/reject without options); answered once `approvals` approvers agree. The asker (a hosted "
        "run's starter) cannot vote.",
    )
    timeout_seconds: fields.TimeoutSeconds | None = Field(
        default=None,
        description="The question's own deadline, which its ladder counts to (the await gate's timeout still "
        "bounds the wait). Without a default the question stays open at it.",
    )

    model_config = ConfigDict(extra="forbid")


class AwaitRequest(AwaitLadderFields):
    """The await tool. Its ladder reminds / escalates about the pending questions; on_timeout "fail" or
    "use_question_defaults" (each pending question's own default at the expiry)."""

    from_: fields.ScopeNode = Field(
        default=None, alias="from", description="Only this node's questions; empty/absent = the whole run."
    )
    timeout_seconds: fields.TimeoutSeconds = Field(description="Mandatory bound of the wait (seconds).")
    map_item: int | str | None = Field(default=None, description=MAP_ITEM_DESCRIPTION)

    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class BlockingAskRequest(LadderFields):
    """`ask_user`: remind_after / escalate_after / escalate_to are walked by the ask's own timer."""

    node: fields.NodeName = Field(description="The asking node (the agent's step that must not go on alone).")
    question: str = Field(min_length=1, max_length=4000, description="What the operator must decide.")
    options: list[str] | None = Field(default=None, min_length=1, description="Choices shown to the operator.")
    timeout_seconds: fields.TimeoutSeconds = Field(description="Mandatory bound: after it the ask is timed_out.")
    notify: NotifyChannels = Field(default=None, description="Notification channels (default console).")
    on_timeout: OnTimeout = Field(
        default="fail",
        description='"fail" (timed_out at the deadline) or {"default": <answers>}: taken at the deadline as '
        "timed_out_default, checked against the options now (422)",
    )
    approval: ApprovalPolicy | None = Field(
        default=None,
        description="A quorum (docs/api.md, 'Quorum and separation of duties'): each resume is a vote under "
        "answers.decision; the asking agent may not vote",
    )

    model_config = ConfigDict(extra="forbid")


class AskResult(Contract):
    interaction_id: str
    run_id: str
    node: str
    status: Literal["pending"]
    message: str = Field(description="What the agent tells the model: the question is posted, keep working.")

    @classmethod
    def posted(cls, question: Interaction) -> AskResult:
        """A question just stored: the agent keeps working and syncs later."""
        return cls(
            interaction_id=question.interaction_id,
            run_id=question.run_id,
            node=question.request.node,
            status="pending",
            message=POSTED,
        )


class AskedRequest(Contract):
    """What was asked, as stored; absent values are left out. Fields of other kinds pass through."""

    model_config = ConfigDict(extra="allow")

    kind: str
    node: str
    prompt: str
    options: list[str] | None = None
    allow_free_text: bool | None = None
    notify: list[str] | None = None

    @model_serializer(mode="wrap")
    def _without_none(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        dumped: dict[str, Any] = handler(self)
        return {k: v for k, v in dumped.items() if v is not None}


class ApprovalView(Contract):
    """A quorum pause's count and its voters (`baton/services/approvals.py`)."""

    needed: int = Field(description="Approvals that release the pause.")
    approvals: int
    rejections: int
    approved_by: list[str] = Field(default_factory=list)
    rejected_by: list[str] = Field(default_factory=list)
    counted: bool = Field(default=False, description="This vote was counted (an answer's result only).")
    already_counted: bool = Field(default=False, description="This operator had voted already: not counted again.")
    decision: Literal["approved", "rejected"] | None = None
    approvers: list[str] | None = None
    rejection: str | None = None


class QuestionView(Contract):
    """A question: the request and its status, side by side."""

    interaction_id: str
    run_id: str
    created_at: str
    expires_at: str | None = None
    request: AskedRequest
    status: str
    answer: Any = None
    answered_by: str | None = None
    answered_at: str | None = None
    claimed_by: str | None = None
    claimed_at: str | None = None
    reason: str | None = None
    version: int = 0
    approval: ApprovalView | None = Field(default=None, description="A quorum question: its count and voters.")
    outcome: str | None = Field(
        default=None,
        description="timed_out_default: nobody answered; the pause's declared default was taken at its deadline "
        "(answered_by is then empty). Absent otherwise.",
    )

    @classmethod
    def of(cls, i: Interaction, approval: ApprovalView | None = None) -> QuestionView:
        return cls(
            approval=approval,
            interaction_id=i.interaction_id,
            run_id=i.run_id,
            created_at=i.created_at,
            expires_at=i.expires_at,
            request=AskedRequest.model_validate(i.request.model_dump(by_alias=True, exclude_none=True)),
            **i.state.model_dump(),
        )


class PendingQuestions(Contract):
    run_id: str
    pending: list[QuestionView]


class AnswerResult(Contract):
    interaction_id: str
    node: str
    status: Literal["answered", "pending"] = Field(
        description="pending: a vote on a quorum question that is not yet decided (see `approval`)."
    )
    queued: bool
    resumed: bool = Field(description="An await gate waiting on this answer was released.")
    released: list[str] = Field(default_factory=list, description="The gates this answer released.")
    approval: ApprovalView | None = Field(default=None, description="A quorum question: the count after this vote.")
    delivery: Delivery | None = Field(default=None, description=DELIVERY_DESCRIPTION)

    @classmethod
    def of(
        cls, answered: Interaction, resumed: bool, *, pending: bool = False, released: list[str] | None = None
    ) -> AnswerResult:
        """An answer stored and queued for its asking node; `released`: the gates it released (`pending`:
        a send failed, the reconciler's)."""
        return cls(
            interaction_id=answered.interaction_id,
            node=answered.request.node,
            status="answered",
            queued=True,
            resumed=resumed,
            released=released or [],
            delivery=delivery_of(resumed, pending=pending),
        )


class MessageView(Contract):
    message_id: str
    run_id: str
    node: str
    text: str
    created_at: str
    interaction_id: str | None = None

    @classmethod
    def of(cls, m: Message) -> MessageView:
        return cls.model_validate(m.model_dump())


class DrainResult(Contract):
    run_id: str
    node: str
    messages: list[MessageView]


class AskedQuestion(Contract):
    interaction_id: str
    node: str
    question: str


class CollectedAnswer(AskedQuestion):
    answer: Any


class AwaitAnswered(Contract):
    """200: nothing in scope is pending; every answer in scope, oldest first."""

    status: Literal["answered"]
    run_id: str
    from_: str | None = Field(default=None, alias="from")
    answers: list[CollectedAnswer]


class AwaitPending(Contract):
    """202: questions in scope are still pending; the run is marked paused until they are answered."""

    status: Literal["pending"]
    run_id: str
    from_: str | None = Field(default=None, alias="from")
    pending: list[str]
    interaction_id: str
    run_status: str


class GateParked(Contract):
    """The await gate's park (its waitForTaskToken Lambda's output): `released` when its scope was answered."""

    parked: bool
    gate: str
    released: bool
    pending: list[str]


class GateTimedOut(Contract):
    """The await gate's Catch on States.Timeout: the cause its Fail state reads, and what went unanswered."""

    cause: str
    unanswered: list[AskedQuestion]
