"""The review gate as GET /api/runs/{run_id}/review shows it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field, field_serializer

from baton.contracts.base import Contract

if TYPE_CHECKING:
    from baton.domain.unified_diff import FileDiff

# The reason a rejected merge reopens the review with (services/review/merge.py writes it, merge_progress
# reads it). Here, not in baton.domain.review_gate: the resume routes load no schema validation.
MERGE_REJECTED_PREFIX = "merge rejected:"


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
    reviewed_head: str | None = Field(default=None, description="A companion turn: the commit whose diff it read.")
    diff_digest: str | None = None


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
    diff: dict[str, Any] | None = Field(
        default=None, description="Stats of the diff the latest companion turn read: files_changed, head, digest, ..."
    )
    review_url: str
    warnings: list[str]
    posture: str
    merge_strategy: str
    merge_into: str | None = None
    run_branch: str | None = None
    reviewed_head: str | None = Field(
        default=None, description="The run-branch commit the latest review read: what an approval merges."
    )
    diff_digest: str | None = Field(default=None, description="sha256 of that commit's whole diff.")
    run_branch_head: str | None = Field(
        default=None,
        description="The run branch's tip now, where the API can read the repository (local stack); when it "
        "differs from reviewed_head the branch moved after the review and a merge is refused until a new turn.",
    )
    merge: MergeFields
    rounds: list[str] = Field(description="The review interactions of this run, oldest first.")


class ReviewDiffFile(Contract):
    """One file of the diff the companion read."""

    path: str
    old_path: str | None = Field(default=None, description="A rename's old path.")
    status: Literal["added", "modified", "deleted", "renamed"] | None = Field(
        default=None, description="Null for a file the bound cut before its part of the diff."
    )
    insertions: int = Field(description="Added lines in the text shown.")
    deletions: int = Field(description="Removed lines in the text shown.")
    text: str = Field(description="This file's unified diff, from its `diff --git` line; empty when not shown.")
    truncated: bool = Field(description="The bound cut this file's diff (or all of it).")

    @classmethod
    def of(cls, file: FileDiff) -> ReviewDiffFile:
        return cls(
            path=file.path,
            old_path=file.renamed_from,
            status=file.status,
            insertions=file.added,
            deletions=file.removed,
            text=file.text,
            truncated=file.truncated,
        )


class ReviewDiff(Contract):
    """GET /api/runs/{run_id}/review/diff: the bounded diff the review's companion reads (the same diff
    source and bound), per file. `head`/`digest` are of the diff as read now: when the run branch moved
    after the review they differ from `reviewed_head`/`diff_digest` and `branch_moved` says so."""

    run_id: str
    gate: str
    interaction_id: str
    base: str = Field(description="The merge-base the diff starts from.")
    head: str = Field(description="The run-branch commit this is the diff of.")
    digest: str | None = Field(default=None, description="sha256 of this whole diff (before the bound).")
    reviewed_head: str | None = Field(default=None, description="The commit the latest companion turn read.")
    diff_digest: str | None = Field(default=None, description="The digest of the diff that turn read.")
    branch_moved: bool = Field(description="head is not reviewed_head: a new companion turn reviews it.")
    run_branch: str | None = None
    merge_into: str | None = None
    target: str = Field(description="What the run branch is diffed against (base_branch, merge_into or HEAD).")
    truncated: bool
    max_bytes: int = Field(description="The bound: at most this many bytes of diff text are shown.")
    total_bytes: int
    shown_bytes: int
    files_changed: int
    insertions: int
    deletions: int
    files_not_shown: int
    files: list[ReviewDiffFile]


MergeProgressStatus = Literal["pending", "merged", "noop", "not_merged", "rejected", "timed_out", "closed"]


class MergeProgress(Contract):
    """What became of a merge action, read from the review (`merge_progress`): `pending` until the merge
    build reports; `rejected` when a guard refused it (the gate waits for the operator again)."""

    status: MergeProgressStatus
    reason: str | None = None
    reviewed_head: str | None = None
    final_commit: str | None = None
    merged_into: str | None = None


def merge_progress(view: ReviewView) -> MergeProgress:
    """The outcome of the latest merge action the review shows. The action is stored (`answered`) before
    the merge runs; a guard's rejection reopens the review (`pending`, its reason says why); a landed
    merge leaves it answered with the run's merge fields set."""
    reviewed = (view.last_action or {}).get("reviewed_head") or view.reviewed_head
    merge = view.merge
    if view.status == "pending":
        if (view.reason or "").startswith(MERGE_REJECTED_PREFIX):
            reason = (view.reason or "")[len(MERGE_REJECTED_PREFIX) :].strip()
            return MergeProgress(status="rejected", reason=reason, reviewed_head=reviewed)
        return MergeProgress(status="pending", reviewed_head=reviewed)
    if view.status != "answered":  # timed out or cancelled (the run stopped) before the merge landed
        return MergeProgress(status="closed", reason=view.reason or view.status, reviewed_head=reviewed)
    if merge.merge_status in ("merged", "noop", "not_merged", "timed_out"):
        return MergeProgress(
            status=merge.merge_status,
            reviewed_head=reviewed,
            final_commit=merge.final_commit,
            merged_into=merge.merged_into,
        )
    return MergeProgress(status="pending", reviewed_head=reviewed)


# What the review gate's Lambdas return to statemachines/review_gate.asl.json: the services return these
# and the handlers dump them (the state machine and the CDK gate helpers read their fields by name).


class BuildStarted(Contract):
    """diff_start and merge_start: the build started with its token parked (`handle`: build id, thread)."""

    started: bool
    handle: str


class BuildSent(Contract):
    """build_finished: whether this delivery of a build's end sent its token (dumped without the Nones)."""

    sent: bool
    reason: str | None = None
    kind: str | None = None
    build_status: str | None = None


class ReviewTurnOutput(Contract):
    """review_turn: the companion spoke (or the gate was refused: `ok` false and `cause`), the verdict
    auto-merges or not, and the timeouts of the next states."""

    ok: bool
    cause: str = ""
    auto_merge: bool = False
    gate: str
    interaction_id: str = ""
    timeout_seconds: int = 1
    merge_timeout_seconds: int = 1


class ReviewParked(Contract):
    """review_park: the token is parked; `delivered` when an action stored before it was sent at once."""

    parked: bool = True
    interaction_id: str
    delivered: bool


class ReviewGateOutput(Contract):
    """What the gate's token is sent with after an operator action (act, park, the reconciler)."""

    interaction_id: str
    node: str
    action: str | None = None
    reply: str | None = None
    message: str | None = None
    merge_strategy: str | None = None
    reviewed_head: str | None = None
    answered_by: str | None = None
    answered_at: str | None = None
    verdict: dict[str, Any] | None = None


class MergeResult(Contract):
    """The merge fields of merge_record's output and of its review_merged event."""

    merge_status: str
    final_commit: str | None = None
    final_branch: str | None = None
    merged_into: str | None = None
    strategy: str | None = None
    reason: str | None = None


class MergeRecorded(Contract):
    """merge_record: what became of the merge (`merged` ends the gate; `rejected` parks it again)."""

    status: Literal["merged", "rejected", "timed_out"]
    cause: str = ""
    merge: MergeResult | None = None
    action: str | None = None
    answered_by: str | None = None
    verdict: dict[str, Any] | None = None
    interaction_id: str
    reviewed_head: str | None = None
    diff_digest: str | None = None

    @field_serializer("merge")
    def _merge_or_empty(self, merge: MergeResult | None) -> dict[str, Any]:
        return merge.model_dump() if merge is not None else {}  # a timed-out merge reports {}
