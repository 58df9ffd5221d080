"""A bounded unified diff of a run's commits, small enough to show a reviewer or a companion model.

`bounded_diff(repo, base, head)` returns the whole `git diff base head` when it fits in `max_bytes`
(UTF-8 bytes of `text`), otherwise the diff cut at the last line boundary that leaves room for one
visible marker line, e.g.::

    [... diff truncated: showed 59800 of 182311 bytes; 7 more files not shown ...]

The stats (files, insertions, deletions) always describe the WHOLE diff, not the shown part; the
oldest commit's subject in base..head names the change where a list shows it (the inbox's review title).
`run_branch_diff(repo, run_branch, target)` diffs the run branch against its merge-base with the
target, i.e. exactly the run's own changes (`git diff target...run_branch`).
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Any

from baton.domain.merge_contracts import BoundedDiff
from baton.domain.unified_diff import count_file_headers
from baton.errors import ValidationFailedError
from baton.merge.gitcmd import merge_base, open_repo, resolve_commit, run_git

if TYPE_CHECKING:
    from pathlib import Path

DEFAULT_MAX_BYTES = 60_000
MIN_MAX_BYTES = 256

__all__ = ["DEFAULT_MAX_BYTES", "MIN_MAX_BYTES", "BoundedDiff", "bounded_diff", "run_branch_diff", "truncation_marker"]


def truncation_marker(shown: int, total: int, files_not_shown: int) -> str:
    return f"[... diff truncated: showed {shown} of {total} bytes; {files_not_shown} more files not shown ...]"


def _numstat(repo: Path, base: str, head: str) -> tuple[list[str], int, int]:
    out = run_git(repo, "diff", "--numstat", "-z", "-M", "--no-ext-diff", base, head, "--").stdout
    fields = out.split(b"\0")
    files: list[str] = []
    insertions = deletions = 0
    i = 0
    while i < len(fields):
        record = fields[i]
        i += 1
        if not record:
            continue
        added, deleted, path = record.split(b"\t", 2)
        if not path:  # a rename or copy: the two paths follow as their own fields
            path = fields[i + 1]
            i += 2
        insertions += int(added) if added.isdigit() else 0  # "-" for binary files
        deletions += int(deleted) if deleted.isdigit() else 0
        files.append(path.decode("utf-8", "replace"))
    return files, insertions, deletions


def _first_commit_subject(repo: Path, base: str, head: str) -> str | None:
    # --reverse applies after the walk (a -n would keep the newest): the oldest commit's subject comes first.
    out = run_git(repo, "log", "--reverse", "--format=%s", f"{base}..{head}", "--").stdout
    first = out.split(b"\n", 1)[0].decode("utf-8", "replace").strip()
    return first or None


def bounded_diff(repo: Path, base: str, head: str, *, max_bytes: int = DEFAULT_MAX_BYTES) -> BoundedDiff:
    """Diff `base`..`head` (any commit-ish) in `repo`, cut to at most `max_bytes` bytes of text."""
    if max_bytes < MIN_MAX_BYTES:
        raise ValidationFailedError(
            f"max_bytes must be at least {MIN_MAX_BYTES}, got {max_bytes}", details={"path": "max_bytes"}
        )
    root = open_repo(repo)
    base_sha = resolve_commit(root, base, "base revision")
    head_sha = resolve_commit(root, head, "head revision")
    raw = run_git(
        root,
        "diff",
        "--no-color",
        "--no-ext-diff",
        "--no-textconv",
        "-M",
        "--src-prefix=a/",
        "--dst-prefix=b/",
        base_sha,
        head_sha,
        "--",
    ).stdout
    files, insertions, deletions = _numstat(root, base_sha, head_sha)
    total = len(raw)
    stats: dict[str, Any] = {
        "base": base_sha,
        "head": head_sha,
        "total_bytes": total,
        "files_changed": len(files),
        "insertions": insertions,
        "deletions": deletions,
        "files": files,
        "digest": hashlib.sha256(raw).hexdigest(),
        "first_commit_subject": _first_commit_subject(root, base_sha, head_sha),
    }
    if total <= max_bytes:
        return BoundedDiff(text=raw.decode("utf-8", "replace"), truncated=False, shown_bytes=total, **stats)

    headers = count_file_headers(raw)
    # Reserve room for the widest marker this diff could need, so text never exceeds max_bytes.
    budget = max_bytes - len(truncation_marker(total, total, headers).encode()) - 1
    cut = raw.rfind(b"\n", 0, max(budget, 0)) + 1  # keep whole lines only; 0 if none fits
    body = raw[:cut]
    not_shown = headers - count_file_headers(body)
    text = body.decode("utf-8", "replace") + truncation_marker(cut, total, not_shown) + "\n"
    return BoundedDiff(text=text, truncated=True, shown_bytes=cut, files_not_shown=not_shown, **stats)


def run_branch_diff(
    repo: Path, run_branch: str, target: str = "HEAD", *, max_bytes: int = DEFAULT_MAX_BYTES
) -> BoundedDiff:
    """The run branch's own changes: diff from merge-base(target, run_branch) to run_branch."""
    root = open_repo(repo)
    target_sha = resolve_commit(root, target, "target revision")
    run_sha = resolve_commit(root, run_branch, "run branch")
    base = merge_base(root, target_sha, run_sha)
    if base is None:
        raise ValidationFailedError(
            f"run branch {run_branch!r} shares no history with {target!r}; nothing to diff against",
            details={"path": "run_branch"},
        )
    return bounded_diff(root, base, run_sha, max_bytes=max_bytes)
