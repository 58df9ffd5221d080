"""Responses of the inbox routes: `GET /api/inbox` (everything waiting for a person, across runs) and
`GET /api/me` (who the caller is), and the query the service takes (`InboxQuery`, its page token
`InboxCursor`, and the store's query it makes). Paged by `baton.services.inbox`, each item built by
`InboxItem.of`; the web inbox in `inbox/` reads them.

An item never carries a task token or the state snapshot: it says what is asked, how long it has
waited, what it holds up, and which public routes act on it (`actions`)."""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from baton.contracts.base import Contract
from baton.contracts.page_tokens import decode_scoped_page_token
from baton.ids import iso, parse_iso
from baton.pending_query import PendingQuery

if TYPE_CHECKING:
    from datetime import datetime

    from baton.models import Interaction, ReviewRequest

InboxKind = Literal["question", "ask", "await", "interrupt", "review", "tool_approval"]
INBOX_KINDS: tuple[InboxKind, ...] = ("question", "ask", "await", "interrupt", "review", "tool_approval")
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
        '("Review: <run> · <run_branch> → <target> · 3 files changed · <its first commit\'s subject>"); any other '
        "item's prompt.",
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

    @classmethod
    def of(cls, i: Interaction, as_of: str) -> InboxItem:
        """The pending interaction as the inbox lists it at `as_of` (a lapsed claim shows as none)."""
        from baton.models import InterruptRequest, ReviewRequest

        request, gate = i.request, i.blocks
        schema: dict[str, Any] | None = None
        form: Literal["json_schema", "light"] | None = None
        if isinstance(request, InterruptRequest):
            if request.json_schema is not None:  # a full JSON Schema wins over the light form
                schema, form = request.json_schema, "json_schema"
            elif request.schema_ is not None:
                schema, form = request.schema_, "light"
            # A hosted interrupt names its gate even before its wait is read.
            gate = request.gate if gate is None else gate
        waited = (parse_iso(as_of) - parse_iso(i.created_at)).total_seconds()
        claim = i.state.without_lapsed_claim(as_of)
        return cls(
            id=i.interaction_id,
            kind=request.kind,
            run_id=i.run_id,
            node=i.node,
            prompt=request.prompt,
            title=review_title(i.run_id, request) if isinstance(request, ReviewRequest) else request.prompt,
            options=request.options,
            allow_free_text=request.allow_free_text,
            answer_schema=schema,
            answer_schema_form=form,
            created_at=i.created_at,
            expires_at=i.expires_at,
            waited_s=max(0, int(waited)),
            claimed_by=claim.claimed_by,
            claimed_at=claim.claimed_at,
            lease_expires_at=claim.lease_expires_at,
            blocks=InboxBlocks(gate=gate, run_id=i.run_id),
            actions=actions_of(i),
            version=i.state.version,
        )


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
    passkeys: bool = Field(
        default=False, description="This stack confirms a high-risk approve with a passkey (WebAuthn is set up)."
    )


def review_title(run_id: str, request: ReviewRequest) -> str:
    """A review's line in a list: every review shares its prompt, so its run, branch and change name it."""
    config, diff = request.config, request.diff or {}
    branch, into = config.get("run_branch") or "?", config.get("merge_into") or "current"
    where = branch if into == "none" else f"{branch} → {'the checked-out branch' if into == 'current' else into}"
    files = diff.get("files_changed")
    change = f"{files} file{'' if files == 1 else 's'} changed" if isinstance(files, int) else "no diff"
    # The oldest commit's subject says what the change is (stored with the diff's stats since it was kept;
    # a review stored before has none, and its title ends at the file count).
    subject = diff.get("first_commit_subject")
    if isinstance(subject, str) and subject:
        change += f" · {subject if len(subject) <= SUBJECT_CHARS else subject[: SUBJECT_CHARS - 1] + '…'}"
    return f"Review: {run_id} · {where} · {change}"


SUBJECT_CHARS = 80  # a commit subject past this is cut in a title (one list row)


def actions_of(i: Interaction) -> list[InboxAction]:
    """The public routes that act on the item (the same the CLI and the SDK use)."""
    run = f"/api/runs/{i.run_id}"
    interrupt = f"/api/v1/interrupts/{i.interaction_id}"
    own: dict[str, list[tuple[ActionName, Literal["GET", "POST"], str]]] = {
        "question": [("answer", "POST", f"{run}/interactions/{i.interaction_id}/answer")],
        "tool_approval": [("answer", "POST", f"{run}/interactions/{i.interaction_id}/answer")],
        "interrupt": [
            ("view", "GET", interrupt),
            ("claim", "POST", f"{interrupt}/claim"),
            ("resume", "POST", f"{interrupt}/resume"),
            ("cancel", "POST", f"{interrupt}/cancel"),
        ],
        "review": [("review", "GET", f"{run}/review?gate={i.node}"), ("review_action", "POST", f"{run}/resume")],
        "ask": [("resume", "POST", f"{run}/resume")],
    }
    # An await completes when the questions in its scope are answered.
    routes = own.get(i.kind, [("questions", "GET", f"{run}/interactions/pending")])
    return [InboxAction(name=name, method=method, path=path) for name, method, path in [*routes, ("run", "GET", run)]]


DEFAULT_PAGE_SIZE = 50
MAX_PAGE_SIZE = 200
_POSITION = r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,6})?Z#[A-Za-z0-9_-]{1,80}$"  # <created_at>#<id>
Claimed = Literal["me", "unclaimed", "any"]


class InboxQuery(BaseModel):
    """The inbox's filters (the route's query model validates them first)."""

    model_config = ConfigDict(frozen=True)

    kinds: tuple[InboxKind, ...] = INBOX_KINDS
    run_id: str | None = None
    node: str | None = None
    claimed: Claimed = "any"
    min_age_s: int = Field(default=0, ge=0)
    order: Literal["newest", "oldest"] = "newest"
    limit: int = Field(default=DEFAULT_PAGE_SIZE, ge=1, le=MAX_PAGE_SIZE)
    next_token: str | None = None

    def scope(self) -> list[object]:
        """What a page token is bound to: every filter but the page size."""
        return [sorted(self.kinds), self.run_id, self.node, self.claimed, self.min_age_s, self.order]

    def store_query(self, caller: str, now: datetime) -> PendingQuery:
        """The store's query for this page, for `caller` at `now` (a forged or foreign page token: a 400)."""
        token = self.next_token
        cursor = decode_scoped_page_token(token, InboxCursor, self.scope(), "filters") if token else None
        return PendingQuery(
            newest_first=self.order == "newest",
            after=cursor.p if cursor is not None else None,
            created_before=iso(now - timedelta(seconds=self.min_age_s)) if self.min_age_s else None,
            run_id=self.run_id,
            node=self.node,
            claimed_by=caller if self.claimed == "me" else None,
            unclaimed=self.claimed == "unclaimed",
            now=iso(now),
            limit=self.limit,
        )


class InboxCursor(BaseModel):
    """A page token: the position of the page's last item (`p`) and the filters it was issued for (`f`)."""

    model_config = ConfigDict(strict=True)

    p: str = Field(max_length=200, pattern=_POSITION)
    f: Any
