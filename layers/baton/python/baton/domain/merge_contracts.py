"""The typed contracts of the review gate's `DiffSource` and `MergeRunner` ports (`baton/ports.py`):
what is asked of a diff or a merge and what comes back. `baton/merge/` produces them, the adapters
carry them, the review service (`baton/services/review/`) reads them."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

Strategy = Literal["squash", "merge"]
MergeStatus = Literal["merged", "rejected", "noop"]
RejectCode = Literal[
    "detached_head",
    "no_work_tree",
    "target_not_checked_out",
    "operation_in_progress",
    "dirty_tree",
    "untracked_would_be_overwritten",
    "unrelated_histories",
    "non_fast_forward",
    "conflict",
    "merge_failed",
]


class DiffRequest(BaseModel):
    """The run branch's own changes against `target` (merge-base(target, run_branch)..run_branch)."""

    repo_path: str
    run_branch: str
    target: str = "HEAD"
    max_bytes: int = Field(default=60_000, ge=256)


class BoundedDiff(BaseModel):
    """A unified diff, possibly truncated, with stats of the whole diff."""

    base: str = Field(description="full SHA of the base commit")
    head: str = Field(description="full SHA of the head commit")
    text: str = Field(description="unified diff; ends with a marker line when truncated")
    truncated: bool
    total_bytes: int = Field(description="size of the whole diff in bytes")
    shown_bytes: int = Field(description="bytes of the diff included in text (marker excluded)")
    files_changed: int
    insertions: int
    deletions: int
    files: list[str] = Field(default_factory=list, description="every changed path (new path of a rename)")
    files_not_shown: int = Field(0, description="files whose diff starts after the cut")


class MergeRequest(BaseModel):
    """One merge of a run branch, as the review gate asks for it."""

    run_id: str
    gate: str
    run_branch: str
    repo_path: str | None = None
    repo_url: str | None = None
    into: str = "current"
    strategy: str = "squash"
    message: str | None = None


class MergeOutcome(BaseModel):
    """What the merge did. The final_* fields and merge_status are the run summary's merge fields."""

    merge_status: MergeStatus
    final_commit: str | None = Field(None, description="commit that holds the run's changes on final_branch")
    final_branch: str | None = Field(None, description="branch that holds final_commit")
    merged_into: str | None = Field(None, description="target branch, or None when nothing was merged into one")
    strategy: Strategy
    reason: str = Field(description="one human-readable sentence")
    conflicting_files: list[str] = Field(default_factory=list)
    dirty_files: list[str] = Field(default_factory=list, description="paths that blocked the merge")
    reject_code: RejectCode | None = Field(None, description="machine-readable cause of a rejection")
    run_branch: str
    run_head: str = Field(description="tip of the run branch when the merge was evaluated")
    target: str | None = Field(None, description="target branch the merge was evaluated against")


class StatesError(BaseModel):
    """A Step Functions error a Catch put in the state's input (`ResultPath`): the merge task's failure."""

    error: str = Field(alias="Error")
    cause: str | None = Field(default=None, alias="Cause")

    model_config = {"populate_by_name": True}
