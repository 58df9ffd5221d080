"""The review dialogue's pure rules (no port calls): the diff a gate reviews, what the companion is given
for a turn, the verdict's check against the gate's schema, and when a verdict merges without a click."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from baton.domain.companion import CompanionContext
from baton.domain.merge_contracts import DiffRequest
from baton.errors import BatonError

if TYPE_CHECKING:
    from baton.domain.companion import Verdict
    from baton.domain.merge_contracts import BoundedDiff
    from baton.domain.review_gate import GateConfig


def diff_request(run_id: str, config: GateConfig) -> DiffRequest:
    """The run branch against base_branch, else the named merge target, else HEAD."""
    target = config.merge_into if config.merge_into not in ("current", "none") else "HEAD"
    return DiffRequest(
        run_id=run_id,
        gate=config.gate,
        repo_path=config.repo_path,
        repo_url=config.repo_url,
        run_branch=config.run_branch,
        target=config.base_branch if config.base_branch is not None else target,
        max_bytes=config.diff_max_bytes,
    )


def companion_context(
    run_id: str, config: GateConfig, diff: BoundedDiff | None, *, turn_index: int
) -> CompanionContext:
    fields: dict[str, Any] = {}
    if diff is not None:
        fields = {"diff_text": diff.text, "diff_truncated": diff.truncated, "diff_total_bytes": diff.total_bytes}
        fields |= diff.model_dump(include={"files_changed", "insertions", "deletions", "files"})
    return CompanionContext(
        run_id=run_id,
        node=config.gate,
        system_prompt=config.system,
        model_id=config.model,
        max_turns=config.max_turns,
        turn_index=min(turn_index, config.max_turns),
        **fields,
    )


def verdict_warnings(config: GateConfig, verdict: dict[str, Any]) -> list[str]:
    from baton.domain.answer_schema import validate_answer

    try:
        validate_answer(verdict, json_schema=config.verdict_schema)
    except BatonError as err:
        return [f"the verdict does not satisfy the gate's output_schema: {err.message}"]
    return []


def merges_without_a_click(config: GateConfig, verdict: Verdict | None) -> bool:
    """Posture agent_verdict_ok: a confident clean approval merges (never under a quorum)."""
    return (
        config.posture == "agent_verdict_ok"
        and config.approval is None
        and verdict is not None
        and verdict.decision == "approve"
        and not verdict.blockers
        and verdict.confidence >= config.confidence_threshold
    )
