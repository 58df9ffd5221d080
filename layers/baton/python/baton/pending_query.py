"""The query of one page of pending interactions (`InteractionStore.page_pending`), kept out of
baton/models.py (the records) so that file stays a reader's size."""

from __future__ import annotations

from typing import TYPE_CHECKING, Generic, NamedTuple, Protocol, TypeVar

from pydantic import BaseModel, ConfigDict, Field

if TYPE_CHECKING:
    from collections.abc import Sequence

Item = TypeVar("Item")  # an `Interaction` (named by the store's port: models.py imports this module)

# What one filtered page may read before it returns (fewer items, and a cursor past what it read), as
# DynamoDB's own Limit does: a filter that matches rarely never makes one request read everything pending.
FILTERED_READ_BUDGET = 500


class _Positioned(Protocol):
    """What a page position is made of (an `Interaction`; named structurally: models.py imports this)."""

    @property
    def created_at(self) -> str: ...
    @property
    def interaction_id(self) -> str: ...


Positioned = TypeVar("Positioned", bound=_Positioned)


class PendingQuery(BaseModel):
    """One page of a kind's pending interactions, as the inbox reads it (`InteractionStore.page_pending`).

    Positions are the pending index's sort key, `<created_at>#<interaction_id>`: `after` is exclusive
    (the last item of the previous page, in the page's order), `created_before` an inclusive upper bound
    on `created_at` (an age filter). With `run_id` the by_status index is read instead (the run's
    pending ones exactly, not the whole kind filtered)."""

    model_config = ConfigDict(frozen=True)

    newest_first: bool = True
    after: str | None = None
    created_before: str | None = None
    run_id: str | None = None
    node: str | None = None
    claimed_by: str | None = None
    unclaimed: bool = False
    # When the claim filters are decided: a claim whose lease ended before it counts as unclaimed.
    now: str | None = None
    # Several kinds on the all-pending index (`page_all_pending`); None: every kind.
    kinds: tuple[str, ...] | None = None
    limit: int = Field(default=50, ge=1, le=1000)

    def position(self, interaction: _Positioned) -> str:
        return f"{interaction.created_at}#{interaction.interaction_id}"

    def merged(self, pages: Sequence[PendingPage[Positioned]]) -> PendingPage[Positioned]:
        """Pages of several kinds as one: it covers what every page covered, so it ends at the earliest
        (in the page's order) of their ends, and the items past it are read again by the next page."""
        ends = [page.resume_after for page in pages if page.resume_after is not None]
        if not ends:
            return PendingPage([i for page in pages for i in page.items], None)
        end = max(ends) if self.newest_first else min(ends)
        covered = [
            i
            for page in pages
            for i in page.items
            if (self.position(i) >= end if self.newest_first else self.position(i) <= end)
        ]
        return PendingPage(covered, end)


class PendingPage(NamedTuple, Generic[Item]):
    """One page's items (in the page's order, at most `limit`) and `resume_after`: the last position the
    page covers, the one the next page continues after (None: nothing follows). A filtered page cut by
    `FILTERED_READ_BUDGET` covers what it read, so it may hold fewer than `limit` items."""

    items: list[Item]
    resume_after: str | None
