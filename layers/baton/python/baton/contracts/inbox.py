"""Responses of the inbox routes: `GET /api/inbox` (everything waiting for a person, across runs) and
`GET /api/me` (who the caller is). Built by `baton.services.inbox`; the web inbox in `inbox/` reads them.

An item never carries a task token or the state snapshot: it says what is asked, how long it has
waited, what it holds up, and which public routes act on it (`actions`)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from baton.contracts.base import Contract

InboxKind = Literal["question", "ask", "await", "interrupt", "review"]
INBOX_KINDS: tuple[InboxKind, ...] = ("question", "ask", "await", "interrupt", "review")
ActionName = Literal["answer", "resume", "claim", "cancel", "view", "review", "review_action", "questions", "run"]


class InboxBlocks(Contract):
    """What the item holds up: the gate parked on it (null while no gate waits on it, e.g. an async
    question nobody awaits yet, or an interrupt an agent's SDK waiter polls) and its run."""

    gate: str | None = None
    run_id: str


class InboxAction(Contract):
    """One public route that acts on (or shows) the item. The body is the route's own request model
    (see its operation in `/api/openapi.json`)."""

    name: ActionName
    method: Literal["GET", "POST"]
    path: str


class InboxItem(Contract):
    """One pending item: a question, a pause (`ask`), an await, an interrupt or a review."""

    id: str = Field(description="The interaction id (a question's, an interrupt's, a review's).")
    kind: InboxKind
    run_id: str
    node: str = Field(description="The asking node; for a pause or a review, the gate's node.")
    prompt: str = Field(description="The question text, the interrupt's prompt or the review's title.")
    title: str = Field(
        default="",
        description="One line that tells items apart: a review's run, run branch, merge target and change "
        '("Review: <run> · <run_branch> → <target> · 3 files changed"); any other item\'s prompt.',
    )
    options: list[str] | None = None
    allow_free_text: bool = True
    answer_schema: dict[str, Any] | None = Field(
        default=None, description="Interrupts: the JSON Schema the resume value is validated against."
    )
    answer_schema_form: Literal["json_schema", "light"] | None = Field(
        default=None,
        description='"json_schema" (a full JSON Schema) or "light" ({"type", "enum"?, "default"?}); null: none.',
    )
    created_at: str
    expires_at: str | None = None
    waited_s: int = Field(ge=0, description="Seconds since it was asked (at the page's `as_of`).")
    claimed_by: str | None = Field(default=None, description="Who holds the claim now (null once its lease ended).")
    claimed_at: str | None = None
    lease_expires_at: str | None = Field(
        default=None, description="When the claim's lease ends: then the item is unclaimed by itself."
    )
    blocks: InboxBlocks
    actions: list[InboxAction]
    version: int = Field(default=0, description="Changes with every transition (answer, claim, cancel).")


class InboxPage(Contract):
    """A page of the inbox, newest (or oldest) first."""

    items: list[InboxItem]
    count: int
    next: str | None = Field(default=None, description="Pass it as ?next= for the next page; null on the last.")
    as_of: str = Field(description="The server's time the page was read at (what `waited_s` counts to).")


class MeView(Contract):
    """Who the caller is, as the API decided it (`baton.api.auth.resolve_caller`)."""

    principal: str
    role: Literal["operator", "agent"]
    via: str = Field(description="cognito | iam | local-token | local-session")
    run_id: str | None = Field(default=None, description="An agent's run.")
    session: bool = Field(description="Signed in by the inbox's session cookie (writes need X-Baton-Inbox: 1).")
