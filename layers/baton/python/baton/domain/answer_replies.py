"""What an answer's reply says beyond the answer, read from the record alone: its `delivery` field, and the
410 for an item a run's stop closed (`baton.services.decide` and the review actions raise it)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from baton.errors import GoneError, winner

if TYPE_CHECKING:
    from baton.contracts import Delivery
    from baton.models import Interaction


def delivery_of(resumed: bool, *, pending: bool = False) -> Delivery | None:
    """ "delivered" (the waiter was released), "pending" (stored; its send failed and the reconciler sends it:
    a 202), or None (nothing was sent)."""
    return "pending" if pending else "delivered" if resumed else None


def closed_error(i: Interaction) -> GoneError:
    """The 410 for an interaction a run's stop closed (baton/services/run_stop.py): the stop's cause, who
    stopped it, when."""
    st = i.state
    return GoneError(
        f"{i.request.kind} {i.interaction_id} is closed ({st.reason}); nothing is waiting for an answer",
        details={
            "reason": st.reason,
            "interaction": i.public(),
            "winner": winner(status="cancelled", value=st.reason, by=st.answered_by, at=st.answered_at),
        },
    )
