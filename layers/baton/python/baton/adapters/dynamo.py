"""DynamoDB adapter of the `Store` port: one class implements every part of it (`RunStore`,
`InteractionStore`, `EventStore`, `MessageStore`, `ReviewTurnStore`, `WaitStore` in `baton/ports.py`;
`ApprovalStore` is mixed in from `dynamo_approvals.py`).
Every state change is a conditional write; no Scan anywhere.

Over 400 lines on purpose: the parts share one table, and its key layout (PK/SK, the by_status and
pending indexes, the pointer items) is easiest to keep consistent when it is read in one place."""

from __future__ import annotations

import json
import random
import time
from decimal import Decimal
from typing import TYPE_CHECKING, Any, NoReturn, cast

from boto3.dynamodb.types import TypeDeserializer, TypeSerializer
from botocore.exceptions import ClientError

from baton.adapters.dynamo_approvals import DynamoApprovals, quorum_check
from baton.adapters.dynamo_transactions import cancellation_codes, transact_write
from baton.domain.audit import (
    DECISION_TYPES,
    EMPTY_HEAD,
    AuditHead,
    AuditRecord,
    AuditTrail,
    UnchainedDecision,
    chain,
    is_decision,
    stored_data,
)
from baton.errors import BadRequestError, ConflictError, NotFoundError, already_parked
from baton.models import (
    Event,
    Interaction,
    InteractionStatus,
    Message,
    ParkedWait,
    PendingQuery,
    ReviewTurn,
    RunSummary,
    dump_request,
    parse_request,
)
from baton.ports import (
    PENDING_MARKED_KINDS,
    CarryAnswer,
    FoundInteraction,
    GuardFailedError,
    QuorumMet,
    RunSnapshot,
    ScopeUnchanged,
    WaitStillOpen,
)
from baton.workflows.table import (
    ALL_PENDING_PK,
    ALL_PENDING_PK_ATTRIBUTE,
    ALL_PENDING_SK_ATTRIBUTE,
    DUE_KINDS,
    DUE_PK_ATTRIBUTE,
    DUE_SK_ATTRIBUTE,
    GSI_ALL_PENDING,
    GSI_BY_STATUS,
    GSI_DUE,
    GSI_PENDING,
    TTL_ATTRIBUTE,
    due_before,
    due_keys,
)

if TYPE_CHECKING:
    from collections.abc import Sequence

    from mypy_boto3_dynamodb import DynamoDBClient

    from baton.ports import Guard

_ser = TypeSerializer()
_de = TypeDeserializer()
_STATUS_FIELDS = (
    "status",
    "answer",
    "answered_by",
    "answered_at",
    "claimed_by",
    "claimed_at",
    "lease_expires_at",
    "reason",
)


def _plain(value: Any) -> Any:
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


# A DynamoDB number holds 38 digits: an int inside this bound is written as its digits, as boto3's
# TypeSerializer writes it; one outside it (and every other type) goes through the TypeSerializer.
_N_BOUND = 10**38


def _to_value(value: Any) -> dict[str, Any]:
    """One attribute value, as `TypeSerializer.serialize` makes it: the types every item is made of
    (exactly str, bool, int, dict, list) without its type dispatch, the rest through it."""
    kind = type(value)
    if kind is str:
        return {"S": value}
    if kind is bool:
        return {"BOOL": value}
    if kind is int and -_N_BOUND < value < _N_BOUND:
        return {"N": str(value)}
    if kind is dict:
        return {"M": {k: _to_value(v) for k, v in value.items()}}
    if kind is list:
        return {"L": [_to_value(v) for v in value]}
    serialized: Any = _ser.serialize(value)
    return cast("dict[str, Any]", serialized)


def _from_value(value: dict[str, Any]) -> Any:
    """One attribute value, as `_plain(TypeDeserializer.deserialize(...))` reads it: strings, booleans,
    maps and lists directly, the rest (numbers, sets, binary, null) through the deserializer."""
    tag = next(iter(value), None)
    if tag in {"S", "BOOL"}:
        return value[tag]
    if tag == "M":
        return {k: _from_value(v) for k, v in value["M"].items()}
    if tag == "L":
        return [_from_value(v) for v in value["L"]]
    return _plain(_de.deserialize(cast("Any", value)))


def _to_item(values: dict[str, Any]) -> dict[str, Any]:
    return {k: _to_value(v) for k, v in values.items() if v is not None}


def _from_item(item: dict[str, Any]) -> dict[str, Any]:
    return {k: _from_value(v) for k, v in item.items()}


def _is_start_key(start: Any, *, with_index: bool) -> bool:
    """A LastEvaluatedKey as the listing's own query returns it: the table's keys (and the by_status
    index's), each a short string attribute. A forged one is refused before it reaches DynamoDB."""
    names = {"PK", "SK", "GSI2PK", "GSI2SK"} if with_index else {"PK", "SK"}
    if not isinstance(start, dict) or set(start) != names:
        return False
    return all(
        isinstance(v, dict) and list(v) == ["S"] and isinstance(v["S"], str) and 0 < len(v["S"]) <= 1024
        for v in start.values()
    )


def _run_pk(run_id: str) -> str:
    return f"RUN#{run_id}"


def _is_conditional_failure(err: ClientError) -> bool:
    return err.response.get("Error", {}).get("Code") == "ConditionalCheckFailedException"


# The run's decision-log head (baton/domain/audit.py): at or after PEND#, so snapshot_run's one Query
# reads it with the run (the answer path gets it at no extra call).
_AUDIT_HEAD_SK = "RUN#AUDIT"
# A wait that carries no answers (any gate but an await gate) stores none of their fields.
_CARRY_FIELDS = {"carry", "answers", "carry_version", "carried_bytes"}
# Attempts at a chained write that lost the race for its run's head (each attempt, one racer wins).
AUDIT_ATTEMPTS = 30
# A park's marks in its own transaction (100 items at most, the wait one of them).
_MARKS_PER_PARK = 99


def _lost_head_race(codes: list[str]) -> bool:
    """A cancelled transaction whose last item (the head) alone failed: another decision advanced the
    run's chain first (read the head again and retry)."""
    return codes[-1] in ("ConditionalCheckFailed", "TransactionConflict") and all(c == "None" for c in codes[:-1])


def _back_off(attempt: int) -> None:
    if attempt:  # a short random pause, so racers on one run's head do not retry in step
        time.sleep(random.uniform(0, min(0.05, 0.005 * attempt)))


# A review dialogue's turns sort before PEND#, so snapshot_run's Query (from PEND# on) never reads them:
# a run's long review dialogue costs its answers nothing. Turns stored under `TURN#` (which sorts between
# the run and its waits) before they moved are still read by `list_turns`, and filtered out by the snapshot.
_TURN_PREFIX = "DLG#"


def _turn_sk(interaction_id: str, n: int) -> str:
    return f"{_TURN_PREFIX}{interaction_id}#{n:06d}"


def _marker_sk(interaction_id: str) -> str:
    # PEND# sorts after DLG#, EVT#, INT# and MSG# and before RUN and WAIT#: one Query from PEND# reads
    # the open questions, the run and its waits, never the run's history or its review dialogues.
    return f"PEND#{interaction_id}"


def _due_keys_of(i: Interaction) -> dict[str, str]:
    """The due index's keys of a pending interaction (`baton/workflows/table.py`, GSI4)."""
    ladder = i.request.ladder
    has_default = ladder is not None and ladder.default is not None
    return due_keys(i.request.kind, i.interaction_id, i.expires_at, has_default=has_default)


class DynamoStore(DynamoApprovals):
    def __init__(self, table_name: str, client: DynamoDBClient, *, ttl_seconds: int = 90 * 86400) -> None:
        self._table = table_name
        self._db = client
        self._ttl_seconds = ttl_seconds

    # ---- helpers -------------------------------------------------------------------------------
    def _query_all(self, **kwargs: Any) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = []
        while True:
            resp = self._db.query(TableName=self._table, **kwargs)
            items.extend(_from_item(i) for i in resp.get("Items", []))
            last = resp.get("LastEvaluatedKey")
            if not last:
                return items
            kwargs["ExclusiveStartKey"] = last

    def _get(self, pk: str, sk: str) -> dict[str, Any] | None:
        resp = self._db.get_item(TableName=self._table, Key=_to_item({"PK": pk, "SK": sk}), ConsistentRead=True)
        item = resp.get("Item")
        return _from_item(item) if item else None

    # ---- runs ----------------------------------------------------------------------------------
    def create_run(self, run: RunSummary) -> None:
        values = {"PK": _run_pk(run.run_id), "SK": "RUN", "record": "run", **run.model_dump()}
        values["output"] = json.dumps(run.output) if run.output is not None else None
        try:
            self._db.put_item(
                TableName=self._table,
                Item=_to_item(values),
                ConditionExpression="attribute_not_exists(PK)",
            )
        except ClientError as err:
            if _is_conditional_failure(err):
                raise ConflictError(f"run {run.run_id} already exists", details={"run_id": run.run_id}) from err
            raise

    @staticmethod
    def _run_from(values: dict[str, Any]) -> RunSummary:
        if isinstance(values.get("output"), str):
            values["output"] = json.loads(values["output"])
        return RunSummary.model_validate(values)

    def get_run(self, run_id: str) -> RunSummary | None:
        values = self._get(_run_pk(run_id), "RUN")
        return self._run_from(values) if values else None

    def update_run(
        self,
        run_id: str,
        changes: dict[str, Any],
        *,
        allowed_from: set[str] | None = None,
        only_if_unset: str | None = None,
    ) -> RunSummary:
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
        try:
            resp = self._db.update_item(
                TableName=self._table,
                Key=_to_item({"PK": _run_pk(run_id), "SK": "RUN"}),
                UpdateExpression="SET "
                + ", ".join([*sets, "#ver = #ver + :one"])
                + (" REMOVE " + ", ".join(removes) if removes else ""),
                ConditionExpression=condition,
                ExpressionAttributeNames=names,
                ExpressionAttributeValues=_to_item(values),
                ReturnValues="ALL_NEW",
                ReturnValuesOnConditionCheckFailure="ALL_OLD",
            )
        except ClientError as err:
            if not _is_conditional_failure(err):
                raise
            old = err.response.get("Item")
            if not old:
                raise NotFoundError(f"run {run_id} not found", details={"run_id": run_id}) from err
            current = self._run_from(_from_item(cast("dict[str, Any]", old)))
            raise ConflictError(
                f"run {run_id} is {current.status}; expected one of {sorted(allowed_from or [])}",
                details={"run_id": run_id, "current": current.model_dump()},
            ) from err
        return self._run_from(_from_item(resp["Attributes"]))

    # ---- interactions --------------------------------------------------------------------------
    def _interaction_values(self, i: Interaction) -> dict[str, Any]:
        st = i.state
        values: dict[str, Any] = {
            "PK": _run_pk(i.run_id),
            "SK": f"INT#{i.interaction_id}",
            "record": "interaction",
            "interaction_id": i.interaction_id,
            "run_id": i.run_id,
            "kind": i.request.kind,
            "node": i.request.node,
            "created_at": i.created_at,
            "expires_at": i.expires_at,
            "request": dump_request(i.request),
            "status": st.status,
            "answer": json.dumps(st.answer) if st.answer is not None else None,
            "answered_by": st.answered_by,
            "answered_at": st.answered_at,
            "claimed_by": st.claimed_by,
            "claimed_at": st.claimed_at,
            "lease_expires_at": st.lease_expires_at,
            "reason": st.reason,
            "version": st.version,
            "blocks": i.blocks,
            "GSI2PK": f"{i.request.kind}#{st.status}",
            "GSI2SK": f"{i.run_id}#{i.created_at}#{i.interaction_id}",
        }
        if st.status == "pending":
            values["GSI1PK"] = f"PENDING#{i.request.kind}"
            values["GSI1SK"] = f"{i.created_at}#{i.interaction_id}"
            values[ALL_PENDING_PK_ATTRIBUTE] = ALL_PENDING_PK
            values[ALL_PENDING_SK_ATTRIBUTE] = values["GSI1SK"]
            values.update(_due_keys_of(i))
        return values

    @staticmethod
    def _interaction_from(values: dict[str, Any]) -> Interaction:
        answer = values.get("answer")
        return Interaction(
            interaction_id=values["interaction_id"],
            run_id=values["run_id"],
            created_at=values["created_at"],
            expires_at=values.get("expires_at"),
            request=parse_request(values["request"]),
            state=InteractionStatus(
                **{k: values.get(k) for k in _STATUS_FIELDS if k not in ("answer", "status")},
                status=values["status"],
                answer=json.loads(answer) if isinstance(answer, str) else None,
                version=values.get("version", 0),
            ),
            blocks=values.get("blocks"),
        )

    @staticmethod
    def _is_marked(i: Interaction) -> bool:
        return i.request.kind in PENDING_MARKED_KINDS and i.state.status == "pending"

    @staticmethod
    def _marker_values(values: dict[str, Any]) -> dict[str, Any]:
        """The pending marker of a question, tool await or pause: a copy of the item in the run's partition,
        present exactly while it is pending (written and deleted with it, in one transaction)."""
        marker = {k: v for k, v in values.items() if not k.startswith("GSI")}
        return {**marker, "SK": _marker_sk(values["interaction_id"]), "record": "pending"}

    def _ask_count(self, run_id: str) -> dict[str, Any]:
        """The run's count of questions asked, advanced with a question's put (`ScopeUnchanged.asked`)."""
        return {
            "Update": {
                "TableName": self._table,
                "Key": _to_item({"PK": _run_pk(run_id), "SK": "RUN"}),
                "UpdateExpression": "ADD #ak :one",
                "ConditionExpression": "attribute_exists(PK)",
                "ExpressionAttributeNames": {"#ak": "asked"},
                "ExpressionAttributeValues": _to_item({":one": 1}),
            }
        }

    def _put_marked(self, values: dict[str, Any], run_id: str, *, count_ask: bool) -> None:
        items: list[Any] = [
            {
                "Put": {
                    "TableName": self._table,
                    "Item": _to_item(values),
                    "ConditionExpression": "attribute_not_exists(PK)",
                }
            },
            {"Put": {"TableName": self._table, "Item": _to_item(self._marker_values(values))}},
            *([self._ask_count(run_id)] if count_ask else []),
        ]
        for attempt in range(AUDIT_ATTEMPTS):  # the run's item met a concurrent transaction: again
            try:
                transact_write(self._db, items)
            except ClientError as err:
                codes = cancellation_codes(err)
                if not count_ask or not codes or "TransactionConflict" not in codes:
                    raise
                _back_off(attempt + 1)
                continue
            return
        raise self._contention(run_id)

    def put_interaction(self, interaction: Interaction, *, count_ask: bool = False) -> None:
        """Store a new interaction (a pending one with its marker). `count_ask`: a question, counted on
        its run in the same write (the run must exist)."""
        values = self._interaction_values(interaction)
        try:
            if self._is_marked(interaction):
                self._put_marked(values, interaction.run_id, count_ask=count_ask)
            else:
                self._db.put_item(
                    TableName=self._table, Item=_to_item(values), ConditionExpression="attribute_not_exists(PK)"
                )
        except ClientError as err:
            codes = cancellation_codes(err)
            if _is_conditional_failure(err) or (codes and codes[0] == "ConditionalCheckFailed"):
                raise ConflictError(
                    f"interaction {interaction.interaction_id} already exists",
                    details={"interaction_id": interaction.interaction_id},
                ) from err
            raise

    def get_interaction(self, run_id: str, interaction_id: str) -> Interaction | None:
        values = self._get(_run_pk(run_id), f"INT#{interaction_id}")
        return self._interaction_from(values) if values else None

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
                            "Item": _to_item(self._interaction_values(interaction)),
                            "ConditionExpression": "attribute_not_exists(PK)",
                        }
                    },
                    {
                        "Put": {
                            "TableName": self._table,
                            "Item": _to_item(
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
        pk = _run_pk(str(pointer["run_id"]))
        node = pointer.get("node")
        sks = [f"INT#{interaction_id}", _AUDIT_HEAD_SK] + ([f"WAIT#{node}"] if isinstance(node, str) else [])
        keys = [_to_item({"PK": pk, "SK": sk}) for sk in sks]
        found: dict[str, dict[str, Any]] = {}
        request: dict[str, Any] = {self._table: {"Keys": keys, "ConsistentRead": True}}
        for attempt in range(AUDIT_ATTEMPTS):  # keys left unprocessed (throttling): asked again, backing off
            if not request:
                break
            _back_off(attempt)
            resp = self._db.batch_get_item(RequestItems=request)  # type: ignore[arg-type,unused-ignore]
            for item in resp.get("Responses", {}).get(self._table, []):
                read = _from_item(item)
                found[str(read["SK"])] = read
            request = cast("dict[str, Any]", resp.get("UnprocessedKeys") or {})
        if request:
            raise self._contention(str(pointer["run_id"]))
        values = found.get(f"INT#{interaction_id}")
        if values is None:
            return None
        interaction = self._interaction_from(values)
        head_values = found.get(_AUDIT_HEAD_SK)
        head = AuditHead(seq=int(head_values["seq"]), hash=str(head_values["hash"])) if head_values else EMPTY_HEAD
        if isinstance(node, str):
            wait_values = found.get(f"WAIT#{node}")
            wait = self._wait_from(wait_values) if wait_values else None
        else:
            wait = self.get_wait(interaction.run_id, interaction.request.node)
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
        values = self._interaction_values(updated)
        if with_records or guards or self._is_marked(interaction) or self._is_marked(updated):
            return self._transition_in_transaction(
                interaction, updated, values, records=with_records, guards=guards, audit_head=audit_head
            )
        try:
            self._db.put_item(
                TableName=self._table,
                Item=_to_item(values),
                ConditionExpression="attribute_exists(PK) AND #ver = :expected",
                ExpressionAttributeNames={"#ver": "version"},
                ExpressionAttributeValues=_to_item({":expected": expected}),
                ReturnValuesOnConditionCheckFailure="ALL_OLD",
            )
        except ClientError as err:
            if not _is_conditional_failure(err):
                raise
            old = err.response.get("Item")
            if not old:
                raise NotFoundError(
                    f"interaction {interaction.interaction_id} not found",
                    details={"interaction_id": interaction.interaction_id},
                ) from err
            current = self._interaction_from(_from_item(cast("dict[str, Any]", old)))
            raise ConflictError(
                f"interaction {interaction.interaction_id} is already {current.state.status}",
                details={"interaction": current.public()},
            ) from err
        return updated

    def write_claim(
        self,
        interaction: Interaction,
        new_state: InteractionStatus,
        *,
        expected_holder: str | None,
        now: str,
        with_records: Sequence[Event] = (),
        audit_head: AuditHead | None = None,
    ) -> Interaction:
        """A claim change (`baton.services.claims`): one conditional put on the version read AND the holder
        then: `claimed_by = :holder`, or for a free one no live lease (`lease_expires_at <= :now`). With
        `with_records` (the change's event, a decision) the put, the event and the chain head's advance
        are one transaction (chained after `audit_head`; a lost head race reads the head and retries)."""
        if self._is_marked(interaction):
            raise ValueError("claims are for interrupts; a marked kind moves with its marker")
        expected = interaction.state.version
        updated = interaction.model_copy(update={"state": new_state.model_copy(update={"version": expected + 1})})
        names = {"#ver": "version", "#claimed": "claimed_by", "#st": "status"}
        values: dict[str, Any] = {":expected": expected, ":pending": "pending"}
        if expected_holder is None:
            holder = "(attribute_not_exists(#claimed) OR attribute_not_exists(#lease) OR #lease <= :now)"
            names["#lease"], values[":now"] = "lease_expires_at", now
        else:
            holder = "#claimed = :holder"
            values[":holder"] = expected_holder
        put = {
            "TableName": self._table,
            "Item": _to_item(self._interaction_values(updated)),
            "ConditionExpression": f"attribute_exists(PK) AND #ver = :expected AND #st = :pending AND {holder}",
            "ExpressionAttributeNames": names,
            "ExpressionAttributeValues": _to_item(values),
        }
        changed = ConflictError(
            f"interaction {interaction.interaction_id} changed while its claim was written",
            details={"interaction_id": interaction.interaction_id},
        )
        if with_records:
            self._claim_in_transaction(interaction.run_id, put, with_records, audit_head, changed)
            return updated
        try:
            self._db.put_item(**put)  # type: ignore[arg-type]
        except ClientError as err:
            if not _is_conditional_failure(err):
                raise
            raise changed from err
        return updated

    def _claim_in_transaction(
        self,
        run_id: str,
        put: dict[str, Any],
        records: Sequence[Event],
        audit_head: AuditHead | None,
        changed: ConflictError,
    ) -> None:
        head = audit_head
        for attempt in range(AUDIT_ATTEMPTS):
            head = self._head_for(run_id, records, head)
            chained = self._record_items(run_id, records, head)
            try:
                transact_write(self._db, [{"Put": put}, *chained])
            except ClientError as err:
                codes = cancellation_codes(err)
                if not codes:
                    raise
                if codes[0] == "ConditionalCheckFailed":
                    raise changed from err
                if len(chained) > len(records) and _lost_head_race(codes):
                    head = None  # another decision on this run went first: chain after it
                    _back_off(attempt)
                    continue
                raise
            return
        raise self._contention(run_id)

    @staticmethod
    def _open_condition(wait: ParkedWait, now: str) -> tuple[str, dict[str, str], dict[str, Any]]:
        """The condition that a wait is still parked with its token, before its deadline."""
        condition = "#st = :parked AND task_token = :token"
        values: dict[str, Any] = {":parked": "parked", ":token": wait.task_token}
        names = {"#st": "status"}
        if wait.deadline is not None:
            condition += " AND #dl > :now"  # ISO-8601 UTC strings of one format sort as times
            names["#dl"] = "deadline"
            values[":now"] = now
        return condition, names, values

    def _carry_item(self, guard: CarryAnswer) -> dict[str, Any]:
        """The Update of a wait that checks it is open and carries the answer (baton/services/gate_answers.py)."""
        wait = guard.wait
        if guard.now is not None:
            condition, names, values = self._open_condition(wait, guard.now)
        else:
            condition, names, values = "attribute_exists(PK)", {}, {}
        names["#cv"] = "carry_version"
        values[":one"] = 1
        if guard.seen_version is not None:  # the deciding answer: onto exactly the carried answers it read
            condition += " AND #cv = :seen"
            values[":seen"] = guard.seen_version
        if guard.entry is not None:
            names |= {"#ans": "answers", "#iid": guard.interaction_id, "#cb": "carried_bytes"}
            values |= {":entry": guard.entry, ":size": len(guard.entry.encode())}
            update = "SET #ans.#iid = :entry ADD #cv :one, #cb :size"
        else:  # too large to carry: this gate's release reads its scope
            names["#carry"] = "carry"
            values[":off"] = "off"
            update = "SET #carry = :off ADD #cv :one"
        key = {"PK": _run_pk(wait.run_id), "SK": f"WAIT#{wait.gate}"}
        return {
            "Update": {
                "TableName": self._table,
                "Key": _to_item(key),
                "UpdateExpression": update,
                "ConditionExpression": condition,
                "ExpressionAttributeNames": names,
                "ExpressionAttributeValues": _to_item(values),
            }
        }

    @staticmethod
    def _scope_condition(guard: ScopeUnchanged) -> tuple[str, dict[str, str], dict[str, Any]]:
        names = {"#sv": "scope_version"}
        values: dict[str, Any] = {":v": guard.version}
        condition = "(attribute_not_exists(#sv) OR #sv = :v)" if guard.version == 0 else "#sv = :v"
        if guard.asked is not None:  # and no question asked since the count was read
            names["#ak"] = "asked"
            if guard.asked == 0:
                condition += " AND attribute_not_exists(#ak)"
            else:
                condition += " AND #ak = :ak"
                values[":ak"] = guard.asked
        return condition, names, values

    def _guard_item(self, guard: Guard) -> dict[str, Any]:
        """The ConditionCheck of one guard (a carried answer's: the Update of its wait)."""
        if isinstance(guard, QuorumMet):
            return quorum_check(self._table, guard)
        if isinstance(guard, CarryAnswer):
            return self._carry_item(guard)
        if isinstance(guard, WaitStillOpen):
            condition, names, values = self._open_condition(guard.wait, guard.now)
            key = {"PK": _run_pk(guard.wait.run_id), "SK": f"WAIT#{guard.wait.gate}"}
        elif isinstance(guard, ScopeUnchanged):
            condition, names, values = self._scope_condition(guard)
            key = {"PK": _run_pk(guard.run_id), "SK": "RUN"}
        else:
            i = guard.interaction
            names, values = {"#pk": "PK"}, {}
            condition = "attribute_exists(#pk)"
            key = {"PK": _run_pk(i.run_id), "SK": _marker_sk(i.interaction_id)}
        check: dict[str, Any] = {
            "TableName": self._table,
            "Key": _to_item(key),
            "ConditionExpression": condition,
            "ExpressionAttributeNames": names,
        }
        if values:
            check["ExpressionAttributeValues"] = _to_item(values)
        return {"ConditionCheck": check}

    def _marker_item(self, interaction: Interaction, updated: Interaction, values: dict[str, Any]) -> list[Any]:
        if self._is_marked(updated):
            return [{"Put": {"TableName": self._table, "Item": _to_item(self._marker_values(values))}}]
        if self._is_marked(interaction):
            key = {"PK": _run_pk(interaction.run_id), "SK": _marker_sk(interaction.interaction_id)}
            return [{"Delete": {"TableName": self._table, "Key": _to_item(key)}}]
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
        expected = interaction.state.version
        items: list[dict[str, Any]] = [
            {
                "Put": {
                    "TableName": self._table,
                    "Item": _to_item(values),
                    "ConditionExpression": "attribute_exists(PK) AND #ver = :expected",
                    "ExpressionAttributeNames": {"#ver": "version"},
                    "ExpressionAttributeValues": _to_item({":expected": expected}),
                }
            },
            *[self._guard_item(g) for g in guards],
            *self._marker_item(interaction, updated, values),
        ]
        head = audit_head
        for attempt in range(AUDIT_ATTEMPTS):
            head = self._head_for(interaction.run_id, records, head)
            chained = self._record_items(interaction.run_id, records, head)
            try:
                transact_write(self._db, [*items, *chained])
            except ClientError as err:
                codes = cancellation_codes(err)
                if not codes:
                    raise
                if len(chained) > len(records) and _lost_head_race(codes):
                    head = None  # another decision on this run went first: read its head, chain after it
                    _back_off(attempt)
                    continue
                self._raise_transition_failure(interaction, guards, codes, err)
            return updated
        raise self._contention(interaction.run_id)

    def _raise_transition_failure(
        self, interaction: Interaction, guards: Sequence[Guard], codes: list[str], err: ClientError
    ) -> NoReturn:
        if codes[0] != "ConditionalCheckFailed":
            self._raise_guard(guards, codes, err)
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

    # ---- the decision log (baton/domain/audit.py) ----------------------------------------------
    @staticmethod
    def _contention(run_id: str) -> ConflictError:
        return ConflictError(
            f"run {run_id}'s decision log is changing too fast; send the request again",
            details={"run_id": run_id, "reason": "contention"},
        )

    def _head_for(self, run_id: str, records: Sequence[Message | Event], head: AuditHead | None) -> AuditHead:
        """The head to chain `records` after: the one given, else (when one is a decision) read now."""
        if head is not None:
            return head
        if any(isinstance(r, Event) and is_decision(r.type) for r in records):
            return self.get_audit_head(run_id)
        return EMPTY_HEAD

    def get_audit_head(self, run_id: str) -> AuditHead:
        values = self._get(_run_pk(run_id), _AUDIT_HEAD_SK)
        return AuditHead(seq=int(values["seq"]), hash=str(values["hash"])) if values else EMPTY_HEAD

    def _record_items(self, run_id: str, records: Sequence[Message | Event], head: AuditHead) -> list[dict[str, Any]]:
        """The Puts of `records` (decisions chained after `head`) and, when there is a decision, last,
        the head's conditional advance (seq = the one read)."""
        chained, new_head = chain((r for r in records if isinstance(r, Event)), head)
        by_id = {c.event_id: c for c in chained}
        items: list[dict[str, Any]] = []
        for record in records:
            if isinstance(record, Message):
                values = self._message_values(record)
            else:
                values = self._event_values(record, by_id.get(record.event_id))
            items.append(
                {
                    "Put": {
                        "TableName": self._table,
                        "Item": _to_item(values),
                        "ConditionExpression": "attribute_not_exists(PK)",
                    }
                }
            )
        if not chained:
            return items
        head_item = {"PK": _run_pk(run_id), "SK": _AUDIT_HEAD_SK, "record": "audit_head", **new_head.model_dump()}
        put: dict[str, Any] = {"TableName": self._table, "Item": _to_item(head_item)}
        if head.seq == 0:
            put["ConditionExpression"] = "attribute_not_exists(PK)"
        else:
            put["ConditionExpression"] = "#seq = :seq"
            put["ExpressionAttributeNames"] = {"#seq": "seq"}
            put["ExpressionAttributeValues"] = _to_item({":seq": head.seq})
        return [*items, {"Put": put}]

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
                ExpressionAttributeValues=_to_item({":pk": _run_pk(run_id), ":evt": "EVT#", **types}),
                ConsistentRead=True,
            )
            after = self.get_audit_head(run_id)
            if after == head:
                break
            head = after
        records = [
            AuditRecord(
                event_id=str(v.get("event_id")),
                run_id=str(v.get("run_id")),
                type=str(v.get("type")),
                at=str(v.get("at")),
                data=stored_data(v.get("data")),
                seq=int(v["seq"]) if isinstance(v.get("seq"), int) else -1,
                prev_hash=str(v.get("prev_hash")),
                hash=str(v.get("hash")),
            )
            for v in items
            if "seq" in v
        ]
        unchained = [
            UnchainedDecision(event_id=str(v.get("event_id")), type=str(v.get("type")), at=str(v.get("at")))
            for v in items
            if "seq" not in v
        ]
        return AuditTrail(records=records, head=head, unchained=unchained)

    @staticmethod
    def _raise_guard(guards: Sequence[Guard], codes: list[str], err: ClientError) -> None:
        """A failed guard, or a conflict with a concurrent transaction (the caller re-reads and retries)."""
        for n, guard in enumerate(guards, start=1):
            if n < len(codes) and codes[n] == "ConditionalCheckFailed":
                raise GuardFailedError(guard) from err
        if "TransactionConflict" in codes and guards:
            raise GuardFailedError(None) from err
        raise err

    def snapshot_run(self, run_id: str) -> RunSnapshot:
        """One consistent Query from PEND# on: the open questions, tool awaits and pauses (their markers), the run,
        its decision-log head and its waits. Never reads the run's events, answered history or review
        dialogues (`DLG#`, before PEND#); turns stored under the old `TURN#` are filtered out."""
        items = self._query_all(
            KeyConditionExpression="PK = :pk AND SK >= :from",
            FilterExpression="#rec <> :turn",
            ExpressionAttributeNames={"#rec": "record"},
            ExpressionAttributeValues=_to_item({":pk": _run_pk(run_id), ":from": "PEND#", ":turn": "turn"}),
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
                pending.append(self._interaction_from(values))
            elif record == "wait":
                waits.append(self._wait_from(values))
            elif record == "run":
                version = int(values.get("scope_version") or 0)
                asked = int(values.get("asked") or 0)
                run = self._run_from(values)
            elif record == "audit_head":
                head = AuditHead(seq=int(values["seq"]), hash=str(values["hash"]))
        pending.sort(key=lambda i: (i.created_at, i.interaction_id))
        return RunSnapshot(run=run, pending=pending, waits=waits, scope_version=version, audit_head=head, asked=asked)

    def bump_scope(self, run_id: str) -> None:
        self._db.update_item(
            TableName=self._table,
            Key=_to_item({"PK": _run_pk(run_id), "SK": "RUN"}),
            UpdateExpression="ADD scope_version :one",
            ConditionExpression="attribute_exists(PK)",
            ExpressionAttributeValues=_to_item({":one": 1}),
        )

    def list_run_interactions(
        self, run_id: str, *, kind: str | None = None, status: str | None = None
    ) -> list[Interaction]:
        """One run's interactions, oldest first. The pending questions and tool awaits come from their
        markers (O(pending), consistent); anything else from the run's interactions."""
        marked = status == "pending" and kind in PENDING_MARKED_KINDS
        items = self._query_all(
            KeyConditionExpression="PK = :pk AND begins_with(SK, :prefix)",
            ExpressionAttributeValues=_to_item({":pk": _run_pk(run_id), ":prefix": "PEND#" if marked else "INT#"}),
            ConsistentRead=True,
        )
        found = [self._interaction_from(v) for v in items]
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
            "ExpressionAttributeValues": _to_item(values),
        }

    def list_by_status(self, kind: str, status: str, *, run_id: str | None = None) -> list[Interaction]:
        items = self._query_all(**self._by_status_query(kind, status, run_id))
        return [self._interaction_from(v) for v in items]

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
                "ExpressionAttributeValues": _to_item({":pk": _run_pk(run_id or ""), ":prefix": "INT#", ":kind": kind}),
                "ConsistentRead": True,
            }
        if start is not None and not _is_start_key(start, with_index=status is not None):
            raise BadRequestError("next is not a valid page token", details={"field": "next"})
        found: list[Interaction] = []
        last = start
        while True:  # a filtered Query may return fewer than it read: continue until the page is full
            if last:
                kwargs["ExclusiveStartKey"] = last
            resp = self._db.query(TableName=self._table, Limit=limit - len(found), **kwargs)
            found.extend(self._interaction_from(_from_item(i)) for i in resp.get("Items", []))
            last = resp.get("LastEvaluatedKey")
            if not last or len(found) >= limit:
                return found, last

    def list_pending(self, kind: str) -> list[Interaction]:
        items = self._query_all(
            IndexName=GSI_PENDING,
            KeyConditionExpression="GSI1PK = :pk",
            ExpressionAttributeValues=_to_item({":pk": f"PENDING#{kind}"}),
        )
        return [self._interaction_from(v) for v in items]

    def list_due(self, kind: str, now: str) -> list[Interaction]:
        """`kind`'s pending interactions whose deadline Baton acts on, past by `now`: a Query on the sparse
        due index (`baton/workflows/table.py`, GSI4) that reads only those, never the rest pending."""
        items = self._query_all(
            IndexName=GSI_DUE,
            KeyConditionExpression="#pk = :pk AND #sk < :before",
            ExpressionAttributeNames={"#pk": DUE_PK_ATTRIBUTE, "#sk": DUE_SK_ATTRIBUTE},
            ExpressionAttributeValues=_to_item({":pk": f"DUE#{kind}", ":before": due_before(now)}),
        )
        return [self._interaction_from(v) for v in items]

    def oldest_pending(self, kind: str) -> Interaction | None:
        """The first of `kind`'s pending interactions in created order: one item of the pending index."""
        resp = self._db.query(
            TableName=self._table,
            IndexName=GSI_PENDING,
            KeyConditionExpression="GSI1PK = :pk",
            ExpressionAttributeValues=_to_item({":pk": f"PENDING#{kind}"}),
            Limit=1,
        )
        items = resp.get("Items", [])
        return self._interaction_from(_from_item(items[0])) if items else None

    def count_pending(self, kind: str) -> int:
        """How many of `kind` are pending: `Select=COUNT` on the pending index (no item is returned or
        decoded; DynamoDB still counts the index entries, 1 MB of them a page)."""
        kwargs: dict[str, Any] = {
            "IndexName": GSI_PENDING,
            "KeyConditionExpression": "GSI1PK = :pk",
            "ExpressionAttributeValues": _to_item({":pk": f"PENDING#{kind}"}),
            "Select": "COUNT",
        }
        count = 0
        while True:
            resp = self._db.query(TableName=self._table, **kwargs)
            count += int(resp.get("Count", 0))
            if not resp.get("LastEvaluatedKey"):
                return count
            kwargs["ExclusiveStartKey"] = resp["LastEvaluatedKey"]

    def backfill_due(self) -> int:
        """Give every pending item written before the due index (GSI4) the keys it should carry (one
        conditional UpdateItem each, only while it is still pending). Returns how many."""
        added = 0
        for kind in DUE_KINDS:
            for i in self.list_pending(kind):
                keys = _due_keys_of(i)
                if not keys:
                    continue
                try:
                    self._db.update_item(
                        TableName=self._table,
                        Key=_to_item({"PK": _run_pk(i.run_id), "SK": f"INT#{i.interaction_id}"}),
                        UpdateExpression="SET #dpk = :dpk, #dsk = :dsk",
                        ConditionExpression="#st = :pending AND attribute_not_exists(#dpk)",
                        ExpressionAttributeNames={"#dpk": DUE_PK_ATTRIBUTE, "#dsk": DUE_SK_ATTRIBUTE, "#st": "status"},
                        ExpressionAttributeValues=_to_item(
                            {":dpk": keys[DUE_PK_ATTRIBUTE], ":dsk": keys[DUE_SK_ATTRIBUTE], ":pending": "pending"}
                        ),
                    )
                except ClientError as err:  # it stopped waiting meanwhile (or has them): nothing to add
                    if not _is_conditional_failure(err):
                        raise
                    continue
                added += 1
        return added

    def backfill_all_pending(self, kinds: Sequence[str]) -> int:
        """Give every pending item of `kinds` written before the all-pending index its keys (Queries on
        the per-kind pending index, one conditional UpdateItem per item lacking them). Returns how many."""
        added = 0
        for kind in kinds:
            items = self._query_all(
                IndexName=GSI_PENDING,
                KeyConditionExpression="GSI1PK = :pk",
                FilterExpression="attribute_not_exists(#all)",
                ExpressionAttributeNames={"#all": ALL_PENDING_PK_ATTRIBUTE},
                ExpressionAttributeValues=_to_item({":pk": f"PENDING#{kind}"}),
            )
            for values in items:
                try:
                    self._db.update_item(
                        TableName=self._table,
                        Key=_to_item({"PK": values["PK"], "SK": values["SK"]}),
                        UpdateExpression="SET #all = :all, #allsk = #sk",
                        ConditionExpression="#pk1 = :pk AND attribute_not_exists(#all)",
                        ExpressionAttributeNames={
                            "#all": ALL_PENDING_PK_ATTRIBUTE,
                            "#allsk": ALL_PENDING_SK_ATTRIBUTE,
                            "#sk": "GSI1SK",
                            "#pk1": "GSI1PK",
                        },
                        ExpressionAttributeValues=_to_item({":all": ALL_PENDING_PK, ":pk": f"PENDING#{kind}"}),
                    )
                except ClientError as err:  # it stopped waiting meanwhile (or was backfilled): nothing to add
                    if not _is_conditional_failure(err):
                        raise
                    continue
                added += 1
        return added

    def page_pending(self, kind: str, query: PendingQuery) -> tuple[list[Interaction], bool]:
        """One page of `kind`'s pending interactions in created order (the inbox): a Query on the sparse
        pending index (by_status for one run's), bounded by the cursor and the age filter in the key
        condition. Unfiltered, one Query reads exactly the page and one more item (is there more?)."""
        if query.run_id is not None:
            return self._page_index(GSI_BY_STATUS, ("GSI2PK", "GSI2SK"), f"{kind}#pending", f"{query.run_id}#", query)
        return self._page_index(GSI_PENDING, ("GSI1PK", "GSI1SK"), f"PENDING#{kind}", "", query)

    def page_all_pending(self, query: PendingQuery) -> tuple[list[Interaction], bool]:
        """One page of every kind's pending interactions (or `query.kinds`') in created order: one Query
        on the all-pending index (`baton/workflows/table.py`), whatever the number of kinds."""
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
    ) -> tuple[list[Interaction], bool]:
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
            "ExpressionAttributeValues": _to_item(values),
            "ScanIndexForward": not query.newest_first,
            # the page, one more (is there more?) and the cursor's own item, which BETWEEN includes;
            # a filtered read takes a larger bite, since DynamoDB limits what it reads, not what matches
            "Limit": query.limit + 2 if not filters else max(query.limit + 2, 200),
        }
        if filters:
            kwargs["FilterExpression"] = " AND ".join(filters)
        found: list[Interaction] = []
        while True:
            resp = self._db.query(TableName=self._table, **kwargs)
            for raw in resp.get("Items", []):
                interaction = self._interaction_from(_from_item(raw))
                if query.position(interaction) != query.after:
                    found.append(interaction)
            last = resp.get("LastEvaluatedKey")
            if not last or len(found) > query.limit:
                return found[: query.limit], len(found) > query.limit
            kwargs["ExclusiveStartKey"] = last

    # ---- events and messages -------------------------------------------------------------------
    def _expiry(self, at_epoch: int) -> int:
        return at_epoch + self._ttl_seconds

    def _event_values(self, event: Event, chained: AuditRecord | None = None) -> dict[str, Any]:
        """An event's item; a decision's carries its place in the run's chain and never expires (an
        expired record would be a gap in the chain)."""
        from baton.ids import parse_iso

        if chained is not None:
            return {
                "PK": _run_pk(event.run_id),
                "SK": f"EVT#{event.event_id}",
                "record": "event",
                **chained.model_dump(exclude={"data"}),
                "data": json.dumps(event.data),
            }
        return {
            "PK": _run_pk(event.run_id),
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
            "PK": _run_pk(message.run_id),
            "SK": f"MSG#{message.node}#{message.message_id}",
            "record": "message",
            **message.model_dump(),
        }

    def append_event(self, event: Event) -> None:
        if is_decision(event.type):
            self._append_decision(event)
            return
        try:
            self._db.put_item(
                TableName=self._table,
                Item=_to_item(self._event_values(event)),
                ConditionExpression="attribute_not_exists(PK)",
            )
        except ClientError as err:  # an event id written before (a run's end is recorded once)
            if _is_conditional_failure(err):
                raise ConflictError(
                    f"event {event.event_id} already recorded", details={"run_id": event.run_id}
                ) from err
            raise

    def _append_decision(self, event: Event) -> None:
        """A decision event and its run's chain head advanced: one transaction, retried on a lost race."""
        head: AuditHead | None = None
        for attempt in range(AUDIT_ATTEMPTS):
            head = self._head_for(event.run_id, [event], head)
            try:
                transact_write(self._db, self._record_items(event.run_id, [event], head))
            except ClientError as err:
                codes = cancellation_codes(err)
                if codes and codes[0] == "ConditionalCheckFailed":
                    raise ConflictError(
                        f"event {event.event_id} already recorded", details={"run_id": event.run_id}
                    ) from err
                if not codes or not _lost_head_race(codes):
                    raise
                head = None
                _back_off(attempt)
                continue
            return
        raise self._contention(event.run_id)

    def list_events(self, run_id: str, *, after: str | None = None, limit: int = 100) -> list[Event]:
        lower = f"EVT#{after}" if after else "EVT#"
        resp = self._db.query(
            TableName=self._table,
            KeyConditionExpression="PK = :pk AND SK BETWEEN :lo AND :hi",
            ExpressionAttributeValues=_to_item({":pk": _run_pk(run_id), ":lo": lower, ":hi": "EVT#~"}),
            ConsistentRead=True,
            Limit=limit + 1,
        )
        events = []
        for raw in resp.get("Items", []):
            v = _from_item(raw)
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

    def put_message(self, message: Message) -> None:
        self._db.put_item(
            TableName=self._table,
            Item=_to_item(self._message_values(message)),
            ConditionExpression="attribute_not_exists(PK)",
        )

    def drain_messages(self, run_id: str, node: str, *, drained_at: str) -> list[Message]:
        """Each message is claimed by one conditional write, so concurrent drains never share one."""
        items = self._query_all(
            KeyConditionExpression="PK = :pk AND begins_with(SK, :prefix)",
            FilterExpression="attribute_not_exists(drained_at)",
            ExpressionAttributeValues=_to_item({":pk": _run_pk(run_id), ":prefix": f"MSG#{node}#"}),
            ConsistentRead=True,
        )
        drained: list[Message] = []
        for values in items:
            try:
                self._db.update_item(
                    TableName=self._table,
                    Key=_to_item({"PK": values["PK"], "SK": values["SK"]}),
                    UpdateExpression="SET drained_at = :at",
                    ConditionExpression="attribute_not_exists(drained_at)",
                    ExpressionAttributeValues=_to_item({":at": drained_at}),
                )
            except ClientError as err:
                if _is_conditional_failure(err):
                    continue  # another drainer delivered it
                raise
            drained.append(Message.model_validate(values))
        return drained

    # ---- review turns --------------------------------------------------------------------------
    def put_turn(self, turn: ReviewTurn) -> None:
        """One item per turn (a long dialogue never nears the item size limit); a taken `n` is a 409."""
        try:
            self._db.put_item(
                TableName=self._table,
                Item=_to_item(
                    {
                        "PK": _run_pk(turn.run_id),
                        "SK": _turn_sk(turn.interaction_id, turn.n),
                        "record": "turn",
                        "turn": turn.model_dump_json(),
                    }
                ),
                ConditionExpression="attribute_not_exists(PK)",
            )
        except ClientError as err:
            if _is_conditional_failure(err):
                raise ConflictError(
                    f"turn {turn.n} of interaction {turn.interaction_id} already exists",
                    details={"interaction_id": turn.interaction_id, "n": turn.n},
                ) from err
            raise

    def _turns_at(self, run_id: str, prefix: str) -> list[ReviewTurn]:
        items = self._query_all(
            KeyConditionExpression="PK = :pk AND begins_with(SK, :prefix)",
            ExpressionAttributeValues=_to_item({":pk": _run_pk(run_id), ":prefix": prefix}),
            ConsistentRead=True,
        )
        return [ReviewTurn.model_validate_json(v["turn"]) for v in items]

    def list_turns(self, run_id: str, interaction_id: str) -> list[ReviewTurn]:
        """One Query of the dialogue's `DLG#` items. A dialogue begun before turns moved there (its first
        turns under `TURN#`, which sorts among the run's open items): no turn 0 among them, so the old
        ones are read too (a second Query, for such dialogues only)."""
        turns = self._turns_at(run_id, f"{_TURN_PREFIX}{interaction_id}#")
        if not turns or min(t.n for t in turns) > 0:
            moved = {t.n for t in turns}
            turns += [t for t in self._turns_at(run_id, f"TURN#{interaction_id}#") if t.n not in moved]
        return sorted(turns, key=lambda t: t.n)

    # ---- parked task tokens --------------------------------------------------------------------
    def put_wait(self, wait: ParkedWait) -> None:
        """Store a wait. A parked one writes its gate on the interactions it names (what each holds up,
        which the inbox's page reads with the item) in the same transaction: a park is never half written.
        A transaction holds 100 items; names past that are marked right after it (`mark_blocked`)."""
        values = {
            "PK": _run_pk(wait.run_id),
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
            "Item": _to_item(values),
            # Never overwrite another parked token: that gate would hang until its timeout.
            "ConditionExpression": (
                "attribute_not_exists(PK) OR NOT (#st IN (:parked, :expiring)) OR task_token = :token"
            ),
            "ExpressionAttributeNames": {"#st": "status"},
            "ExpressionAttributeValues": _to_item(
                {":parked": "parked", ":expiring": "expiring", ":token": wait.task_token}
            ),
        }
        named = list(dict.fromkeys(wait.interaction_ids)) if wait.status == "parked" else []
        if named:
            self._park_marking(put, wait, named[:_MARKS_PER_PARK])
            self.mark_blocked(wait.run_id, wait.gate, named[_MARKS_PER_PARK:])
            return
        try:
            self._db.put_item(**put)
        except ClientError as err:
            if _is_conditional_failure(err):
                raise already_parked(wait.run_id, wait.gate) from err
            raise

    def _blocks_update(self, run_id: str, gate: str, interaction_id: str, condition: str) -> dict[str, Any]:
        return {
            "TableName": self._table,
            "Key": _to_item({"PK": _run_pk(run_id), "SK": f"INT#{interaction_id}"}),
            "UpdateExpression": "SET #blocks = :gate",
            "ConditionExpression": condition,
            "ExpressionAttributeNames": {"#blocks": "blocks", **({"#st": "status"} if "#st" in condition else {})},
            "ExpressionAttributeValues": _to_item(
                {":gate": gate, **({":pending": "pending"} if ":pending" in condition else {})}
            ),
        }

    def _park_marking(self, put: dict[str, Any], wait: ParkedWait, named: list[str]) -> None:
        """The wait and its gate on each named interaction, one transaction. An interaction answered
        meanwhile is marked all the same (harmless: it is off the pending indexes); a name with no item
        is left out and the transaction runs again."""
        for attempt in range(AUDIT_ATTEMPTS):
            marks: list[Any] = [
                {"Update": self._blocks_update(wait.run_id, wait.gate, iid, "attribute_exists(PK)")} for iid in named
            ]
            try:
                transact_write(self._db, [{"Put": put}, *marks])
            except ClientError as err:
                codes = cancellation_codes(err)
                if not codes:
                    raise
                if codes[0] == "ConditionalCheckFailed":
                    raise already_parked(wait.run_id, wait.gate) from err
                named = [iid for iid, code in zip(named, codes[1:], strict=False) if code != "ConditionalCheckFailed"]
                _back_off(attempt)  # a concurrent write on one of them (an answer): again
                continue
            return
        raise self._contention(wait.run_id)

    def mark_blocked(self, run_id: str, gate: str, interaction_ids: Sequence[str]) -> int:
        """`gate` on each still pending interaction of `interaction_ids` (one conditional UpdateItem each)."""
        marked = 0
        for iid in dict.fromkeys(interaction_ids):
            try:
                self._db.update_item(**self._blocks_update(run_id, gate, iid, "#st = :pending"))
            except ClientError as err:
                if not _is_conditional_failure(err):
                    raise
                continue  # answered (or gone) meanwhile: nothing it holds up
            marked += 1
        return marked

    @staticmethod
    def _wait_from(values: dict[str, Any]) -> ParkedWait:
        values["scope"] = json.loads(values.get("scope") or "{}")
        return ParkedWait.model_validate(values)

    def get_wait(self, run_id: str, gate: str) -> ParkedWait | None:
        values = self._get(_run_pk(run_id), f"WAIT#{gate}")
        return self._wait_from(values) if values else None

    def _release_update(self, wait: ParkedWait, status: str) -> dict[str, Any]:
        """The conditional update that moves a parked (or expiring) wait holding this token to `status`.
        "expiring" keeps it on the pending index, so the reconciler finishes a deadline that died midway."""
        keep_indexed = status == "expiring"
        clear = not keep_indexed and wait.carry is not None  # the output is sent: nothing reads them again
        return {
            "TableName": self._table,
            "Key": _to_item({"PK": _run_pk(wait.run_id), "SK": f"WAIT#{wait.gate}"}),
            "UpdateExpression": "SET #st = :new"
            + (", #ans = :none" if clear else "")
            + ("" if keep_indexed else " REMOVE GSI1PK, GSI1SK"),
            "ConditionExpression": "#st IN (:parked, :expiring) AND task_token = :token"
            if not keep_indexed
            else "#st = :parked AND task_token = :token",
            "ExpressionAttributeNames": {"#st": "status"} | ({"#ans": "answers"} if clear else {}),
            "ExpressionAttributeValues": _to_item(
                {":new": status, ":parked": "parked", ":token": wait.task_token}
                | ({} if keep_indexed else {":expiring": "expiring"})
                | ({":none": {}} if clear else {})
            ),
        }

    def release_wait(self, wait: ParkedWait, status: str) -> bool:
        """Mark the wait released/timed out (or expiring) if it still holds this token. False if someone
        else did."""
        try:
            self._db.update_item(**self._release_update(wait, status))
        except ClientError as err:
            if _is_conditional_failure(err):
                return False
            raise
        return True

    def record_release(self, wait: ParkedWait, *, run_status: str, run_from: set[str], events: Sequence[Event]) -> bool:
        """The wait released, the run moved (only if it is in `run_from`) and `events` recorded: one
        transaction. A run already elsewhere is left alone (the transaction runs again without it)."""
        names = {"#st": "status", "#up": "updated_at", "#ver": "version"}
        values: dict[str, Any] = {":new": run_status, ":now": events[0].at if events else "", ":one": 1}
        keys = []
        for n, status in enumerate(sorted(run_from)):
            values[f":a{n}"] = status
            keys.append(f":a{n}")
        run_update = {
            "Update": {
                "TableName": self._table,
                "Key": _to_item({"PK": _run_pk(wait.run_id), "SK": "RUN"}),
                "UpdateExpression": "SET #st = :new, #up = :now, #ver = #ver + :one",
                "ConditionExpression": f"#st IN ({', '.join(keys)})",
                "ExpressionAttributeNames": names,
                "ExpressionAttributeValues": _to_item(values),
            }
        }
        release = {"Update": self._release_update(wait, "released")}
        move_run, head = True, None
        for attempt in range(AUDIT_ATTEMPTS):
            head = self._head_for(wait.run_id, events, head)
            chained = self._record_items(wait.run_id, events, head)
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
                elif len(chained) > len(events) and _lost_head_race(codes):
                    head = None  # another decision on this run went first
                    _back_off(attempt)
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
                Key=_to_item({"PK": _run_pk(wait.run_id), "SK": f"WAIT#{wait.gate}"}),
                UpdateExpression=f"SET {', '.join(sets)} ADD #cv :one, #cb :size",
                ConditionExpression="#st = :parked AND task_token = :token AND #carry = :filling",
                ExpressionAttributeNames=names,
                ExpressionAttributeValues=_to_item(values),
            )
        except ClientError as err:
            if _is_conditional_failure(err):
                return False
            raise
        return True

    def list_parked(self) -> list[ParkedWait]:
        items = self._query_all(
            IndexName=GSI_PENDING,
            KeyConditionExpression="GSI1PK = :pk",
            ExpressionAttributeValues=_to_item({":pk": "PARKED"}),
        )
        return [self._wait_from(v) for v in items]

    def list_run_waits(self, run_id: str) -> list[ParkedWait]:
        """Every WAIT# item of one run (parked, released or timed out): one Query on the run's partition."""
        items = self._query_all(
            KeyConditionExpression="PK = :pk AND begins_with(SK, :prefix)",
            ExpressionAttributeValues=_to_item({":pk": _run_pk(run_id), ":prefix": "WAIT#"}),
            ConsistentRead=True,
        )
        return [self._wait_from(v) for v in items]
