"""The one-off changes to a table's items that `baton migrate` makes on a deployed table and the local stack
makes on its saved one at each start: one copy of the steps for both."""

from __future__ import annotations

from typing import TYPE_CHECKING, get_args

from baton.adapters.dynamo import DynamoStore
from baton.domain.questions import in_scope
from baton.models import InteractionKind

if TYPE_CHECKING:
    from baton.services.core import Core


def index_key_migrations(core: Core) -> tuple[int, int, int]:
    """`baton migrate index-keys`: the all-pending and due index keys, then the gate each pending item holds
    up. How many items each step changed."""
    if not isinstance(core.store, DynamoStore):
        raise TypeError("the configured store is not a DynamoDB table")
    added = core.store.backfill_all_pending(get_args(InteractionKind))
    return added, core.store.backfill_due(), mark_parked_blocks(core)


def mark_parked_blocks(core: Core) -> int:
    """Write what each pending item holds up for the waits parked before items carried it (a deployed table
    once: `baton migrate index-keys`; `baton dev`'s saved table on each restart): a wait's named interactions,
    and for an await gate the pending questions of its scope; returns how many it marked. One Query of the
    parked waits, one of each await gate's run, one conditional UpdateItem per pending item; safe twice."""
    marked = 0
    for wait in core.store.list_parked():
        if wait.status != "parked":
            continue
        ids = list(wait.interaction_ids)
        if wait.kind == "await":
            questions = core.store.list_run_interactions(wait.run_id, kind="question", status="pending")
            ids += [q.interaction_id for q in questions if in_scope(q, wait.from_node)]
        marked += core.store.mark_blocked(wait.run_id, wait.gate, ids)
    return marked
