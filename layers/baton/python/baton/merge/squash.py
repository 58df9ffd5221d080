"""Merge a run's branch into its target branch: the merge step of the review-and-merge gate.

Core: `merge_run_branch(repo, run_branch, into=..., strategy=..., message=...) -> MergeOutcome`.
CLI:  `python -m baton.merge RUN_BRANCH [--repo PATH] [--into current|none|BRANCH]
       [--strategy squash|merge] [--message TEXT] [--json]` (see `--help`).

Strategies
  squash  One new commit on the target whose tree is the three-way merge of the target and the run
          branch (like GitHub's "squash and merge"). Its author is the author of the run branch's
          tip; its message lists the run branch and its commit subjects (overridable) and always ends
          with the trailers `Baton-Run-Branch: <branch>` and `Baton-Run-Head: <sha>`, which make a
          repeat recognisable.
  merge   Fast-forward only. If the target has commits the run branch lacks, the merge is rejected.

Targets (`into`)
  current  the branch checked out in `repo`.
  none     touch nothing: the result stays on the run ("storage") branch; status merged,
           final_branch = run branch, merged_into = None.
  BRANCH   that local branch, which must be the one checked out.

Outcomes: `merged`, `noop` (the run branch's changes are already in the target; carries the earlier
squash commit when a Baton trailer identifies it) or `rejected` (a normal answer the gate routes back
to the operator). Every rejection leaves HEAD, the index, the working tree and every ref untouched:
the merge is computed in the object store (`git merge-tree --write-tree`, git >= 2.38) and only a
clean result is applied, by a fast-forward.

Guards, in order: the target must be checked out (not detached, not bare); no merge, rebase,
cherry-pick or revert in progress; no staged or unstaged changes to tracked files; no conflict; and
no existing untracked file, ignored ones included, at a path the merge would create (git would refuse
some and silently overwrite ignored ones; we refuse all). Unrelated untracked files are allowed.

A run branch that already went through a Baton squash is merged again by taking the recorded
`Baton-Run-Head` as the merge base, so only what the run gained since then is applied (a plain
three-way merge would conflict with the earlier squash commit).

Bad input (unknown repository or branch, strategy outside {squash, merge}, `into` naming the run
branch itself) raises a `BatonError` subclass; the CLI prints its message and exits 2.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import traceback
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field

from baton.errors import BatonError, ValidationFailedError
from baton.merge.gitcmd import (
    GitCommandError,
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
    from collections.abc import Iterator, Sequence

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
]

STRATEGIES: tuple[str, ...] = ("squash", "merge")
TRAILER_BRANCH = "Baton-Run-Branch"
TRAILER_HEAD = "Baton-Run-Head"
FALLBACK_COMMITTER = ("Baton", "baton@localhost")
TASK_TOKEN_ENV = "BATON_TASK_TOKEN"
MAX_CAUSE_CHARS = 32_000  # SendTaskFailure caps `cause` at 32768 characters

EXIT_OK = 0
EXIT_REJECTED = 1
EXIT_BAD_INPUT = 2
EXIT_CRASHED = 3
EXIT_REPORT_FAILED = 4


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


# --------------------------------------------------------------------------------------------- core


def merge_run_branch(
    repo: Path,
    run_branch: str,
    *,
    into: str = "current",
    strategy: str = "squash",
    message: str | None = None,
) -> MergeOutcome:
    """Merge `run_branch` into the target named by `into`; see the module docstring for the rules."""
    if strategy not in STRATEGIES:
        raise ValidationFailedError(
            f"unknown merge strategy {strategy!r}; expected one of: {', '.join(STRATEGIES)}",
            details={"path": "strategy"},
        )
    strat: Strategy = "squash" if strategy == "squash" else "merge"
    root = open_repo(repo)
    run_head = branch_head(root, run_branch, "run branch")
    base: dict[str, Any] = {"strategy": strat, "run_branch": run_branch, "run_head": run_head}

    if into == "none":
        return MergeOutcome(
            merge_status="merged",
            final_commit=run_head,
            final_branch=run_branch,
            merged_into=None,
            reason=f"left on run branch {run_branch!r} at {run_head[:12]}; no target branch touched",
            **base,
        )

    current = _current_branch(root)
    if into == "current":
        if current is None:
            return _rejected(base, "detached_head", "HEAD is detached: there is no current branch to merge into")
        if current == run_branch:
            return _rejected(
                base,
                "target_not_checked_out",
                f"the run branch {run_branch!r} itself is checked out; check out the target branch first",
            )
        target = current
    else:
        check_rev_text(into, "target branch")
        target = into
    if target == run_branch:
        raise ValidationFailedError(f"run branch and target are the same branch ({target!r})", details={"path": "into"})
    target_head = branch_head(root, target, "target branch")
    base["target"] = target

    if merge_base(root, target_head, run_head) is None:
        return _rejected(base, "unrelated_histories", f"run branch {run_branch!r} shares no history with {target!r}")

    # After an earlier squash of this run branch, merge only what the run branch gained since then.
    previous = _previous_squash_head(root, target_head, run_branch, run_head)
    merged_tree, conflicts = _merge_tree(root, target_head, run_head, previous)
    noop = _already_merged(root, base, target, target_head, run_branch, run_head, merged_tree, conflicts)
    if noop is not None:
        return noop

    # Guards. Nothing above changed HEAD, the index, the working tree or a ref.
    if not _is_work_tree(root):
        return _rejected(base, "no_work_tree", "the repository has no working tree (bare); use into=none")
    if current != target:
        shown = repr(current) if current else "a detached HEAD"
        return _rejected(
            base,
            "target_not_checked_out",
            f"target branch {target!r} is not checked out (the repository is on {shown}); check it out first",
        )
    in_progress = _operation_in_progress(root)
    if in_progress:
        return _rejected(base, "operation_in_progress", f"a {in_progress} is in progress; finish or abort it")
    dirty = _dirty_paths(root)
    if dirty:
        return _rejected(
            base,
            "dirty_tree",
            f"the working tree has uncommitted changes ({_preview(dirty)}); commit or stash them",
            dirty_files=dirty,
        )

    if strat == "merge":
        if not is_ancestor(root, target_head, run_head):
            ahead = git_out(root, "rev-list", "--count", f"{run_head}..{target_head}")
            return _rejected(
                base,
                "non_fast_forward",
                f"cannot fast-forward {target!r} to {run_branch!r}: {target!r} has {ahead} commit(s) "
                f"the run branch lacks; rebase the run branch or use the squash strategy",
            )
        result_tree = git_out(root, "rev-parse", f"{run_head}^{{tree}}")
    else:
        if conflicts:
            return _rejected(
                base,
                "conflict",
                f"merging {run_branch!r} into {target!r} conflicts in {len(conflicts)} file(s): {_preview(conflicts)}",
                conflicting_files=conflicts,
            )
        result_tree = merged_tree

    collisions = _untracked_collisions(root, target_head, result_tree)
    if collisions:
        return _rejected(
            base,
            "untracked_would_be_overwritten",
            f"untracked files would be overwritten by the merge ({_preview(collisions)}); move them away",
            dirty_files=collisions,
        )

    if strat == "merge":
        final = run_head
        count = git_out(root, "rev-list", "--count", f"{target_head}..{run_head}")
        reason = f"fast-forwarded {target!r} to {run_head[:12]} ({count} commit(s) from {run_branch!r})"
    else:
        since = previous or target_head
        final = _commit_squash(root, result_tree, target, target_head, since, run_branch, run_head, message)
        reason = f"squashed {run_branch!r} into {target!r} as {final[:12]}"
    run_git(root, "merge", "--ff-only", "--no-stat", "--quiet", final)
    if git_out(root, "rev-parse", "HEAD") != final:
        raise RuntimeError(f"fast-forward of {target!r} to {final} did not move HEAD")
    return MergeOutcome(
        merge_status="merged",
        final_commit=final,
        final_branch=target,
        merged_into=target,
        reason=reason,
        **base,
    )


def _rejected(
    base: dict[str, Any],
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
        **base,
    )


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


def _already_merged(
    root: Path,
    base: dict[str, Any],
    target: str,
    target_head: str,
    run_branch: str,
    run_head: str,
    merged_tree: str,
    conflicts: list[str],
) -> MergeOutcome | None:
    """A `noop` outcome when the run branch's changes are already in the target, else None."""
    done = {"merge_status": "noop", "final_branch": target, "merged_into": target, **base}
    if is_ancestor(root, run_head, target_head):
        return MergeOutcome(
            final_commit=run_head,
            reason=f"{run_branch!r} at {run_head[:12]} is already part of {target!r}; nothing to merge",
            **done,
        )
    earlier = _find_trailer_commit(root, target_head, TRAILER_HEAD, run_head)
    if earlier:
        return MergeOutcome(
            final_commit=earlier,
            reason=f"{run_branch!r} at {run_head[:12]} was already squashed into {target!r} as {earlier[:12]}",
            **done,
        )
    target_tree = git_out(root, "rev-parse", f"{target_head}^{{tree}}")
    if not conflicts and merged_tree == target_tree:
        earlier = _find_trailer_commit(root, target_head, TRAILER_BRANCH, run_branch)
        return MergeOutcome(
            final_commit=earlier,
            reason=f"the changes of {run_branch!r} are already in {target!r}; nothing to merge",
            **done,
        )
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


def _commit_squash(
    root: Path,
    tree: str,
    target: str,
    target_head: str,
    since: str,
    run_branch: str,
    run_head: str,
    message: str | None,
) -> str:
    body = (message or "").strip() or default_squash_message(root, target, since, run_branch, run_head)
    full = f"{body}\n\n{TRAILER_BRANCH}: {run_branch}\n{TRAILER_HEAD}: {run_head}\n"
    author_name, author_email = git_out(root, "log", "-1", "--format=%an%x00%ae", run_head).split("\0")
    env = {"GIT_AUTHOR_NAME": author_name, "GIT_AUTHOR_EMAIL": author_email}
    for key, fallback in zip(("name", "email"), FALLBACK_COMMITTER, strict=True):
        env_key = f"GIT_COMMITTER_{key.upper()}"
        configured = run_git(root, "config", "--get", f"user.{key}", ok_codes=(0, 1)).stdout.strip()
        if not configured and env_key not in os.environ:
            env[env_key] = fallback
    proc = run_git(root, "commit-tree", tree, "-p", target_head, "-F", "-", stdin=full.encode(), env=env)
    return proc.stdout.decode().strip()


# ---------------------------------------------------------------------------------------------- CLI


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m baton.merge",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=(
            "Merge a run's branch into its target branch (the merge step of Baton's review gate).\n\n"
            "squash (default) lands the run as ONE commit on the target; merge fast-forwards only.\n"
            "The target must be the checked-out branch and the working tree clean, otherwise the merge\n"
            "is REJECTED and the repository is left exactly as it was; conflicts are rejected the same\n"
            "way, with the conflicting files listed. Running it again after a success is a NOOP."
        ),
        epilog=(
            "examples:\n"
            "  python -m baton.merge baton/run-42                       squash into the current branch\n"
            "  python -m baton.merge baton/run-42 --strategy merge      fast-forward only\n"
            "  python -m baton.merge baton/run-42 --into none           branch-only review, touch nothing\n"
            "  python -m baton.merge baton/run-42 --repo ../app --into main --json\n\n"
            "exit status:\n"
            "  0 merged or noop   1 rejected   2 bad input (unknown repo/branch, bad strategy)\n"
            "  3 unexpected crash   4 the outcome could not be reported to Step Functions\n\n"
            f"reporting: when ${TASK_TOKEN_ENV} is set (or --task-token is given), the outcome is sent\n"
            "to Step Functions: SendTaskSuccess with the outcome JSON for merged/noop/rejected,\n"
            "SendTaskFailure error=MergeInvalidInput for bad input and error=MergeCrashed for crashes.\n"
            "AWS_ENDPOINT_URL / AWS_REGION are honoured by boto3 (e.g. a local emulator)."
        ),
    )
    parser.add_argument("run_branch", help="the run's (storage) branch holding the agent's commits")
    parser.add_argument("--repo", type=Path, default=Path("."), help="path to the git repository (default: .)")
    parser.add_argument(
        "--into",
        default="current",
        metavar="current|none|BRANCH",
        help="target: the checked-out branch (default), none (leave the result on the run branch), "
        "or a branch name, which must be the checked-out one",
    )
    parser.add_argument(
        "--strategy",
        default="squash",
        metavar="squash|merge",
        help="squash into one commit (default) or fast-forward only",
    )
    parser.add_argument(
        "-m",
        "--message",
        default=None,
        help="squash commit message (default: names the run branch and lists its commit subjects)",
    )
    parser.add_argument("--json", action="store_true", help="print the outcome as JSON")
    parser.add_argument(
        "--task-token",
        default=None,
        help=f"Step Functions task token to report to (default: ${TASK_TOKEN_ENV})",
    )
    return parser


def format_outcome(outcome: MergeOutcome) -> str:
    line = f"{outcome.merge_status}: {outcome.reason}"
    if outcome.final_commit:
        line += f" [final_commit={outcome.final_commit} final_branch={outcome.final_branch}]"
    for path in outcome.conflicting_files:
        line += f"\n  conflict: {path}"
    return line


def _default_sfn_client() -> Any:
    import boto3

    return boto3.client("stepfunctions")


def main(argv: Sequence[str] | None = None, *, sfn_client: Any | None = None) -> int:
    """CLI entry point; `sfn_client` replaces the boto3 Step Functions client (tests)."""
    args = build_parser().parse_args(argv)
    token = args.task_token or os.environ.get(TASK_TOKEN_ENV) or None

    def client() -> Any:
        return sfn_client if sfn_client is not None else _default_sfn_client()

    def report(call: str, **kwargs: Any) -> int:
        if token is None:
            return EXIT_OK
        try:
            getattr(client(), call)(taskToken=token, **kwargs)
        except Exception as exc:
            print(f"error: could not report the merge outcome to Step Functions: {exc}", file=sys.stderr)
            return EXIT_REPORT_FAILED
        return EXIT_OK

    try:
        outcome = merge_run_branch(
            args.repo, args.run_branch, into=args.into, strategy=args.strategy, message=args.message
        )
    except BatonError as exc:
        print(f"error: {exc.message}", file=sys.stderr)
        return report("send_task_failure", error="MergeInvalidInput", cause=exc.message[:MAX_CAUSE_CHARS]) or (
            EXIT_BAD_INPUT
        )
    except Exception as exc:
        detail = traceback.format_exc()
        print(detail, file=sys.stderr, end="")
        summary = f"{type(exc).__name__}: {exc}"
        if isinstance(exc, GitCommandError):
            summary = f"git failed: {exc}"
        cause = (summary + "\n\n" + detail)[:MAX_CAUSE_CHARS]
        return report("send_task_failure", error="MergeCrashed", cause=cause) or EXIT_CRASHED

    print(json.dumps(outcome.model_dump(mode="json"), indent=2) if args.json else format_outcome(outcome))
    reported = report("send_task_success", output=outcome.model_dump_json())
    if reported:
        return reported
    return EXIT_REJECTED if outcome.merge_status == "rejected" else EXIT_OK
