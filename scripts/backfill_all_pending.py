"""One-off: give the pending items of a table created before the all-pending index (GSI3,
`baton/workflows/table.py`) its keys, so the inbox's every-kind first page lists them, and write on each
pending item the gate that waits on it (`Interaction.blocks`, `baton.services.inbox.mark_parked_blocks`),
which the inbox's one-Query page shows as what it holds up, and the due index's keys (GSI4: the interrupt
sweeper's and the reconciler's reads by deadline). Items written since carry both already; the
local stack adds them itself when it loads its saved table (`baton/local/persist.py`). Safe to run twice
(conditional UpdateItems).

Run it against the deployed table after the stack update that adds the index has finished (the
index must be ACTIVE), with the table name the functions use:

Usage: BATON_TABLE_NAME=baton-<team> uv run python scripts/backfill_all_pending.py
"""

from __future__ import annotations

from typing import get_args

from baton.adapters.dynamo import DynamoStore
from baton.models import InteractionKind
from baton.runtime.wiring import services
from baton.services.inbox import mark_parked_blocks


def main() -> None:
    core = services().core
    store = core.store
    if not isinstance(store, DynamoStore):
        raise SystemExit("backfill_all_pending: the configured store is not the DynamoDB table")
    added = store.backfill_all_pending(get_args(InteractionKind))
    print(f"backfill_all_pending: {added} pending item(s) given the all-pending index keys")
    due = store.backfill_due()
    print(f"backfill_all_pending: {due} pending item(s) given the due index keys (GSI4, what the sweeps read)")
    marked = mark_parked_blocks(core)
    print(f"backfill_all_pending: {marked} pending item(s) given the gate that waits on them")


if __name__ == "__main__":
    main()
