"""The runs and events part of `DynamoStore` (`RunStore`, `EventStore`, `MessageStore` in
`baton/ports.py`), in the run's partition:
- `RUN`: the run, moved by conditional updates (`version` advanced by each);
- `EVT#<event>`: its event log, read in id order; a decision is chained (`DynamoTable._record_items`),
  and `read_audit` reads the chain back with its head (`RUN#AUDIT`), `read_audit_page` one page of it
  (the records' copies under `AUD#<seq>`);
- `MSG#<node>#<message>`: answers queued for a node, each drained by one conditional write."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, cast

from botocore.exceptions import ClientError

from baton.adapters.dynamo_items import (
    AUDIT_ATTEMPTS,
    audit_record_sk,
    back_off,
    from_item,
    is_conditional_failure,
    run_pk,
    run_summary_from,
    to_item,
)
from baton.adapters.dynamo_table import DynamoTable
from baton.adapters.dynamo_transactions import cancellation_codes, transact_write
from baton.domain.audit import DECISION_TYPES, AuditRecord, AuditTrail, UnchainedDecision, is_decision, stored_data
from baton.errors import ConflictError, NotFoundError
from baton.models import Event, Message

if TYPE_CHECKING:
    from collections.abc import Collection, Sequence

    from baton.models import RunSummary


class DynamoRuns(DynamoTable):
    # ---- the run -----------------------------------------------------------------------------------
    def create_run(self, run: RunSummary) -> None:
        values = {"PK": run_pk(run.run_id), "SK": "RUN", "record": "run", **run.model_dump()}
        values["output"] = json.dumps(run.output) if run.output is not None else None
        try:
            self._db.put_item(
                TableName=self._table,
                Item=to_item(values),
                ConditionExpression="attribute_not_exists(PK)",
            )
        except ClientError as err:
            if is_conditional_failure(err):
                raise ConflictError(f"run {run.run_id} already exists", details={"run_id": run.run_id}) from err
            raise

    def get_run(self, run_id: str) -> RunSummary | None:
        values = self._get(run_pk(run_id), "RUN")
        return run_summary_from(values) if values else None

    def get_runs(self, run_ids: Collection[str]) -> list[RunSummary]:
        ids = sorted(set(run_ids))
        found: list[RunSummary] = []
        for start in range(0, len(ids), 100):  # BatchGetItem takes 100 keys
            keys = [to_item({"PK": run_pk(run_id), "SK": "RUN"}) for run_id in ids[start : start + 100]]
            request: dict[str, Any] = {self._table: {"Keys": keys}}
            for attempt in range(AUDIT_ATTEMPTS):  # keys left unprocessed (throttling): asked again, backing off
                if not request:
                    break
                back_off(attempt)
                resp = self._db.batch_get_item(RequestItems=request)  # type: ignore[arg-type,unused-ignore]
                found.extend(
                    run_summary_from(from_item(item)) for item in resp.get("Responses", {}).get(self._table, [])
                )
                request = cast("dict[str, Any]", resp.get("UnprocessedKeys") or {})
        return found

    def update_run(
        self,
        run_id: str,
        changes: dict[str, Any],
        *,
        allowed_from: set[str] | None = None,
        only_if_unset: str | None = None,
    ) -> RunSummary:
        update = self._run_update(run_id, changes, allowed_from, only_if_unset)
        try:
            resp = self._db.update_item(**update, ReturnValues="ALL_NEW", ReturnValuesOnConditionCheckFailure="ALL_OLD")
        except ClientError as err:
            if not is_conditional_failure(err):
                raise
            old = err.response.get("Item")
            if not old:
                raise NotFoundError(f"run {run_id} not found", details={"run_id": run_id}) from err
            current = run_summary_from(from_item(cast("dict[str, Any]", old)))
            raise ConflictError(
                f"run {run_id} is {current.status}; expected one of {sorted(allowed_from or [])}",
                details={"run_id": run_id, "current": current.model_dump()},
            ) from err
        return run_summary_from(from_item(resp["Attributes"]))

    def end_run(
        self, run_id: str, changes: dict[str, Any], event: Event, *, allowed_from: set[str] | None = None
    ) -> None:
        """A run's end: the run updated while `ended_at` is unset (and its status in `allowed_from`) and
        `event` recorded, one transaction (no half-recorded end to undo). ConflictError if the run is
        elsewhere, has ended or is missing."""
        update = self._run_update(run_id, changes, allowed_from, "ended_at")
        head = self._head_for(run_id, [event], None)
        try:
            transact_write(self._db, [{"Update": update}, *self._record_items(run_id, [event], head)])
        except ClientError as err:
            if "ConditionalCheckFailed" in (cancellation_codes(err) or ()):
                raise ConflictError(f"run {run_id} has ended or is elsewhere", details={"run_id": run_id}) from err
            raise

    def update_run_recording(
        self, run_id: str, changes: dict[str, Any], *, events: Sequence[Event], allowed_from: set[str] | None = None
    ) -> None:
        """The run updated (while its status is in `allowed_from`) and `events` recorded, decisions chained:
        one transaction. ConflictError if the run is elsewhere or missing (nothing written)."""

        def failed(codes: list[str], err: ClientError) -> None:
            if codes and codes[0] == "ConditionalCheckFailed":  # the run's update is the first item
                raise ConflictError(
                    f"run {run_id} is missing or not in {sorted(allowed_from or [])}", details={"run_id": run_id}
                ) from err

        update = self._run_update(run_id, changes, allowed_from, None)
        self._write_chained(run_id, [{"Update": update}], events, None, failed)

    def _run_update(
        self, run_id: str, changes: dict[str, Any], allowed_from: set[str] | None, only_if_unset: str | None
    ) -> dict[str, Any]:
        """The conditional UpdateItem of the run (its `version` advanced); a None change clears the field."""
        changes = dict(changes)
        if "output" in changes:
            changes["output"] = json.dumps(changes["output"])
        names = {f"#f{i}": k for i, k in enumerate(changes)}
        values = {f":v{i}": v for i, v in enumerate(changes.values()) if v is not None}
        sets = [f"#f{i} = :v{i}" for i, v in enumerate(changes.values()) if v is not None]
        removes = [f"#f{i}" for i, v in enumerate(changes.values()) if v is None]  # None clears the field
        condition = "attribute_exists(PK)"
        if allowed_from:
            names["#st"] = "status"
            keys = []
            for i, status in enumerate(sorted(allowed_from)):
                values[f":a{i}"] = status
                keys.append(f":a{i}")
            condition += f" AND #st IN ({', '.join(keys)})"
        if only_if_unset:
            names["#unset"] = only_if_unset
            condition += " AND attribute_not_exists(#unset)"
        names["#ver"] = "version"
        values[":one"] = 1
        return {
            "TableName": self._table,
            "Key": to_item({"PK": run_pk(run_id), "SK": "RUN"}),
            "UpdateExpression": "SET "
            + ", ".join([*sets, "#ver = #ver + :one"])
            + (" REMOVE " + ", ".join(removes) if removes else ""),
            "ConditionExpression": condition,
            "ExpressionAttributeNames": names,
            "ExpressionAttributeValues": to_item(values),
        }

    # ---- events and the decision log --------------------------------------------------------------
    def append_event(self, event: Event) -> None:
        if is_decision(event.type):
            self._append_decision(event)
            return
        try:
            self._db.put_item(
                TableName=self._table,
                Item=to_item(self._event_values(event)),
                ConditionExpression="attribute_not_exists(PK)",
            )
        except ClientError as err:  # an event id written before (a run's end is recorded once)
            if is_conditional_failure(err):
                raise ConflictError(
                    f"event {event.event_id} already recorded", details={"run_id": event.run_id}
                ) from err
            raise

    def _append_decision(self, event: Event) -> None:
        """A decision event and its run's chain head advanced: one transaction, retried on a lost race."""

        def failed(codes: list[str], err: ClientError) -> None:
            if codes[:1] == ["ConditionalCheckFailed"]:
                raise ConflictError(
                    f"event {event.event_id} already recorded", details={"run_id": event.run_id}
                ) from err

        self._write_chained(event.run_id, [], [event], None, failed)

    def list_events(self, run_id: str, *, after: str | None = None, limit: int = 100) -> list[Event]:
        lower = f"EVT#{after}" if after else "EVT#"
        resp = self._db.query(
            TableName=self._table,
            KeyConditionExpression="PK = :pk AND SK BETWEEN :lo AND :hi",
            ExpressionAttributeValues=to_item({":pk": run_pk(run_id), ":lo": lower, ":hi": "EVT#~"}),
            ConsistentRead=True,
            Limit=limit + 1,
        )
        events = []
        for raw in resp.get("Items", []):
            v = from_item(raw)
            if after and v["event_id"] == after:
                continue
            events.append(
                Event(
                    event_id=v["event_id"],
                    run_id=v["run_id"],
                    type=v["type"],
                    at=v["at"],
                    data=json.loads(v["data"]),
                )
            )
        return events[:limit]

    def read_audit(self, run_id: str) -> AuditTrail:
        """The run's chained records and its head, consistent: the head is read before and after the
        records, and again if a decision landed in between (so a record is never counted missing only
        because it was written while the records were read)."""
        head = self.get_audit_head(run_id)
        # The chained records, and the decision events without a place in the chain (stored before it
        # began): verify says which those are instead of passing over them.
        types = {f":t{n}": str(t) for n, t in enumerate(sorted(DECISION_TYPES))}
        for _attempt in range(5):
            items = self._query_all(
                KeyConditionExpression="PK = :pk AND begins_with(SK, :evt)",
                FilterExpression=f"attribute_exists(#seq) OR #type IN ({', '.join(types)})",
                ExpressionAttributeNames={"#seq": "seq", "#type": "type"},
                ExpressionAttributeValues=to_item({":pk": run_pk(run_id), ":evt": "EVT#", **types}),
                ConsistentRead=True,
            )
            after = self.get_audit_head(run_id)
            if after == head:
                break
            head = after
        records = [_audit_record(v) for v in items if "seq" in v]
        unchained = [
            UnchainedDecision(event_id=str(v.get("event_id")), type=str(v.get("type")), at=str(v.get("at")))
            for v in items
            if "seq" not in v
        ]
        return AuditTrail(records=records, head=head, unchained=unchained)

    def read_audit_page(self, run_id: str, *, after: int, limit: int) -> AuditTrail:
        """The run's head and up to `limit` chained records after seq `after`, in seq order: one
        consistent Query of the records' copies (`AUD#<seq>`) in the sort key range the head says
        follows `after` (none: no Query). Records chained before the copies were written have none: the
        caller checks the records run unbroken (`AuditService.page`)."""
        head = self.get_audit_head(run_id)
        last = min(head.seq, after + limit)
        if last <= after:
            return AuditTrail(records=[], head=head)
        items = self._query_all(
            KeyConditionExpression="PK = :pk AND SK BETWEEN :lo AND :hi",
            ExpressionAttributeValues=to_item(
                {":pk": run_pk(run_id), ":lo": audit_record_sk(after + 1), ":hi": audit_record_sk(last)}
            ),
            ConsistentRead=True,
        )
        return AuditTrail(records=[_audit_record(v) for v in items], head=head)

    # ---- messages queued for a node ----------------------------------------------------------------
    def put_message(self, message: Message) -> None:
        self._db.put_item(
            TableName=self._table,
            Item=to_item(self._message_values(message)),
            ConditionExpression="attribute_not_exists(PK)",
        )

    def drain_messages(self, run_id: str, node: str, *, drained_at: str) -> list[Message]:
        """Each message is claimed by one conditional write, so concurrent drains never share one."""
        items = self._query_all(
            KeyConditionExpression="PK = :pk AND begins_with(SK, :prefix)",
            FilterExpression="attribute_not_exists(drained_at)",
            ExpressionAttributeValues=to_item({":pk": run_pk(run_id), ":prefix": f"MSG#{node}#"}),
            ConsistentRead=True,
        )
        drained: list[Message] = []
        for values in items:
            try:
                self._db.update_item(
                    TableName=self._table,
                    Key=to_item({"PK": values["PK"], "SK": values["SK"]}),
                    UpdateExpression="SET drained_at = :at",
                    ConditionExpression="attribute_not_exists(drained_at)",
                    ExpressionAttributeValues=to_item({":at": drained_at}),
                )
            except ClientError as err:
                if is_conditional_failure(err):
                    continue  # another drainer delivered it
                raise
            drained.append(Message.model_validate(values))
        return drained


def _audit_record(v: dict[str, Any]) -> AuditRecord:
    return AuditRecord(
        event_id=str(v.get("event_id")),
        run_id=str(v.get("run_id")),
        type=str(v.get("type")),
        at=str(v.get("at")),
        data=stored_data(v.get("data")),
        seq=int(v["seq"]) if isinstance(v.get("seq"), int) else -1,
        prev_hash=str(v.get("prev_hash")),
        hash=str(v.get("hash")),
    )
