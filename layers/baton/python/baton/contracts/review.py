"""The review gate as GET /api/runs/{run_id}/review shows it."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from baton.contracts.base import Contract


class ThreadTurn(Contract):
    n: int
    role: Literal["companion", "operator"]
    text: str
    at: str
    by: str | None = None
    model: str | None = None
    is_model: bool = False
    test_steps: list[str] = Field(default_factory=list)
    # The companion's verdict as it gave it (decision, confidence, blockers, ...): baton/review/ owns its keys.
    verdict: dict[str, Any] | None = None


class MergeFields(Contract):
    merge_status: str | None = None
    final_commit: str | None = None
    final_branch: str | None = None
    merged_into: str | None = None


class ReviewView(Contract):
    run_id: str
    gate: str
    interaction_id: str
    status: str
    reason: str | None = None
    # The operator's last action as stored (action, reply, message, merge_strategy, by).
    last_action: dict[str, Any] | None = None
    thread: list[ThreadTurn]
    verdict: dict[str, Any] | None = Field(default=None, description="The latest verdict of the companion.")
    turns_used: int
    max_turns: int
    allowed_actions: list[str]
    diff: dict[str, Any] | None = Field(default=None, description="Diff stats: files_changed, insertions, ...")
    review_url: str
    warnings: list[str]
    posture: str
    merge_strategy: str
    merge_into: str | None = None
    run_branch: str | None = None
    merge: MergeFields
    rounds: list[str] = Field(description="The review interactions of this run, oldest first.")
