"""The guards of an interaction's transition (`baton/ports.py`: `WaitStillOpen`, `ScopeUnchanged`,
`CarryAnswer`, `StillPending`, `QuorumMet`) as items of its transaction, and what a failed one raises.
Each guard is a ConditionCheck on the item it is about (the wait, the run, the pending marker, the
quorum's tally), except a carried answer's: the Update that carries it onto its wait, checked open."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from baton.adapters.dynamo_approvals import quorum_check
from baton.adapters.dynamo_items import marker_sk, run_pk, to_item
from baton.ports import CarryAnswer, GuardFailedError, QuorumMet, ScopeUnchanged, WaitStillOpen

if TYPE_CHECKING:
    from collections.abc import Sequence

    from botocore.exceptions import ClientError

    from baton.models import ParkedWait
    from baton.ports import Guard


def open_condition(wait: ParkedWait, now: str) -> tuple[str, dict[str, str], dict[str, Any]]:
    """The condition that a wait is still parked with its token, before its deadline."""
    condition = "#st = :parked AND task_token = :token"
    values: dict[str, Any] = {":parked": "parked", ":token": wait.task_token}
    names = {"#st": "status"}
    if wait.deadline is not None:
        condition += " AND #dl > :now"  # ISO-8601 UTC strings of one format sort as times
        names["#dl"] = "deadline"
        values[":now"] = now
    return condition, names, values


def carry_item(table: str, guard: CarryAnswer) -> dict[str, Any]:
    """The Update of a wait that checks it is open and carries the answer (baton/domain/gate_answers.py)."""
    wait = guard.wait
    if guard.now is not None:
        condition, names, values = open_condition(wait, guard.now)
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
    key = {"PK": run_pk(wait.run_id), "SK": f"WAIT#{wait.gate}"}
    return {
        "Update": {
            "TableName": table,
            "Key": to_item(key),
            "UpdateExpression": update,
            "ConditionExpression": condition,
            "ExpressionAttributeNames": names,
            "ExpressionAttributeValues": to_item(values),
        }
    }


def scope_condition(guard: ScopeUnchanged) -> tuple[str, dict[str, str], dict[str, Any]]:
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


def guard_item(table: str, guard: Guard) -> dict[str, Any]:
    """The ConditionCheck of one guard (a carried answer's: the Update of its wait)."""
    if isinstance(guard, QuorumMet):
        return quorum_check(table, guard)
    if isinstance(guard, CarryAnswer):
        return carry_item(table, guard)
    if isinstance(guard, WaitStillOpen):
        condition, names, values = open_condition(guard.wait, guard.now)
        key = {"PK": run_pk(guard.wait.run_id), "SK": f"WAIT#{guard.wait.gate}"}
    elif isinstance(guard, ScopeUnchanged):
        condition, names, values = scope_condition(guard)
        key = {"PK": run_pk(guard.run_id), "SK": "RUN"}
    else:
        i = guard.interaction
        names, values = {"#pk": "PK"}, {}
        condition = "attribute_exists(#pk)"
        key = {"PK": run_pk(i.run_id), "SK": marker_sk(i.interaction_id)}
    check: dict[str, Any] = {
        "TableName": table,
        "Key": to_item(key),
        "ConditionExpression": condition,
        "ExpressionAttributeNames": names,
    }
    if values:
        check["ExpressionAttributeValues"] = to_item(values)
    return {"ConditionCheck": check}


def raise_guard(guards: Sequence[Guard], codes: list[str], err: ClientError) -> None:
    """A failed guard, or a conflict with a concurrent transaction (the caller re-reads and retries)."""
    for n, guard in enumerate(guards, start=1):
        if n < len(codes) and codes[n] == "ConditionalCheckFailed":
            raise GuardFailedError(guard) from err
    if "TransactionConflict" in codes and guards:
        raise GuardFailedError(None) from err
    raise err
