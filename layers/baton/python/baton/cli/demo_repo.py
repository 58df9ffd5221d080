"""A throwaway git repository for the review gate's demo and tests.

`create_demo_repo(path)` makes a repository with a `main` branch (one commit: a tiny Python app) and a
run branch (default `baton/run-demo`) a few commits ahead, written the way an agent would: a feature, its
test, a doc line. `main` is left checked out with a clean tree, which is what the merge needs
(`merge_into: current`). Returns a `DemoRepo` (path, branch names, SHAs, commit subjects) whose
`gate_input()` is a ready review-gate configuration for that repository.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from baton.merge.gitcmd import git_out, run_git

_IDENTITY = {
    "GIT_AUTHOR_NAME": "Demo Agent",
    "GIT_AUTHOR_EMAIL": "agent@baton.local",
    "GIT_COMMITTER_NAME": "Demo Agent",
    "GIT_COMMITTER_EMAIL": "agent@baton.local",
}

_BASE_FILES = {
    "README.md": "# greeter\n\nA tiny app the demo agent improves.\n",
    "greeter/__init__.py": "",
    "greeter/core.py": 'def greet(name: str) -> str:\n    return "Hello, " + name\n',
}

# (subject, files written by that commit) — the agent's work on the run branch.
_RUN_COMMITS: list[tuple[str, dict[str, str]]] = [
    (
        "Add a polite greeting with a title",
        {
            "greeter/core.py": (
                "def greet(name: str, title: str | None = None) -> str:\n"
                '    who = f"{title} {name}" if title else name\n'
                '    return f"Hello, {who}!"\n'
            )
        },
    ),
    (
        "Test the greeting",
        {
            "tests/test_core.py": (
                "from greeter.core import greet\n\n\n"
                "def test_plain() -> None:\n"
                '    assert greet("Ada") == "Hello, Ada!"\n\n\n'
                "def test_title() -> None:\n"
                '    assert greet("Lovelace", "Countess") == "Hello, Countess Lovelace!"\n'
            )
        },
    ),
    (
        "Document the title option",
        {"README.md": "# greeter\n\nA tiny app the demo agent improves.\n\n`greet(name, title=None)` adds a title.\n"},
    ),
]


@dataclass(frozen=True)
class DemoRepo:
    path: Path
    base_branch: str
    run_branch: str
    base_commit: str
    run_head: str
    commits: list[str] = field(default_factory=list)

    def gate_input(self, **overrides: Any) -> dict[str, Any]:
        """A review-gate configuration merging this run branch into `main` (the checked-out branch)."""
        config: dict[str, Any] = {
            "gate": "ship_review",
            "repo_path": str(self.path),
            "run_branch": self.run_branch,
            "base_branch": self.base_branch,
        }
        config.update(overrides)
        return config


def _commit(repo: Path, files: dict[str, str], subject: str) -> str:
    for name, text in files.items():
        target = repo / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    run_git(repo, "add", "--", *files)
    run_git(repo, "commit", "--quiet", "--no-verify", "-m", subject, env=_IDENTITY)
    return git_out(repo, "rev-parse", "HEAD")


def create_demo_repo(
    path: Path | None = None, *, run_branch: str = "baton/run-demo", commits: int = len(_RUN_COMMITS)
) -> DemoRepo:
    """Create the repository at `path` (a new temporary directory when None; must be empty or absent).

    `commits` (1..3) is how many of the agent's commits the run branch gets."""
    if not 1 <= commits <= len(_RUN_COMMITS):
        raise ValueError(f"commits must be in 1..{len(_RUN_COMMITS)}")
    repo = Path(tempfile.mkdtemp(prefix="baton-demo-repo-")) if path is None else Path(path)
    repo.mkdir(parents=True, exist_ok=True)
    if any(repo.iterdir()):
        raise ValueError(f"{repo} is not empty")
    run_git(repo, "init", "--quiet", "--initial-branch=main")
    run_git(repo, "config", "user.name", "Baton Operator")
    run_git(repo, "config", "user.email", "operator@baton.local")
    run_git(repo, "config", "commit.gpgsign", "false")
    base = _commit(repo, _BASE_FILES, "Initial greeter app")
    run_git(repo, "checkout", "--quiet", "-b", run_branch)
    subjects: list[str] = []
    head = base
    for subject, files in _RUN_COMMITS[:commits]:
        head = _commit(repo, files, subject)
        subjects.append(subject)
    run_git(repo, "checkout", "--quiet", "main")
    return DemoRepo(
        path=repo.resolve(),
        base_branch="main",
        run_branch=run_branch,
        base_commit=base,
        run_head=head,
        commits=subjects,
    )
