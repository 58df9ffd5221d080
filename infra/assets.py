"""What the deployment uploads from the checkout, and what it leaves out.

One exclude list serves every code asset: the Lambda layer (`layers/baton`, in
`infra/capabilities/functions.py`), each function's folder, and the merge build's package
(`infra/capabilities/merge.py`). The layer ships only what the Lambdas and the merge build import: the
developer CLI (`baton/cli`), the embedded local stack (`baton/local`) and the agent SDK
(`baton/client`) stay behind, and so does bytecode. The in-memory fakes live in `tests/fakes/`, outside
every asset.

`shipped_files` applies the same patterns the way the CDK's glob exclusion does (a pattern without a
slash matches a name at any depth; an excluded folder is not entered), so `scripts/check_lambda_imports.py`
can import the handlers from a copy of the layer as it ships; `tests/infra/test_stack.py` checks the copy
against the asset the CDK staged.
"""

from __future__ import annotations

import fnmatch
import os
import shutil
from pathlib import Path, PurePosixPath

BYTECODE = ("**/__pycache__", "**/*.pyc", "**/.mypy_cache", "**/.pytest_cache")
# Relative to the layer asset's root (`layers/baton`): code no Lambda and no merge build imports.
NOT_IN_THE_LAYER = ("python/baton/cli", "python/baton/local", "python/baton/client")
ASSET_EXCLUDE = [*BYTECODE, *NOT_IN_THE_LAYER]


def is_excluded(relative: str, exclude: list[str] = ASSET_EXCLUDE) -> bool:
    """Is this path (relative to the asset root, `/`-separated) left out of the asset? `**/<name>` and
    a bare name match that name at any depth; a pattern with a slash matches from the root."""
    name = PurePosixPath(relative).name
    for pattern in exclude:
        if pattern.startswith("**/") or "/" not in pattern:
            if fnmatch.fnmatchcase(name, pattern.removeprefix("**/")):
                return True
        elif fnmatch.fnmatchcase(relative, pattern):
            return True
    return False


def shipped_files(root: Path, exclude: list[str] = ASSET_EXCLUDE) -> list[str]:
    """The files of the asset at `root`, relative and sorted, as the CDK stages them."""
    found: list[str] = []
    for folder, dirs, files in os.walk(root):
        base = Path(folder).relative_to(root)
        dirs[:] = sorted(d for d in dirs if not is_excluded((base / d).as_posix(), exclude))
        found.extend((base / f).as_posix() for f in files if not is_excluded((base / f).as_posix(), exclude))
    return sorted(found)


def stage(root: Path, destination: Path, exclude: list[str] = ASSET_EXCLUDE) -> Path:
    """Copy the asset at `root` into `destination` as it ships; returns `destination`."""
    for relative in shipped_files(root, exclude):
        target = destination / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(root / relative, target)
    return destination
