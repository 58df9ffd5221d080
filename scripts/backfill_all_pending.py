"""One-off: give the pending items of a table created before the all-pending index (GSI3,
`baton/workflows/table.py`) its keys, so the inbox's every-kind first page lists them. Items written
since carry the keys already; the local stack adds them itself when it loads its saved table
(`baton/local/persist.py`). Safe to run twice (a conditional UpdateItem per item still lacking them).

Run it against the deployed table after the stack update that adds the index has finished (the
index must be ACTIVE), with the table name the functions use:

Usage: BATON_TABLE_NAME=baton-<team> uv run python scripts/backfill_all_pending.py
"""

from __future__ import annotations

from typing import get_args

from baton.adapters.dynamo import DynamoStore
from baton.models import InteractionKind
from baton.runtime.wiring import services


def main() -> None:
    store = services().core.store
    if not isinstance(store, DynamoStore):
        raise SystemExit("backfill_all_pending: the configured store is not the DynamoDB table")
    added = store.backfill_all_pending(get_args(InteractionKind))
    print(f"backfill_all_pending: {added} pending item(s) given the all-pending index keys")


if __name__ == "__main__":
    main()
