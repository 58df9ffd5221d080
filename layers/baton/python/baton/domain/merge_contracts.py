"""The typed contracts of the review gate's `DiffSource`, `BuildRunner` and `BuildRecords` ports
(`baton/ports.py`): what is asked of a diff or a merge and what comes back. `baton/merge/` produces
them, the adapters carry them, the review service (`baton/services/review/`) reads them.

A build (the bounded diff or the merge, `python -m baton.merge.build`) is told what to do by a
`BuildRequest` (its environment, `BATON_BUILD_*`), never holds a task token, and writes one
`BuildReport` into Baton's table; when it ends, `BuildFinished` (the CodeBuild state-change event
deployed, the subprocess's exit locally) lets Baton send the token parked in its `BuildRecord`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

if TYPE_CHECKING:
    from collections.abc import Mapping

Strategy = Literal["squash", "merge"]
# not_merged: `merge_into: none` (the result stays on the run branch; no target is touched, nothing squashed)
MergeStatus = Literal["merged", "rejected", "noop", "not_merged"]
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
    "reviewed_commit_missing",
]


class DiffRequest(BaseModel):
    """The run branch's own changes against `target` (merge-base(target, run_branch)..run_branch).
    `run_id`/`gate` name the review the diff belongs to (the stored diff of the gate's diff build)."""

    model_config = ConfigDict(defer_build=True)

    repo_path: str | None = None
    repo_url: str | None = None
    run_id: str
    gate: str
    run_branch: str
    target: str = "HEAD"
    max_bytes: int = Field(default=60_000, ge=256)


class BoundedDiff(BaseModel):
    """A unified diff, possibly truncated, with stats of the whole diff."""

    model_config = ConfigDict(defer_build=True)

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
    digest: str | None = Field(None, description="sha256 (hex) of the whole diff base..head, truncated or not")
    first_commit_subject: str | None = Field(
        None, description="subject line of the oldest commit in base..head (names the change in lists)"
    )


class MergeOutcome(BaseModel):
    """What the merge did. The final_* fields and merge_status are the run summary's merge fields."""

    model_config = ConfigDict(defer_build=True)

    merge_status: MergeStatus
    final_commit: str | None = Field(None, description="commit that holds the run's changes on final_branch")
    final_branch: str | None = Field(None, description="branch that holds final_commit")
    merged_into: str | None = Field(None, description="target branch, or None when nothing was merged into one")
    strategy: Strategy | None = Field(description="how it was merged; None when nothing was (not_merged)")
    reason: str = Field(description="one human-readable sentence")
    conflicting_files: list[str] = Field(default_factory=list)
    dirty_files: list[str] = Field(default_factory=list, description="paths that blocked the merge")
    reject_code: RejectCode | None = Field(None, description="machine-readable cause of a rejection")
    run_branch: str
    run_head: str = Field(description="the commit merged: the reviewed head when one was pinned, else the tip")
    run_branch_tip: str | None = Field(
        None, description="tip of the run branch when the merge was evaluated (differs from run_head when it moved)"
    )
    target: str | None = Field(None, description="target branch the merge was evaluated against")


class StatesError(BaseModel):
    """A Step Functions error a Catch put in the state's input (`ResultPath`): the merge task's failure."""

    error: str = Field(alias="Error")
    cause: str | None = Field(default=None, alias="Cause")

    model_config = ConfigDict(populate_by_name=True, defer_build=True)


# ---- builds: the bounded diff and the merge, run where the repository is (CodeBuild or a subprocess) ----

BuildKind = Literal["diff", "merge"]
BUILD_KINDS: tuple[BuildKind, ...] = ("diff", "merge")
# SendTaskFailure caps `cause` at 32768 characters: the one limit of every reported cause.
MAX_CAUSE_CHARS = 32_000
ERROR_INVALID_INPUT = "MergeInvalidInput"
ERROR_CRASHED = "MergeCrashed"
BuildError = Literal["MergeInvalidInput", "MergeCrashed"]

# BuildRequest field -> the build's environment variable (infra/buildspec/merge.yml documents them).
_ENV_NAMES: dict[str, str] = {
    "run_id": "BATON_RUN_ID",
    "gate": "BATON_GATE",
    "kind": "BATON_BUILD_KIND",
    "build_key": "BATON_BUILD_KEY",
    "run_branch": "BATON_RUN_BRANCH",
    "repo_path": "BATON_REPO_PATH",
    "repo_url": "BATON_REPO_URL",
    "into": "BATON_MERGE_INTO",
    "strategy": "BATON_MERGE_STRATEGY",
    "message": "BATON_MERGE_MESSAGE",
    "reviewed_head": "BATON_REVIEWED_HEAD",
    "diff_target": "BATON_DIFF_TARGET",
    "max_bytes": "BATON_DIFF_MAX_BYTES",
}
BUILD_ENV_NAMES: frozenset[str] = frozenset(_ENV_NAMES.values())


class BuildRequest(BaseModel):
    """One build of a run branch, as the review gate asks for it. Carries no task token."""

    model_config = ConfigDict(defer_build=True)

    run_id: str
    gate: str
    kind: BuildKind
    build_key: str = Field(default="", description="this build's id in Baton (its record and report say it)")
    run_branch: str
    repo_path: str | None = Field(default=None, description="a local checkout (the local stack)")
    repo_url: str | None = Field(default=None, description="cloned by the build (deployed)")
    into: str = "current"
    strategy: str = "squash"
    message: str | None = None
    reviewed_head: str | None = Field(
        default=None, description="merge: the commit the review approved; the merge takes it, never the branch tip"
    )
    diff_target: str = "HEAD"
    max_bytes: int = Field(default=60_000, ge=256)

    def environment(self) -> dict[str, str]:
        """The build's environment (CodeBuild's overrides, the local subprocess's env); empty values dropped."""
        values = self.model_dump()
        return {env: str(values[name]) for name, env in _ENV_NAMES.items() if values[name] not in (None, "")}

    @classmethod
    def from_environment(cls, environ: Mapping[str, str]) -> BuildRequest:
        """Read back what `environment()` wrote (the build's side); a missing value takes its default."""
        values = {name: environ[env] for name, env in _ENV_NAMES.items() if environ.get(env)}
        return cls.model_validate(values)


class BuildReport(BaseModel):
    """What a build wrote into Baton's table: the merge outcome, the bounded diff, or why neither."""

    model_config = ConfigDict(defer_build=True)

    run_id: str
    gate: str
    kind: BuildKind
    build_key: str
    outcome: MergeOutcome | None = None
    diff: BoundedDiff | None = None
    error: BuildError | None = None
    cause: str | None = None

    @field_validator("cause")
    @classmethod
    def _cap_cause(cls, cause: str | None) -> str | None:
        return None if cause is None else cause[:MAX_CAUSE_CHARS]


class BuildRecord(BaseModel):
    """A started build and the task token waiting for it. Server side only: no API returns it, and the
    build never sees it (the build reports to the table; Baton's function sends the token)."""

    model_config = ConfigDict(defer_build=True)

    run_id: str
    gate: str
    kind: BuildKind
    build_key: str
    task_token: str
    started_at: str
    status: Literal["running", "finished"] = "running"


class BuildFinished(BaseModel):
    """A build ended (CodeBuild's state-change event when deployed, the subprocess's exit locally)."""

    model_config = ConfigDict(defer_build=True)

    run_id: str
    gate: str
    kind: BuildKind
    build_key: str
    build_status: str = Field(description="SUCCEEDED, FAILED, STOPPED, TIMED_OUT, ... as CodeBuild says")
    build_id: str | None = None
