"""A thin, predictable runner for the real `git` binary (no GitPython).

Every call runs `git -C <repo> ...` with a scrubbed environment: inherited `GIT_DIR`-style variables
are dropped (they would point git at another repository when we run inside a hook), output is in the
C locale, and git never prompts. A failure nobody planned for raises `GitCommandError`, which callers
treat as a crash, not as a domain error.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING

from baton.errors import BatonError, NotFoundError, ValidationFailedError

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

GIT_TIMEOUT_SECONDS = 600

_SCRUBBED_ENV = frozenset(
    {
        "GIT_DIR",
        "GIT_WORK_TREE",
        "GIT_INDEX_FILE",
        "GIT_OBJECT_DIRECTORY",
        "GIT_ALTERNATE_OBJECT_DIRECTORIES",
        "GIT_COMMON_DIR",
        "GIT_NAMESPACE",
        "GIT_PREFIX",
    }
)


class GitCommandError(RuntimeError):
    """`git` exited with a status the caller did not expect."""

    def __init__(self, args: list[str], returncode: int, stderr: str) -> None:
        super().__init__(f"git {' '.join(args)} exited {returncode}: {stderr.strip()}")
        self.git_args = args
        self.returncode = returncode
        self.stderr = stderr


def git_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _SCRUBBED_ENV}
    env.update({"LC_ALL": "C", "LANGUAGE": "C", "GIT_TERMINAL_PROMPT": "0", "GIT_PAGER": "cat"})
    if extra:
        env.update(extra)
    return env


def run_git(
    repo: Path,
    *args: str,
    ok_codes: Iterable[int] = (0,),
    stdin: bytes | None = None,
    env: Mapping[str, str] | None = None,
) -> subprocess.CompletedProcess[bytes]:
    """Run git in `repo`; return the process (bytes) if its exit status is in `ok_codes`."""
    argv = list(args)
    proc = subprocess.run(
        ["git", "-C", str(repo), *argv],
        input=stdin,
        capture_output=True,
        env=git_env(env),
        timeout=GIT_TIMEOUT_SECONDS,
        check=False,
    )
    if proc.returncode not in tuple(ok_codes):
        raise GitCommandError(argv, proc.returncode, proc.stderr.decode("utf-8", "replace"))
    return proc


def git_out(repo: Path, *args: str, env: Mapping[str, str] | None = None) -> str:
    """Stdout of a git command that must succeed, without the trailing newline."""
    return run_git(repo, *args, env=env).stdout.decode("utf-8", "replace").rstrip("\n")


def split_z(data: bytes) -> list[str]:
    """Split NUL-separated git output (`-z`) into strings, dropping empty fields."""
    return [part.decode("utf-8", "replace") for part in data.split(b"\0") if part]


def open_repo(repo: Path | str) -> Path:
    """Absolute path of the repository's top-level directory (a bare repo: itself), or NotFoundError."""
    path = Path(repo).expanduser()
    if not path.is_dir():
        raise NotFoundError(f"repository not found: {path} is not a directory", details={"repo": str(path)})
    proc = run_git(path, "rev-parse", "--git-dir", ok_codes=range(256))
    if proc.returncode != 0:
        raise NotFoundError(f"not a git repository: {path}", details={"repo": str(path)})
    top = run_git(path, "rev-parse", "--show-toplevel", ok_codes=range(256))  # fails in a bare repo
    if top.returncode == 0 and top.stdout.strip():
        return Path(top.stdout.decode().strip()).resolve()
    return path.resolve()


def check_rev_text(rev: str, what: str) -> str:
    """Refuse names git would read as options or that cannot be a ref (empty, NUL, whitespace)."""
    if not rev or rev.startswith("-") or "\0" in rev or any(c.isspace() for c in rev):
        raise ValidationFailedError(f"invalid {what}: {rev!r}", details={"path": what})
    return rev


def resolve_commit(repo: Path, rev: str, what: str) -> str:
    """Full SHA of the commit `rev` names, or NotFoundError."""
    check_rev_text(rev, what)
    proc = run_git(repo, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}", ok_codes=range(256))
    if proc.returncode != 0:
        raise NotFoundError(f"{what} not found: {rev!r}", details={"rev": rev})
    return proc.stdout.decode().strip()


def branch_head(repo: Path, branch: str, what: str) -> str:
    """Full SHA at the tip of the local branch `branch`, or NotFoundError."""
    check_rev_text(branch, what)
    if branch.startswith("refs/"):
        raise ValidationFailedError(f"{what} must be a short branch name, not {branch!r}")
    proc = run_git(repo, "rev-parse", "--verify", "--quiet", f"refs/heads/{branch}^{{commit}}", ok_codes=range(256))
    if proc.returncode != 0:
        raise NotFoundError(f"{what} not found: no local branch {branch!r}", details={"branch": branch})
    return proc.stdout.decode().strip()


def readable_branch_head(repo_path: str | None, branch: str) -> str | None:
    """`branch_head` where this process can read the repository, else None (never an error: a reader shows
    the tip if it can, and a merge compares it with the reviewed commit)."""
    if not repo_path or not Path(repo_path).is_dir():
        return None
    try:
        return branch_head(Path(repo_path), branch, "run branch")
    except (BatonError, GitCommandError, OSError):
        return None


def is_ancestor(repo: Path, older: str, newer: str) -> bool:
    proc = run_git(repo, "merge-base", "--is-ancestor", older, newer, ok_codes=(0, 1))
    return proc.returncode == 0


def merge_base(repo: Path, a: str, b: str) -> str | None:
    """The best common ancestor of two commits, or None for unrelated histories."""
    proc = run_git(repo, "merge-base", a, b, ok_codes=(0, 1))
    if proc.returncode != 0:
        return None
    return proc.stdout.decode().strip() or None
