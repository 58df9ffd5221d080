"""The review-and-merge gate: companion turns, the operator's actions, the merge and its outcome.

One `review` interaction per entry into a gate (node = the gate name) carries the gate's configuration
(`ReviewRequest.config`) and cycles pending -> answered (an action) -> pending (after a reply turn or
a rejected merge) until a merge lands or changes are requested. The dialogue is stored as separate turn
items (`TURN#<iid>#<n>`). The state machine (statemachines/review_gate.asl.json) calls, in order:

    first_turn -> park -> [reply -> park]* -> start_merge -> record_merge -> (park again if rejected)

Invariant at park time: the interaction is `pending` (park the token) or `answered` (an action arrived
before the token was parked: the stored action is sent with the new token at once).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from baton.adapters.merge_runners import MergeRequest, MergeRunner
from baton.domain.review_gate import (
    ACTIONS,
    FINAL_ACTIONS,
    KEY_ACTION,
    KEY_MESSAGE,
    KEY_REPLY,
    KEY_STRATEGY,
    MERGE_ACTIONS,
    RESERVED_KEYS,
    STRATEGIES,
    GateConfig,
    parse_gate_config,
    resolve_review_url,
)
from baton.errors import BatonError, ConflictError, GoneError, NotFoundError, ValidationFailedError
from baton.events import (
    HumanInputRequested,
    InteractionAnswered,
    ReviewAutoMerge,
    ReviewMerged,
    ReviewMergeRejected,
    ReviewMergeStarted,
    ReviewMergeTimedOut,
    ReviewRefused,
    ReviewStarted,
    ReviewTurnRecorded,
    ReviewVerdict,
    RunPaused,
)
from baton.merge.diff import BoundedDiff, run_branch_diff
from baton.models import Interaction, ParkedWait, ReviewRequest, ReviewTurn, status_of
from baton.review.companion import Companion, CompanionContext, CompanionTurn, ThreadTurn, format_steps

if TYPE_CHECKING:
    from collections.abc import Callable

    from baton.runtime.settings import Settings
    from baton.services.core import Core

log = logging.getLogger("baton")
_EVENT_TEXT_LIMIT = 2000
_ACTIVE_RUN = {"created", "running", "paused_waiting_human"}


def is_review_answer(answers: dict[str, Any]) -> bool:
    return any(key.startswith("__review_") for key in answers)


def _clip(text: str, limit: int = _EVENT_TEXT_LIMIT) -> str:
    return text if len(text) <= limit else text[:limit] + "…"


class ReviewService:
    def __init__(
        self,
        core: Core,
        *,
        companion: Callable[[], Companion],
        runner: Callable[[], MergeRunner],
        merge_runner_kind: str = "local",
        merge_repository: str = "",
    ) -> None:
        self.core = core
        self._companion = companion
        self._runner = runner
        self.merge_runner_kind = merge_runner_kind
        self.merge_repository = merge_repository  # the deployment's repository (BATON_MERGE_REPOSITORY)

    # ---- reading ---------------------------------------------------------------------------------
    def _latest(self, run_id: str, gate: str | None = None) -> Interaction | None:
        found = [i for i in self.core.store.list_run_interactions(run_id, kind="review") if gate in (None, i.node)]
        return found[-1] if found else None

    def _require(self, run_id: str, gate: str | None = None) -> Interaction:
        found = self._latest(run_id, gate)
        if found is None:
            where = f" at gate '{gate}'" if gate else ""
            raise NotFoundError(f"run {run_id} has no review{where}", details={"run_id": run_id})
        return found

    @staticmethod
    def config_of(interaction: Interaction) -> GateConfig:
        return GateConfig.model_validate(interaction.request_as(ReviewRequest).config)

    def waiting_at_review(self, run_id: str, node: str | None = None) -> bool:
        latest = self._latest(run_id, node)
        return latest is not None and latest.state.status == "pending"

    @staticmethod
    def _latest_verdict(turns: list[ReviewTurn]) -> dict[str, Any] | None:
        for turn in reversed(turns):
            if turn.role == "companion" and turn.verdict is not None:
                return turn.verdict
        return None

    @staticmethod
    def _companion_turns(turns: list[ReviewTurn]) -> int:
        return sum(1 for t in turns if t.role == "companion")

    def review_url(self, interaction: Interaction) -> tuple[str, list[str]]:
        config = self.config_of(interaction)
        run_input = {k: v for k, v in interaction.request_as(ReviewRequest).config.items() if k != "outputs"}
        scope = {
            "run_id": interaction.run_id,
            "gate": config.gate,
            "run_branch": config.run_branch,
            "input": run_input,
            "outputs": config.outputs,
        }
        return resolve_review_url(config.review_url, scope)

    def view(self, run_id: str, node: str | None = None) -> dict[str, Any]:
        """GET /api/runs/{run_id}/review: thread, verdict, diff stats, review URL, merge status."""
        run = self.core.require_run(run_id)
        interaction = self._require(run_id, node)
        config = self.config_of(interaction)
        turns = self.core.store.list_turns(run_id, interaction.interaction_id)
        used = self._companion_turns(turns)
        url, warnings = self.review_url(interaction)
        pending = interaction.state.status == "pending"
        allowed = [a for a in ACTIONS if a != "reply" or used < config.max_turns] if pending else []
        rounds = [i.interaction_id for i in self.core.store.list_run_interactions(run_id, kind="review")]
        return {
            "run_id": run_id,
            "gate": config.gate,
            "interaction_id": interaction.interaction_id,
            "status": interaction.state.status,
            "reason": interaction.state.reason,
            "last_action": interaction.state.answer,
            "thread": [t.model_dump(exclude={"run_id", "interaction_id"}) for t in turns],
            "verdict": self._latest_verdict(turns),
            "turns_used": used,
            "max_turns": config.max_turns,
            "allowed_actions": allowed,
            "diff": interaction.request_as(ReviewRequest).diff,
            "review_url": url,
            "warnings": warnings,
            "posture": config.posture,
            "merge_strategy": config.merge_strategy,
            "merge_into": config.merge_into,
            "run_branch": config.run_branch,
            "merge": {
                "merge_status": run.merge_status,
                "final_commit": run.final_commit,
                "final_branch": run.final_branch,
                "merged_into": run.merged_into,
            },
            "rounds": rounds,
        }

    # ---- companion turns (the review_turn Lambda) -------------------------------------------------
    def first_turn(self, run_id: str, raw_config: Any) -> dict[str, Any]:
        """Validate the gate, read the bounded diff, run the companion's first turn. A misconfigured gate
        is refused here, before any pause: {"ok": false, "cause": ...} and the run fails with it."""
        core = self.core
        core.ensure_run(run_id)
        gate = raw_config.get("gate", "review") if isinstance(raw_config, dict) else "review"
        try:
            config = parse_gate_config(
                raw_config, merge_runner=self.merge_runner_kind, merge_repository=self.merge_repository
            )
            diff = self._diff(config)
        except BatonError as err:
            return self._refuse(run_id, str(gate), err.message)
        now = core.now()
        interaction = Interaction(
            interaction_id=core.ids.new_id(),
            run_id=run_id,
            created_at=now,
            expires_at=core.later(config.timeout_seconds),
            request=ReviewRequest(
                node=config.gate,
                prompt=config.prompt,
                timeout_seconds=config.timeout_seconds,
                notify=config.notify,
                config=config.model_dump(),
                diff=self._diff_stats(diff),
            ),
        )
        core.store.put_interaction(interaction)
        core.record(
            run_id,
            ReviewStarted(
                gate=config.gate,
                interaction_id=interaction.interaction_id,
                diff=self._diff_stats(diff),
            ),
        )
        ctx = self._context(run_id, config, diff, turn_index=1)
        turn = self._call(lambda c: c.first_turn(ctx), config)
        verdict = self._store_companion_turn(interaction, config, turn, n=0)
        auto = self._auto_merge(interaction, config, verdict)
        return {"ok": True, "cause": "", "auto_merge": auto, **self._gate_fields(config, interaction)}

    def reply_turn(self, run_id: str, gate: str) -> dict[str, Any]:
        """The companion answers the operator's stored reply; the interaction goes back to pending."""
        interaction = self._require(run_id, gate)
        config = self.config_of(interaction)
        answer = interaction.state.answer or {}
        if interaction.state.status != "answered" or answer.get("action") != "reply":
            raise ConflictError(f"review at gate '{gate}' has no reply to answer", details={"run_id": run_id})
        turns = self.core.store.list_turns(run_id, interaction.interaction_id)
        thread = [ThreadTurn(role=t.role, text=t.text, n=t.n) for t in turns[:-1]]
        message = turns[-1].text if turns and turns[-1].role == "operator" else str(answer.get("reply") or "")
        diff = self._diff(config, quiet=True)
        ctx = self._context(run_id, config, diff, turn_index=self._companion_turns(turns) + 1)
        turn = self._call(lambda c: c.reply(ctx, thread, message), config)
        verdict = self._store_companion_turn(interaction, config, turn, n=len(turns))
        current = self.core.store.get_interaction(run_id, interaction.interaction_id) or interaction
        auto = False
        if self._auto_eligible(config, verdict):
            auto = self._auto_merge(current, config, verdict, from_status="answered")
        if not auto:
            self._reopen(current, config, reason=None)
        return {"ok": True, "cause": "", "auto_merge": auto, **self._gate_fields(config, interaction)}

    def _gate_fields(self, config: GateConfig, interaction: Interaction) -> dict[str, Any]:
        return {
            "gate": config.gate,
            "interaction_id": interaction.interaction_id,
            "timeout_seconds": config.timeout_seconds,
            "merge_timeout_seconds": config.merge_timeout_seconds,
        }

    def _refuse(self, run_id: str, gate: str, message: str) -> dict[str, Any]:
        cause = f"review gate '{gate}' refused to start: {message}"
        self.core.record(run_id, ReviewRefused(gate=gate, cause=cause))
        self.core.set_run_status(run_id, "failed", allowed_from=_ACTIVE_RUN, reason=cause)
        return {
            "ok": False,
            "cause": cause,
            "auto_merge": False,
            "gate": gate,
            "interaction_id": "",
            "timeout_seconds": 1,
            "merge_timeout_seconds": 1,
        }

    def _diff(self, config: GateConfig, *, quiet: bool = False) -> BoundedDiff | None:
        if not config.repo_path or not config.run_branch:
            return None
        target = config.base_branch
        if target is None:
            target = config.merge_into if config.merge_into not in ("current", "none") else "HEAD"
        try:
            return run_branch_diff(Path(config.repo_path), config.run_branch, target, max_bytes=config.diff_max_bytes)
        except BatonError:
            if quiet:
                return None
            raise

    @staticmethod
    def _diff_stats(diff: BoundedDiff | None) -> dict[str, Any] | None:
        if diff is None:
            return None
        return diff.model_dump(exclude={"text"})

    @staticmethod
    def _context(run_id: str, config: GateConfig, diff: BoundedDiff | None, *, turn_index: int) -> CompanionContext:
        fields: dict[str, Any] = {}
        if diff is not None:
            fields = {
                "diff_text": diff.text,
                "diff_truncated": diff.truncated,
                "diff_total_bytes": diff.total_bytes,
                "files_changed": diff.files_changed,
                "insertions": diff.insertions,
                "deletions": diff.deletions,
                "files": diff.files,
            }
        return CompanionContext(
            run_id=run_id,
            node=config.gate,
            system_prompt=config.system,
            model_id=config.model,
            max_turns=config.max_turns,
            turn_index=min(turn_index, config.max_turns),
            **fields,
        )

    def _call(self, call: Callable[[Companion], CompanionTurn], config: GateConfig) -> CompanionTurn:
        """A companion failure becomes a turn that says so: the operator can still reply or decide."""
        try:
            return call(self._companion())
        except BatonError as err:
            log.warning("companion unavailable: %s", err.message)
            return CompanionTurn(
                text=f"The review companion is unavailable ({err.message}). You can reply to try again, "
                "or approve, force-merge or request changes yourself.",
                model=config.model or "unavailable",
                is_model=False,
            )

    def _store_companion_turn(
        self, interaction: Interaction, config: GateConfig, turn: CompanionTurn, *, n: int
    ) -> dict[str, Any] | None:
        core = self.core
        text = turn.text
        if turn.test_steps and format_steps(turn.test_steps) not in text:
            text = f"{text}\n\n{format_steps(turn.test_steps)}"
        verdict = turn.verdict.model_dump() if turn.verdict is not None else None
        core.store.put_turn(
            ReviewTurn(
                run_id=interaction.run_id,
                interaction_id=interaction.interaction_id,
                n=n,
                role="companion",
                text=text,
                at=core.now(),
                by="companion",
                model=turn.model,
                is_model=turn.is_model,
                test_steps=turn.test_steps,
                verdict=verdict,
            )
        )
        core.record(
            interaction.run_id,
            ReviewTurnRecorded(
                gate=config.gate,
                interaction_id=interaction.interaction_id,
                n=n,
                role="companion",
                text=_clip(text),
                model=turn.model,
            ),
        )
        if verdict is not None:
            warnings = self._check_verdict(config, verdict)
            core.record(
                interaction.run_id,
                ReviewVerdict(
                    gate=config.gate,
                    interaction_id=interaction.interaction_id,
                    n=n,
                    warnings=warnings,
                    **verdict,
                ),
            )
        return verdict

    @staticmethod
    def _check_verdict(config: GateConfig, verdict: dict[str, Any]) -> list[str]:
        from baton.domain.answer_schema import validate_answer

        try:
            validate_answer(verdict, json_schema=config.verdict_schema)
        except BatonError as err:
            return [f"the verdict does not satisfy the gate's output_schema: {err.message}"]
        return []

    @staticmethod
    def _auto_eligible(config: GateConfig, verdict: dict[str, Any] | None) -> bool:
        return (
            config.posture == "agent_verdict_ok"
            and verdict is not None
            and verdict.get("decision") == "approve"
            and not verdict.get("blockers")
            and float(verdict.get("confidence", 0)) >= config.confidence_threshold
        )

    def _auto_merge(
        self,
        interaction: Interaction,
        config: GateConfig,
        verdict: dict[str, Any] | None,
        *,
        from_status: str = "pending",
    ) -> bool:
        """Posture agent_verdict_ok: an approved verdict at or above the threshold merges without a click."""
        if not self._auto_eligible(config, verdict) or interaction.state.status != from_status:
            return False
        assert verdict is not None
        action = {
            "action": "auto_merge",
            "reply": None,
            "message": None,
            "merge_strategy": config.merge_strategy,
            "by": "companion",
        }
        try:
            self.core.store.transition_interaction(
                interaction,
                status_of(interaction.state, "answered", answer=action, by="companion", at=self.core.now()),
            )
        except ConflictError:
            return False  # the operator acted first
        self.core.record(
            interaction.run_id,
            ReviewAutoMerge(
                gate=config.gate,
                interaction_id=interaction.interaction_id,
                confidence=verdict.get("confidence"),
                threshold=config.confidence_threshold,
            ),
        )
        return True

    def _reopen(self, interaction: Interaction, config: GateConfig, *, reason: str | None) -> Interaction:
        """Back to pending (after a reply turn or a rejected merge), with a fresh expiry."""
        reopened = interaction.model_copy(update={"expires_at": self.core.later(config.timeout_seconds)})
        return self.core.store.transition_interaction(reopened, status_of(interaction.state, "pending", reason=reason))

    # ---- the pause (the review_park Lambda) -------------------------------------------------------
    def park(self, run_id: str, gate: str, token: str) -> dict[str, Any]:
        core = self.core
        interaction = self._require(run_id, gate)
        config = self.config_of(interaction)
        url, warnings = self.review_url(interaction)
        core.store.put_wait(
            ParkedWait(
                run_id=run_id,
                gate=gate,
                task_token=token,
                kind="review",
                interaction_ids=[interaction.interaction_id],
                scope={"review_url": url},
                parked_at=core.now(),
            )
        )
        core.set_run_status(run_id, "paused_waiting_human", allowed_from=_ACTIVE_RUN)
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

    def _output(self, interaction: Interaction) -> dict[str, Any]:
        answer = interaction.state.answer or {}
        turns = self.core.store.list_turns(interaction.run_id, interaction.interaction_id)
        return {
            "interaction_id": interaction.interaction_id,
            "node": interaction.node,
            "action": answer.get("action"),
            "reply": answer.get("reply"),
            "message": answer.get("message"),
            "merge_strategy": answer.get("merge_strategy"),
            "answered_by": interaction.state.answered_by,
            "answered_at": interaction.state.answered_at,
            "verdict": self._latest_verdict(turns),
        }

    # ---- the operator's action (POST /api/runs/{run_id}/resume with reserved keys) -----------------
    def act(self, run_id: str, answers: dict[str, Any], *, caller: str, node: str | None = None) -> dict[str, Any]:
        core = self.core
        action, reply, message, strategy = self._check_answers(answers)
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
        if interaction.state.status != "pending":
            busy = (interaction.state.answer or {}).get("action")
            raise ConflictError(
                f"the review at gate '{interaction.node}' is not waiting for the operator (last action: {busy}; "
                "the companion is answering, a merge is running or the gate finished); try again shortly",
                details={"interaction": interaction.public()},
            )
        config = self.config_of(interaction)
        turns = core.store.list_turns(run_id, interaction.interaction_id)
        used = self._companion_turns(turns)
        if action == "reply" and used >= config.max_turns:
            raise ConflictError(
                f"the dialogue reached max_turns ({config.max_turns}); only "
                f"{', '.join(FINAL_ACTIONS)} are accepted now",
                details={"allowed": list(FINAL_ACTIONS), "max_turns": config.max_turns, "turns_used": used},
            )
        verdict = self._latest_verdict(turns)
        if (
            action == "approve_merge"
            and verdict is not None
            and (verdict.get("blockers") or verdict.get("decision") == "request_changes")
        ):
            raise ConflictError(
                "the companion's verdict is request_changes or lists blockers; approve_merge is refused. "
                "Use force_merge to merge anyway (git safety guards still apply), or reply / request_changes",
                details={"verdict": verdict, "allowed": ["force_merge", "reply", "request_changes"]},
            )
        stored = {
            "action": action,
            "reply": reply,
            "message": message,
            "merge_strategy": strategy or config.merge_strategy,
            "by": caller,
        }
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
                    text=_clip(reply),
                    by=caller,
                ),
            )
        resumed = core.release_gate(run_id, interaction.node, self._output(answered))
        return {
            "interaction_id": interaction.interaction_id,
            "node": interaction.node,
            "action": action,
            "queued": True,
            "resumed": resumed,
        }

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
        for key in (KEY_REPLY, KEY_MESSAGE, KEY_STRATEGY):
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

    # ---- the merge (merge_start / merge_record Lambdas) ---------------------------------------------
    def start_merge(self, run_id: str, gate: str, token: str) -> dict[str, Any]:
        interaction = self._require(run_id, gate)
        config = self.config_of(interaction)
        answer = interaction.state.answer or {}
        if config.run_branch is None:  # parse_gate_config refuses this; kept for the type checker
            raise ValidationFailedError(f"review gate '{gate}' has no run_branch")
        request = MergeRequest(
            run_id=run_id,
            gate=gate,
            run_branch=config.run_branch,
            repo_path=config.repo_path,
            repo_url=config.repo_url,
            into=config.merge_into,
            strategy=answer.get("merge_strategy") or config.merge_strategy,
            message=answer.get("message"),
        )
        handle = self._runner().start(token, request)
        self.core.record(
            run_id,
            ReviewMergeStarted(
                gate=gate,
                interaction_id=interaction.interaction_id,
                action=answer.get("action"),
                by=interaction.state.answered_by,
                strategy=request.strategy,
                into=request.into,
                run_branch=request.run_branch,
                handle=handle,
            ),
        )
        return {"started": True, "handle": handle}

    def record_merge(
        self,
        run_id: str,
        gate: str,
        *,
        outcome: dict[str, Any] | None = None,
        error: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Land the outcome on the run summary. Merged/noop -> the gate finishes; rejected (or a merge that
        failed to run) -> the interaction is pending again, so the operator can fix the tree and re-approve."""
        core = self.core
        interaction = self._require(run_id, gate)
        config = self.config_of(interaction)
        answer = interaction.state.answer or {}
        turns = core.store.list_turns(run_id, interaction.interaction_id)
        base = {
            "action": answer.get("action"),
            "answered_by": interaction.state.answered_by,
            "verdict": self._latest_verdict(turns),
            "interaction_id": interaction.interaction_id,
        }
        if error is not None and error.get("Error") == "States.Timeout":
            cause = f"the merge at review gate '{gate}' did not report within {config.merge_timeout_seconds}s"
            core.record(run_id, ReviewMergeTimedOut(gate=gate, cause=cause))
            core.store.update_run(run_id, {"merge_status": "timed_out", "updated_at": core.now()})
            core.set_run_status(run_id, "failed", allowed_from=_ACTIVE_RUN, reason=cause)
            return {"status": "timed_out", "cause": cause, "merge": {}, **base}
        if error is not None:
            outcome = {
                "merge_status": "rejected",
                "reason": f"the merge did not run: {error.get('Error')}: {str(error.get('Cause') or '')[:2000]}",
                "reject_code": "merge_failed",
            }
        assert outcome is not None
        status = str(outcome.get("merge_status"))
        merge = {
            "merge_status": status,
            "final_commit": outcome.get("final_commit"),
            "final_branch": outcome.get("final_branch"),
            "merged_into": outcome.get("merged_into"),
            "strategy": outcome.get("strategy"),
            "reason": outcome.get("reason"),
        }
        if status in ("merged", "noop"):
            fields = {k: merge[k] for k in ("final_commit", "final_branch", "merged_into") if merge[k] is not None}
            core.store.update_run(run_id, {**fields, "merge_status": status, "updated_at": core.now()})
            core.record(run_id, ReviewMerged(gate=gate, by=interaction.state.answered_by, **base, **merge))
            return {"status": "merged", "cause": "", "merge": merge, **base}
        reason = str(outcome.get("reason") or "the merge was rejected")
        core.store.update_run(run_id, {"merge_status": "rejected", "updated_at": core.now()})
        core.record(
            run_id,
            ReviewMergeRejected(
                gate=gate,
                reject_code=outcome.get("reject_code"),
                reason=reason,
                conflicting_files=outcome.get("conflicting_files") or [],
                dirty_files=outcome.get("dirty_files") or [],
                action=base["action"],
            ),
        )
        self._reopen(interaction, config, reason=f"merge rejected: {reason}")
        return {"status": "rejected", "cause": reason, "merge": merge, **base}


def build_review_service(settings: Settings, core: Core) -> ReviewService:
    """Adapters from the settings: BATON_COMPANION=offline|bedrock (+ BATON_COMPANION_MODEL) and
    BATON_MERGE_RUNNER=codebuild|local (+ BATON_MERGE_PROJECT, BATON_MERGE_REPOSITORY). The local stack
    sets offline + local."""
    from baton.adapters.merge_runners import CodeBuildMergeRunner, LocalMergeRunner
    from baton.review.companion import companion_from_config

    def companion() -> Companion:
        if settings.companion.strip().lower() == "offline":
            return companion_from_config("offline")
        return companion_from_config("bedrock", model_id=settings.companion_model)

    def runner() -> MergeRunner:
        if settings.merge_runner == "local":
            return LocalMergeRunner()
        if settings.merge_runner != "codebuild":
            raise ValidationFailedError(
                f"unknown BATON_MERGE_RUNNER {settings.merge_runner!r}; expected codebuild or local"
            )
        import boto3

        return CodeBuildMergeRunner(boto3.client("codebuild"), settings.merge_project)

    return ReviewService(
        core,
        companion=companion,
        runner=runner,
        merge_runner_kind=settings.merge_runner,
        merge_repository=settings.merge_repository,
    )
