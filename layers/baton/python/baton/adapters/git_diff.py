"""The `DiffSource` port over the local git binary: the run branch's bounded diff (`baton/merge/diff.py`)
computed in this process from a local checkout. The stacks read the diff their gate's diff build
reported instead (`ReviewBuilds.run_branch_diff` in baton/services/review/builds.py); the build computes
it with the same `baton/merge/diff.py`."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from baton.errors import ValidationFailedError
from baton.merge.diff import run_branch_diff

if TYPE_CHECKING:
    from baton.domain.merge_contracts import BoundedDiff, DiffRequest


class GitDiffSource:
    def run_branch_diff(self, request: DiffRequest) -> BoundedDiff:
        if not request.repo_path:
            raise ValidationFailedError(
                "the git diff source reads a local checkout: the gate sets no repo_path", details={"path": "repo_path"}
            )
        return run_branch_diff(Path(request.repo_path), request.run_branch, request.target, max_bytes=request.max_bytes)
