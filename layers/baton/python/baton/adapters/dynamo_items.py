"""What every DynamoDB adapter of Baton's one table shares: the attribute codecs, the run partition's
keys, the item codecs of the records several parts read (a run, an interaction and its pending marker,
a wait), and the retry rules of a chained write. Pure functions: no client, no table."""

from __future__ import annotations

import json
import random
import time
from decimal import Decimal
from typing import TYPE_CHECKING, Any, Final, cast

from boto3.dynamodb.types import TypeDeserializer, TypeSerializer

from baton.adapters.dynamo_transactions import CONTENTION_REASONS
from baton.errors import ConflictError
from baton.models import (
    Interaction,
    InteractionStatus,
    ParkedWait,
    RunSummary,
    dump_request,
    parse_request,
)
from baton.ports import PENDING_MARKED_KINDS
from baton.workflows.table import (
    ALL_PENDING_PK,
    ALL_PENDING_PK_ATTRIBUTE,
    ALL_PENDING_SK_ATTRIBUTE,
    due_keys,
    pending_node_keys,
)

if TYPE_CHECKING:
    from botocore.exceptions import ClientError

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

TRANSACTION_ITEMS: Final = 100  # TransactWriteItems' limit
# Attempts at a chained write that lost the race for its run's head (each attempt, one racer wins).
AUDIT_ATTEMPTS: Final = 30
# The run's decision-log head (baton/domain/audit.py): at or after PEND#, so snapshot_run's one Query
# reads it with the run (the answer path gets it at no extra call).
AUDIT_HEAD_SK: Final = "RUN#AUDIT"
# A chained decision record's copy under its place in the chain, put in the record's own transaction:
# AUD# sorts before PEND#, so no snapshot reads it, and a page of the decision log is one consistent
# Query of a range of them in the run's partition (`DynamoRuns.read_audit_page`), with no index (a new
# index would be the release's second: CloudFormation creates one GSI per stack update).
AUDIT_RECORD_PREFIX: Final = "AUD#"


# ---- attribute values ----------------------------------------------------------------------------
def plain(value: Any) -> Any:
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value


# A DynamoDB number holds 38 digits: an int inside this bound is written as its digits, as boto3's
# TypeSerializer writes it; one outside it (and every other type) goes through the TypeSerializer.
_N_BOUND = 10**38


def to_value(value: Any) -> dict[str, Any]:
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
        return {"M": {k: to_value(v) for k, v in value.items()}}
    if kind is list:
        return {"L": [to_value(v) for v in value]}
    serialized: Any = _ser.serialize(value)
    return cast("dict[str, Any]", serialized)


def from_value(value: dict[str, Any]) -> Any:
    """One attribute value, as `plain(TypeDeserializer.deserialize(...))` reads it: strings, booleans,
    maps and lists directly, the rest (numbers, sets, binary, null) through the deserializer."""
    tag = next(iter(value), None)
    if tag in {"S", "BOOL"}:
        return value[tag]
    if tag == "M":
        return {k: from_value(v) for k, v in value["M"].items()}
    if tag == "L":
        return [from_value(v) for v in value["L"]]
    return plain(_de.deserialize(cast("Any", value)))


def to_item(values: dict[str, Any]) -> dict[str, Any]:
    return {k: to_value(v) for k, v in values.items() if v is not None}


def from_item(item: dict[str, Any]) -> dict[str, Any]:
    return {k: from_value(v) for k, v in item.items()}


def is_start_key(start: Any, *, with_index: bool) -> bool:
    """A LastEvaluatedKey as the listing's own query returns it: the table's keys (and the by_status
    index's), each a short string attribute. A forged one is refused before it reaches DynamoDB."""
    names = {"PK", "SK", "GSI2PK", "GSI2SK"} if with_index else {"PK", "SK"}
    if not isinstance(start, dict) or set(start) != names:
        return False
    return all(
        isinstance(v, dict) and list(v) == ["S"] and isinstance(v["S"], str) and 0 < len(v["S"]) <= 1024
        for v in start.values()
    )


# ---- keys ----------------------------------------------------------------------------------------
def run_pk(run_id: str) -> str:
    return f"RUN#{run_id}"


def audit_record_sk(seq: int) -> str:
    """The sort key of the copy of a run's chained record `seq`: fixed width, so text order is seq order."""
    return f"{AUDIT_RECORD_PREFIX}{seq:012d}"


def marker_sk(interaction_id: str) -> str:
    # PEND# sorts after DLG#, EVT#, INT# and MSG# and before RUN and WAIT#: one Query from PEND# reads
    # the open questions, the run and its waits, never the run's history or its review dialogues.
    return f"PEND#{interaction_id}"


# ---- errors and retries --------------------------------------------------------------------------
def is_conditional_failure(err: ClientError) -> bool:
    return err.response.get("Error", {}).get("Code") == "ConditionalCheckFailedException"


def lost_head_race(codes: list[str]) -> bool:
    """A cancelled transaction whose last item (the head) alone failed: another decision advanced the
    run's chain first (read the head again and retry)."""
    return codes[-1] in ("ConditionalCheckFailed", "TransactionConflict") and all(c == "None" for c in codes[:-1])


def lost_any_race(codes: list[str]) -> bool:
    """A cancelled transaction that racers alone stopped: the head failed its condition or met a concurrent
    transaction, or another item met one (past `transact_write`'s own retries), and no other item failed its
    condition. For a write with a hot item of its own besides the head (a quorum's tally, which every vote
    on the pause updates): read the head again and retry."""
    head, others = codes[-1], codes[:-1]
    if head not in ("None", "ConditionalCheckFailed", *CONTENTION_REASONS):
        return False
    return all(c == "None" or c in CONTENTION_REASONS for c in others) and any(c != "None" for c in codes)


def back_off(attempt: int) -> None:
    if attempt:  # a short random pause, so racers on one run's head do not retry in step
        time.sleep(random.uniform(0, min(0.05, 0.005 * attempt)))


def contention(run_id: str) -> ConflictError:
    return ConflictError(
        f"run {run_id}'s decision log is changing too fast; send the request again",
        details={"run_id": run_id, "reason": "contention"},
    )


# ---- records several parts read ------------------------------------------------------------------
def run_summary_from(values: dict[str, Any]) -> RunSummary:
    if isinstance(values.get("output"), str):
        values["output"] = json.loads(values["output"])
    return RunSummary.model_validate(values)


def wait_from(values: dict[str, Any]) -> ParkedWait:
    values["scope"] = json.loads(values.get("scope") or "{}")
    return ParkedWait.model_validate(values)


def due_keys_of(i: Interaction) -> dict[str, str]:
    """The due index's keys of a pending interaction (`baton/workflows/table.py`, GSI4)."""
    ladder = i.request.ladder
    has_default = ladder is not None and ladder.default is not None
    return due_keys(i.request.kind, i.interaction_id, i.expires_at, has_default=has_default)


def interaction_values(i: Interaction) -> dict[str, Any]:
    st = i.state
    values: dict[str, Any] = {
        "PK": run_pk(i.run_id),
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
        values.update(pending_node_keys(i.request.node, i.created_at, i.interaction_id))
        values.update(due_keys_of(i))
    return values


def interaction_from(values: dict[str, Any]) -> Interaction:
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


def is_marked(i: Interaction) -> bool:
    return i.request.kind in PENDING_MARKED_KINDS and i.state.status == "pending"


def marker_values(values: dict[str, Any]) -> dict[str, Any]:
    """The pending marker of a question, tool await or pause: a copy of the item in the run's partition,
    present exactly while it is pending (written and deleted with it, in one transaction)."""
    marker = {k: v for k, v in values.items() if not k.startswith("GSI")}
    return {**marker, "SK": marker_sk(values["interaction_id"]), "record": "pending"}
