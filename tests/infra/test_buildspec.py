"""The merge buildspec's build script, run for real against local git repositories with a stub `aws`
(records the Step Functions callbacks) and this interpreter as `python3`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from baton.workflows.source_tree import source_tree

pytestmark = pytest.mark.infra

BUILDSPEC = source_tree().root / "infra" / "buildspec" / "merge.yml"

AWS_STUB = """#!/usr/bin/env bash
# records: <subcommand> <json of args>; copies file:// task output
out="$AWS_CALLS"
args=("$@")
for ((i=0; i<${#args[@]}; i++)); do
  if [ "${args[$i]}" = "--task-output" ]; then cat "${args[$((i+1))]#file://}" > "$out.output.json"; fi
done
printf '%s\\n' "$*" >> "$out"
"""


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


def _origin(tmp_path: Path) -> Path:
    work = tmp_path / "seed"
    work.mkdir()
    _git(work, "init", "-q", "-b", "main")
    _git(work, "config", "user.email", "dev@example.com")
    _git(work, "config", "user.name", "Dev")
    (work / "README.md").write_text("hello\n")
    _git(work, "add", ".")
    _git(work, "commit", "-q", "-m", "init")
    _git(work, "checkout", "-q", "-b", "baton/run-1")
    (work / "feature.txt").write_text("agent work\n")
    _git(work, "add", ".")
    _git(work, "commit", "-q", "-m", "agent: add feature")
    _git(work, "checkout", "-q", "main")
    origin = tmp_path / "origin.git"
    _git(tmp_path, "clone", "-q", "--bare", str(work), str(origin))
    return origin


def _run(tmp_path: Path, **env: str) -> tuple[int, str, list[str], Any]:
    spec: Any = yaml.safe_load(BUILDSPEC.read_text())  # no CDK import needed here
    script = "\n".join(spec["phases"]["build"]["commands"])
    stubs = tmp_path / "bin"
    stubs.mkdir(exist_ok=True)
    (stubs / "aws").write_text(AWS_STUB)
    (stubs / "aws").chmod(0o755)
    (stubs / "python3").symlink_to(sys.executable)
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    calls = tmp_path / "aws-calls"
    full_env = {
        **{k: str(v) for k, v in spec["env"]["variables"].items()},
        "PATH": f"{stubs}{os.pathsep}{os.environ['PATH']}",
        "HOME": str(home),
        "GIT_CONFIG_NOSYSTEM": "1",
        "CODEBUILD_SRC_DIR": str(source_tree().root / "layers" / "baton"),
        "AWS_CALLS": str(calls),
        "BATON_TASK_TOKEN": "token-123",
        **env,
    }
    proc = subprocess.run(["bash", "-c", script], env=full_env, capture_output=True, text=True, timeout=120)
    recorded = calls.read_text().splitlines() if calls.exists() else []
    output_file = Path(f"{calls}.output.json")
    output = json.loads(output_file.read_text()) if output_file.exists() else None
    return proc.returncode, proc.stderr, recorded, output


def test_merges_pushes_then_reports_success(tmp_path: Path) -> None:
    origin = _origin(tmp_path)
    code, err, calls, output = _run(tmp_path, BATON_REPO_URL=str(origin), BATON_RUN_BRANCH="baton/run-1")
    assert code == 0, err
    assert len(calls) == 1 and calls[0].startswith("stepfunctions send-task-success --task-token token-123"), calls
    assert output["merge_status"] == "merged"
    assert output["merged_into"] == "main"
    # pushed before reporting: origin's main now holds the squash commit with the run's file
    assert _git(origin, "rev-parse", "main") == output["final_commit"]
    assert "feature.txt" in _git(origin, "ls-tree", "--name-only", "main")


def test_unknown_run_branch_reports_invalid_input(tmp_path: Path) -> None:
    origin = _origin(tmp_path)
    code, _, calls, _ = _run(tmp_path, BATON_REPO_URL=str(origin), BATON_RUN_BRANCH="baton/nope")
    assert code != 0
    assert len(calls) == 1 and "send-task-failure" in calls[0] and "--error MergeInvalidInput" in calls[0], calls


def test_no_repository_configured_reports_invalid_input(tmp_path: Path) -> None:
    code, _, calls, _ = _run(tmp_path, BATON_REPO_URL="", BATON_RUN_BRANCH="baton/run-1")
    assert code != 0
    assert len(calls) == 1 and "--error MergeInvalidInput" in calls[0], calls
