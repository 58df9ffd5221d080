"""The interaction writes of `DynamoStore` (`InteractionStore` in `baton/ports.py`), in the run's partition:
- `INT#<interaction>`: the interaction, moved only by a put conditional on the version read; while
  pending it carries the sparse keys of the pending, all-pending and due indexes;
- `PEND#<interaction>`: the pending marker of a question, tool await or pause (`dynamo_items.marker_values`),
  written and deleted in the same transaction as its interaction;
- `IID#<interaction>` (its own partition): the pointer to the run and node of an interaction addressed
  by id alone (an interrupt).
A transition with records or guards is one transaction with them (`dynamo_guards.py`), its decision
events chained after the run's head (`DynamoTable._record_items`). Claims: `dynamo_claims.py`; the
reads: `dynamo_interaction_reads.py`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NoReturn, cast

from botocore.exceptions import ClientError

from baton.adapters.dynamo_guards import guard_item, raise_guard
from baton.adapters.dynamo_items import (
    AUDIT_ATTEMPTS,
    AUDIT_HEAD_SK,
    TRANSACTION_ITEMS,
    back_off,
    contention,
    from_item,
    interaction_from,
    interaction_values,
    is_conditional_failure,
    is_marked,
    marker_sk,
    marker_values,
    run_pk,
    to_item,
    wait_from,
)
from baton.adapters.dynamo_table import DynamoTable
from baton.adapters.dynamo_transactions import cancellation_codes, transact_write
from baton.adapters.dynamo_waits import release_update
from baton.domain.audit import EMPTY_HEAD, AuditHead, is_decision
from baton.errors import ConflictError, NotFoundError
from baton.ports import FoundInteraction

if TYPE_CHECKING:
    from collections.abc import Sequence

    from baton.models import Event, Interaction, InteractionStatus, Message, ParkedWait
    from baton.ports import Guard


class DynamoInteractions(DynamoTable):
    def _ask_count(self, run_id: str) -> dict[str, Any]:
        """The run's count of questions asked, advanced with a question's put (`ScopeUnchanged.asked`)."""
        return {
            "Update": {
                "TableName": self._table,
                "Key": to_item({"PK": run_pk(run_id), "SK": "RUN"}),
                "UpdateExpression": "ADD #ak :one",
                "ConditionExpression": "attribute_exists(PK)",
                "ExpressionAttributeNames": {"#ak": "asked"},
                "ExpressionAttributeValues": to_item({":one": 1}),
            }
        }

    def _put_marked(
        self, values: dict[str, Any], run_id: str, *, marked: bool, count_ask: bool, events: Sequence[Event]
    ) -> None:
        """A new interaction with its marker, ask count and `events`, one transaction. Its events are never
        decisions (a new pause is asked, not decided): one would need the head's race and retry
        (`_write_chained`), so it is refused as a programming error rather than written unretried."""
        if decided := [e.type for e in events if is_decision(e.type)]:
            raise ValueError(f"a new interaction's put records no decision ({', '.join(decided)}): decide it after")
        items: list[Any] = [
            {
                "Put": {
                    "TableName": self._table,
                    "Item": to_item(values),
                    "ConditionExpression": "attribute_not_exists(PK)",
                }
            },
            *([{"Put": {"TableName": self._table, "Item": to_item(marker_values(values))}}] if marked else []),
            *([self._ask_count(run_id)] if count_ask else []),
            *self._record_items(run_id, events, EMPTY_HEAD),  # no decision: nothing chained
        ]
        for attempt in range(AUDIT_ATTEMPTS):  # the run's item met a concurrent transaction: again
            try:
                transact_write(self._db, items)
            except ClientError as err:
                codes = cancellation_codes(err)
                if not count_ask or not codes or "TransactionConflict" not in codes:
                    raise
                back_off(attempt + 1)
                continue
            return
        raise contention(run_id)

    def put_interaction(self, interaction: Interaction, *, count_ask: bool = False) -> None:
        """Store a new interaction (a pending one with its marker). `count_ask`: a question, counted on
        its run in the same write (the run must exist)."""
        self._put_new(interaction, count_ask=count_ask, events=())

    def put_question(self, question: Interaction, *, events: Sequence[Event]) -> None:
        """A new pending question, its marker, its run's ask count and `events`: one transaction."""
        self._put_new(question, count_ask=True, events=events)

    def put_pause(self, pause: Interaction, *, events: Sequence[Event]) -> None:
        """A new pending pause, its marker and `events`: one transaction."""
        self._put_new(pause, count_ask=False, events=events)

    def _put_new(self, interaction: Interaction, *, count_ask: bool, events: Sequence[Event]) -> None:
        values = interaction_values(interaction)
        try:
            if is_marked(interaction) or events:
                marked = is_marked(interaction)
                self._put_marked(values, interaction.run_id, marked=marked, count_ask=count_ask, events=events)
            else:
                self._db.put_item(
                    TableName=self._table, Item=to_item(values), ConditionExpression="attribute_not_exists(PK)"
                )
        except ClientError as err:
            codes = cancellation_codes(err)
            if is_conditional_failure(err) or (codes and codes[0] == "ConditionalCheckFailed"):
                raise ConflictError(
                    f"interaction {interaction.interaction_id} already exists",
                    details={"interaction_id": interaction.interaction_id},
                ) from err
            raise

    def get_interaction(self, run_id: str, interaction_id: str) -> Interaction | None:
        values = self._get(run_pk(run_id), f"INT#{interaction_id}")
        return interaction_from(values) if values else None

    def put_interaction_indexed(self, interaction: Interaction) -> None:
        """The interaction plus a pointer item (PK=SK=IID#<iid> → run_id) in one transaction, so an
        interaction addressed by id alone (an interrupt) is found with two GetItems, never a Scan."""
        iid = interaction.interaction_id
        try:
            transact_write(
                self._db,
                [
                    {
                        "Put": {
                            "TableName": self._table,
                            "Item": to_item(interaction_values(interaction)),
                            "ConditionExpression": "attribute_not_exists(PK)",
                        }
                    },
                    {
                        "Put": {
                            "TableName": self._table,
                            "Item": to_item(
                                {
                                    "PK": f"IID#{iid}",
                                    "SK": f"IID#{iid}",
                                    "record": "iid",
                                    "run_id": interaction.run_id,
                                    "node": interaction.request.node,  # its gate: find_for_decision
                                }
                            ),
                            "ConditionExpression": "attribute_not_exists(PK)",
                        }
                    },
                ],
            )
        except ClientError as err:
            if "ConditionalCheckFailed" in (cancellation_codes(err) or ()):  # not a conflict, which was retried
                raise ConflictError(f"interaction {iid} already exists", details={"interaction_id": iid}) from err
            raise

    def find_interaction(self, interaction_id: str) -> Interaction | None:
        pointer = self._get(f"IID#{interaction_id}", f"IID#{interaction_id}")
        return self.get_interaction(pointer["run_id"], interaction_id) if pointer else None

    def find_for_decision(self, interaction_id: str) -> FoundInteraction | None:
        """The interaction by id, its node's wait and its run's decision-log head: the pointer (GetItem),
        then one consistent BatchGetItem of the three items in the run's partition. A pointer stored
        before it named the node costs one GetItem more (the wait, once the node is read)."""
        pointer = self._get(f"IID#{interaction_id}", f"IID#{interaction_id}")
        if pointer is None:
            return None
        node = pointer.get("node")
        sks = [f"INT#{interaction_id}", AUDIT_HEAD_SK] + ([f"WAIT#{node}"] if isinstance(node, str) else [])
        found = self._get_many(str(pointer["run_id"]), sks)
        values = found.get(f"INT#{interaction_id}")
        if values is None:
            return None
        interaction = interaction_from(values)
        head_values = found.get(AUDIT_HEAD_SK)
        head = AuditHead(seq=int(head_values["seq"]), hash=str(head_values["hash"])) if head_values else EMPTY_HEAD
        if isinstance(node, str):
            wait_values = found.get(f"WAIT#{node}")
            wait = wait_from(wait_values) if wait_values else None
        else:  # a pointer stored before it named its node (`dynamo_migrations.py`): the wait by the node read
            wait_values = self._get(run_pk(interaction.run_id), f"WAIT#{interaction.request.node}")
            wait = wait_from(wait_values) if wait_values else None
        return FoundInteraction(interaction=interaction, wait=wait, audit_head=head)

    def transition_interaction(
        self,
        interaction: Interaction,
        new_state: InteractionStatus,
        *,
        with_records: Sequence[Message | Event] = (),
        guards: Sequence[Guard] = (),
        audit_head: AuditHead | None = None,
    ) -> Interaction:
        """Write `new_state` only if nobody changed the interaction since `interaction` was read.

        `with_records` (the answer's message, its event) are written in the same transaction: all or
        nothing, so an answer is never stored without its delivery. `guards` are checked in it too
        (GuardFailedError names the one that failed); a question's pending marker moves with it. A
        decision event among the records advances the run's chain head in it as well (from
        `audit_head` when the caller read it, else read here)."""
        expected = interaction.state.version
        updated = interaction.model_copy(update={"state": new_state.model_copy(update={"version": expected + 1})})
        if with_records or guards or is_marked(interaction) or is_marked(updated):
            written = self._transition_in_transaction(
                interaction,
                updated,
                interaction_values(updated),
                records=with_records,
                guards=guards,
                audit_head=audit_head,
            )
        else:
            written = self._transition_alone(interaction, updated, expected)
        if interaction.state.status == "pending" and written.state.status != "pending":
            # Every kind's answer (and default, and timeout) is this one write: its answer time and
            # deadline met or missed are logged here, once, after the write won (baton.runtime.answer_times).
            from baton.runtime.answer_times import publish_settled  # the metrics library: loaded only on this path

            publish_settled(interaction, written)
        return written

    def _transition_alone(self, interaction: Interaction, updated: Interaction, expected: int) -> Interaction:
        """An item with no records, guards or pending marker: one conditional put on its version."""
        values = interaction_values(updated)
        try:
            self._db.put_item(
                TableName=self._table,
                Item=to_item(values),
                ConditionExpression="attribute_exists(PK) AND #ver = :expected",
                ExpressionAttributeNames={"#ver": "version"},
                ExpressionAttributeValues=to_item({":expected": expected}),
                ReturnValuesOnConditionCheckFailure="ALL_OLD",
            )
        except ClientError as err:
            if not is_conditional_failure(err):
                raise
            old = err.response.get("Item")
            if not old:
                raise NotFoundError(
                    f"interaction {interaction.interaction_id} not found",
                    details={"interaction_id": interaction.interaction_id},
                ) from err
            current = interaction_from(from_item(cast("dict[str, Any]", old)))
            raise ConflictError(
                f"interaction {interaction.interaction_id} is already {current.state.status}",
                details={"interaction": current.public()},
            ) from err
        return updated

    def _versioned_put(self, values: dict[str, Any], expected: int) -> dict[str, Any]:
        """The interaction's new item, written only over the version it was read at (a transaction item)."""
        return {
            "Put": {
                "TableName": self._table,
                "Item": to_item(values),
                "ConditionExpression": "attribute_exists(PK) AND #ver = :expected",
                "ExpressionAttributeNames": {"#ver": "version"},
                "ExpressionAttributeValues": to_item({":expected": expected}),
            }
        }

    def _marker_item(self, interaction: Interaction, updated: Interaction, values: dict[str, Any]) -> list[Any]:
        if is_marked(updated):
            return [{"Put": {"TableName": self._table, "Item": to_item(marker_values(values))}}]
        if is_marked(interaction):
            key = {"PK": run_pk(interaction.run_id), "SK": marker_sk(interaction.interaction_id)}
            return [{"Delete": {"TableName": self._table, "Key": to_item(key)}}]
        return []

    def _transition_in_transaction(
        self,
        interaction: Interaction,
        updated: Interaction,
        values: dict[str, Any],
        *,
        records: Sequence[Message | Event],
        guards: Sequence[Guard],
        audit_head: AuditHead | None,
    ) -> Interaction:
        items: list[dict[str, Any]] = [
            self._versioned_put(values, interaction.state.version),
            *[guard_item(self._table, g) for g in guards],
            *self._marker_item(interaction, updated, values),
        ]

        def failed(codes: list[str], err: ClientError) -> None:
            if codes:
                self._raise_transition_failure(interaction, guards, codes, err)

        self._write_chained(interaction.run_id, items, records, audit_head, failed)
        return updated

    def _raise_transition_failure(
        self, interaction: Interaction, guards: Sequence[Guard], codes: list[str], err: ClientError
    ) -> NoReturn:
        if codes[0] != "ConditionalCheckFailed":
            raise_guard(guards, codes, err)
        current = self.get_interaction(interaction.run_id, interaction.interaction_id)
        if current is None:
            raise NotFoundError(
                f"interaction {interaction.interaction_id} not found",
                details={"interaction_id": interaction.interaction_id},
            ) from err
        raise ConflictError(
            f"interaction {interaction.interaction_id} is already {current.state.status}",
            details={"interaction": current.public()},
        ) from err

    def close_interactions(
        self, closing: Sequence[tuple[Interaction, InteractionStatus]], *, waits: Sequence[ParkedWait] = ()
    ) -> None:
        """A run's stop: every interaction in `closing` moved to its new state (each conditional on the
        version read, its pending marker deleted with it) and every wait in `waits` released, packed into
        as few transactions as TransactWriteItems' 100 items allow (an interaction never split from its
        marker). ConflictError when one changed since it was read: the transactions before it stand."""
        groups: list[tuple[str, list[dict[str, Any]]]] = []  # (what it closes, its items)
        for interaction, new_state in closing:
            expected = interaction.state.version
            updated = interaction.model_copy(update={"state": new_state.model_copy(update={"version": expected + 1})})
            values = interaction_values(updated)
            put = self._versioned_put(values, expected)
            groups.append(
                (f"INT#{interaction.interaction_id}", [put, *self._marker_item(interaction, updated, values)])
            )
        groups += [(f"WAIT#{wait.gate}", [{"Update": release_update(self._table, wait, "released")}]) for wait in waits]
        written: list[str] = []
        batch: list[tuple[str, list[dict[str, Any]]]] = []
        for group in groups:
            if batch and sum(len(items) for _, items in batch) + len(group[1]) > TRANSACTION_ITEMS:
                written += self._close_batch(batch, written)
                batch = []
            batch.append(group)
        if batch:
            self._close_batch(batch, written)

    def _close_batch(self, batch: list[tuple[str, list[dict[str, Any]]]], written: list[str]) -> list[str]:
        """One transaction of `close_interactions`; its ConflictError names what was `written` before it."""
        try:
            transact_write(self._db, [item for _, items in batch for item in items])
        except ClientError as err:
            codes = cancellation_codes(err)
            if codes and "ConditionalCheckFailed" in codes:
                raise ConflictError(
                    "an interaction or wait of the run changed while it was closed; read it again",
                    details={
                        "reason": "changed",
                        "closed": [key[4:] for key in written if key.startswith("INT#")],
                    },
                ) from err
            raise
        return [key for key, _ in batch]
