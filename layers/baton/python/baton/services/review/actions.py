"""The operator's actions on a review gate (POST /api/runs/{run_id}/resume with the reserved
`__review_*` keys), the pause that parks the task token (the review_park Lambda), and the reconciler's
re-send of an action a failed send lost.

Invariant at park time: the interaction is `pending` (park the token) or `answered` (an action arrived
before the token was parked: the stored action is sent with the new token at once).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from baton.domain.review_gate import (
    ACTIONS,
    KEY_ACTION,
    KEY_HEAD,
    KEY_MESSAGE,
    KEY_REASON,
    KEY_REPLY,
    KEY_STRATEGY,
    MERGE_ACTIONS,
    RESERVED_KEYS,
    STRATEGIES,
    allowed_actions,
    verdict_blocks_approval,
)
from baton.errors import ConflictError, GoneError, ValidationFailedError
from baton.events import HumanInputRequested, InteractionAnswered, ReviewTurnRecorded, RunPaused
from baton.models import ParkedWait, ReviewTurn, status_of
from baton.services.answer_outcomes import SendFailedError, closed_error, delivery_of
from baton.services.at_deadline import InteractionPauseDeadline
from baton.services.deadlines import park_wait
from baton.services.review.gate import ACTIVE_RUN, ReviewGate, clip

if TYPE_CHECKING:
    from datetime import datetime

    from baton.domain.review_gate import GateConfig
    from baton.models import Interaction
    from baton.services.review.gate import Reviewed


class ReviewActions(ReviewGate):
    def park(self, run_id: str, gate: str, token: str, entered_at: datetime | None = None) -> dict[str, Any]:
        """Park the token (its deadline: `Core.deadline_of` the gate's timeout from the task's entry) and
        ask the operator. Idempotent: a retried invoke (same token) records and notifies nothing again."""
        core = self.core
        again = core.parked_again(run_id, gate, token)
        if again is not None and again.interaction_ids:
            return {"parked": True, "interaction_id": again.interaction_ids[0], "delivered": again.status == "released"}
        interaction = self._require(run_id, gate)
        config = self.config_of(interaction)
        url, warnings = self.review_url(interaction)
        park_wait(
            core,
            ParkedWait(
                run_id=run_id,
                gate=gate,
                task_token=token,
                kind="review",
                interaction_ids=[interaction.interaction_id],
                scope={"review_url": url},
                parked_at=core.now(),
                deadline=core.deadline_of(config.timeout_seconds, entered_at),
            ),
            pause=interaction.request,  # its ladder (remind / escalate / request_changes at the deadline)
        )
        core.set_run_status(run_id, "paused_waiting_human", allowed_from=ACTIVE_RUN)
        # An action stored before the token was parked (or a failed send) is delivered now.
        current = core.store.get_interaction(run_id, interaction.interaction_id) or interaction
        answer = current.state.answer or {}
        if current.state.status == "answered":
            if answer.get("action") in ACTIONS:
                core.release_gate(run_id, gate, self._output(current))
                return {"parked": True, "interaction_id": current.interaction_id, "delivered": True}
            current = self._reopen(current, config, reason="an answer without a review action was ignored")
        turns = core.store.list_turns(run_id, interaction.interaction_id)
        core.record(
            run_id,
            HumanInputRequested(
                interaction_id=interaction.interaction_id,
                node=gate,
                kind="review",
                prompt=config.prompt,
                timeout_seconds=config.timeout_seconds,
                review_url=url,
                warnings=warnings,
                turns_used=self._companion_turns(turns),
                max_turns=config.max_turns,
            ),
        )
        core.record(run_id, RunPaused(gate=gate, kind="review"))
        core.notify(current, "human_input_requested", review_url=url, verdict=self._latest_verdict(turns))
        return {"parked": True, "interaction_id": interaction.interaction_id, "delivered": False}

    def reconcile_wait(self, wait: ParkedWait) -> bool:
        """The reconciler: a parked review whose interaction holds an operator action gets the resume a
        failed send lost (the same output `act` and `park` send). True if this call resumed it."""
        for iid in wait.interaction_ids:
            current = self.core.store.get_interaction(wait.run_id, iid)
            if current is None or current.state.status != "answered":
                continue
            if (current.state.answer or {}).get("action") in ACTIONS:
                return self.core.release_gate(wait.run_id, wait.gate, self._output(current), token=wait.task_token)
        return False

    def deadline_policy(self) -> InteractionPauseDeadline:
        """The review gate's `DeadlinePolicy` (baton.services.at_deadline): a stored review action is
        sent as `act` sends it; an answer without one is nothing this gate delivers."""

        def output(current: Interaction) -> dict[str, Any] | None:
            return self._output(current) if (current.state.answer or {}).get("action") in ACTIONS else None

        return InteractionPauseDeadline(self.core, output)

    def act(
        self,
        run_id: str,
        answers: dict[str, Any],
        *,
        caller: str,
        node: str | None = None,
        groups: frozenset[str] = frozenset(),
    ) -> dict[str, Any]:
        core = self.core
        action, reply, message, strategy = self._check_answers(answers)
        seen_head = answers.get(KEY_HEAD)
        core.require_run(run_id)
        interaction = self._latest(run_id, node)
        if interaction is None:
            raise ConflictError(
                f"run {run_id} is not waiting at a review gate" + (f" named '{node}'" if node else ""),
                details={"run_id": run_id},
            )
        if interaction.state.status == "timed_out":
            raise GoneError(
                f"the review at gate '{interaction.node}' timed out", details={"interaction": interaction.public()}
            )
        if interaction.state.status == "cancelled":  # its run was stopped
            raise closed_error(interaction)
        if interaction.state.status != "pending":
            busy = (interaction.state.answer or {}).get("action")
            raise ConflictError(
                f"the review at gate '{interaction.node}' is not waiting for the operator (last action: {busy}; "
                "the companion is answering, a merge is running or the gate finished); try again shortly",
                details={"interaction": interaction.public()},
            )
        wait = core.store.get_wait(run_id, interaction.node)
        if wait is not None and wait.status == "parked" and interaction.interaction_id in wait.interaction_ids:
            core.refuse_if_late(interaction, answers, caller=caller, deadline=wait.deadline)
        config = self.config_of(interaction)
        turns = core.store.list_turns(run_id, interaction.interaction_id)
        used = self._companion_turns(turns)
        verdict = self._latest_verdict(turns)
        allowed = allowed_actions(verdict, turns_used=used, max_turns=config.max_turns)
        reason = self._refuse_disallowed(action, answers, verdict, allowed, used=used, max_turns=config.max_turns)
        reviewed = self._reviewed(interaction, turns)
        if action in MERGE_ACTIONS:
            self._refuse_unreviewed(config, reviewed, seen_head, allowed)
        stored = {
            "action": action,
            "reply": reply,
            "message": message,
            "merge_strategy": strategy or config.merge_strategy,
            "by": caller,
        }
        if action != "reply":  # the decision names the commit and diff it decides on, and why
            stored |= {"reviewed_head": reviewed.head, "diff_digest": reviewed.diff_digest, "reason": reason}
        if config.approval is not None and action != "reply":  # a vote (baton/services/review/quorum.py)
            from baton.services.approvals import Voter
            from baton.services.review.quorum import ReviewQuorum

            vote = {k: v for k, v in stored.items() if k not in ("reply", "by")}
            return ReviewQuorum(self).vote(interaction, config.approval, vote, Voter(caller, groups))
        answered = core.store.transition_interaction(
            interaction,
            status_of(interaction.state, "answered", answer=stored, by=caller, at=core.now()),
        )
        core.record(
            run_id,
            InteractionAnswered(
                interaction_id=interaction.interaction_id,
                node=interaction.node,
                kind="review",
                answer={k: v for k, v in stored.items() if k != "reply"},
                by=caller,
            ),
        )
        if action == "reply":
            assert reply is not None
            n = len(turns)
            core.store.put_turn(
                ReviewTurn(
                    run_id=run_id,
                    interaction_id=interaction.interaction_id,
                    n=n,
                    role="operator",
                    text=reply,
                    at=core.now(),
                    by=caller,
                )
            )
            core.record(
                run_id,
                ReviewTurnRecorded(
                    gate=interaction.node,
                    interaction_id=interaction.interaction_id,
                    n=n,
                    role="operator",
                    text=clip(reply),
                    by=caller,
                ),
            )
        try:
            resumed, pending = core.release_gate(run_id, interaction.node, self._output(answered)), False
        except SendFailedError:  # the action is stored: the reconciler sends it
            resumed, pending = False, True
        return {
            "interaction_id": interaction.interaction_id,
            "node": interaction.node,
            "action": action,
            "queued": True,
            "resumed": resumed,
            "delivery": delivery_of(resumed, pending=pending),
            "reviewed_head": stored.get("reviewed_head"),
        }

    @staticmethod
    def _refuse_disallowed(
        action: str,
        answers: dict[str, Any],
        verdict: dict[str, Any] | None,
        allowed: list[str],
        *,
        used: int,
        max_turns: int,
    ) -> str | None:
        """409 for an action the dialogue or the verdict does not allow now; 422 for a force-merge over
        blockers without its reason. Returns the stripped reason (None when not given)."""
        if action == "reply" and used >= max_turns:
            raise ConflictError(
                f"the dialogue reached max_turns ({max_turns}); only {', '.join(allowed)} are accepted now",
                details={"allowed": allowed, "max_turns": max_turns, "turns_used": used},
            )
        if action == "approve_merge" and verdict_blocks_approval(verdict):
            raise ConflictError(
                "the companion's verdict is request_changes or lists blockers; approve_merge is refused. "
                "Use force_merge to merge anyway (with a reason; git safety guards still apply), or reply / "
                "request_changes",
                details={"verdict": verdict, "allowed": allowed},
            )
        reason = (answers.get(KEY_REASON) or "").strip() or None
        if action == "force_merge" and verdict_blocks_approval(verdict) and reason is None:
            raise ValidationFailedError(
                f"force_merge over the companion's blockers needs a reason: set {KEY_REASON} to why it merges anyway",
                details={"path": KEY_REASON, "verdict": verdict},
            )
        return reason

    def _refuse_unreviewed(
        self,
        config: GateConfig,
        reviewed: Reviewed,
        seen_head: str | None,
        allowed: list[str],
    ) -> None:
        """409 before a merge of anything but the reviewed commit: the operator looked at another head
        than the companion's latest review, or the run branch moved since (where the repository can be
        read here; the merge build merges the pinned commit whatever the branch holds by then)."""
        again = [a for a in allowed if a in ("reply", "request_changes")]
        details = {"reviewed_head": reviewed.head, "diff_digest": reviewed.diff_digest, "allowed": again}
        if seen_head is not None and reviewed.head is not None and seen_head != reviewed.head:
            raise ConflictError(
                f"you reviewed {seen_head[:12]} but the companion's latest review is of {reviewed.head[:12]}: "
                "reload the review and decide on what it shows",
                details={**details, "seen_head": seen_head},
            )
        tip = self._branch_tip(config)
        if tip is not None and reviewed.head is not None and tip != reviewed.head:
            raise ConflictError(
                f"the run branch {config.run_branch!r} moved to {tip} after the review of {reviewed.head[:12]}: "
                f"a merge now would take commits nobody reviewed. Send a reply ({KEY_ACTION}=reply) so the "
                "companion reviews the new head, then decide",
                details={**details, "run_branch": config.run_branch, "run_branch_head": tip},
            )

    @staticmethod
    def _check_answers(answers: dict[str, Any]) -> tuple[str, str | None, str | None, str | None]:
        unknown = sorted(k for k in answers if k not in RESERVED_KEYS)
        if unknown:
            raise ValidationFailedError(
                f"a review action takes only the reserved keys {', '.join(RESERVED_KEYS)}; unexpected: "
                f"{', '.join(unknown)}",
                details={"path": unknown[0], "allowed_keys": list(RESERVED_KEYS)},
            )
        action = answers.get(KEY_ACTION)
        if action not in ACTIONS:
            shown = "missing" if action is None else repr(action)
            raise ValidationFailedError(
                f"{KEY_ACTION} is {shown}; expected one of: {', '.join(ACTIONS)}",
                details={"path": KEY_ACTION, "allowed": list(ACTIONS)},
            )
        for key in (KEY_REPLY, KEY_MESSAGE, KEY_STRATEGY, KEY_HEAD, KEY_REASON):
            if answers.get(key) is not None and not isinstance(answers[key], str):
                raise ValidationFailedError(f"{key} must be a string", details={"path": key})
        reply = (answers.get(KEY_REPLY) or "").strip() or None
        if action == "reply" and reply is None:
            raise ValidationFailedError(
                f"a reply needs text: set {KEY_REPLY} to the message for the companion", details={"path": KEY_REPLY}
            )
        if action != "reply" and reply is not None:
            raise ValidationFailedError(f"{KEY_REPLY} goes only with {KEY_ACTION}=reply", details={"path": KEY_REPLY})
        strategy = answers.get(KEY_STRATEGY)
        if strategy is not None and strategy not in STRATEGIES:
            raise ValidationFailedError(
                f"{KEY_STRATEGY} is {strategy!r}; expected one of: {', '.join(STRATEGIES)}",
                details={"path": KEY_STRATEGY, "allowed": list(STRATEGIES)},
            )
        if strategy is not None and action not in MERGE_ACTIONS:
            raise ValidationFailedError(
                f"{KEY_STRATEGY} goes only with {KEY_ACTION}=approve_merge or force_merge",
                details={"path": KEY_STRATEGY},
            )
        message = (answers.get(KEY_MESSAGE) or "").strip() or None
        return str(action), reply, message, strategy
