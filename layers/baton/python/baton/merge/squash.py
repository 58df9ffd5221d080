"""Merge a run's branch into its target branch: the merge step of the review-and-merge gate.

Core: `merge_run_branch(repo, run_branch, into=..., strategy=..., message=...) -> MergeOutcome`.
CLI:  `python -m baton.merge` (baton/merge/cli.py); the gate's build: baton/merge/build.py.
(A little over 400 lines: the algorithm, its guards and its trailer bookkeeping read as one story.)

Strategies
  squash  One new commit on the target whose tree is the three-way merge of the target and the run
          branch (like GitHub's "squash and merge"). Its author is the author of the run branch's
          tip; its message lists the run branch and its commit subjects (overridable) and always ends
          with the trailers `Baton-Run-Branch: <branch>` and `Baton-Run-Head: <sha>`, which make a
          repeat recognisable.
  merge   Fast-forward only. If the target has commits the run branch lacks, the merge is rejected.

Targets (`into`)
  current  the branch checked out in `repo`.
  none     touch nothing: the result stays on the run ("storage") branch; status not_merged,
           final_branch = run branch, merged_into = None, strategy = None (nothing was squashed).
  BRANCH   that local branch, which must be the one checked out.

Outcomes: `merged`, `not_merged` (into none), `noop` (the run branch's changes are already in the
target; carries the earlier squash commit when a Baton trailer identifies it) or `rejected` (a normal
answer the gate routes back to the operator). Every rejection leaves HEAD, the index, the working
tree and every ref untouched: the merge is computed in the object store (`git merge-tree
--write-tree`, git >= 2.38) and only a clean result is applied, by a fast-forward.

Guards, in order: the target must be checked out (not detached, not bare); no merge, rebase,
cherry-pick or revert in progress; no staged or unstaged changes to tracked files; no conflict; and
no existing untracked file, ignored ones included, at a path the merge would create (git would refuse
some and silently overwrite ignored ones; we refuse all). Unrelated untracked files are allowed.

A run branch that already went through a Baton squash is merged again by taking the recorded
`Baton-Run-Head` as the merge base, so only what the run gained since then is applied (a plain
three-way merge would conflict with the earlier squash commit).

A review gate pins the commit it reviewed (`reviewed_head`): the merge then takes exactly that commit
(the squash of its changes, or the fast-forward to it), never whatever the run branch holds by then; a
commit pushed after the review stays on the run branch, and the outcome says so (`run_branch_tip`).

Bad input (unknown repository or branch, strategy outside {squash, merge}, `into` naming the run
branch itself) raises a `BatonError` subclass; the CLI prints its message and exits 2.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from baton.domain.merge_contracts import MergeOutcome, RejectCode, Strategy
from baton.errors import ValidationFailedError
from baton.merge.gitcmd import (
    branch_head,
    check_rev_text,
    git_out,
    is_ancestor,
    merge_base,
    open_repo,
    run_git,
    split_z,
)

if TYPE_CHECKING:
    from collections.abc import Iterator

__all__ = ["STRATEGIES", "TRAILER_BRANCH", "TRAILER_HEAD", "MergeOutcome", "merge_run_branch"]

STRATEGIES: tuple[str, ...] = ("squash", "merge")
TRAILER_BRANCH = "Baton-Run-Branch"
TRAILER_HEAD = "Baton-Run-Head"
FALLBACK_COMMITTER = ("Baton", "baton@localhost")
_FULL_SHA = re.compile(r"[0-9a-fA-F]{40}|[0-9a-fA-F]{64}")


@dataclass(frozen=True)
class _Merge:
    """What one merge evaluation knows; `target`/`target_head` are set once the target is resolved."""

    root: Path
    strategy: Strategy
    run_branch: str
    run_head: str
    run_branch_tip: str = ""
    target: str | None = None
    target_head: str = ""

    def fields(self) -> dict[str, Any]:
        return {
            "strategy": self.strategy,
            "run_branch": self.run_branch,
            "run_head": self.run_head,
            "run_branch_tip": self.run_branch_tip or self.run_head,
            "target": self.target,
        }

    def moved_note(self) -> str:
        """What a reason adds when the run branch moved past the pinned (reviewed) commit."""
        if not self.run_branch_tip or self.run_branch_tip == self.run_head:
            return ""
        return (
            f"; only the reviewed commit {self.run_head[:12]} was merged: the run branch has moved on to "
            f"{self.run_branch_tip[:12]} since, and those commits were not merged"
        )

    def rejected(
        self,
        code: RejectCode,
        reason: str,
        *,
        conflicting_files: list[str] | None = None,
        dirty_files: list[str] | None = None,
    ) -> MergeOutcome:
        return MergeOutcome(
            merge_status="rejected",
            reject_code=code,
            reason=reason,
            conflicting_files=conflicting_files or [],
            dirty_files=dirty_files or [],
            **self.fields(),
        )

    def outcome(self, status: str, final_commit: str | None, reason: str) -> MergeOutcome:
        """merged or noop into the target."""
        return MergeOutcome.model_validate(
            {
                "merge_status": status,
                "final_commit": final_commit,
                "final_branch": self.target,
                "merged_into": self.target,
                "reason": reason + self.moved_note(),
                **self.fields(),
            }
        )


# --------------------------------------------------------------------------------------------- core


def merge_run_branch(
    repo: Path,
    run_branch: str,
    *,
    into: str = "current",
    strategy: str = "squash",
    message: str | None = None,
    reviewed_head: str | None = None,
) -> MergeOutcome:
    """Merge `run_branch` (exactly its commit `reviewed_head` when given) into the target named by
    `into`; see the module docstring for the rules."""
    if strategy not in STRATEGIES:
        raise ValidationFailedError(
            f"unknown merge strategy {strategy!r}; expected one of: {', '.join(STRATEGIES)}",
            details={"path": "strategy"},
        )
    root = open_repo(repo)
    tip = branch_head(root, run_branch, "run branch")
    merge = _pin(_Merge(root, "squash" if strategy == "squash" else "merge", run_branch, tip, tip), reviewed_head)
    if isinstance(merge, MergeOutcome):
        return merge
    run_head = merge.run_head
    if into == "none":
        return MergeOutcome(
            merge_status="not_merged",
            final_commit=run_head,
            final_branch=run_branch,
            merged_into=None,
            reason=f"not merged (merge_into: none): left on run branch {run_branch!r} at {run_head[:12]}; "
            "no target branch touched" + merge.moved_note(),
            **(merge.fields() | {"strategy": None}),
        )
    return _merge_into(merge, into, message)


def _merge_into(merge: _Merge, into: str, message: str | None) -> MergeOutcome:
    """The merge of `merge.run_head` into the target branch `into` names (not `none`)."""
    root, run_branch, run_head = merge.root, merge.run_branch, merge.run_head
    current = _current_branch(root)
    target = _target(merge, into, current)
    if isinstance(target, MergeOutcome):
        return target
    merge = replace(merge, target=target, target_head=branch_head(root, target, "target branch"))
    if merge_base(root, merge.target_head, run_head) is None:
        return merge.rejected("unrelated_histories", f"run branch {run_branch!r} shares no history with {target!r}")
    # After an earlier squash of this run branch, merge only what the run branch gained since then.
    previous = _previous_squash_head(root, merge.target_head, run_branch, run_head)
    merged_tree, conflicts = _merge_tree(root, merge.target_head, run_head, previous)
    # Nothing above or in the guards changes HEAD, the index, the working tree or a ref.
    refused = _already_merged(merge, merged_tree, conflicts) or _guard_repository(merge, current)
    if refused is not None:
        return refused
    result_tree = _result_tree(merge, merged_tree, conflicts)
    if isinstance(result_tree, MergeOutcome):
        return result_tree
    return _apply(merge, result_tree, previous, message)


def _target(merge: _Merge, into: str, current: str | None) -> str | MergeOutcome:
    """The target branch `into` names, or the rejection of a `current` that names none."""
    if into == "current":
        if current is None:
            return merge.rejected("detached_head", "HEAD is detached: there is no current branch to merge into")
        if current == merge.run_branch:
            return merge.rejected(
                "target_not_checked_out",
                f"the run branch {merge.run_branch!r} itself is checked out; check out the target branch first",
            )
        target = current
    else:
        target = check_rev_text(into, "target branch")
    if target == merge.run_branch:
        raise ValidationFailedError(f"run branch and target are the same branch ({target!r})", details={"path": "into"})
    return target


def _guard_repository(merge: _Merge, current: str | None) -> MergeOutcome | None:
    """The rejection the repository's state calls for before anything is applied, else None."""
    root, target = merge.root, merge.target
    if not _is_work_tree(root):
        return merge.rejected("no_work_tree", "the repository has no working tree (bare); use into=none")
    if current != target:
        shown = repr(current) if current else "a detached HEAD"
        return merge.rejected(
            "target_not_checked_out",
            f"target branch {target!r} is not checked out (the repository is on {shown}); check it out first",
        )
    in_progress = _operation_in_progress(root)
    if in_progress:
        return merge.rejected("operation_in_progress", f"a {in_progress} is in progress; finish or abort it")
    dirty = _dirty_paths(root)
    if dirty:
        return merge.rejected(
            "dirty_tree",
            f"the working tree has uncommitted changes ({_preview(dirty)}); commit or stash them",
            dirty_files=dirty,
        )
    return None


def _result_tree(merge: _Merge, merged_tree: str, conflicts: list[str]) -> str | MergeOutcome:
    """The tree the target will hold, or the rejection it calls for: not a fast-forward, a conflict,
    or untracked files in the way."""
    tree = _strategy_tree(merge, merged_tree, conflicts)
    if isinstance(tree, MergeOutcome):
        return tree
    collisions = _untracked_collisions(merge.root, merge.target_head, tree)
    if collisions:
        return merge.rejected(
            "untracked_would_be_overwritten",
            f"untracked files would be overwritten by the merge ({_preview(collisions)}); move them away",
            dirty_files=collisions,
        )
    return tree


def _strategy_tree(merge: _Merge, merged_tree: str, conflicts: list[str]) -> str | MergeOutcome:
    root, target = merge.root, merge.target
    if merge.strategy == "merge":
        if not is_ancestor(root, merge.target_head, merge.run_head):
            ahead = git_out(root, "rev-list", "--count", f"{merge.run_head}..{merge.target_head}")
            return merge.rejected(
                "non_fast_forward",
                f"cannot fast-forward {target!r} to {merge.run_branch!r}: {target!r} has {ahead} commit(s) "
                f"the run branch lacks; rebase the run branch or use the squash strategy",
            )
        return git_out(root, "rev-parse", f"{merge.run_head}^{{tree}}")
    if conflicts:
        return merge.rejected(
            "conflict",
            f"merging {merge.run_branch!r} into {target!r} conflicts in {len(conflicts)} file(s): "
            f"{_preview(conflicts)}",
            conflicting_files=conflicts,
        )
    return merged_tree


def _apply(merge: _Merge, result_tree: str, previous: str | None, message: str | None) -> MergeOutcome:
    """Commit (squash) or pick the run head (merge), then fast-forward the checked-out target to it."""
    root, target, run_head = merge.root, merge.target, merge.run_head
    if merge.strategy == "merge":
        final = run_head
        count = git_out(root, "rev-list", "--count", f"{merge.target_head}..{run_head}")
        reason = f"fast-forwarded {target!r} to {run_head[:12]} ({count} commit(s) from {merge.run_branch!r})"
    else:
        final = _commit_squash(merge, result_tree, previous or merge.target_head, message)
        reason = f"squashed {merge.run_branch!r} into {target!r} as {final[:12]}"
    run_git(root, "merge", "--ff-only", "--no-stat", "--quiet", final)
    if git_out(root, "rev-parse", "HEAD") != final:
        raise RuntimeError(f"fast-forward of {target!r} to {final} did not move HEAD")
    return merge.outcome("merged", final, reason)


def _pin(merge: _Merge, reviewed_head: str | None) -> _Merge | MergeOutcome:
    """The merge of the reviewed commit (a full SHA, never a ref that could move), or its rejection
    when the repository no longer has it; without a pin, the run branch's tip."""
    if reviewed_head is None:
        return merge
    if not _FULL_SHA.fullmatch(reviewed_head):
        raise ValidationFailedError(
            f"the reviewed head must be a full commit SHA, not {reviewed_head!r}", details={"path": "reviewed_head"}
        )
    if run_git(merge.root, "cat-file", "-e", f"{reviewed_head}^{{commit}}", ok_codes=range(256)).returncode != 0:
        return merge.rejected(
            "reviewed_commit_missing",
            f"the reviewed commit {reviewed_head[:12]} is not in the repository (the run branch "
            f"{merge.run_branch!r} was rewritten?); nothing unreviewed is merged: review the branch again",
        )
    return replace(merge, run_head=reviewed_head.lower())


def _preview(paths: list[str], limit: int = 5) -> str:
    shown = ", ".join(paths[:limit])
    return shown + (f", and {len(paths) - limit} more" if len(paths) > limit else "")


def _current_branch(root: Path) -> str | None:
    proc = run_git(root, "symbolic-ref", "--quiet", "--short", "HEAD", ok_codes=(0, 1))
    if proc.returncode != 0:
        return None
    return proc.stdout.decode().strip() or None


def _is_work_tree(root: Path) -> bool:
    proc = run_git(root, "rev-parse", "--is-inside-work-tree", ok_codes=range(256))
    return proc.returncode == 0 and proc.stdout.decode().strip() == "true"


def _operation_in_progress(root: Path) -> str | None:
    for ref, name in (
        ("MERGE_HEAD", "merge"),
        ("CHERRY_PICK_HEAD", "cherry-pick"),
        ("REVERT_HEAD", "revert"),
    ):
        if run_git(root, "rev-parse", "--quiet", "--verify", ref, ok_codes=(0, 1)).returncode == 0:
            return name
    for directory in ("rebase-merge", "rebase-apply"):
        git_path = Path(git_out(root, "rev-parse", "--git-path", directory))
        if (git_path if git_path.is_absolute() else root / git_path).exists():
            return "rebase"
    return None


def _dirty_paths(root: Path) -> list[str]:
    """Tracked paths with staged or unstaged changes (untracked files are judged per merge, later)."""
    out = run_git(
        root,
        "status",
        "--porcelain=v1",
        "-z",
        "--untracked-files=no",
        "--no-renames",
        env={"GIT_OPTIONAL_LOCKS": "0"},
    ).stdout
    return sorted({entry[3:] for entry in split_z(out) if len(entry) > 3})


def _previous_squash_head(root: Path, target_head: str, run_branch: str, run_head: str) -> str | None:
    """The run-branch tip recorded by the newest earlier Baton squash of `run_branch` into the target,
    if it is still an ancestor of the run branch (a rewritten run branch gets a normal merge)."""
    for _sha, body in _trailer_commits(root, target_head, TRAILER_BRANCH, run_branch):
        for line in body.splitlines():
            key, _, value = line.strip().partition(": ")
            if key != TRAILER_HEAD:
                continue
            value = value.strip()
            known = run_git(root, "cat-file", "-e", f"{value}^{{commit}}", ok_codes=range(256)).returncode == 0
            if known and is_ancestor(root, value, run_head):
                return value
        return None
    return None


def _merge_tree(root: Path, target_head: str, run_head: str, base: str | None = None) -> tuple[str, list[str]]:
    """Three-way merge in the object store only: (result tree, conflicting paths).

    With `base`, the merge uses it as the merge base. git 2.38/2.39 have no `--merge-base` option, so
    a throwaway commit with the target's tree and `base` as its only parent stands in for the target:
    its merge base with the run head is then `base`. The commit is never referenced by any ref.
    """
    ours = target_head
    if base is not None:
        tree = git_out(root, "rev-parse", f"{target_head}^{{tree}}")
        ident = {
            "GIT_AUTHOR_NAME": FALLBACK_COMMITTER[0],
            "GIT_AUTHOR_EMAIL": FALLBACK_COMMITTER[1],
            "GIT_COMMITTER_NAME": FALLBACK_COMMITTER[0],
            "GIT_COMMITTER_EMAIL": FALLBACK_COMMITTER[1],
        }
        proc = run_git(root, "commit-tree", tree, "-p", base, "-m", "baton merge base", env=ident)
        ours = proc.stdout.decode().strip()
    proc = run_git(
        root,
        "merge-tree",
        "--write-tree",
        "--name-only",
        "--no-messages",
        "-z",
        ours,
        run_head,
        ok_codes=(0, 1),
    )
    fields = split_z(proc.stdout)
    tree, conflicts = fields[0], fields[1:]
    return tree, sorted(set(conflicts))


def _already_merged(merge: _Merge, merged_tree: str, conflicts: list[str]) -> MergeOutcome | None:
    """A `noop` outcome when the run branch's changes are already in the target, else None."""
    root, target, target_head = merge.root, merge.target, merge.target_head
    run_branch, run_head = merge.run_branch, merge.run_head
    if is_ancestor(root, run_head, target_head):
        reason = f"{run_branch!r} at {run_head[:12]} is already part of {target!r}; nothing to merge"
        return merge.outcome("noop", run_head, reason)
    earlier = _find_trailer_commit(root, target_head, TRAILER_HEAD, run_head)
    if earlier:
        reason = f"{run_branch!r} at {run_head[:12]} was already squashed into {target!r} as {earlier[:12]}"
        return merge.outcome("noop", earlier, reason)
    target_tree = git_out(root, "rev-parse", f"{target_head}^{{tree}}")
    if not conflicts and merged_tree == target_tree:
        earlier = _find_trailer_commit(root, target_head, TRAILER_BRANCH, run_branch)
        reason = f"the changes of {run_branch!r} are already in {target!r}; nothing to merge"
        return merge.outcome("noop", earlier, reason)
    return None


def _trailer_commits(root: Path, tip: str, key: str, value: str) -> Iterator[tuple[str, str]]:
    """(sha, message) of commits reachable from `tip` with the exact line `key: value`, newest first."""
    wanted = f"{key}: {value}"
    out = run_git(root, "log", "-F", f"--grep={wanted}", "--format=%H%x00%B%x00", tip, "--").stdout
    fields = out.decode("utf-8", "replace").split("\0")
    for sha, body in zip(fields[0::2], fields[1::2], strict=False):
        if wanted in (line.strip() for line in body.splitlines()):
            yield sha.strip(), body


def _find_trailer_commit(root: Path, tip: str, key: str, value: str) -> str | None:
    """Newest commit reachable from `tip` whose message has the exact line `key: value`."""
    return next((sha for sha, _ in _trailer_commits(root, tip, key, value)), None)


def _untracked_collisions(root: Path, old_tree: str, new_tree: str) -> list[str]:
    """Paths the merge would create that already exist in the working tree (untracked or ignored)."""
    out = run_git(
        root, "diff-tree", "-r", "--no-renames", "--name-only", "-z", "--diff-filter=A", old_tree, new_tree
    ).stdout
    return [path for path in split_z(out) if os.path.lexists(root / path)]


def default_squash_message(root: Path, target: str, since: str, run_branch: str, run_head: str) -> str:
    """Names the run branch and lists the subjects of its commits after `since`, oldest first."""
    subjects = git_out(root, "log", "--reverse", "--format=%s", f"{since}..{run_head}", "--").splitlines()
    lines = [f"Squash-merge run branch {run_branch!r} into {target!r}", ""]
    lines.append(f"{len(subjects)} commit(s):")
    lines.extend(f"* {subject}" for subject in subjects)
    return "\n".join(lines)


def _commit_squash(merge: _Merge, tree: str, since: str, message: str | None) -> str:
    root, run_branch, run_head = merge.root, merge.run_branch, merge.run_head
    target = merge.target or ""
    body = (message or "").strip() or default_squash_message(root, target, since, run_branch, run_head)
    full = f"{body}\n\n{TRAILER_BRANCH}: {run_branch}\n{TRAILER_HEAD}: {run_head}\n"
    author_name, author_email = git_out(root, "log", "-1", "--format=%an%x00%ae", run_head).split("\0")
    env = {"GIT_AUTHOR_NAME": author_name, "GIT_AUTHOR_EMAIL": author_email}
    for key, fallback in zip(("name", "email"), FALLBACK_COMMITTER, strict=True):
        env_key = f"GIT_COMMITTER_{key.upper()}"
        configured = run_git(root, "config", "--get", f"user.{key}", ok_codes=(0, 1)).stdout.strip()
        if not configured and env_key not in os.environ:
            env[env_key] = fallback
    proc = run_git(root, "commit-tree", tree, "-p", merge.target_head, "-F", "-", stdin=full.encode(), env=env)
    return proc.stdout.decode().strip()
