"""How the review gate's builds (the bounded diff and the merge) run: the same
`python -m baton.merge.build` (baton/merge/build.py) everywhere, told what to do by its environment
(`BuildRequest.environment()`), never given a task token.

* `CodeBuildBuildRunner` (deployed): starts the merge CodeBuild project with the request as
  environment overrides; the buildspec (infra/buildspec/merge.yml) runs the command, which clones the
  repository and writes its report into Baton's table. The project's state-change event (an
  EventBridge rule, infra/capabilities/merge.py) invokes the `build_finished` function.
* `LocalBuildRunner` (the local stack): runs the command as a subprocess against the local repository
  (the emulator's table through AWS_ENDPOINT_URL), in a background thread; when it exits, the thread
  hands the same `BuildFinished` to `on_finished` (the local stack's `build_finished`).

Either way the gate's Task state is a `.waitForTaskToken` task: `start` returns at once.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import threading
from typing import TYPE_CHECKING

from baton.domain.merge_contracts import BUILD_ENV_NAMES, BuildFinished

if TYPE_CHECKING:
    from collections.abc import Callable

    from mypy_boto3_codebuild import CodeBuildClient

    from baton.domain.merge_contracts import BuildRequest

log = logging.getLogger("baton")
LOCAL_BUILD_TIMEOUT_SECONDS = 600
BUILD_COMMAND = ("-m", "baton.merge.build")


def build_command() -> list[str]:
    return [sys.executable, *BUILD_COMMAND]


class LocalBuildRunner:
    """Runs the build command as a subprocess; its exit is reported to `on_finished`."""

    def __init__(self, on_finished: Callable[[BuildFinished], object], environ: dict[str, str] | None = None) -> None:
        self._on_finished = on_finished
        self._environ = environ
        self.threads: list[threading.Thread] = []

    def start(self, request: BuildRequest) -> str:
        base = self._environ if self._environ is not None else dict(os.environ)
        env = {k: v for k, v in base.items() if k not in BUILD_ENV_NAMES}
        env.update(request.environment())
        name = f"baton-{request.kind}-{request.run_id}-{request.build_key}"

        def run() -> None:
            status = "FAILED"
            try:
                proc = subprocess.run(
                    build_command(),
                    env=env,
                    capture_output=True,
                    text=True,
                    timeout=LOCAL_BUILD_TIMEOUT_SECONDS,
                    check=False,
                )
                status = "SUCCEEDED" if proc.returncode in (0, 1) else "FAILED"
                if status == "FAILED":
                    log.warning(
                        "local %s build exited %s: %s",
                        request.kind,
                        proc.returncode,
                        proc.stderr[-2000:],
                        extra={"run_id": request.run_id},
                    )
            except Exception:
                log.exception("local build did not run", extra={"run_id": request.run_id})
            finished = BuildFinished(
                run_id=request.run_id,
                gate=request.gate,
                kind=request.kind,
                build_key=request.build_key,
                build_status=status,
                build_id=f"local:{name}",
            )
            try:
                self._on_finished(finished)
            except Exception:
                log.exception("local build's end was not handled", extra={"run_id": request.run_id})

        thread = threading.Thread(target=run, name=name, daemon=True)
        thread.start()
        self.threads.append(thread)
        return f"local:{name}"


class CodeBuildBuildRunner:
    """Starts the merge project; the environment names are `BuildRequest.environment()`'s."""

    def __init__(self, client: CodeBuildClient, project: str) -> None:
        self._client = client
        self.project = project

    def start(self, request: BuildRequest) -> str:
        if not self.project:
            raise RuntimeError("no merge project configured (BATON_MERGE_PROJECT is empty)")
        response = self._client.start_build(
            projectName=self.project,
            environmentVariablesOverride=[
                {"name": k, "value": v, "type": "PLAINTEXT"} for k, v in request.environment().items()
            ],
        )
        return str(response["build"]["id"])
