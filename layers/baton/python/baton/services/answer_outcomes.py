"""A stored answer whose send failed (`SendFailedError`, reported as a 202 with its delivery pending); what
its reply says is `baton.domain.answer_replies`."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable


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
