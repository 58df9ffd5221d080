"""The `DiffSource` port over the local git binary: the run branch's bounded diff (`baton/merge/diff.py`)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from baton.merge.diff import run_branch_diff

if TYPE_CHECKING:
    from baton.domain.merge_contracts import BoundedDiff, DiffRequest


class GitDiffSource:
    def run_branch_diff(self, request: DiffRequest) -> BoundedDiff:
        return run_branch_diff(Path(request.repo_path), request.run_branch, request.target, max_bytes=request.max_bytes)
