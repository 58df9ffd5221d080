"""The interaction reads of `DynamoStore` (`InteractionStore` in `baton/ports.py`): a run's snapshot (one
consistent Query from `PEND#` on: its open markers, the run, its chain head and its waits), its scope,
and the listings and pages. Every listing is a Query (never a Scan):
- a run's partition (`INT#`, or its `PEND#` markers for the pending marked kinds);
- `by_status` (GSI2): `kind#status` → `run#created#interaction`;
- `pending` (GSI1, sparse): `PENDING#kind` → `created#interaction`, while pending;
- `all_pending` and `due` (GSI3, GSI4, sparse; `baton/workflows/table.py`): every kind's pending ones
  in created order, and the pending ones whose deadline Baton acts on, by deadline;
- `pending_by_node` (GSI5, sparse): one node's pending ones in created order (the inbox's node filter)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from baton.adapters.dynamo_items import (
    from_item,
    interaction_from,
    is_start_key,
    run_pk,
    run_summary_from,
    to_item,
    wait_from,
)
from baton.adapters.dynamo_table import DynamoTable
from baton.domain.audit import EMPTY_HEAD, AuditHead
from baton.errors import BadRequestError
from baton.pending_query import FILTERED_READ_BUDGET, PendingPage
from baton.ports import PENDING_MARKED_KINDS, RunSnapshot
from baton.workflows.table import (
    ALL_PENDING_PK,
    ALL_PENDING_PK_ATTRIBUTE,
    ALL_PENDING_SK_ATTRIBUTE,
    DUE_PK_ATTRIBUTE,
    DUE_SK_ATTRIBUTE,
    GSI_ALL_PENDING,
    GSI_BY_STATUS,
    GSI_DUE,
    GSI_PENDING,
    GSI_PENDING_BY_NODE,
    NODE_PK_ATTRIBUTE,
    NODE_SK_ATTRIBUTE,
    due_before,
    pending_node_partition,
)

if TYPE_CHECKING:
    from baton.models import Interaction, ParkedWait, PendingQuery, RunSummary


class DynamoInteractionReads(DynamoTable):
    def snapshot_run(self, run_id: str) -> RunSnapshot:
        """One consistent Query from PEND# on: the open questions, tool awaits and pauses (their markers), the run,
        its decision-log head and its waits. Never reads the run's events, answered history or review
        dialogues (`DLG#`, before PEND#); turns stored under the old `TURN#` are filtered out
        (`dynamo_migrations.py`)."""
        items = self._query_all(
            KeyConditionExpression="PK = :pk AND SK >= :from",
            FilterExpression="#rec <> :turn",
            ExpressionAttributeNames={"#rec": "record"},
            ExpressionAttributeValues=to_item({":pk": run_pk(run_id), ":from": "PEND#", ":turn": "turn"}),
            ConsistentRead=True,
        )
        run: RunSummary | None = None
        pending: list[Interaction] = []
        waits: list[ParkedWait] = []
        version = asked = 0
        head = EMPTY_HEAD
        for values in items:
            record = values.get("record")
            if record == "pending":
                pending.append(interaction_from(values))
            elif record == "wait":
                waits.append(wait_from(values))
            elif record == "run":
                version = int(values.get("scope_version") or 0)
                asked = int(values.get("asked") or 0)
                run = run_summary_from(values)
            elif record == "audit_head":
                head = AuditHead(seq=int(values["seq"]), hash=str(values["hash"]))
        pending.sort(key=lambda i: (i.created_at, i.interaction_id))
        return RunSnapshot(run=run, pending=pending, waits=waits, scope_version=version, audit_head=head, asked=asked)

    def bump_scope(self, run_id: str) -> None:
        self._db.update_item(
            TableName=self._table,
            Key=to_item({"PK": run_pk(run_id), "SK": "RUN"}),
            UpdateExpression="ADD scope_version :one",
            ConditionExpression="attribute_exists(PK)",
            ExpressionAttributeValues=to_item({":one": 1}),
        )

    def list_run_interactions(
        self, run_id: str, *, kind: str | None = None, status: str | None = None
    ) -> list[Interaction]:
        """One run's interactions, oldest first. The pending questions and tool awaits come from their
        markers (O(pending), consistent); anything else from the run's interactions."""
        marked = status == "pending" and kind in PENDING_MARKED_KINDS
        items = self._query_all(
            KeyConditionExpression="PK = :pk AND begins_with(SK, :prefix)",
            ExpressionAttributeValues=to_item({":pk": run_pk(run_id), ":prefix": "PEND#" if marked else "INT#"}),
            ConsistentRead=True,
        )
        found = [interaction_from(v) for v in items]
        return [
            i
            for i in sorted(found, key=lambda i: (i.created_at, i.interaction_id))
            if (kind is None or i.request.kind == kind) and (status is None or i.state.status == status)
        ]

    @staticmethod
    def _by_status_query(kind: str, status: str, run_id: str | None) -> dict[str, Any]:
        """Query arguments for `kind` interactions in `status` (one run's when `run_id`) on by_status."""
        condition = "GSI2PK = :pk"
        values: dict[str, Any] = {":pk": f"{kind}#{status}"}
        if run_id:
            condition += " AND begins_with(GSI2SK, :run)"
            values[":run"] = f"{run_id}#"
        return {
            "IndexName": GSI_BY_STATUS,
            "KeyConditionExpression": condition,
            "ExpressionAttributeValues": to_item(values),
        }

    def list_by_status(self, kind: str, status: str, *, run_id: str | None = None) -> list[Interaction]:
        items = self._query_all(**self._by_status_query(kind, status, run_id))
        return [interaction_from(v) for v in items]

    def page_interactions(
        self,
        kind: str,
        *,
        status: str | None = None,
        run_id: str | None = None,
        limit: int = 50,
        start: dict[str, Any] | None = None,
    ) -> tuple[list[Interaction], dict[str, Any] | None]:
        """One page (at most `limit`) of `kind` interactions and the LastEvaluatedKey to continue from.
        With `status`: the by_status index (one run's when `run_id`); else one run's partition."""
        if status is None and run_id is None:
            raise ValueError("page_interactions needs a status or a run_id")
        kwargs: dict[str, Any]
        if status is not None:
            kwargs = self._by_status_query(kind, status, run_id)
        else:
            kwargs = {
                "KeyConditionExpression": "PK = :pk AND begins_with(SK, :prefix)",
                "FilterExpression": "kind = :kind",
                "ExpressionAttributeValues": to_item({":pk": run_pk(run_id or ""), ":prefix": "INT#", ":kind": kind}),
                "ConsistentRead": True,
            }
        if start is not None and not is_start_key(start, with_index=status is not None):
            raise BadRequestError("next is not a valid page token", details={"field": "next"})
        found: list[Interaction] = []
        last = start
        while True:  # a filtered Query may return fewer than it read: continue until the page is full
            if last:
                kwargs["ExclusiveStartKey"] = last
            resp = self._db.query(TableName=self._table, Limit=limit - len(found), **kwargs)
            found.extend(interaction_from(from_item(i)) for i in resp.get("Items", []))
            last = resp.get("LastEvaluatedKey")
            if not last or len(found) >= limit:
                return found, last

    def list_pending(self, kind: str) -> list[Interaction]:
        items = self._query_all(
            IndexName=GSI_PENDING,
            KeyConditionExpression="GSI1PK = :pk",
            ExpressionAttributeValues=to_item({":pk": f"PENDING#{kind}"}),
        )
        return [interaction_from(v) for v in items]

    def list_due(self, kind: str, now: str) -> list[Interaction]:
        """`kind`'s pending interactions whose deadline Baton acts on, past by `now`: a Query on the sparse
        due index (`baton/workflows/table.py`, GSI4) that reads only those, never the rest pending."""
        items = self._query_all(
            IndexName=GSI_DUE,
            KeyConditionExpression="#pk = :pk AND #sk < :before",
            ExpressionAttributeNames={"#pk": DUE_PK_ATTRIBUTE, "#sk": DUE_SK_ATTRIBUTE},
            ExpressionAttributeValues=to_item({":pk": f"DUE#{kind}", ":before": due_before(now)}),
        )
        return [interaction_from(v) for v in items]

    def oldest_pending(self, kind: str) -> Interaction | None:
        """The first of `kind`'s pending interactions in created order: one item of the pending index."""
        resp = self._db.query(
            TableName=self._table,
            IndexName=GSI_PENDING,
            KeyConditionExpression="GSI1PK = :pk",
            ExpressionAttributeValues=to_item({":pk": f"PENDING#{kind}"}),
            Limit=1,
        )
        items = resp.get("Items", [])
        return interaction_from(from_item(items[0])) if items else None

    def count_pending(self, kind: str) -> int:
        """How many of `kind` are pending: `Select=COUNT` on the pending index (no item is returned or
        decoded; DynamoDB still counts the index entries, 1 MB of them a page)."""
        kwargs: dict[str, Any] = {
            "IndexName": GSI_PENDING,
            "KeyConditionExpression": "GSI1PK = :pk",
            "ExpressionAttributeValues": to_item({":pk": f"PENDING#{kind}"}),
            "Select": "COUNT",
        }
        count = 0
        while True:
            resp = self._db.query(TableName=self._table, **kwargs)
            count += int(resp.get("Count", 0))
            if not resp.get("LastEvaluatedKey"):
                return count
            kwargs["ExclusiveStartKey"] = resp["LastEvaluatedKey"]

    def page_pending(self, kind: str, query: PendingQuery) -> PendingPage[Interaction]:
        """One page of `kind`'s pending interactions in created order (the inbox): a Query on the sparse
        pending index (by_status for one run's; the node index for one node's, less the other kinds),
        bounded by the cursor and the age filter in the key condition. Unfiltered, one Query reads exactly
        the page and one more item (is there more?)."""
        if query.run_id is not None:
            return self._page_index(GSI_BY_STATUS, ("GSI2PK", "GSI2SK"), f"{kind}#pending", f"{query.run_id}#", query)
        if query.node is not None:
            return self.page_all_pending(query.model_copy(update={"kinds": (kind,)}))
        return self._page_index(GSI_PENDING, ("GSI1PK", "GSI1SK"), f"PENDING#{kind}", "", query)

    def page_all_pending(self, query: PendingQuery) -> PendingPage[Interaction]:
        """One page of every kind's pending interactions (or `query.kinds`') in created order: one Query
        on the all-pending index (`baton/workflows/table.py`), or on one node's partition of the node
        index, whatever the number of kinds."""
        if query.node is not None:
            keys = (NODE_PK_ATTRIBUTE, NODE_SK_ATTRIBUTE)
            by_key = query.model_copy(update={"node": None})  # the key condition, not a filter
            return self._page_index(GSI_PENDING_BY_NODE, keys, pending_node_partition(query.node), "", by_key)
        keys = (ALL_PENDING_PK_ATTRIBUTE, ALL_PENDING_SK_ATTRIBUTE)
        return self._page_index(GSI_ALL_PENDING, keys, ALL_PENDING_PK, "", query)

    @staticmethod
    def _pending_filters(query: PendingQuery, names: dict[str, str], values: dict[str, Any]) -> list[str]:
        """The FilterExpression parts of the page's node, claim and kind filters. A claim counts only
        while its lease runs (`lease_expires_at` > now; a claim without one is not held)."""
        filters = []
        if query.node is not None:
            names["#node"], values[":node"] = "node", query.node
            filters.append("#node = :node")
        if query.claimed_by is not None or query.unclaimed:
            names["#claimed"], names["#lease"] = "claimed_by", "lease_expires_at"
            values[":now"] = query.now or ""
        if query.claimed_by is not None:
            values[":claimed"] = query.claimed_by
            filters.append("#claimed = :claimed AND #lease > :now")
        elif query.unclaimed:
            filters.append("(attribute_not_exists(#claimed) OR attribute_not_exists(#lease) OR #lease <= :now)")
        if query.kinds is not None:
            names["#kind"] = "kind"
            keys = []
            for n, kind in enumerate(sorted(query.kinds)):
                values[f":k{n}"] = kind
                keys.append(f":k{n}")
            filters.append(f"#kind IN ({', '.join(keys)})")
        return filters

    def _page_index(
        self, index: str, key_names: tuple[str, str], pk: str, prefix: str, query: PendingQuery
    ) -> PendingPage[Interaction]:
        """The page on `index`: Queries of the page and two more items each (the next page's first, and
        the cursor's own item, which BETWEEN includes). A filtered page stops once it has read
        `FILTERED_READ_BUDGET` items, covering what it read: DynamoDB limits what it reads, not what
        matches, so a rare match costs more requests, never one unbounded one."""
        low = query.after if not query.newest_first else None
        high = f"{query.created_before}#~" if query.created_before else None
        if query.newest_first and query.after is not None:
            high = min(high, query.after) if high else query.after
        names = {"#pk": key_names[0], "#sk": key_names[1]}
        values: dict[str, Any] = {":pk": pk, ":lo": prefix + (low or "0"), ":hi": prefix + (high or "~")}
        filters = self._pending_filters(query, names, values)
        kwargs: dict[str, Any] = {
            "IndexName": index,
            "KeyConditionExpression": "#pk = :pk AND #sk BETWEEN :lo AND :hi",
            "ExpressionAttributeNames": names,
            "ExpressionAttributeValues": to_item(values),
            "ScanIndexForward": not query.newest_first,
            "Limit": query.limit + 2,
        }
        if filters:
            kwargs["FilterExpression"] = " AND ".join(filters)
        found: list[Interaction] = []
        read = 0
        while True:
            resp = self._db.query(TableName=self._table, **kwargs)
            read += int(resp.get("ScannedCount", 0))
            for raw in resp.get("Items", []):
                interaction = interaction_from(from_item(raw))
                if query.position(interaction) != query.after:
                    found.append(interaction)
            last = resp.get("LastEvaluatedKey")
            if len(found) > query.limit:
                return PendingPage(found[: query.limit], query.position(found[query.limit - 1]))
            if not last:
                return PendingPage(found, None)
            if read >= FILTERED_READ_BUDGET:  # only a filtered page reads this much: the cursor is what it read
                return PendingPage(found, from_item(last)[key_names[1]].removeprefix(prefix))
            kwargs["ExclusiveStartKey"] = last

    # ---- events and messages -------------------------------------------------------------------
