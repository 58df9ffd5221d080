"""Withdrawing a pending question or tool approval: the MCP `tasks/cancel` of a durable task
(baton/mcp/tasks.py). The agent that asked takes its own pause back; a person's answer that landed
first wins (the conditional write), and withdrawing something already settled is a 410 naming how it
ended. A withdrawn tool approval never lets its call run: it has no decision to consume."""

from __future__ import annotations

from typing import TYPE_CHECKING

from baton.errors import ConflictError, GoneError
from baton.events import InterruptCancelled
from baton.models import status_of
from baton.services.deadlines import stop_interaction_timer

if TYPE_CHECKING:
    from baton.models import Interaction
    from baton.services.core import Core

WITHDRAWN = "withdrawn by the agent that asked (MCP tasks/cancel)"


def withdraw(core: Core, pending: Interaction, *, by: str) -> Interaction:
    """The interaction cancelled by `by`, recorded in the run's log with the same write."""
    current = pending
    while True:
        if current.state.status != "pending":
            raise GoneError(
                f"{current.request.kind} {current.interaction_id} is already {current.state.status}",
                details={"status": current.state.status, "interaction_id": current.interaction_id},
            )
        # The log's cancel event (the one an interrupt's cancel records) names what was withdrawn and by whom.
        event = core.new_event(
            current.run_id,
            InterruptCancelled(interaction_id=current.interaction_id, node=current.node, reason=WITHDRAWN, by=by),
        )
        new = status_of(current.state, "cancelled", by=by, at=core.now(), reason=WITHDRAWN)
        try:
            withdrawn = core.store.transition_interaction(current, new, with_records=[event])
        except ConflictError:  # answered (or claimed) under us: read again
            reloaded = core.store.get_interaction(current.run_id, current.interaction_id)
            if reloaded is None:
                raise
            current = reloaded
            continue
        stop_interaction_timer(core, withdrawn)  # this write won: its ladder or default is moot
        return withdrawn
