"""The review gate's dialogue: the diff build, the companion's first turn and its replies (each turn and
verdict stored), and the auto-merge of a confident approval when the gate's posture allows it."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from baton.contracts.review import BuildStarted, ReviewTurnOutput
from baton.domain.companion import CompanionTurn
from baton.domain.fields import OPEN_RUN_STATES
from baton.domain.merge_contracts import BuildRequest
from baton.domain.review_dialogue import companion_context, diff_request, merges_without_a_click, verdict_warnings
from baton.domain.review_state import Reviewed, StoredAction, turn_recorded
from baton.errors import BatonError, ConflictError
from baton.events import ReviewAutoMerge, ReviewRefused, ReviewStarted, ReviewVerdict
from baton.models import Interaction, ReviewRequest, status_of
from baton.services.review.gate import ReviewGate

if TYPE_CHECKING:
    from collections.abc import Callable

    from baton.domain.companion import Verdict
    from baton.domain.merge_contracts import BoundedDiff
    from baton.domain.review_gate import GateConfig
    from baton.events import EventPayload
    from baton.review_ports import Companion

log = logging.getLogger("baton")


class ReviewDialogue(ReviewGate):
    companion: Callable[[], Companion]
    parse_config: Callable[[Any], GateConfig]  # parse_gate_config with the deployment's runner and repository

    def start_diff(self, run_id: str, raw_config: Any, token: str) -> BuildStarted:
        # A gate with nothing to diff, or one its first turn will refuse, is released at once: that turn says why.
        try:
            diff = diff_request(run_id, self.parse_config(raw_config))
        except BatonError:
            self.core.tokens.send_success(token, {"started": False})
            return BuildStarted(started=False, handle="")
        request = BuildRequest(kind="diff", diff_target=diff.target, **diff.model_dump(exclude={"target"}))
        return BuildStarted(started=True, handle=self.start_build(request, token))

    def first_turn(self, run_id: str, raw_config: Any) -> ReviewTurnOutput:
        """A misconfigured gate is refused here, before any pause (`ok` false, and the run fails with it)."""
        core = self.core
        core.ensure_run(run_id)
        gate = raw_config.get("gate", "review") if isinstance(raw_config, dict) else "review"
        try:
            config = self.parse_config(raw_config)
            diff = self.diffs.run_branch_diff(diff_request(run_id, config))
        except BatonError as err:
            return self._refuse(run_id, str(gate), err.message)
        # The companion speaks before the review is stored: an operator never finds a pending review
        # whose first turn is still being written (the call can take as long as the model does).
        turn = self._call(lambda c: c.first_turn(companion_context(run_id, config, diff, turn_index=1)), config)
        stats = diff.model_dump(exclude={"text"})
        request = ReviewRequest(
            node=config.gate,
            **config.model_dump(include={"prompt", "timeout_seconds", "notify"}),
            ladder=config.ladder,
            config=config.model_dump(),
            diff=stats,
        )
        interaction = core.new_interaction(run_id, request, expires_at=core.deadline_of(config.timeout_seconds))
        started = ReviewStarted(gate=config.gate, interaction_id=interaction.interaction_id, diff=stats)
        reviewed = self._store_companion_turn(
            interaction, config, turn, Reviewed.of(stats, []), diff=diff, started=started
        )
        auto = self._auto_merge(interaction, config, turn.verdict, reviewed)
        return self._turn_output(config, interaction, auto_merge=auto)

    def reply_turn(self, run_id: str, gate: str) -> ReviewTurnOutput:
        interaction, config = self._require(run_id, gate)
        stored = StoredAction.of(interaction)
        if interaction.state.status != "answered" or stored.action != "reply":
            raise ConflictError(f"review at gate '{gate}' has no reply to answer", details={"run_id": run_id})
        reviewed = self._reviewed(interaction)
        thread, message = reviewed.reply_prompt(stored.reply)
        diff = self._diff(run_id, config)
        ctx = companion_context(run_id, config, diff, turn_index=reviewed.turns_used + 1)
        turn = self._call(lambda c: c.reply(ctx, thread, message), config)
        reviewed = self._store_companion_turn(interaction, config, turn, reviewed, diff=diff)
        current = self.core.store.get_interaction(run_id, interaction.interaction_id) or interaction
        auto = self._auto_merge(current, config, turn.verdict, reviewed, from_status="answered")
        if not auto:
            self._reopen(current, config, reason=None)
        return self._turn_output(config, interaction, auto_merge=auto)

    @staticmethod
    def _turn_output(config: GateConfig, interaction: Interaction, *, auto_merge: bool) -> ReviewTurnOutput:
        configured = config.model_dump(include={"gate", "timeout_seconds", "merge_timeout_seconds"})
        return ReviewTurnOutput(ok=True, auto_merge=auto_merge, interaction_id=interaction.interaction_id, **configured)

    def _refuse(self, run_id: str, gate: str, message: str) -> ReviewTurnOutput:
        cause = f"review gate '{gate}' refused to start: {message}"
        self.core.record(run_id, ReviewRefused(gate=gate, cause=cause))
        self.core.set_run_status(run_id, "failed", allowed_from=OPEN_RUN_STATES, reason=cause)
        return ReviewTurnOutput(ok=False, cause=cause, gate=gate)

    def _diff(self, run_id: str, config: GateConfig) -> BoundedDiff | None:
        """None when the diff cannot be read (a reply still gets its turn)."""
        try:
            return self.diffs.run_branch_diff(diff_request(run_id, config))
        except BatonError:
            return None

    def _call(self, call: Callable[[Companion], CompanionTurn], config: GateConfig) -> CompanionTurn:
        """A companion failure becomes a turn that says so: the operator can still reply or decide."""
        try:
            return call(self.companion())
        except BatonError as err:
            log.warning("companion unavailable: %s", err.message)
            return CompanionTurn(
                text=f"The review companion is unavailable ({err.message}). You can reply to try again, "
                "or approve, force-merge or request changes yourself.",
                model=config.model or "unavailable",
                is_model=False,
            )

    def _store_companion_turn(
        self,
        interaction: Interaction,
        config: GateConfig,
        turn: CompanionTurn,
        reviewed: Reviewed,
        *,
        diff: BoundedDiff | None,
        started: ReviewStarted | None = None,
    ) -> Reviewed:
        """The turn, its events and its verdict's: one write; the dialogue with it. `started`: the review's
        first turn, the review stored with it (`review_started` first)."""
        stored = reviewed.companion_turn(interaction, turn, at=self.core.now(), diff=diff)
        payloads: list[EventPayload] = [] if started is None else [started]
        payloads.append(turn_recorded(stored, config.gate, model=turn.model, reviewed_head=stored.reviewed_head))
        if (verdict := stored.verdict) is not None:
            warnings = verdict_warnings(config, verdict)
            iid = interaction.interaction_id
            payloads.append(
                ReviewVerdict(gate=config.gate, interaction_id=iid, n=stored.n, warnings=warnings, **verdict)
            )
        self._store_turn(stored, *payloads, review=interaction if started is not None else None)
        return reviewed.with_turn(stored)

    def _auto_merge(
        self,
        interaction: Interaction,
        config: GateConfig,
        verdict: Verdict | None,
        reviewed: Reviewed,
        *,
        from_status: str = "pending",
    ) -> bool:
        """`reviewed`: the dialogue with the turn that gave `verdict` (the merge takes the commit it read)."""
        if verdict is None or not merges_without_a_click(config, verdict) or interaction.state.status != from_status:
            return False
        action = StoredAction.auto_merge(reviewed, merge_strategy=config.merge_strategy)
        merging = ReviewAutoMerge(
            gate=config.gate,
            interaction_id=interaction.interaction_id,
            confidence=verdict.confidence,
            threshold=config.confidence_threshold,
            **action.model_dump(include={"reviewed_head", "diff_digest"}),
        )
        # The decision and its event: one write, chained as every decision is.
        answered = status_of(interaction.state, "answered", answer=action.stored(), by="companion", at=self.core.now())
        event = self.core.new_event(interaction.run_id, merging)
        try:
            self.core.store.transition_interaction(interaction, answered, with_records=[event])
        except ConflictError:
            return False  # the operator acted first
        return True
