"""Issue 28 item 3: `baton resume ... __review_action=approve_merge` reports what the merge became. Its
exit status follows the outcome (0 merged, 1 rejected by a guard with the guard's reason, 3 still
pending after --wait-seconds); `baton review show` names the reviewed commit and offers no approve_merge
over blockers. Through the SDK into the real resolver (an httpx MockTransport); the state machine's
merge step is played by the transport after the resume: the real merge build on a demo repository,
then the merge_record step with its outcome."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from typer.testing import CliRunner

from baton.adapters.companion_offline import OfflineCompanion
from baton.adapters.git_diff import GitDiffSource
from baton.api import deps
from baton.api.app import create_app
from baton.cli.demo_repo import DemoRepo, create_demo_repo
from baton.cli.main import app as cli_app
from baton.client.sdk import Client
from baton.local.http_adapter import to_proxy_event
from baton.merge.build import run_build
from baton.merge.gitcmd import git_out, run_git
from baton.runtime.settings import Settings
from baton.runtime.wiring import Services
from baton.services.core import Core
from baton.services.review import ReviewService
from baton.services.runs import RunService
from tests.fakes import MemoryBuildRecords, RecordingBuildRunner

TOKEN = "local-secret"
GATE = "ship_review"


class Stack:
    def __init__(self, core: Core, review: ReviewService, runner: RecordingBuildRunner) -> None:
        settings = Settings.model_validate({"BATON_TABLE_NAME": "t", "BATON_LOCAL_API_TOKEN": TOKEN})
        services = Services(settings=settings, core=core, runs=RunService(core), review=review)
        deps.set_services_provider(lambda: services)
        self.app = create_app()
        self.review = review
        self.runner = runner
        self.merge_runs = True

    def handle(self, request: httpx.Request) -> httpx.Response:
        path = request.url.raw_path.decode()
        event = to_proxy_event(request.method, path, dict(request.headers), request.content, "127.0.0.1")
        result = self.app.resolve(event, None)
        body = json.loads(request.content or b"{}")
        action = body.get("answers", {}).get("__review_action") if isinstance(body, dict) else None
        if path.endswith("/resume") and result["statusCode"] == 200 and action in ("approve_merge", "force_merge"):
            self._merge_step()
        return httpx.Response(result["statusCode"], content=(result.get("body") or "").encode())

    def _merge_step(self) -> None:
        """What the state machine does after a merge action: Merge (the build), then RecordMerge."""
        if not self.merge_runs:
            return
        self.review.start_merge("r1", GATE, "tok-merge")
        report = run_build(self.runner.started[-1], {})
        assert report.outcome is not None, report
        self.review.record_merge("r1", GATE, outcome=report.outcome)


@pytest.fixture
def repo(tmp_path: Path) -> DemoRepo:
    return create_demo_repo(tmp_path / "repo")


@pytest.fixture
def stack(core: Core, monkeypatch: pytest.MonkeyPatch) -> Iterator[Stack]:
    runner = RecordingBuildRunner()
    review = ReviewService(
        core,
        companion=OfflineCompanion,
        runner=lambda: runner,
        records=MemoryBuildRecords(),
        diffs=GitDiffSource(),
        merge_runner_kind="local",
    )
    served = Stack(core, review, runner)
    client = Client("http://baton.test", TOKEN, transport=httpx.MockTransport(served.handle))
    monkeypatch.setattr("baton.cli.common.client", lambda: client)
    yield served
    deps.set_services_provider(deps._default_provider)


def _open(stack: Stack, repo: DemoRepo) -> None:
    assert stack.review.first_turn("r1", repo.gate_input())["ok"] is True
    stack.review.park("r1", GATE, "tok-1")


def cli(*args: str) -> Any:
    return CliRunner().invoke(cli_app, list(args))


APPROVE = ["resume", "--run-id", "r1", "--answer", "__review_action=approve_merge"]  # waits by default


def test_a_merge_a_guard_rejects_exits_1_with_the_guard_s_reason(stack: Stack, repo: DemoRepo) -> None:
    _open(stack, repo)
    (repo.path / "README.md").write_text("an operator's uncommitted edit\n")  # the dirty-tree guard
    out = cli(*APPROVE)
    assert out.exit_code == 1, out.output
    assert "merge rejected" in out.output and "uncommitted changes" in out.output
    assert repo.run_head[:12] in out.output  # the reviewed commit it tried to merge
    assert "resumed" not in out.output
    assert git_out(repo.path, "rev-parse", "main") == repo.base_commit


def test_a_merge_that_lands_exits_0_naming_the_commit_and_the_reviewed_head(stack: Stack, repo: DemoRepo) -> None:
    _open(stack, repo)
    out = cli(*APPROVE)
    assert out.exit_code == 0, out.output
    final = git_out(repo.path, "rev-parse", "main")
    assert f"merged {final} into main (the reviewed commit {repo.run_head[:12]})" in out.output


def test_a_merge_still_running_is_accepted_and_pending_not_resumed(stack: Stack, repo: DemoRepo) -> None:
    _open(stack, repo)
    stack.merge_runs = False  # the build has not reported
    waited = cli("resume", "--run-id", "r1", "--answer", "__review_action=approve_merge", "--wait-seconds", "1")
    assert waited.exit_code == 3, waited.output
    assert "accepted; the merge (the reviewed commit" in waited.output and "is pending" in waited.output
    assert "review show r1" in waited.output


def test_not_waiting_says_accepted_and_pending(stack: Stack, repo: DemoRepo) -> None:
    _open(stack, repo)
    stack.merge_runs = False
    out = cli("resume", "--run-id", "r1", "--answer", "__review_action=approve_merge", "--wait-seconds", "0")
    assert out.exit_code == 0, out.output
    assert "accepted; the merge" in out.output and "is pending" in out.output


def test_review_show_names_the_reviewed_commit_and_offers_no_approve_over_blockers(
    stack: Stack, repo: DemoRepo
) -> None:
    run_git(repo.path, "checkout", "--quiet", repo.run_branch)
    (repo.path / "wip.py").write_text("# TODO: finish\n")
    run_git(repo.path, "add", "wip.py")
    run_git(repo.path, "commit", "--quiet", "-m", "wip")
    run_git(repo.path, "checkout", "--quiet", "main")
    head = git_out(repo.path, "rev-parse", repo.run_branch)
    _open(stack, repo)
    out = cli("review", "show", "r1")
    assert out.exit_code == 0, out.output
    assert f"reviewed commit: {head}" in out.output
    assert "actions: reply, force_merge, request_changes — e.g." in out.output
    assert "__review_action=request_changes" in out.output and "__review_reason=" in out.output
    forced = cli("resume", "--run-id", "r1", "--answer", "__review_action=force_merge", "--wait-seconds", "0")
    assert forced.exit_code == 1 and "needs a reason" in forced.output
