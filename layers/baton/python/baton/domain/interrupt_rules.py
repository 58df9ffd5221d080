"""The rules of an interrupt that read only its record (no store, no token): its id by key, its resume as
stored, the events of a resume and a cancel, and the 404/409/410 every interrupt path raises, with the
details that name the winner (`baton.services.interrupts` and `baton.services.claims` raise them)."""

from __future__ import annotations

import base64
import hashlib
import json
from typing import TYPE_CHECKING, Any, Final, TypedDict, cast

from pydantic import BaseModel

from baton.contracts.interrupts import TIMEOUT_REASON, InterruptView, edge_status
from baton.domain.answer_schema import check_state_size, validate_answer
from baton.domain.state_edits import apply_state_edits
from baton.errors import ConflictError, GoneError, NotFoundError, winner
from baton.events import HumanInputRequested, InterruptCancelled, InterruptResumed
from baton.models import InterruptRequest, status_of

if TYPE_CHECKING:
    from baton.contracts.interrupts import ResumeInterrupt
    from baton.domain.ballot import Ballot, Decided
    from baton.domain.interrupt_spec import InterruptSpec
    from baton.models import Interaction, InteractionStatus

KIND: Final = "interrupt"


class StoredResume(TypedDict, total=False):
    """A resume as the interrupt stores it (`state.answer`)."""

    input: Any
    state: dict[str, Any]
    state_edits: list[str]


class InterruptOutput(BaseModel):
    """What a resume sends the hosted task (its token's output; `statemachines/interrupt.asl.json`)."""

    interrupt_id: str
    input: Any = None
    state: dict[str, Any] | None = None
    state_edits: list[str] | None = None
    resolved_by: str | None = None
    resolved_at: str | None = None

    @classmethod
    def of(cls, answered: Interaction) -> InterruptOutput:
        stored, st = resume_of(answered), answered.state
        return cls(
            interrupt_id=answered.interaction_id,
            input=stored.get("input"),
            state=stored.get("state"),
            state_edits=stored.get("state_edits"),
            resolved_by=st.answered_by,
            resolved_at=st.answered_at,
        )


def key_interrupt_id(session_id: str, key: str) -> str:
    """A deterministic id for (session, key): creating twice with one key returns the first interrupt."""
    digest = hashlib.sha256(f"{session_id}\x00{key}".encode()).digest()
    return "K" + base64.b32encode(digest).decode().rstrip("=")[:25]


def is_timed_out(i: Interaction) -> bool:
    return i.state.status == "timed_out"


def interrupt_request(i: Interaction) -> InterruptRequest:
    return i.request_as(InterruptRequest)


def resume_of(i: Interaction) -> StoredResume:
    return cast("StoredResume", i.state.answer) if isinstance(i.state.answer, dict) else {}


def accepted_resume(i: Interaction, command: ResumeInterrupt) -> StoredResume:
    """The resume as it will be stored: the edits applied to the snapshot, the value validated (a 422
    names the failing path), the edited snapshot within its size (413)."""
    req, edits = interrupt_request(i), list(command.stateEdits)
    edited = apply_state_edits(req.state or {}, edits)
    accepted = validate_answer(command.input, schema=req.schema_, json_schema=req.json_schema)
    check_state_size(edited)
    return StoredResume(input=accepted, state=edited, state_edits=edits)


def is_same_resume(i: Interaction, command: ResumeInterrupt, caller: str) -> bool:
    """The stored resume is this caller's, with this value and edits (a retry, a twin)."""
    stored = resume_of(i)
    same = stored.get("input") == command.input and stored.get("state_edits") == list(command.stateEdits)
    return same and i.state.status == "answered" and i.state.answered_by == caller


def resumed_event(i: Interaction, value: Any, edits: list[str], by: str | None) -> InterruptResumed:
    return InterruptResumed(interaction_id=i.interaction_id, node=i.request.node, input=value, state_edits=edits, by=by)


def cancelled_event(i: Interaction, reason: str | None, by: str | None) -> InterruptCancelled:
    return InterruptCancelled(interaction_id=i.interaction_id, node=i.request.node, reason=reason, by=by)


def settled_by_quorum(
    i: Interaction, decided: Decided, ballot: Ballot, approvals: int, at: str
) -> tuple[InteractionStatus, InterruptResumed | InterruptCancelled]:
    """A met tally's decision and its event: answered with the resume of the approval that met the count,
    or cancelled."""
    if ballot.decision != "approved":
        cancelled = status_of(i.state, "cancelled", by=decided.by, at=at, reason=decided.reason)
        return cancelled, cancelled_event(i, decided.reason, decided.by)
    approving = [v for v in ballot.votes if v.vote == "approve"]
    resume = json.loads(approving[approvals - 1].answer)
    return decided.answered(i.state, resume, at), resumed_event(i, resume["input"], resume["state_edits"], decided.by)


def conflict_details(i: Interaction, *, status: bool = False, settled: bool = True, **first: Any) -> dict[str, Any]:
    """An error's details (after `first`): the interrupt as the wire shows it, its API status when asked,
    and (`settled`) what settled or holds it: the resume's value, the cancel's reason, or the claim."""
    details = first | {"interrupt": InterruptView.of(i).model_dump(by_alias=True)}
    if status:
        details["status"] = edge_status(i)
    if not settled:
        return details
    st = i.state
    if st.status == "answered":
        won = winner(status="answered", value=resume_of(i).get("input"), by=st.answered_by, at=st.answered_at)
    elif st.status in ("cancelled", "timed_out"):
        reason = TIMEOUT_REASON if is_timed_out(i) else st.reason
        won = winner(status="cancelled", value=reason, by=st.answered_by, at=st.answered_at)
    else:
        won = winner(status="claimed", value=st.claimed_by, by=st.claimed_by, at=st.claimed_at)
    return details | {"winner": won}


def refuse_other_version(i: Interaction, given: str | None) -> None:
    """409 when the resume was decided on another state version than the current one."""
    current = InterruptView.of(i).state_version
    if given is None or given == current:
        return
    raise ConflictError(
        f"interrupt {i.interaction_id}: the resume was decided on state version {given}, but the state is at "
        f"{current}; read it again (its snapshot and any resume) and decide on the current state",
        details=conflict_details(i, reason="state_changed", stateVersion=current, given=given),
    )


def require_pending(i: Interaction, verb: str) -> None:
    """Raises `settled_error` unless the interrupt is pending."""
    if i.state.status != "pending":
        raise settled_error(i, verb)


def settled_error(i: Interaction, verb: str) -> ConflictError | GoneError:
    """A 410 (cancelled, timed out) or 409 (resumed) naming what settled it; `verb`: what was wanted."""
    details = conflict_details(i, status=True)
    if i.state.status in ("cancelled", "timed_out"):
        return GoneError(
            f"interrupt {i.interaction_id} is cancelled ({i.state.reason}) and cannot be {verb}", details=details
        )
    return ConflictError(
        f"interrupt {i.interaction_id} was already resumed by {i.state.answered_by} and cannot be {verb}",
        details=details,
    )


def closed_interrupt(i: Interaction) -> GoneError:
    """The 410 for a resume of an interrupt cancelled or timed out: nothing is waiting for a value."""
    why = "timed out" if is_timed_out(i) else f"was cancelled ({i.state.reason})"
    return GoneError(
        f"interrupt {i.interaction_id} {why}; nothing is waiting for a value",
        details=conflict_details(i, reason=i.state.reason),
    )


def hosted_end_cause(target: Interaction | None, node: str, outcome: str) -> str:
    """The Fail state's cause when a hosted interrupt's task ended without a resume (`outcome`: "timeout"
    or "cancelled"); `target`: the node's latest interrupt, if one was recorded."""
    if target is None:
        return f"interrupt at node '{node}' ended ({outcome}) but no interrupt was recorded"
    if outcome == "timeout" or is_timed_out(target):
        return (
            f"interrupt {target.interaction_id} at node '{node}' timed out after {target.request.timeout_seconds}s "
            f"without a resume (prompt: {target.request.prompt!r}); it is cancelled with reason timeout"
        )
    st = target.state
    return f"interrupt {target.interaction_id} at node '{node}' was cancelled by {st.answered_by}: {st.reason}"


def failure_cause(settled: Interaction) -> str:
    """The cause a hosted interrupt's task fails with when it timed out or was cancelled (who and why)."""
    if is_timed_out(settled):
        return f"interrupt {settled.interaction_id} timed out"
    return f"interrupt {settled.interaction_id} cancelled by {settled.state.answered_by}: {settled.state.reason}"


def not_found(interrupt_id: str) -> NotFoundError:
    return NotFoundError(f"interrupt {interrupt_id} not found", details={"interrupt_id": interrupt_id})


def same_key(existing: Interaction, prompt: str) -> Interaction:
    """The interrupt a key already names, when it asks the same; else the 409."""
    if existing.request.kind != KIND or existing.request.prompt != prompt:
        raise ConflictError(
            "an interrupt with this key already exists with a different prompt",
            details=conflict_details(existing, settled=False),
        )
    return existing


def asked_event(
    spec: InterruptSpec, interrupt_id: str, *, timeout_ms: int, hosted: bool, by: str
) -> HumanInputRequested:
    return HumanInputRequested(
        kind=KIND,
        interaction_id=interrupt_id,
        node=spec.node,
        prompt=spec.prompt,
        workflow_id=spec.workflow_id,
        timeout_ms=timeout_ms,
        hosted=hosted,
        by=by,
    )
