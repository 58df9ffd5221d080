"""The base every part of `DynamoStore` builds on (`dynamo.py` composes them): the table's name and
client, its paged reads, and the items of the run's records, events and messages, written by every part
that records something. A decision event among them is chained (`baton/domain/audit.py`): its item
carries its place in the run's chain, a copy of it goes under that place (`AUD#<seq>`, the decision
log's pages), and the run's head item advances in the same write, conditional on the head the writer
read (`record_items`; a lost race reads the head again, `lost_head_race`)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, cast

from botocore.exceptions import ClientError

from baton.adapters.dynamo_items import (
    AUDIT_ATTEMPTS,
    AUDIT_HEAD_SK,
    audit_record_sk,
    back_off,
    contention,
    from_item,
    lost_head_race,
    run_pk,
    to_item,
)
from baton.adapters.dynamo_transactions import cancellation_codes, transact_write
from baton.domain.audit import EMPTY_HEAD, AuditHead, chain, is_decision
from baton.models import Event, Message
from baton.workflows.table import TTL_ATTRIBUTE

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from mypy_boto3_dynamodb import DynamoDBClient

    from baton.domain.audit import AuditRecord


class DynamoTable:
    def __init__(self, table_name: str, client: DynamoDBClient, *, ttl_seconds: int = 90 * 86400) -> None:
        self._table = table_name
        self._db = client
        self._ttl_seconds = ttl_seconds

    def _query_all(self, **kwargs: Any) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = []
        while True:
            resp = self._db.query(TableName=self._table, **kwargs)
            items.extend(from_item(i) for i in resp.get("Items", []))
            last = resp.get("LastEvaluatedKey")
            if not last:
                return items
            kwargs["ExclusiveStartKey"] = last

    def _get(self, pk: str, sk: str) -> dict[str, Any] | None:
        resp = self._db.get_item(TableName=self._table, Key=to_item({"PK": pk, "SK": sk}), ConsistentRead=True)
        item = resp.get("Item")
        return from_item(item) if item else None

    def _get_many(self, run_id: str, sks: Sequence[str]) -> dict[str, dict[str, Any]]:
        """Items of the run's partition by sort key, in one consistent BatchGetItem (keys left unprocessed by
        throttling asked again, backing off); the items found by their SK."""
        found: dict[str, dict[str, Any]] = {}
        keys = [to_item({"PK": run_pk(run_id), "SK": sk}) for sk in sks]
        request: dict[str, Any] = {self._table: {"Keys": keys, "ConsistentRead": True}}
        for attempt in range(AUDIT_ATTEMPTS):
            if not request:
                return found
            back_off(attempt)
            resp = self._db.batch_get_item(RequestItems=request)  # type: ignore[arg-type,unused-ignore]
            for item in resp.get("Responses", {}).get(self._table, []):
                read = from_item(item)
                found[str(read["SK"])] = read
            request = cast("dict[str, Any]", resp.get("UnprocessedKeys") or {})
        if request:
            raise contention(run_id)
        return found

    def _expiry(self, at_epoch: int) -> int:
        return at_epoch + self._ttl_seconds

    # ---- the decision log's chained writes ---------------------------------------------------------
    def get_audit_head(self, run_id: str) -> AuditHead:
        values = self._get(run_pk(run_id), AUDIT_HEAD_SK)
        return AuditHead(seq=int(values["seq"]), hash=str(values["hash"])) if values else EMPTY_HEAD

    def _head_for(self, run_id: str, records: Sequence[Message | Event], head: AuditHead | None) -> AuditHead:
        """The head to chain `records` after: the one given, else (when one is a decision) read now."""
        if head is not None:
            return head
        if any(isinstance(r, Event) and is_decision(r.type) for r in records):
            return self.get_audit_head(run_id)
        return EMPTY_HEAD

    def _write_chained(
        self,
        run_id: str,
        items: Sequence[dict[str, Any]],
        records: Sequence[Message | Event],
        head: AuditHead | None,
        failed: Callable[[list[str], ClientError], None],
        *,
        raced: Callable[[list[str]], bool] = lost_head_race,
        attempts: int = AUDIT_ATTEMPTS,
    ) -> None:
        """`items` and `records` (decisions chained after `head`, else the head read now) in one transaction:
        the store's one head-race retry. A lost race (`raced` of the cancellation's codes: by default the
        head alone failed, another decision on the run went first) reads the head again, re-chains and
        retries, up to `attempts` times; any other cancellation goes to `failed` (its codes, [] when none),
        which raises, else the error is."""
        for attempt in range(attempts):
            head = self._head_for(run_id, records, head)
            chained = self._record_items(run_id, records, head)
            try:
                transact_write(self._db, [*items, *chained])
            except ClientError as err:
                codes = cancellation_codes(err) or []
                if len(chained) > len(records) and codes and raced(codes):
                    head = None
                    back_off(attempt)
                    continue
                failed(codes, err)
                raise
            return
        raise contention(run_id)

    def _record_items(self, run_id: str, records: Sequence[Message | Event], head: AuditHead) -> list[dict[str, Any]]:
        """The Puts of `records` (decisions chained after `head`), then each decision's copy under its
        place in the chain (`audit_record_sk`, the decision log's pages) and, when there is a decision,
        last, the head's conditional advance (seq = the one read). The copies need no condition: their
        seqs are free while the head holds (and come after every record, so callers' codes keep their
        places)."""
        chained, new_head = chain((r for r in records if isinstance(r, Event)), head)
        by_id = {c.event_id: c for c in chained}
        items: list[dict[str, Any]] = []
        copies: list[dict[str, Any]] = []
        for record in records:
            if isinstance(record, Message):
                values = self._message_values(record)
            else:
                values = self._event_values(record, by_id.get(record.event_id))
                if record.event_id in by_id:
                    copy = {**values, "SK": audit_record_sk(by_id[record.event_id].seq), "record": "audit_record"}
                    copies.append({"Put": {"TableName": self._table, "Item": to_item(copy)}})
            items.append(
                {
                    "Put": {
                        "TableName": self._table,
                        "Item": to_item(values),
                        "ConditionExpression": "attribute_not_exists(PK)",
                    }
                }
            )
        if not chained:
            return items
        head_item = {"PK": run_pk(run_id), "SK": AUDIT_HEAD_SK, "record": "audit_head", **new_head.model_dump()}
        put: dict[str, Any] = {"TableName": self._table, "Item": to_item(head_item)}
        if head.seq == 0:
            put["ConditionExpression"] = "attribute_not_exists(PK)"
        else:
            put["ConditionExpression"] = "#seq = :seq"
            put["ExpressionAttributeNames"] = {"#seq": "seq"}
            put["ExpressionAttributeValues"] = to_item({":seq": head.seq})
        return [*items, *copies, {"Put": put}]

    def _event_values(self, event: Event, chained: AuditRecord | None = None) -> dict[str, Any]:
        """An event's item; a decision's carries its place in the run's chain and never expires (an
        expired record would be a gap in the chain)."""
        from baton.ids import parse_iso

        if chained is not None:
            return {
                "PK": run_pk(event.run_id),
                "SK": f"EVT#{event.event_id}",
                "record": "event",
                **chained.model_dump(exclude={"data"}),
                "data": json.dumps(event.data),
            }
        return {
            "PK": run_pk(event.run_id),
            "SK": f"EVT#{event.event_id}",
            "record": "event",
            "event_id": event.event_id,
            "run_id": event.run_id,
            "type": event.type,
            "at": event.at,
            "data": json.dumps(event.data),
            TTL_ATTRIBUTE: self._expiry(int(parse_iso(event.at).timestamp())),
        }

    @staticmethod
    def _message_values(message: Message) -> dict[str, Any]:
        return {
            "PK": run_pk(message.run_id),
            "SK": f"MSG#{message.node}#{message.message_id}",
            "record": "message",
            **message.model_dump(),
        }
