"""The tamper-evident decision log: which events are decisions, their canonical form, the per-run chain.

Every decision event (`DECISION_TYPES`) is stored with three more fields: `seq` (1, 2, ... per run, no
gaps), `prev_hash` (the `hash` of the run's record before it; `GENESIS_HASH` for the first) and `hash`
= SHA-256 (lowercase hex) of `canonical_json` of the record *with* `prev_hash` and *without* `hash`:

    {"at": ..., "data": {...}, "event_id": ..., "prev_hash": ..., "run_id": ..., "seq": N, "type": ...}

The canonical form follows RFC 8785 (JSON Canonicalization Scheme): object keys sorted by their UTF-16
code units, no whitespace, UTF-8, strings escaped as ECMAScript's JSON.stringify does (only `"`, `\\`
and the control characters; `\\b \\f \\n \\r \\t` short, others `\\u00xx`; a lone surrogate `\\udxxx`),
floats in ECMAScript's shortest round-trip form (`1.0` -> `1`, `1e21` -> `1e+21`, `1e-7` -> `1e-7`).
One deliberate difference: integers are written exactly however large (RFC 8785 would first round
them to an IEEE double), so an answer holding a large integer is hashed as it was given. NaN and
Infinity are refused (they are not JSON).

The chain's head (`AuditHead`: the last seq and hash) is kept per run and advanced by a conditional
write (seq = the one read) in the same write as the decision (`baton/adapters/dynamo_table.py`), retried on a
lost race: concurrent decisions on one run form one chain, never a fork or a gap. `verify_chain`
recomputes it and names the first record that does not match. A record edited in place breaks its own
hash; a record re-hashed after an edit breaks the next one's `prev_hash` (or the head's hash); a
deleted record leaves a gap in `seq` (or a head ahead of the last record). Rewriting the whole chain and
its head is out of reach of the table alone: the deployed option streams each record to an S3 bucket
with Object Lock (`infra/capabilities/audit.py`), where it cannot be changed.

Adding a decision type is one line in `DECISION_TYPES`.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from dataclasses import dataclass, field
from decimal import Decimal
from itertools import pairwise
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel

from baton.events import EventType

if TYPE_CHECKING:
    from collections.abc import Iterable

    from baton.models import Event

# Who decided what: a person's answer or resume (with its state edits), a claim, a cancel, a merge
# landing or a verdict merging by policy. One line per type.
DECISION_TYPES: frozenset[str] = frozenset(
    {
        EventType.INTERACTION_ANSWERED,
        EventType.INTERRUPT_RESUMED,
        EventType.INTERRUPT_CLAIMED,
        EventType.INTERRUPT_CANCELLED,
        EventType.REVIEW_AUTO_MERGE,
        EventType.REVIEW_MERGED,
        EventType.TIMED_OUT_DEFAULT,  # a default taken at the deadline (baton/services/deadlines.py)
        EventType.QUORUM_REACHED,  # carried by the release transition (baton/services/approvals.py)
        EventType.APPROVAL_REJECTED,
        EventType.INTERRUPT_CLAIM_RENEWED,  # claims (baton/services/claims.py) record through Core.record
        EventType.INTERRUPT_CLAIM_RELEASED,
        EventType.INTERRUPT_REASSIGNED,
        EventType.APPROVAL_RECORDED,  # each counted vote, the head advanced in the vote's own transaction
        EventType.TOOL_GRANT_REVOKED,  # with the revoke's write (baton/services/tool_approvals.py)
        EventType.POLICY_DECIDED,  # a policy's decision of a call, with the approval's creation (issue 31)
        EventType.ESCALATED,  # whom a ladder addressed, an away operator's delegate in their place (issue 32)
    }
)

GENESIS_HASH = "0" * 64  # the prev_hash of a run's first record
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def is_decision(event_type: str) -> bool:
    return event_type in DECISION_TYPES


# ---- the canonical form ---------------------------------------------------------------------------
def _number(value: float) -> str:
    """ECMAScript's Number::toString of a finite double (the shortest digits that round-trip)."""
    if not math.isfinite(value):
        raise ValueError(f"{value!r} is not a JSON number")
    if value == 0:
        return "0"
    sign = "-" if value < 0 else ""
    digits_tuple = Decimal(repr(abs(value))).normalize().as_tuple()
    digits = "".join(str(d) for d in digits_tuple.digits)
    exponent = int(digits_tuple.exponent)
    k, n = len(digits), len(digits) + exponent  # value = 0.<digits> x 10^n
    if k <= n <= 21:
        text = digits + "0" * (n - k)
    elif 0 < n <= 21:
        text = f"{digits[:n]}.{digits[n:]}"
    elif -6 < n <= 0:
        text = "0." + "0" * -n + digits
    else:
        mantissa = digits[0] + (f".{digits[1:]}" if k > 1 else "")
        text = f"{mantissa}e{'+' if n - 1 >= 0 else '-'}{abs(n - 1)}"
    return sign + text


def _string(value: str) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def _utf16_key(key: str) -> bytes:
    return key.encode("utf-16-be", "surrogatepass")


def _parts(value: Any, out: list[str]) -> None:
    if value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif isinstance(value, int):
        out.append(str(value))
    elif isinstance(value, float):
        out.append(_number(value))
    elif isinstance(value, str):
        out.append(_string(value))
    elif isinstance(value, list | tuple):
        out.append("[")
        for n, item in enumerate(value):
            out.append("," if n else "")
            _parts(item, out)
        out.append("]")
    elif isinstance(value, dict):
        if not all(isinstance(k, str) for k in value):
            raise TypeError("canonical JSON object keys must be strings")
        out.append("{")
        for n, key in enumerate(sorted(value, key=_utf16_key)):
            out.append(("," if n else "") + _string(key) + ":")
            _parts(value[key], out)
        out.append("}")
    else:
        raise TypeError(f"{type(value).__name__} is not JSON")


def canonical_json(value: Any) -> bytes:
    """`value` in the canonical form described above, as UTF-8 bytes."""
    out: list[str] = []
    _parts(value, out)
    return "".join(out).encode("utf-8", "surrogatepass")


# ---- records and the chain ------------------------------------------------------------------------
class AuditHead(BaseModel):
    """The last record of a run's chain (seq 0 and GENESIS_HASH: no record yet)."""

    seq: int = 0
    hash: str = GENESIS_HASH


EMPTY_HEAD = AuditHead()


class AuditRecord(BaseModel):
    """One decision as chained: the event's fields and its place in the run's chain."""

    event_id: str
    run_id: str
    type: str
    at: str
    data: dict[str, Any]
    seq: int
    prev_hash: str
    hash: str

    def hashed_part(self) -> dict[str, Any]:
        return self.model_dump(exclude={"hash"})

    def expected_hash(self) -> str:
        return record_hash(self.hashed_part())


class UnchainedDecision(BaseModel):
    """A decision event stored without a place in the chain (no `seq`): written before the chain
    existed (the table predates it), or stripped of its chain fields since."""

    event_id: str
    type: str
    at: str


@dataclass(frozen=True)
class AuditTrail:
    """What the store holds of one run's chain: its records (any order), its head, and the decision
    events that carry no place in it."""

    records: list[AuditRecord]
    head: AuditHead
    unchained: list[UnchainedDecision] = field(default_factory=list)


def stored_data(raw: Any) -> dict[str, Any]:
    """An event's `data` as stored (a JSON object in text). Anything else was not written by Baton: it
    is kept as found, under one key, so its record's hash no longer matches and verify names it."""
    try:
        value = json.loads(raw) if isinstance(raw, str) else raw
    except ValueError:
        value = None
    return value if isinstance(value, dict) else {"__unreadable__": repr(raw)}


def record_hash(hashed_part: dict[str, Any]) -> str:
    return hashlib.sha256(canonical_json(hashed_part)).hexdigest()


def chain(events: Iterable[Event], head: AuditHead) -> tuple[list[AuditRecord], AuditHead]:
    """The decision records of `events` (in order) appended after `head`, and the new head. Events that
    are not decisions are left out."""
    records: list[AuditRecord] = []
    for event in events:
        if not is_decision(event.type):
            continue
        part = {
            "event_id": event.event_id,
            "run_id": event.run_id,
            "type": str(event.type),
            "at": event.at,
            "data": event.data,
            "seq": head.seq + 1,
            "prev_hash": head.hash,
        }
        record = AuditRecord(**part, hash=record_hash(part))
        records.append(record)
        head = AuditHead(seq=record.seq, hash=record.hash)
    return records, head


Problem = Literal["hash", "prev_hash", "missing", "duplicate", "tail", "unchained"]
BEFORE_THE_CHAIN = "unchained (recorded before the chain began at seq 1)"


class AuditMismatch(BaseModel):
    """The first record that does not match: its place, what is wrong, what was expected and stored."""

    seq: int
    event_id: str | None
    problem: Problem
    expected: str
    stored: str
    message: str


class UnchainedNote(BaseModel):
    """A decision recorded before the run's chain began: not covered by the chain, said so plainly."""

    event_id: str
    type: str
    at: str
    message: str = BEFORE_THE_CHAIN


class AuditVerdict(BaseModel):
    run_id: str
    valid: bool
    records: int
    head_seq: int
    head_hash: str
    first_mismatch: AuditMismatch | None = None
    unchained: list[UnchainedNote] = []


def _mismatch_in(records: list[AuditRecord]) -> AuditMismatch | None:
    prev_hash, expected_seq = GENESIS_HASH, 1
    for record in records:
        if record.seq < expected_seq:
            return AuditMismatch(
                seq=record.seq,
                event_id=record.event_id,
                problem="duplicate",
                expected=f"one record at seq {record.seq}",
                stored=f"another record at seq {record.seq}",
                message=f"seq {record.seq} is held by two records (a fork); the second is {record.event_id}",
            )
        if record.seq > expected_seq:
            return AuditMismatch(
                seq=expected_seq,
                event_id=None,
                problem="missing",
                expected=f"seq {expected_seq}",
                stored=f"seq {record.seq} ({record.event_id})",
                message=f"the record at seq {expected_seq} is missing: the next one stored is seq {record.seq}",
            )
        if record.prev_hash != prev_hash:
            return AuditMismatch(
                seq=record.seq,
                event_id=record.event_id,
                problem="prev_hash",
                expected=prev_hash,
                stored=record.prev_hash,
                message=f"seq {record.seq} ({record.event_id}) does not follow the record before it",
            )
        computed = record.expected_hash()
        if record.hash != computed:
            return AuditMismatch(
                seq=record.seq,
                event_id=record.event_id,
                problem="hash",
                expected=computed,
                stored=record.hash,
                message=f"seq {record.seq} ({record.event_id}) was changed after it was recorded",
            )
        prev_hash, expected_seq = record.hash, record.seq + 1
    return None


def _split_unchained(
    unchained: Iterable[UnchainedDecision], first: AuditRecord | None
) -> tuple[list[UnchainedNote], AuditMismatch | None]:
    """The unchained decisions recorded before the chain's first record (or with no chain yet), noted;
    the first one recorded after it, a mismatch: Baton chains every decision once the chain exists, so
    a decision without its place after seq 1 was stripped of it."""
    notes: list[UnchainedNote] = []
    late: AuditMismatch | None = None
    for record in sorted(unchained, key=lambda u: (u.at, u.event_id)):
        if first is None or record.at < first.at:
            notes.append(UnchainedNote(event_id=record.event_id, type=record.type, at=record.at))
        elif late is None:
            late = AuditMismatch(
                seq=first.seq,
                event_id=record.event_id,
                problem="unchained",
                expected=f"a place in the chain (it began at seq 1, {first.at})",
                stored=f"no seq ({record.type} at {record.at})",
                message=f"{record.event_id} ({record.type}, {record.at}) was recorded after the chain began "
                "but carries no place in it",
            )
    return notes, late


def verify_chain(
    run_id: str,
    records: Iterable[AuditRecord],
    head: AuditHead | None,
    unchained: Iterable[UnchainedDecision] = (),
) -> AuditVerdict:
    """Recompute `run_id`'s chain from its stored records (any order) and its head; name the first
    record that does not match. Decisions stored without a place in the chain are listed as
    `unchained` when they were recorded before it began, and are a mismatch when after."""
    ordered = sorted(records, key=lambda r: (r.seq, r.event_id))
    head = head or EMPTY_HEAD
    notes, late = _split_unchained(unchained, ordered[0] if ordered else None)
    found = _mismatch_in(ordered) or late
    last = ordered[-1] if ordered else None
    last_seq, last_hash = (last.seq, last.hash) if last else (0, GENESIS_HASH)
    if found is None and (head.seq, head.hash) != (last_seq, last_hash):
        missing = head.seq > last_seq
        found = AuditMismatch(
            seq=head.seq if missing else last_seq,
            event_id=None if missing else (last.event_id if last else None),
            problem="missing" if missing else "tail",
            expected=f"seq {head.seq} {head.hash}",
            stored=f"seq {last_seq} {last_hash}",
            message=(
                f"the chain's head is seq {head.seq} but the last record stored is seq {last_seq}: "
                f"records {last_seq + 1}..{head.seq} are missing"
                if missing
                else f"the last record (seq {last_seq}) does not match the chain's head (seq {head.seq})"
            ),
        )
    return AuditVerdict(
        run_id=run_id,
        valid=found is None,
        records=len(ordered),
        head_seq=head.seq,
        head_hash=head.hash,
        first_mismatch=found,
        unchained=notes,
    )


def linked(records: list[AuditRecord], head: AuditHead) -> bool:
    """Whether a page's records (consecutive seqs) hash as stored, each chained to the one before, and
    the last to the head when it is the head's: a copy edited apart from its record is not shown (the
    whole read shows the record, which `verify` checks)."""
    if any(r.hash != r.expected_hash() for r in records):
        return False
    if any(later.prev_hash != earlier.hash for earlier, later in pairwise(records)):
        return False
    return not records or records[-1].seq != head.seq or records[-1].hash == head.hash
