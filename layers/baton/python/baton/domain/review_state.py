"""A review interaction read back (pure: no port calls): the action it stores (and what it sends the gate,
the merge build it asks for, its event), its dialogue (what the companion's turns reviewed, the next turn
and its event), and the rules that refuse an action (one those turns do not allow, one on a review not
waiting)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from baton.contracts.review import ReviewGateOutput
from baton.domain.answer_replies import closed_error
from baton.domain.companion import ThreadTurn, format_steps
from baton.domain.merge_contracts import BuildRequest
from baton.domain.review_gate import (
    ACTIONS,
    KEY_ACTION,
    KEY_REASON,
    allowed_actions,
    resolve_review_url,
    verdict_blocks_approval,
)
from baton.errors import ConflictError, GoneError, ValidationFailedError
from baton.events import InteractionAnswered, ReviewTurnRecorded
from baton.models import ReviewRequest, ReviewTurn

if TYPE_CHECKING:
    from baton.domain.companion import CompanionTurn
    from baton.domain.merge_contracts import BoundedDiff
    from baton.domain.review_decision import ReviewDecision
    from baton.domain.review_gate import GateConfig
    from baton.models import Interaction

EVENT_TEXT_LIMIT = 2000  # a turn event's text is clipped here: the turn item holds it whole


class StoredAction(BaseModel):
    """An action as the review interaction stores it (`state.answer`; all None for a non-review answer).
    The fields in the stored JSON's key order; `stored()` writes only the keys set (a reply names no
    commit, an auto-merge no reason)."""

    action: str | None = None
    reply: str | None = None
    message: str | None = None
    merge_strategy: str | None = None
    by: str | None = None
    reviewed_head: str | None = None
    diff_digest: str | None = None
    reason: str | None = None

    @classmethod
    def of(cls, interaction: Interaction) -> StoredAction:
        return cls.model_validate(interaction.state.answer or {})

    @classmethod
    def decided(cls, decision: ReviewDecision, reviewed: Reviewed, *, merge_strategy: str, by: str) -> StoredAction:
        """An operator's decision as stored: all but a reply name the commit and diff they decide on, and why."""
        fields: dict[str, Any] = {
            "action": decision.action,
            "reply": decision.reply,
            "message": decision.message,
            "merge_strategy": decision.merge_strategy or merge_strategy,
            "by": by,
        }
        if decision.action != "reply":
            fields |= {"reviewed_head": reviewed.head, "diff_digest": reviewed.diff_digest, "reason": decision.reason}
        return cls(**fields)

    @classmethod
    def auto_merge(cls, reviewed: Reviewed, *, merge_strategy: str) -> StoredAction:
        """A verdict's merge without a click, of the commit and diff its turn read (no message, no reply)."""
        pinned = {"reviewed_head": reviewed.head, "diff_digest": reviewed.diff_digest}
        return cls(
            action="auto_merge", reply=None, message=None, merge_strategy=merge_strategy, by="companion", **pinned
        )

    def stored(self) -> dict[str, Any]:
        return self.model_dump(exclude_unset=True)

    @property
    def is_operator_action(self) -> bool:
        """An operator's action (not an auto-merge's, nor an answer without one): what a park and a
        deadline deliver to the gate."""
        return self.action in ACTIONS

    def merge_request(self, review: Interaction, config: GateConfig) -> BuildRequest:
        """The merge build this action asks for: of the reviewed commit it pins, never the branch tip."""
        return BuildRequest(
            run_id=review.run_id,
            gate=review.node,
            kind="merge",
            **config.model_dump(include={"run_branch", "repo_path", "repo_url"}),
            into=config.merge_into,
            strategy=self.merge_strategy or config.merge_strategy,
            message=self.message,
            reviewed_head=self.reviewed_head,
        )


def gate_output(review: Interaction, reviewed: Reviewed) -> ReviewGateOutput:
    """What the gate's token is sent with: the stored action, who took it, the companion's latest verdict."""
    stored = StoredAction.of(review)
    return ReviewGateOutput(
        interaction_id=review.interaction_id,
        node=review.node,
        **stored.model_dump(include={"action", "reply", "message", "merge_strategy", "reviewed_head"}),
        answered_by=review.state.answered_by,
        answered_at=review.state.answered_at,
        verdict=reviewed.verdict,
    )


def review_url_of(review: Interaction, config: GateConfig) -> tuple[str, list[str]]:
    """The gate's `review_url` rendered over the run's id, the gate's input and its upstream outputs."""
    raw = review.request_as(ReviewRequest).config
    run_input = {k: v for k, v in raw.items() if k != "outputs"}
    scope = {
        "run_id": review.run_id,
        "input": run_input,
        **config.model_dump(include={"gate", "run_branch", "outputs"}),
    }
    return resolve_review_url(config.review_url, scope)


def refuse_unless_waiting(review: Interaction) -> None:
    """The operator acts only on a review that waits for them: 410 when its run was stopped or its deadline
    ended it, else the 409 when it is not pending (the companion or a merge is busy, or the gate finished)."""
    if review.state.status == "cancelled":  # its run was stopped
        raise closed_error(review)
    if review.state.status == "timed_out":
        raise GoneError(f"the review at gate '{review.node}' timed out", details={"interaction": review.public()})
    if review.state.status != "pending":
        raise not_waiting(review)


def turn_recorded(turn: ReviewTurn, gate: str, **recorded: Any) -> ReviewTurnRecorded:
    """A turn's event; its text clipped (the turn item holds it whole)."""
    text = turn.text if len(turn.text) <= EVENT_TEXT_LIMIT else turn.text[:EVENT_TEXT_LIMIT] + "…"
    return ReviewTurnRecorded(
        gate=gate, interaction_id=turn.interaction_id, n=turn.n, role=turn.role, text=text, **recorded
    )


def action_answered(review: Interaction, stored: dict[str, Any], *, by: str) -> InteractionAnswered:
    """A stored action's event. The reply text is a turn of its own."""
    answer = {k: v for k, v in stored.items() if k != "reply"}
    return InteractionAnswered(
        interaction_id=review.interaction_id, node=review.node, kind="review", answer=answer, by=by
    )


def not_waiting(review: Interaction) -> ConflictError:
    """The 409 for an action on a review the operator is not being asked (its last action says why)."""
    busy = StoredAction.of(review).action
    return ConflictError(
        f"the review at gate '{review.node}' is not waiting for the operator (last action: {busy}; "
        "the companion is answering, a merge is running or the gate finished); try again shortly",
        details={"interaction": review.public()},
    )


@dataclass(frozen=True)
class Reviewed:
    """The review's dialogue (its `turns`, oldest first, over the gate's `first` diff) and what the
    companion's turns read so far, else that first diff: the commit and diff digest an approval pins (a
    turn whose re-diff failed read nothing new), that diff's stats, the latest verdict."""

    first: dict[str, Any] | None
    turns: list[ReviewTurn]
    head: str | None
    diff_digest: str | None
    diff: dict[str, Any] | None
    verdict: dict[str, Any] | None
    turns_used: int

    @classmethod
    def of(cls, first: dict[str, Any] | None, turns: list[ReviewTurn]) -> Reviewed:
        companion = [t for t in turns if t.role == "companion"]
        headed = next((t for t in reversed(companion) if t.reviewed_head), None)
        diffed = next((t for t in reversed(companion) if t.diff is not None), None)
        verdicts = [t.verdict for t in companion if t.verdict is not None]
        return cls(
            first=first,
            turns=turns,
            head=headed.reviewed_head if headed else (first or {}).get("head"),
            diff_digest=headed.diff_digest if headed else (first or {}).get("digest"),
            diff=diffed.diff if diffed else first,
            verdict=verdicts[-1] if verdicts else None,
            turns_used=len(companion),
        )

    def with_turn(self, turn: ReviewTurn) -> Reviewed:
        """The dialogue once `turn` is stored (its writer holds it: no second read)."""
        return Reviewed.of(self.first, [*self.turns, turn])

    def reply_prompt(self, stored_reply: str | None) -> tuple[list[ThreadTurn], str]:
        """What the companion replies to: the thread before the operator's reply, and that reply (its turn,
        else the stored action's text)."""
        thread = [ThreadTurn(role=t.role, text=t.text, n=t.n) for t in self.turns[:-1]]
        last = self.turns[-1] if self.turns else None
        return thread, last.text if last is not None and last.role == "operator" else (stored_reply or "")

    def operator_turn(self, review: Interaction, reply: str, *, at: str, by: str) -> ReviewTurn:
        """An operator's reply as the dialogue's next turn."""
        iid, n = review.interaction_id, len(self.turns)
        return ReviewTurn(run_id=review.run_id, interaction_id=iid, n=n, role="operator", text=reply, at=at, by=by)

    def companion_turn(
        self, review: Interaction, turn: CompanionTurn, *, at: str, diff: BoundedDiff | None
    ) -> ReviewTurn:
        """The companion's turn as the dialogue's next: its test steps in its text, and the diff it read (its
        commit, digest and stats; None when the re-diff failed)."""
        text = turn.text
        if turn.test_steps and format_steps(turn.test_steps) not in text:
            text = f"{text}\n\n{format_steps(turn.test_steps)}"
        return ReviewTurn(
            run_id=review.run_id,
            interaction_id=review.interaction_id,
            n=len(self.turns),
            role="companion",
            text=text,
            at=at,
            by="companion",
            **turn.model_dump(include={"model", "is_model", "test_steps"}),
            verdict=turn.verdict.model_dump() if turn.verdict is not None else None,
            reviewed_head=diff.head if diff is not None else None,
            diff_digest=diff.digest if diff is not None else None,
            diff=diff.model_dump(exclude={"text"}) if diff is not None else None,
        )

    def allowed(self, max_turns: int) -> list[str]:
        return allowed_actions(self.verdict, turns_used=self.turns_used, max_turns=max_turns)

    def refuse_disallowed(self, decision: ReviewDecision, *, max_turns: int) -> list[str]:
        """409/422 for an action these turns do not allow; else the allowed actions."""
        allowed, used, verdict = self.allowed(max_turns), self.turns_used, self.verdict
        if decision.action == "reply" and used >= max_turns:
            raise ConflictError(
                f"the dialogue reached max_turns ({max_turns}); only {', '.join(allowed)} are accepted now",
                details={"allowed": allowed, "max_turns": max_turns, "turns_used": used},
            )
        blocked = verdict_blocks_approval(verdict)
        if decision.action == "approve_merge" and blocked:
            raise ConflictError(
                "the companion's verdict is request_changes or lists blockers; approve_merge is refused. "
                "Use force_merge to merge anyway (with a reason; git safety guards still apply), or reply / "
                "request_changes",
                details={"verdict": verdict, "allowed": allowed},
            )
        if decision.action == "force_merge" and blocked and decision.reason is None:
            raise ValidationFailedError(
                f"force_merge over the companion's blockers needs a reason: set {KEY_REASON} to why it merges anyway",
                details={"path": KEY_REASON, "verdict": verdict},
            )
        return allowed

    def refuse_unreviewed(
        self, seen_head: str | None, tip: str | None, *, run_branch: str | None, allowed: list[str]
    ) -> None:
        """409 before a merge of anything but the reviewed commit: the operator saw another head, or the run
        branch's `tip` (None where the repository cannot be read) moved past it."""
        again = [a for a in allowed if a in ("reply", "request_changes")]
        details = {"reviewed_head": self.head, "diff_digest": self.diff_digest, "allowed": again}
        if seen_head is not None and self.head is not None and seen_head != self.head:
            raise ConflictError(
                f"you reviewed {seen_head[:12]} but the companion's latest review is of {self.head[:12]}: "
                "reload the review and decide on what it shows",
                details={**details, "seen_head": seen_head},
            )
        if tip is not None and self.head is not None and tip != self.head:
            raise ConflictError(
                f"the run branch {run_branch!r} moved to {tip} after the review of {self.head[:12]}: "
                f"a merge now would take commits nobody reviewed. Send a reply ({KEY_ACTION}=reply) so the "
                "companion reviews the new head, then decide",
                details={**details, "run_branch": run_branch, "run_branch_head": tip},
            )
