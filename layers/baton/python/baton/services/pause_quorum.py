"""Quorum on the plain human pause (`ask`): a hosted workflow's `park` Task and an agent's blocking ask
(`baton/services/asks.py`), both answered with `POST /api/runs/{run}/resume` (`RunService.resume`).

With `approval` on the pause each resume is one operator's vote (`baton/services/approvals.py`): the
answers carry it under `decision` (without options `approve` or `reject`; with options one of them,
`approve_option` or the first approving). The requester (the hosted run's starter, the blocking ask's
agent) and non-approvers get a 403 and nothing is written; the same operator twice counts once. The
vote that meets the quorum answers the pause with the answers of the approver that completed it (a met
rejection rule: the rejecter's answers), in one transition guarded by the tally (`QuorumMet`), and then
sends the token (or, for a blocking ask, lets its waiter go): exactly once under any concurrency. A
vote after that is a 409 naming the decision. If the deciding voter dies in between, the reconciler
settles it (`settle`, from `baton/services/quorum_release.py`).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from baton.domain.approval import vote_of
from baton.errors import ConflictError, ValidationFailedError, winner
from baton.events import InteractionAnswered, RunResumed
from baton.models import PauseRequest, status_of
from baton.notify.model import DECISION_KEY
from baton.ports import GuardFailedError
from baton.services.answer_outcomes import SendFailedError, delivery_of
from baton.services.approvals import ApprovalService

if TYPE_CHECKING:
    from baton.domain.approval import ApprovalPolicy
    from baton.models import Interaction
    from baton.services.approvals import Ballot, Voter
    from baton.services.core import Core

Groups = frozenset[str]  # the voter's approver groups (baton/api/auth.py Caller.groups)
NO_GROUPS: Groups = frozenset()


def pause_output(i: Interaction) -> dict[str, Any]:
    """What an answered pause sends its workflow (the token's output; a blocking ask's waiter reads it)."""
    return {
        "interaction_id": i.interaction_id,
        "node": i.request.node,
        "answers": i.state.answer,
        "answered_by": i.state.answered_by,
        "answered_at": i.state.answered_at,
    }


def deliver(core: Core, answered: Interaction, *, hosted: bool | None = None) -> bool:
    """Send an answered pause's token; a blocking ask (no token) lets its waiter go instead."""
    run_id, node = answered.run_id, answered.request.node
    if hosted is None:
        hosted = core.require_run(run_id).hosted
    resumed = core.release_gate(run_id, node, pause_output(answered))
    if not resumed and not hosted and core.store.get_wait(run_id, node) is None:
        # A blocking ask of an agent (baton.services.asks): no token; its waiter reads the answer.
        if core.set_run_status(run_id, "running", allowed_from={"paused_waiting_human"}):  # run_resumed: only if so
            core.record(run_id, RunResumed(gate=node, kind="ask"))
        resumed = True
    return resumed


class PauseQuorum:
    def __init__(self, core: Core) -> None:
        self.core = core
        self.approvals = ApprovalService(core)

    def vote(self, pause: Interaction, policy: ApprovalPolicy, answers: dict[str, Any], voter: Voter) -> dict[str, Any]:
        cast = vote_of(policy, pause.request.options, answers.get(DECISION_KEY))
        if cast is None:
            expected = pause.request.options or ["approve", "reject"]
            raise ValidationFailedError(
                f"this pause needs {policy.approvals} approval(s): put your vote in answers.{DECISION_KEY}, one of "
                f"{expected}",
                details={"path": f"answers.{DECISION_KEY}", "options": expected},
            )
        requested_by = pause.request_as(PauseRequest).requested_by
        text = json.dumps(answers, sort_keys=True, separators=(",", ":"))
        ballot = self.approvals.cast(pause, policy, text, voter, requested_by=requested_by, vote=cast[0])
        try:
            resumed = self.settle(pause, policy, ballot) if ballot.decision else False
            pending = False
        except SendFailedError:  # the deciding vote is stored: the reconciler sends it
            resumed, pending = False, True
        current = self.core.store.get_interaction(pause.run_id, pause.interaction_id) or pause
        st = current.state
        if ballot.outcome == "closed":
            raise ConflictError(
                f"the pause at node '{pause.request.node}' is already {st.status}: the vote is not counted",
                details={
                    "interaction": current.public(),
                    "winner": winner(status=st.status, value=st.answer, by=st.answered_by, at=st.answered_at),
                },
            )
        return {
            "interaction_id": pause.interaction_id,
            "node": pause.request.node,
            "queued": st.status == "answered",
            "resumed": resumed,
            "delivery": delivery_of(resumed, pending=pending),
            "status": "answered" if st.status == "answered" else "pending",
            "approval": ballot.view(policy),
        }

    def settle(self, pause: Interaction, policy: ApprovalPolicy, ballot: Ballot) -> bool:
        """Answer a pause whose tally met `ballot.decision` (guarded by it) and deliver it. True if this
        call resumed the workflow or the blocking ask's waiter."""
        core = self.core
        side = "approve" if ballot.decision == "approved" else "reject"
        deciding = [v for v in ballot.votes if v.vote == side]
        answers = json.loads(deciding[-1].answer) if deciding else {DECISION_KEY: side}
        for _attempt in range(3):
            current = core.store.get_interaction(pause.run_id, pause.interaction_id)
            if current is None or current.state.status != "pending":
                return False
            decided = self.approvals.decided(current, policy, ballot)
            records = [
                core.new_event(
                    pause.run_id,
                    InteractionAnswered(
                        interaction_id=pause.interaction_id, node=pause.request.node, answer=answers, by=decided.by
                    ),
                ),
                core.new_event(pause.run_id, decided.event),
            ]
            new = status_of(
                current.state, "answered", answer=answers, by=decided.by, at=core.now(), reason=decided.reason
            )
            try:
                answered = core.store.transition_interaction(current, new, with_records=records, guards=[decided.guard])
            except (ConflictError, GuardFailedError):
                continue  # another voter released it, or a concurrent write: read again
            return deliver(self.core, answered)
        return False

    def settle_standing(self, pause: Interaction) -> bool:
        """The reconciler: a pending quorum pause whose stored tally is met is answered and delivered."""
        policy = pause.request_as(PauseRequest).approval
        if policy is None:
            return False
        ballot = self.approvals.standing(pause, policy)
        if ballot.decision is None:
            return False
        self.settle(pause, policy, ballot)
        current = self.core.store.get_interaction(pause.run_id, pause.interaction_id)
        return current is not None and current.state.status != "pending"
