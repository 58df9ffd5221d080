"""What an answer path tells its caller beyond the answer itself: a stored answer whose send failed
(`SendFailedError`, reported as a 202 with its delivery pending), the `delivery` field, and the 410 for an
item a run's stop closed."""

from __future__ import annotations

from typing import TYPE_CHECKING

from baton.errors import GoneError, winner

if TYPE_CHECKING:
    from collections.abc import Callable

    from baton.contracts import Delivery
    from baton.models import Interaction


class SendFailedError(Exception):
    """Step Functions still throttling after the client's retries, or unreachable: the reconciler's next
    pass sends the stored answer (as does a repeat of the request)."""

    def __init__(self, run_id: str, gate: str) -> None:
        super().__init__(f"the answer for gate '{gate}' of run {run_id} is stored; its send is pending")
        self.run_id = run_id
        self.gate = gate


def send_or_pending(send: Callable[[], bool]) -> tuple[bool, bool]:
    """`send` a stored answer: (released, pending), pending when its send failed (the reconciler sends it)."""
    try:
        return send(), False
    except SendFailedError:
        return False, True


def delivery_of(resumed: bool, *, pending: bool = False) -> Delivery | None:
    """What an answer's response says of its send: "delivered" (the waiter was released), "pending"
    (stored; its send failed and the reconciler sends it: a 202), or None (nothing was sent)."""
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
