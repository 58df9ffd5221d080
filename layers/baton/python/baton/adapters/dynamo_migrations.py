"""What `DynamoStore` keeps for items written before a layout changed: the two migrations (run once per
deployed table by `baton migrate index-keys`; the local stack runs them on its saved table) and
the legacy layouts the readers still understand, since a deployed table may hold them until their runs end:
- pending items written before the all-pending (GSI3), due (GSI4) or node (GSI5) index lack those keys:
  `backfill_all_pending` and `backfill_due` add them (conditional UpdateItems: safe to run twice);
- review turns stored under `TURN#` before they moved to `DLG#` (`dynamo_review_turns.py` reads them
  with `legacy_turn_prefix`; `snapshot_run` filters them out of its Query, since `TURN#` sorts among
  the run's open items);
- an `IID#` pointer stored before it named its node: `find_for_decision` reads the wait by the node of
  the interaction (one GetItem more)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from botocore.exceptions import ClientError

from baton.adapters.dynamo_items import (
    due_keys_of,
    interaction_from,
    is_conditional_failure,
    run_pk,
    to_item,
)
from baton.adapters.dynamo_table import DynamoTable
from baton.workflows.table import (
    ALL_PENDING_PK,
    ALL_PENDING_PK_ATTRIBUTE,
    ALL_PENDING_SK_ATTRIBUTE,
    DUE_KINDS,
    DUE_PK_ATTRIBUTE,
    DUE_SK_ATTRIBUTE,
    GSI_PENDING,
    NODE_PK_ATTRIBUTE,
    NODE_SK_ATTRIBUTE,
    pending_node_partition,
)

if TYPE_CHECKING:
    from collections.abc import Sequence

    from baton.models import ReviewTurn


def legacy_turn_prefix(interaction_id: str) -> str:
    return f"TURN#{interaction_id}#"


def lacks_first_turn(turns: Sequence[ReviewTurn]) -> bool:
    """A dialogue read from `DLG#` without its turn 0: begun before turns moved there."""
    return not turns or min(t.n for t in turns) > 0


def with_legacy_turns(turns: list[ReviewTurn], legacy: Sequence[ReviewTurn]) -> list[ReviewTurn]:
    """`turns` and the old ones not moved since (a moved turn is read once, from `DLG#`)."""
    moved = {t.n for t in turns}
    return turns + [t for t in legacy if t.n not in moved]


class DynamoMigrations(DynamoTable):
    def backfill_due(self) -> int:
        """Give every pending item written before the due index (GSI4) the keys it should carry (one
        conditional UpdateItem each, only while it is still pending, and only for items lacking them: the
        local stack runs this at every restart). Returns how many."""
        added = 0
        for kind in DUE_KINDS:
            pending = self._query_all(  # the Query of `list_pending`, less the items that have the keys
                IndexName=GSI_PENDING,
                KeyConditionExpression="GSI1PK = :pk",
                FilterExpression="attribute_not_exists(#dpk)",
                ExpressionAttributeNames={"#dpk": DUE_PK_ATTRIBUTE},
                ExpressionAttributeValues=to_item({":pk": f"PENDING#{kind}"}),
            )
            for i in map(interaction_from, pending):
                keys = due_keys_of(i)
                if not keys:
                    continue
                try:
                    self._db.update_item(
                        TableName=self._table,
                        Key=to_item({"PK": run_pk(i.run_id), "SK": f"INT#{i.interaction_id}"}),
                        UpdateExpression="SET #dpk = :dpk, #dsk = :dsk",
                        ConditionExpression="#st = :pending AND attribute_not_exists(#dpk)",
                        ExpressionAttributeNames={"#dpk": DUE_PK_ATTRIBUTE, "#dsk": DUE_SK_ATTRIBUTE, "#st": "status"},
                        ExpressionAttributeValues=to_item(
                            {":dpk": keys[DUE_PK_ATTRIBUTE], ":dsk": keys[DUE_SK_ATTRIBUTE], ":pending": "pending"}
                        ),
                    )
                except ClientError as err:  # it stopped waiting meanwhile (or has them): nothing to add
                    if not is_conditional_failure(err):
                        raise
                    continue
                added += 1
        return added

    def backfill_all_pending(self, kinds: Sequence[str]) -> int:
        """Give every pending item of `kinds` written before the all-pending or node index their keys
        (Queries on the per-kind pending index, one conditional UpdateItem per item lacking them).
        Returns how many."""
        added = 0
        for kind in kinds:
            items = self._query_all(
                IndexName=GSI_PENDING,
                KeyConditionExpression="GSI1PK = :pk",
                FilterExpression="attribute_not_exists(#all) OR attribute_not_exists(#node)",
                ExpressionAttributeNames={"#all": ALL_PENDING_PK_ATTRIBUTE, "#node": NODE_PK_ATTRIBUTE},
                ExpressionAttributeValues=to_item({":pk": f"PENDING#{kind}"}),
            )
            for values in items:
                try:
                    self._db.update_item(
                        TableName=self._table,
                        Key=to_item({"PK": values["PK"], "SK": values["SK"]}),
                        UpdateExpression="SET #all = :all, #allsk = #sk, #node = :node, #nodesk = #sk",
                        ConditionExpression=(
                            "#pk1 = :pk AND (attribute_not_exists(#all) OR attribute_not_exists(#node))"
                        ),
                        ExpressionAttributeNames={
                            "#all": ALL_PENDING_PK_ATTRIBUTE,
                            "#allsk": ALL_PENDING_SK_ATTRIBUTE,
                            "#node": NODE_PK_ATTRIBUTE,
                            "#nodesk": NODE_SK_ATTRIBUTE,
                            "#sk": "GSI1SK",
                            "#pk1": "GSI1PK",
                        },
                        ExpressionAttributeValues=to_item(
                            {
                                ":all": ALL_PENDING_PK,
                                ":pk": f"PENDING#{kind}",
                                ":node": pending_node_partition(str(values["node"])),
                            }
                        ),
                    )
                except ClientError as err:  # it stopped waiting meanwhile (or was backfilled): nothing to add
                    if not is_conditional_failure(err):
                        raise
                    continue
                added += 1
        return added
