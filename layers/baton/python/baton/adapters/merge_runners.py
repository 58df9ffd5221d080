"""How the review gate's merge runs: the same `python -m baton.merge` command everywhere.

* `CodeBuildMergeRunner` (deployed): starts the merge CodeBuild project with the task token and the
  merge's parameters as environment overrides; the buildspec (infra/buildspec/merge.yml) clones the
  repository, runs `python -m baton.merge … --json`, pushes, and reports the outcome with
  `python -m baton.merge.report` (baton/merge/report.py, the one reporting path).
* `LocalMergeRunner` (the local stack): runs `python -m baton.merge` as a subprocess against a local
  repository, in a background thread, with BATON_TASK_TOKEN and AWS_ENDPOINT_URL in its environment, so
  the command itself reports back to the emulator exactly as it does from CodeBuild.

Either way the merge's Task state is a `.waitForTaskToken` task: `start` returns at once.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import threading
from typing import TYPE_CHECKING

from baton.merge.report import TASK_TOKEN_ENV

if TYPE_CHECKING:
    from mypy_boto3_codebuild import CodeBuildClient

    from baton.domain.merge_contracts import MergeRequest

log = logging.getLogger("baton")
LOCAL_MERGE_TIMEOUT_SECONDS = 600


def merge_command(request: MergeRequest) -> list[str]:
    argv = [
        sys.executable,
        "-m",
        "baton.merge",
        request.run_branch,
        "--repo",
        request.repo_path or ".",
        "--into",
        request.into,
        "--strategy",
        request.strategy,
        "--json",
    ]
    if request.message:
        argv += ["--message", request.message]
    return argv


class LocalMergeRunner:
    """Runs the merge command as a subprocess; the command reports to Step Functions (the emulator)."""

    def __init__(self, environ: dict[str, str] | None = None) -> None:
        self._environ = environ
        self.threads: list[threading.Thread] = []

    def start(self, token: str, request: MergeRequest) -> str:
        env = {**(self._environ if self._environ is not None else os.environ), TASK_TOKEN_ENV: token}
        argv = merge_command(request)

        def run() -> None:
            try:
                proc = subprocess.run(
                    argv, env=env, capture_output=True, text=True, timeout=LOCAL_MERGE_TIMEOUT_SECONDS, check=False
                )
            except Exception:
                log.exception("local merge did not run", extra={"run_id": request.run_id})
                return
            if proc.returncode not in (0, 1):
                log.warning(
                    "local merge exited %s: %s", proc.returncode, proc.stderr[-2000:], extra={"run_id": request.run_id}
                )

        thread = threading.Thread(target=run, name=f"baton-merge-{request.run_id}", daemon=True)
        thread.start()
        self.threads.append(thread)
        return f"local:{thread.name}"


class CodeBuildMergeRunner:
    """Starts the merge project; the environment names match infra/buildspec/merge.yml."""

    def __init__(self, client: CodeBuildClient, project: str) -> None:
        self._client = client
        self.project = project

    def start(self, token: str, request: MergeRequest) -> str:
        if not self.project:
            raise RuntimeError("no merge project configured (BATON_MERGE_PROJECT is empty)")
        into = "" if request.into == "current" else request.into
        env = {
            TASK_TOKEN_ENV: token,
            "BATON_RUN_BRANCH": request.run_branch,
            "BATON_MERGE_INTO": into,
            "BATON_MERGE_STRATEGY": request.strategy,
            "BATON_MERGE_MESSAGE": request.message or "",
            "BATON_RUN_ID": request.run_id,
        }
        if request.repo_url:
            env["BATON_REPO_URL"] = request.repo_url
        response = self._client.start_build(
            projectName=self.project,
            environmentVariablesOverride=[{"name": k, "value": v, "type": "PLAINTEXT"} for k, v in env.items()],
        )
        return str(response["build"]["id"])
