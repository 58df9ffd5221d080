"""The parked task tokens of `DynamoStore` (`WaitStore` in `baton/ports.py`): one `WAIT#<gate>` item per
gate in the run's partition, on the `pending` index (GSI1, `PARKED`) while parked. A wait is put only
when no other token is parked there, released by an update conditional on its token, and its park
writes the gate on each interaction it names (`blocks`) in the same transaction."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Final

from botocore.exceptions import ClientError

from baton.adapters.dynamo_items import (
    AUDIT_ATTEMPTS,
    AUDIT_HEAD_SK,
    back_off,
    contention,
    is_conditional_failure,
    lost_head_race,
    run_pk,
    run_summary_from,
    to_item,
    wait_from,
)
from baton.adapters.dynamo_table import DynamoTable
from baton.adapters.dynamo_transactions import cancellation_codes, transact_write
from baton.domain.audit import EMPTY_HEAD, AuditHead
from baton.errors import NotFoundError, already_parked
from baton.models import TERMINAL_RUN_STATES
from baton.workflows.table import GSI_PENDING

if TYPE_CHECKING:
    from collections.abc import Sequence

    from baton.models import Event, ParkedWait, RunSummary

# A wait that carries no answers (any gate but an await gate) stores none of their fields.
_CARRY_FIELDS: Final = {"carry", "answers", "carry_version", "carried_bytes"}
# A park's marks in its own transaction (100 items at most, the wait one of them).
_MARKS_PER_PARK: Final = 99


def release_update(table: str, wait: ParkedWait, status: str) -> dict[str, Any]:
    """The conditional update that moves a parked (or expiring) wait holding this token to `status`.
    "expiring" keeps it on the pending index, so the reconciler finishes a deadline that died midway."""
    keep_indexed = status == "expiring"
    clear = not keep_indexed and wait.carry is not None  # the output is sent: nothing reads them again
    return {
        "TableName": table,
        "Key": to_item({"PK": run_pk(wait.run_id), "SK": f"WAIT#{wait.gate}"}),
        "UpdateExpression": "SET #st = :new"
        + (", #ans = :none" if clear else "")
        + ("" if keep_indexed else " REMOVE GSI1PK, GSI1SK"),
        "ConditionExpression": "#st IN (:parked, :expiring) AND task_token = :token"
        if not keep_indexed
        else "#st = :parked AND task_token = :token",
        "ExpressionAttributeNames": {"#st": "status"} | ({"#ans": "answers"} if clear else {}),
        "ExpressionAttributeValues": to_item(
            {":new": status, ":parked": "parked", ":token": wait.task_token}
            | ({} if keep_indexed else {":expiring": "expiring"})
            | ({":none": {}} if clear else {})
        ),
    }


class DynamoWaits(DynamoTable):
    def put_wait(self, wait: ParkedWait, *, pause_at: str | None = None, events: Sequence[Event] = ()) -> None:
        """Store a wait. A parked one writes its gate on the interactions it names (what each holds up,
        which the inbox's page reads with the item) in the same transaction: a park is never half written.
        With `pause_at`, an open run paused and, with `events`, those recorded join it (a review's park:
        one write, not four). A transaction holds 100 items; names past that are marked right after it
        (`mark_blocked`)."""
        values = {
            "PK": run_pk(wait.run_id),
            "SK": f"WAIT#{wait.gate}",
            "record": "wait",
            **wait.model_dump(exclude=_CARRY_FIELDS if wait.carry is None else None),
            "scope": json.dumps(wait.scope),
        }
        if wait.status == "parked":
            values["GSI1PK"] = "PARKED"
            values["GSI1SK"] = f"{wait.parked_at}#{wait.run_id}#{wait.gate}"
        put: dict[str, Any] = {
            "TableName": self._table,
            "Item": to_item(values),
            # Never overwrite another parked token: that gate would hang until its timeout.
            "ConditionExpression": (
                "attribute_not_exists(PK) OR NOT (#st IN (:parked, :expiring)) OR task_token = :token"
            ),
            "ExpressionAttributeNames": {"#st": "status"},
            "ExpressionAttributeValues": to_item(
                {":parked": "parked", ":expiring": "expiring", ":token": wait.task_token}
            ),
        }
        named = list(dict.fromkeys(wait.interaction_ids)) if wait.status == "parked" else []
        if named or pause_at is not None or events:
            # the items that join: the run's update, each event (a decision: its copy too) and the log's head
            joined = (pause_at is not None) + (2 * len(events) + 1 if events else 0)
            marked = _MARKS_PER_PARK - joined
            self._park_marking(put, wait, named[:marked], pause_at=pause_at, events=events)
            self.mark_blocked(wait.run_id, wait.gate, named[marked:])
            return
        try:
            self._db.put_item(**put)
        except ClientError as err:
            if is_conditional_failure(err):
                raise already_parked(wait.run_id, wait.gate) from err
            raise

    def _blocks_update(self, run_id: str, gate: str, interaction_id: str, condition: str) -> dict[str, Any]:
        return {
            "TableName": self._table,
            "Key": to_item({"PK": run_pk(run_id), "SK": f"INT#{interaction_id}"}),
            "UpdateExpression": "SET #blocks = :gate",
            "ConditionExpression": condition,
            "ExpressionAttributeNames": {"#blocks": "blocks", **({"#st": "status"} if "#st" in condition else {})},
            "ExpressionAttributeValues": to_item(
                {":gate": gate, **({":pending": "pending"} if ":pending" in condition else {})}
            ),
        }

    def _park_marking(
        self,
        put: dict[str, Any],
        wait: ParkedWait,
        named: list[str],
        *,
        pause_at: str | None = None,
        events: Sequence[Event] = (),
    ) -> None:
        """The wait and its gate on each named interaction, one transaction (with the run paused and
        `events`, when given). An interaction answered meanwhile is marked all the same (harmless: it is
        off the pending indexes); a name with no item is left out and the transaction runs again. A run
        that is no longer open (it ended) is not paused: the transaction runs again without it."""
        # Its own loop, not `_write_chained` (whose items are fixed): a failed mark or pause changes the next
        # transaction's items. A lost head race reads the head again, as there.
        head = None
        for attempt in range(AUDIT_ATTEMPTS):
            marks: list[Any] = [
                {"Update": self._blocks_update(wait.run_id, wait.gate, iid, "attribute_exists(PK)")} for iid in named
            ]
            paused = [{"Update": self._pause_update(wait.run_id, pause_at)}] if pause_at is not None else []
            head = self._head_for(wait.run_id, events, head)
            try:
                transact_write(
                    self._db, [{"Put": put}, *marks, *paused, *self._record_items(wait.run_id, events, head)]
                )
            except ClientError as err:
                codes = cancellation_codes(err)
                if not codes:
                    raise
                if codes[0] == "ConditionalCheckFailed":
                    raise already_parked(wait.run_id, wait.gate) from err
                if paused and codes[1 + len(named)] == "ConditionalCheckFailed":
                    pause_at = None
                    continue
                named = [iid for iid, code in zip(named, codes[1:], strict=False) if code != "ConditionalCheckFailed"]
                if lost_head_race(codes):
                    head = None
                back_off(attempt)  # a concurrent write on one of them (an answer): again
                continue
            return
        raise contention(wait.run_id)

    def _pause_update(self, run_id: str, pause_at: str) -> dict[str, Any]:
        """An open run (created, running or paused) paused, its `version` advanced."""
        values = {":paused": "paused_waiting_human", ":at": pause_at, ":one": 1}
        return {
            "TableName": self._table,
            "Key": to_item({"PK": run_pk(run_id), "SK": "RUN"}),
            "UpdateExpression": "SET #st = :paused, #up = :at, #ver = #ver + :one",
            "ConditionExpression": "attribute_exists(PK) AND #st IN (:created, :running, :paused)",
            "ExpressionAttributeNames": {"#st": "status", "#up": "updated_at", "#ver": "version"},
            "ExpressionAttributeValues": to_item(values | {":created": "created", ":running": "running"}),
        }

    def mark_blocked(self, run_id: str, gate: str, interaction_ids: Sequence[str]) -> int:
        """`gate` on each still pending interaction of `interaction_ids` (one conditional UpdateItem each)."""
        marked = 0
        for iid in dict.fromkeys(interaction_ids):
            try:
                self._db.update_item(**self._blocks_update(run_id, gate, iid, "#st = :pending"))
            except ClientError as err:
                if not is_conditional_failure(err):
                    raise
                continue  # answered (or gone) meanwhile: nothing it holds up
            marked += 1
        return marked

    def get_run_and_wait(self, run_id: str, gate: str) -> tuple[RunSummary | None, ParkedWait | None]:
        """The run and its WAIT#<gate>: one consistent BatchGetItem of the two items (a park's first read)."""
        found = self._get_many(run_id, ["RUN", f"WAIT#{gate}"])
        run, wait = found.get("RUN"), found.get(f"WAIT#{gate}")
        return (run_summary_from(run) if run else None), (wait_from(wait) if wait else None)

    def record_park(
        self, run_id: str, *, events: Sequence[Event], pause_at: str | None = None, if_paused: Sequence[Event] = ()
    ) -> bool:
        """A gate's park on its run, one transaction: the scope version bumped, `events` recorded and, with
        `pause_at`, a created or running run paused with `if_paused` recorded. A run elsewhere (another gate
        paused it): the transaction runs again with the bump and `events` alone. True if it paused."""
        pause = pause_at is not None
        head = None  # its own loop, not `_write_chained`: a run elsewhere changes the next transaction's items
        for attempt in range(AUDIT_ATTEMPTS):
            update = self._park_update(run_id, pause_at if pause else None)
            written = [*events, *(if_paused if pause else ())]
            head = self._head_for(run_id, written, head)
            try:
                transact_write(self._db, [{"Update": update}, *self._record_items(run_id, written, head)])
            except ClientError as err:
                codes = cancellation_codes(err)
                if not codes:
                    raise
                if codes[0] == "ConditionalCheckFailed":
                    if not pause:
                        raise NotFoundError(f"run {run_id} not found", details={"run_id": run_id}) from err
                    pause = False  # not where a park pauses it from: the bump alone
                    continue
                if lost_head_race(codes):
                    head = None
                back_off(attempt)  # a concurrent transaction on the run: again
                continue
            return pause
        raise contention(run_id)

    def _park_update(self, run_id: str, pause_at: str | None) -> dict[str, Any]:
        """The run's scope version bumped; with `pause_at`, only a created or running run, paused."""
        update: dict[str, Any] = {
            "TableName": self._table,
            "Key": to_item({"PK": run_pk(run_id), "SK": "RUN"}),
            "UpdateExpression": "ADD #sv :one",
            "ConditionExpression": "attribute_exists(PK)",
            "ExpressionAttributeNames": {"#sv": "scope_version"},
            "ExpressionAttributeValues": to_item({":one": 1}),
        }
        if pause_at is None:
            return update
        values = {":one": 1, ":paused": "paused_waiting_human", ":at": pause_at}
        names = {"#sv": "scope_version", "#st": "status", "#up": "updated_at", "#ver": "version"}
        return update | {
            "UpdateExpression": "SET #st = :paused, #up = :at, #ver = #ver + :one ADD #sv :one",
            "ConditionExpression": "attribute_exists(PK) AND #st IN (:created, :running)",
            "ExpressionAttributeNames": names,
            "ExpressionAttributeValues": to_item(values | {":created": "created", ":running": "running"}),
        }

    def get_wait_and_head(self, run_id: str, gate: str) -> tuple[ParkedWait | None, AuditHead]:
        """The run's WAIT#<gate> and its decision-log head: one consistent BatchGetItem (a review action's
        read: the deadline it checks, the head its decision chains after)."""
        found = self._get_many(run_id, [f"WAIT#{gate}", AUDIT_HEAD_SK])
        wait, head = found.get(f"WAIT#{gate}"), found.get(AUDIT_HEAD_SK)
        chained = AuditHead(seq=int(head["seq"]), hash=str(head["hash"])) if head else EMPTY_HEAD
        return (wait_from(wait) if wait else None), chained

    def get_wait(self, run_id: str, gate: str) -> ParkedWait | None:
        values = self._get(run_pk(run_id), f"WAIT#{gate}")
        return wait_from(values) if values else None

    def release_wait(self, wait: ParkedWait, status: str) -> bool:
        """Mark the wait released/timed out (or expiring) if it still holds this token. False if someone
        else did."""
        try:
            self._db.update_item(**release_update(self._table, wait, status))
        except ClientError as err:
            if is_conditional_failure(err):
                return False
            raise
        return True

    def record_release(
        self,
        wait: ParkedWait,
        *,
        run_status: str,
        run_from: set[str],
        events: Sequence[Event],
        if_moved: Sequence[Event] = (),
    ) -> bool:
        """The wait released, the run moved (only if it is in `run_from`) and `events` recorded: one
        transaction. A run already elsewhere is left alone (the transaction runs again without it, and
        without `if_moved`: the events that say the run moved), unless it has already ended: the send
        let it run to its end before this bookkeeping, so it did move (`if_moved` is kept)."""
        names = {"#st": "status", "#up": "updated_at", "#ver": "version"}
        values: dict[str, Any] = {":new": run_status, ":now": events[0].at if events else "", ":one": 1}
        keys = []
        for n, status in enumerate(sorted(run_from)):
            values[f":a{n}"] = status
            keys.append(f":a{n}")
        run_update = {
            "Update": {
                "TableName": self._table,
                "Key": to_item({"PK": run_pk(wait.run_id), "SK": "RUN"}),
                "UpdateExpression": "SET #st = :new, #up = :now, #ver = #ver + :one",
                "ConditionExpression": f"#st IN ({', '.join(keys)})",
                "ExpressionAttributeNames": names,
                "ExpressionAttributeValues": to_item(values),
            }
        }
        release = {"Update": release_update(self._table, wait, "released")}
        # Its own loop, not `_write_chained`: a run elsewhere changes the next transaction's items, and a
        # release someone else made is an outcome (False), not an error.
        move_run, moved, head = bool(run_from), bool(run_from), None
        for attempt in range(AUDIT_ATTEMPTS):
            written = [*events, *(if_moved if moved else ())]
            head = self._head_for(wait.run_id, written, head)
            chained = self._record_items(wait.run_id, written, head)
            items: list[Any] = [release, *([run_update] if move_run else []), *chained]
            try:
                transact_write(self._db, items)
            except ClientError as err:
                codes = cancellation_codes(err)
                if not codes:
                    raise
                if codes[0] == "ConditionalCheckFailed":
                    return False  # released by someone else
                if move_run and len(codes) > 1 and codes[1] == "ConditionalCheckFailed":
                    move_run = False  # the run is not where a resume moves it from: leave it
                    run = self._get(run_pk(wait.run_id), "RUN")  # only on this path: has it already ended?
                    moved = run is not None and run_summary_from(run).status in TERMINAL_RUN_STATES
                elif len(chained) > len(written) and lost_head_race(codes):
                    head = None  # another decision on this run went first
                    back_off(attempt)
                continue  # a conflict with a concurrent transaction: again
            return True
        return False

    def merge_carried(self, wait: ParkedWait, entries: dict[str, str], *, carry: str, bytes_added: int) -> bool:
        """A park's merge of the answers in its scope into its wait's carried ones (each by its own key,
        so an answer that carried itself meanwhile is kept), while the wait is parked and filling."""
        names = {"#st": "status", "#carry": "carry", "#cv": "carry_version", "#cb": "carried_bytes"}
        values: dict[str, Any] = {
            ":parked": "parked",
            ":token": wait.task_token,
            ":filling": "filling",
            ":carry": carry,
            ":one": 1,
            ":size": bytes_added,
        }
        sets = ["#carry = :carry"]
        for n, (iid, entry) in enumerate(entries.items()):
            names |= {"#ans": "answers", f"#i{n}": iid}
            values[f":e{n}"] = entry
            sets.append(f"#ans.#i{n} = :e{n}")
        try:
            self._db.update_item(
                TableName=self._table,
                Key=to_item({"PK": run_pk(wait.run_id), "SK": f"WAIT#{wait.gate}"}),
                UpdateExpression=f"SET {', '.join(sets)} ADD #cv :one, #cb :size",
                ConditionExpression="#st = :parked AND task_token = :token AND #carry = :filling",
                ExpressionAttributeNames=names,
                ExpressionAttributeValues=to_item(values),
            )
        except ClientError as err:
            if is_conditional_failure(err):
                return False
            raise
        return True

    def list_parked(self) -> list[ParkedWait]:
        items = self._query_all(
            IndexName=GSI_PENDING,
            KeyConditionExpression="GSI1PK = :pk",
            ExpressionAttributeValues=to_item({":pk": "PARKED"}),
        )
        return [wait_from(v) for v in items]

    def list_run_waits(self, run_id: str) -> list[ParkedWait]:
        """Every WAIT# item of one run (parked, released or timed out): one Query on the run's partition."""
        items = self._query_all(
            KeyConditionExpression="PK = :pk AND begins_with(SK, :prefix)",
            ExpressionAttributeValues=to_item({":pk": run_pk(run_id), ":prefix": "WAIT#"}),
            ConsistentRead=True,
        )
        return [wait_from(v) for v in items]
