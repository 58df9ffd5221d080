"""The inbox: everything waiting for a person, across runs (`GET /api/inbox`).

Query only: one kind is one partition of the sparse pending index (`PENDING#<kind>`); several kinds are
one Query of the all-pending index with a kind filter; one run's items come from the by_status index.
A claim counts only while its lease runs. What an item holds up (`Interaction.blocks`) is written on it
by the park that waits on it, so a page is one Query. A page token is the page's last position bound to
its filters; a forged or foreign one is a 400 before any read."""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from baton.contracts.inbox import INBOX_KINDS, InboxAction, InboxBlocks, InboxItem, InboxKind, InboxPage
from baton.ids import iso, parse_iso
from baton.models import InterruptRequest, PendingQuery, ReviewRequest
from baton.services.page_tokens import decode_page_token, encode_page_token, foreign_page_token

if TYPE_CHECKING:
    from baton.models import Interaction
    from baton.services.core import Core

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


class InboxCursor(BaseModel):
    """A page token: the position of the page's last item (`p`) and the filters it was issued for (`f`)."""

    model_config = ConfigDict(strict=True)

    p: str = Field(max_length=200, pattern=_POSITION)
    f: Any


def encode_token(position: str, query: InboxQuery) -> str:
    return encode_page_token(InboxCursor(p=position, f=query.scope()))


def decode_token(token: str, query: InboxQuery) -> str:
    """The position a token continues from; 400 when it is not one this listing issued."""
    cursor = decode_page_token(token, InboxCursor)
    if cursor.f != query.scope():
        raise foreign_page_token("filters")
    return cursor.p


SchemaForm = Literal["json_schema", "light"]


def _answer_schema(request: InterruptRequest) -> tuple[dict[str, object] | None, SchemaForm | None]:
    if request.json_schema is not None:
        return request.json_schema, "json_schema"
    if request.schema_ is not None:
        return request.schema_, "light"
    return None, None


def actions_of(i: Interaction) -> list[InboxAction]:
    """The public routes that act on the item (the same the CLI and the SDK use)."""
    run = f"/api/runs/{i.run_id}"
    own: list[InboxAction]
    if i.kind == "question":
        own = [InboxAction(name="answer", method="POST", path=f"{run}/interactions/{i.interaction_id}/answer")]
    elif i.kind == "interrupt":
        path = f"/api/v1/interrupts/{i.interaction_id}"
        own = [
            InboxAction(name="view", method="GET", path=path),
            InboxAction(name="claim", method="POST", path=f"{path}/claim"),
            InboxAction(name="resume", method="POST", path=f"{path}/resume"),
            InboxAction(name="cancel", method="POST", path=f"{path}/cancel"),
        ]
    elif i.kind == "review":
        own = [
            InboxAction(name="review", method="GET", path=f"{run}/review?gate={i.node}"),
            InboxAction(name="review_action", method="POST", path=f"{run}/resume"),
        ]
    elif i.kind == "ask":
        own = [InboxAction(name="resume", method="POST", path=f"{run}/resume")]
    else:  # an await completes when the questions in its scope are answered
        own = [InboxAction(name="questions", method="GET", path=f"{run}/interactions/pending")]
    return [*own, InboxAction(name="run", method="GET", path=run)]


def review_title(run_id: str, request: ReviewRequest) -> str:
    """A review's line in a list: every review shares its prompt, so its run, branch and change name it."""
    config, diff = request.config, request.diff or {}
    branch, into = config.get("run_branch") or "?", config.get("merge_into") or "current"
    where = branch if into == "none" else f"{branch} → {'the checked-out branch' if into == 'current' else into}"
    files = diff.get("files_changed")
    change = f"{files} file{'' if files == 1 else 's'} changed" if isinstance(files, int) else "no diff"
    return f"Review: {run_id} · {where} · {change}"


def mark_parked_blocks(core: Core) -> int:
    """Write what each pending item holds up for the waits parked before items carried it (a deployed
    table, once: `baton migrate index-keys`; `baton dev`'s saved table, on each restart): a wait's named
    interactions, and for an await gate the pending questions of its scope. One Query of the parked
    waits, one of each await gate's run, one conditional UpdateItem per still pending item. Safe to run
    twice. Returns how many it marked."""
    marked = 0
    for wait in core.store.list_parked():
        if wait.status != "parked":
            continue
        ids = list(wait.interaction_ids)
        if wait.kind == "await":
            from_node = wait.scope.get("from")
            questions = core.store.list_run_interactions(wait.run_id, kind="question", status="pending")
            ids += [q.interaction_id for q in questions if not from_node or q.node == from_node]
        marked += core.store.mark_blocked(wait.run_id, wait.gate, ids)
    return marked


class InboxService:
    def __init__(self, core: Core) -> None:
        self.core = core

    def _store_query(self, query: InboxQuery, caller: str) -> PendingQuery:
        now = self.core.clock.now()
        return PendingQuery(
            newest_first=query.order == "newest",
            after=decode_token(query.next_token, query) if query.next_token else None,
            created_before=iso(now - timedelta(seconds=query.min_age_s)) if query.min_age_s else None,
            run_id=query.run_id,
            node=query.node,
            claimed_by=caller if query.claimed == "me" else None,
            unclaimed=query.claimed == "unclaimed",
            now=iso(now),
            limit=query.limit,
        )

    def _read(self, query: InboxQuery, store_query: PendingQuery) -> tuple[list[Interaction], bool]:
        """The page's items (up to `limit` + whatever the per-kind reads brought) and whether more follow."""
        kinds = tuple(dict.fromkeys(query.kinds))
        if query.run_id is None and len(kinds) > 1:
            some = None if set(kinds) >= set(INBOX_KINDS) else tuple(sorted(kinds))
            return self.core.store.page_all_pending(store_query.model_copy(update={"kinds": some}))
        merged: list[Interaction] = []
        more = False
        for kind in kinds:
            found, kind_more = self.core.store.page_pending(kind, store_query)
            merged.extend(found)
            more = more or kind_more
        return merged, more

    def page(self, query: InboxQuery, *, caller: str) -> InboxPage:
        """One page across the kinds asked for, in creation order (newest or oldest first)."""
        store_query = self._store_query(query, caller)
        merged, more = self._read(query, store_query)
        merged.sort(key=store_query.position, reverse=store_query.newest_first)
        more = more or len(merged) > query.limit
        page = merged[: query.limit]
        as_of = self.core.now()
        items = [self.item(i, as_of) for i in page]
        token = encode_token(store_query.position(page[-1]), query) if more and page else None
        return InboxPage(items=items, count=len(items), next=token, as_of=as_of)

    @staticmethod
    def item(i: Interaction, as_of: str) -> InboxItem:
        request = i.request
        schema, form = _answer_schema(request) if isinstance(request, InterruptRequest) else (None, None)
        gate = i.blocks
        if gate is None and isinstance(request, InterruptRequest):
            gate = request.gate  # a hosted interrupt names its gate even before its wait is read
        waited = (parse_iso(as_of) - parse_iso(i.created_at)).total_seconds()
        claim = i.state.without_lapsed_claim(as_of)
        return InboxItem(
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
