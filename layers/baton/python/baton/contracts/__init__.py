"""Response contracts of the Baton API, written once: the routes declare them (so `/api/openapi.json`
describes every response) and the SDK (`baton.client`) returns them. Pydantic only: agent code imports
this package without the server's services."""

from __future__ import annotations

from baton.contracts.base import Contract, Delivery
from baton.contracts.errors import ErrorBody
from baton.contracts.inbox import InboxAction, InboxBlocks, InboxItem, InboxPage, MeView
from baton.contracts.interrupts import (
    CancelInterrupt,
    ClaimInterrupt,
    InterruptCancelled,
    InterruptClaimed,
    InterruptPage,
    InterruptResumed,
    InterruptView,
    ReassignClaim,
    RenewClaim,
    ResumeInterrupt,
)
from baton.contracts.questions import (
    AnswerResult,
    ApprovalView,
    AskedRequest,
    AskResult,
    AwaitAnswered,
    AwaitPending,
    CollectedAnswer,
    DrainResult,
    MessageView,
    PendingQuestions,
    QuestionView,
)
from baton.contracts.review import MergeFields, ReviewView, ThreadTurn
from baton.contracts.runs import (
    BlockingAsks,
    BlockingAskView,
    EventPage,
    EventView,
    ResumeResult,
    ReviewActionResult,
    RunView,
    StartedRun,
)

__all__ = [
    "AnswerResult",
    "ApprovalView",
    "AskResult",
    "AskedRequest",
    "AwaitAnswered",
    "AwaitPending",
    "BlockingAskView",
    "BlockingAsks",
    "CancelInterrupt",
    "ClaimInterrupt",
    "CollectedAnswer",
    "Contract",
    "Delivery",
    "DrainResult",
    "ErrorBody",
    "EventPage",
    "EventView",
    "InboxAction",
    "InboxBlocks",
    "InboxItem",
    "InboxPage",
    "InterruptCancelled",
    "InterruptClaimed",
    "InterruptPage",
    "InterruptResumed",
    "InterruptView",
    "MeView",
    "MergeFields",
    "MessageView",
    "PendingQuestions",
    "QuestionView",
    "ReassignClaim",
    "RenewClaim",
    "ResumeInterrupt",
    "ResumeResult",
    "ReviewActionResult",
    "ReviewView",
    "RunView",
    "StartedRun",
    "ThreadTurn",
]
