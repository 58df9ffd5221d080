"""Response contracts of the Baton API, written once: the routes declare them (so `/api/openapi.json`
describes every response) and the SDK (`baton.client`) returns them. Pydantic only: agent code imports
this package without the server's services."""

from __future__ import annotations

from baton.contracts.base import Contract, Delivery
from baton.contracts.errors import ErrorBody
from baton.contracts.inbox import InboxAction, InboxBlocks, InboxItem, InboxPage, MeView
from baton.contracts.interrupts import (
    InterruptCancelled,
    InterruptClaimed,
    InterruptPage,
    InterruptResumed,
    InterruptView,
)
from baton.contracts.questions import (
    AnswerResult,
    ApprovalView,
    AskedQuestion,
    AskedRequest,
    AskRequest,
    AskResult,
    AwaitAnswered,
    AwaitPending,
    AwaitRequest,
    BlockingAskRequest,
    CollectedAnswer,
    DrainResult,
    GateParked,
    GateTimedOut,
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
    "AskRequest",
    "AskResult",
    "AskedQuestion",
    "AskedRequest",
    "AwaitAnswered",
    "AwaitPending",
    "AwaitRequest",
    "BlockingAskRequest",
    "BlockingAskView",
    "BlockingAsks",
    "CollectedAnswer",
    "Contract",
    "Delivery",
    "DrainResult",
    "ErrorBody",
    "EventPage",
    "EventView",
    "GateParked",
    "GateTimedOut",
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
    "ResumeResult",
    "ReviewActionResult",
    "ReviewView",
    "RunView",
    "StartedRun",
    "ThreadTurn",
]
