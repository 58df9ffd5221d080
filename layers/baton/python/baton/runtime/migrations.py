"""The one-off changes to a table's items that `baton migrate` makes on a deployed table and the local stack
makes on its saved one at each start: one copy of the steps for both."""

from __future__ import annotations

from typing import TYPE_CHECKING, get_args

from baton.adapters.dynamo import DynamoStore
from baton.models import InteractionKind
from baton.services.inbox import mark_parked_blocks

if TYPE_CHECKING:
    from baton.services.core import Core


def index_key_migrations(core: Core) -> tuple[int, int, int]:
    """`baton migrate index-keys`: the all-pending and due index keys, then the gate each pending item holds
    up. How many items each step changed."""
    if not isinstance(core.store, DynamoStore):
        raise TypeError("the configured store is not a DynamoDB table")
    added = core.store.backfill_all_pending(get_args(InteractionKind))
    return added, core.store.backfill_due(), mark_parked_blocks(core)
