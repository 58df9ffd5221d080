"""The inbox: everything waiting for a person, across runs (`GET /api/inbox`), a page one Query: one kind is
a partition of the sparse pending index (`PENDING#<kind>`), several kinds one Query of the all-pending index
with a kind filter (of one run: a page each of the by_status index, merged), one node's items the node index.
A filtered page reads at most `FILTERED_READ_BUDGET` items and may hold fewer than its limit, with a `next`
past what it read. A claim counts only while its lease runs. What an item holds up (`Interaction.blocks`)
is written on it by the park that waits on it. A page token is the page's last position bound to its
filters; a forged or foreign one is a 400 before any read."""

from __future__ import annotations

from typing import TYPE_CHECKING

from baton.contracts.inbox import INBOX_KINDS, InboxCursor, InboxItem, InboxPage
from baton.contracts.page_tokens import encode_page_token

if TYPE_CHECKING:
    from baton.contracts.inbox import InboxQuery
    from baton.models import Interaction
    from baton.pending_query import PendingPage, PendingQuery
    from baton.services.core import Core


class InboxService:
    def __init__(self, core: Core) -> None:
        self.core = core

    def _read(self, query: InboxQuery, store_query: PendingQuery) -> PendingPage[Interaction]:
        """The page's items and the last position it covers (None: nothing follows)."""
        kinds = tuple(dict.fromkeys(query.kinds))
        if query.run_id is None and len(kinds) > 1:
            some = None if set(kinds) >= set(INBOX_KINDS) else tuple(sorted(kinds))
            return self.core.store.page_all_pending(store_query.model_copy(update={"kinds": some}))
        return store_query.merged([self.core.store.page_pending(kind, store_query) for kind in kinds])

    def page(self, query: InboxQuery, *, caller: str) -> InboxPage:
        store_query = query.store_query(caller, self.core.clock.now())
        merged, end = self._read(query, store_query)
        merged.sort(key=store_query.position, reverse=store_query.newest_first)
        page = merged[: query.limit]
        if len(merged) > query.limit:
            end = store_query.position(page[-1])
        as_of = self.core.now()
        items = [InboxItem.of(i, as_of) for i in page]
        token = encode_page_token(InboxCursor(p=end, f=query.scope())) if end is not None else None
        return InboxPage(items=items, count=len(items), next=token, as_of=as_of)
