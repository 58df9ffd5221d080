"""The merge buildspec's build script, run for real against local git repositories with this interpreter
as `python3` and a stub Step Functions endpoint (AWS_ENDPOINT_URL) that records the callbacks the
build's one reporting path (`python -m baton.merge.report`) sends, rendered as the aws CLI would name them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import yaml

from baton.workflows.source_tree import source_tree

pytestmark = pytest.mark.infra

BUILDSPEC = source_tree().root / "infra" / "buildspec" / "merge.yml"

_CALL_NAMES = {"SendTaskSuccess": "send-task-success", "SendTaskFailure": "send-task-failure"}


class StepFunctionsStub:
    """Answers Step Functions' JSON protocol on localhost; keeps each call as an aws-CLI-like line."""

    def __init__(self) -> None:
        self.calls: list[str] = []
        self.output: Any = None
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                action = self.headers.get("X-Amz-Target", "").rpartition(".")[2]
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
                line = f"stepfunctions {_CALL_NAMES.get(action, action)} --task-token {body.get('taskToken')}"
                if "error" in body:
                    line += f" --error {body['error']} --cause {body.get('cause', '')}"
                if "output" in body:
                    stub.output = json.loads(body["output"])
                stub.calls.append(line)
                self.send_response(200)
                self.send_header("Content-Type", "application/x-amz-json-1.0")
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"{}")

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"


@pytest.fixture
def sfn() -> Iterator[StepFunctionsStub]:
    stub = StepFunctionsStub()
    thread = threading.Thread(target=stub.server.serve_forever, daemon=True)
    thread.start()
    yield stub
    stub.server.shutdown()
    stub.server.server_close()


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


def _run(tmp_path: Path, sfn: StepFunctionsStub, **env: str) -> tuple[int, str, list[str], Any]:
    spec: Any = yaml.safe_load(BUILDSPEC.read_text())  # no CDK import needed here
    script = "\n".join(spec["phases"]["build"]["commands"])
    stubs = tmp_path / "bin"
    stubs.mkdir(exist_ok=True)
    (stubs / "python3").symlink_to(sys.executable)
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    full_env = {
        **{k: str(v) for k, v in spec["env"]["variables"].items()},
        "PATH": f"{stubs}{os.pathsep}{os.environ['PATH']}",
        "HOME": str(home),
        "GIT_CONFIG_NOSYSTEM": "1",
        "CODEBUILD_SRC_DIR": str(source_tree().root / "layers" / "baton"),
        "AWS_ENDPOINT_URL": sfn.url,
        "AWS_REGION": "us-east-1",
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "BATON_TASK_TOKEN": "token-123",
        **env,
    }
    proc = subprocess.run(["bash", "-c", script], env=full_env, capture_output=True, text=True, timeout=120)
    return proc.returncode, proc.stderr, sfn.calls, sfn.output


def test_merges_pushes_then_reports_success(tmp_path: Path, sfn: StepFunctionsStub) -> None:
    origin = _origin(tmp_path)
    code, err, calls, output = _run(tmp_path, sfn, BATON_REPO_URL=str(origin), BATON_RUN_BRANCH="baton/run-1")
    assert code == 0, err
    assert len(calls) == 1 and calls[0].startswith("stepfunctions send-task-success --task-token token-123"), calls
    assert output["merge_status"] == "merged"
    assert output["merged_into"] == "main"
    # pushed before reporting: origin's main now holds the squash commit with the run's file
    assert _git(origin, "rev-parse", "main") == output["final_commit"]
    assert "feature.txt" in _git(origin, "ls-tree", "--name-only", "main")


def test_unknown_run_branch_reports_invalid_input(tmp_path: Path, sfn: StepFunctionsStub) -> None:
    origin = _origin(tmp_path)
    code, _, calls, _ = _run(tmp_path, sfn, BATON_REPO_URL=str(origin), BATON_RUN_BRANCH="baton/nope")
    assert code != 0
    assert len(calls) == 1 and "send-task-failure" in calls[0] and "--error MergeInvalidInput" in calls[0], calls


def test_no_repository_configured_reports_invalid_input(tmp_path: Path, sfn: StepFunctionsStub) -> None:
    code, _, calls, _ = _run(tmp_path, sfn, BATON_REPO_URL="", BATON_RUN_BRANCH="baton/run-1")
    assert code != 0
    assert len(calls) == 1 and "--error MergeInvalidInput" in calls[0], calls


def test_the_build_reports_only_through_the_python_reporting_path() -> None:
    """One reporting path: the buildspec sends no callback of its own (no `aws stepfunctions`)."""
    spec: Any = yaml.safe_load(BUILDSPEC.read_text())
    script = "\n".join(spec["phases"]["build"]["commands"])
    assert "aws stepfunctions" not in script
    assert script.count("python3 -m baton.merge.report") == 3  # the failure, the logged failure, the outcome
