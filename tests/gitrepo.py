"""Throwaway git repositories for tests of the merge and the bounded diff."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path


def git(repo: Path, *args: str) -> str:
    """Stdout of a git command that must succeed, stripped; independent of the code under test."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    proc = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, env=env, check=True)
    return proc.stdout.strip()


def init_repo(root: Path) -> Path:
    """An empty repository on `main` with a local identity and no commit signing."""
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.name", "Operator")
    git(root, "config", "user.email", "operator@example.com")
    git(root, "config", "commit.gpgsign", "false")
    return root
