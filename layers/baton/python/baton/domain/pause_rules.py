"""Pure rules of an `ask` (a hosted pause, an agent's blocking ask): which pause a resume is for, read from
the run's snapshot alone, the vote a resume of a quorum pause casts, and its timeout event."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from baton.domain.approval import vote_of
from baton.errors import ConflictError, ValidationFailedError
from baton.events import HumanInputTimedOut
from baton.notify.model import DECISION_KEY

if TYPE_CHECKING:
    from collections.abc import Sequence

    from baton.domain.approval import ApprovalPolicy, Vote
    from baton.models import Interaction, ParkedWait
    from baton.ports import RunSnapshot

RESUMABLE_KINDS = ("ask", "review")


def parked_pause(snapshot: RunSnapshot, node: str | None = None) -> ParkedWait | None:
    """The one parked wait of a resumable kind (at `node`), when it is an ask. None (a review gate, several,
    none parked): the resume reads the run's interactions instead."""
    found = [
        w
        for w in snapshot.waits
        if w.status == "parked" and w.kind in RESUMABLE_KINDS and (node is None or w.gate == node)
    ]
    if len(found) == 1 and found[0].kind == "ask" and found[0].interaction_ids:
        return found[0]
    return None


def pending_pause(snapshot: RunSnapshot, wait: ParkedWait) -> Interaction | None:
    """The parked pause's interaction from its pending marker in the snapshot (no read of its own)."""
    iid = wait.interaction_ids[0]
    found = next((i for i in snapshot.pending if i.interaction_id == iid and i.request.kind == "ask"), None)
    # The park wrote its gate on the item (`blocks`, after the marker was copied): kept as stored.
    return found.model_copy(update={"blocks": wait.gate}) if found is not None else None


def blocking_ask(snapshot: RunSnapshot, node: str | None) -> Interaction | None:
    """The latest pending ask at `node` from its marker, when nothing was ever parked there (a blocking ask:
    its marker is a copy of its item; a park would have written `blocks` on the item alone)."""
    if node is None or any(w.gate == node for w in snapshot.waits):
        return None
    found = [i for i in snapshot.pending if i.request.kind == "ask" and i.request.node == node]
    return found[-1] if found else None


def pause_to_resume(interactions: Sequence[Interaction], run_id: str, node: str | None) -> Interaction:
    """The pause a resume is for from the run's interactions (a blocking ask, a review, several pauses, a
    repeat): the latest pending one, else the latest one (no longer pending)."""
    mine = [i for i in interactions if i.request.kind in RESUMABLE_KINDS and (node is None or i.request.node == node)]
    if not mine:
        raise ConflictError(
            f"run {run_id} is not waiting for input" + (f" at node '{node}'" if node else ""),
            details={"run_id": run_id},
        )
    pending = [i for i in mine if i.state.status == "pending"]
    return pending[-1] if pending else mine[-1]


def timed_out(node: str, unanswered: Sequence[Interaction]) -> HumanInputTimedOut:
    """A pause's timeout event (a hosted gate's, a blocking ask's): its cause is the run's failure reason."""
    listed = "; ".join(f"{i.interaction_id} ({i.request.prompt!r})" for i in unanswered) or "none"
    seconds = unanswered[0].request.timeout_seconds if unanswered else None
    after = f" after {seconds}s" if seconds else ""
    cause = f"timed out{after} waiting for human input at node '{node}'; unanswered: {listed}"
    return HumanInputTimedOut(node=node, unanswered=[i.interaction_id for i in unanswered], cause=cause)


def pause_vote(policy: ApprovalPolicy, options: list[str] | None, answers: dict[str, Any]) -> Vote:
    """The vote a resume of a quorum pause casts, under answers.decision: one of its options (else approve or
    reject); none is a 422 naming the key and what it takes."""
    cast = vote_of(policy, options, answers.get(DECISION_KEY))
    if cast is None:
        expected = options or ["approve", "reject"]
        raise ValidationFailedError(
            f"this pause needs {policy.approvals} approval(s): put your vote in answers.{DECISION_KEY}, one of "
            f"{expected}",
            details={"path": f"answers.{DECISION_KEY}", "options": expected},
        )
    return cast[0]
