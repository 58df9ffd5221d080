"""The review gate's builds on in-memory ports: the token is parked in the build's record and never in
what the build is given; a build's end (the CodeBuild state-change event) sends it once, with what the
build reported; the companion's turns read the diff the gate's own diff build reported."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from baton.adapters.companion_offline import OfflineCompanion
from baton.cli.demo_repo import DemoRepo, create_demo_repo
from baton.contracts.review import BuildSent, BuildStarted
from baton.domain.build_events import CodeBuildStateChange
from baton.domain.merge_contracts import BuildFinished, BuildReport, BuildRequest, MergeOutcome
from baton.domain.review_decision import ReviewDecision
from baton.errors import TaskTokenError
from baton.merge.build import run_build
from baton.services.core import Core
from baton.services.review import ReviewService
from tests.fakes import MemoryBuildRecords, RecordingBuildRunner, RecordingTaskTokens


@pytest.fixture
def runner() -> RecordingBuildRunner:
    return RecordingBuildRunner()


@pytest.fixture
def records() -> MemoryBuildRecords:
    return MemoryBuildRecords()


@pytest.fixture
def review(core: Core, runner: RecordingBuildRunner, records: MemoryBuildRecords) -> ReviewService:
    # No `diffs`: the stacks' default, the diff the gate's diff build reported.
    return ReviewService(core, companion=OfflineCompanion, runner=lambda: runner, records=records)


@pytest.fixture
def repo(tmp_path: Path) -> DemoRepo:
    return create_demo_repo(tmp_path / "repo")


def _sent(core: Core) -> list[tuple[str, str, Any]]:
    tokens = core.tokens
    assert isinstance(tokens, RecordingTaskTokens)
    return tokens.sent


def _end(request: BuildRequest, status: str = "SUCCEEDED") -> BuildFinished:
    return BuildFinished(
        run_id=request.run_id, gate=request.gate, kind=request.kind, build_key=request.build_key, build_status=status
    )


def _state_change(request: BuildRequest, status: str) -> dict[str, Any]:
    """A CodeBuild "Build State Change" event as EventBridge delivers it (the fields Baton reads)."""
    variables = [{"name": k, "value": v, "type": "PLAINTEXT"} for k, v in request.environment().items()]
    variables.append({"name": "BATON_TABLE_NAME", "value": "baton-t", "type": "PLAINTEXT"})
    return {
        "version": "0",
        "source": "aws.codebuild",
        "detail-type": "CodeBuild Build State Change",
        "detail": {
            "build-status": status,
            "project-name": "baton-t-merge",
            "build-id": "arn:aws:codebuild:us-east-1:123456789012:build/baton-t-merge:1",
            "current-phase": "COMPLETED",
            "additional-information": {"environment": {"environment-variables": variables}},
        },
    }


def test_the_diff_build_is_given_no_token_and_every_turn_reads_its_diff(
    review: ReviewService, core: Core, runner: RecordingBuildRunner, records: MemoryBuildRecords, repo: DemoRepo
) -> None:
    config = repo.gate_input(max_turns=3)
    started = review.start_diff("r1", config, "tok-diff")
    assert started["started"] is True
    [request] = runner.started
    assert request.kind == "diff" and request.repo_path == str(repo.path) and request.run_branch == repo.run_branch
    assert "tok-diff" not in json.dumps(request.environment()) and _sent(core) == []
    # The build (the same code the CodeBuild project runs) writes its report; its end sends the token.
    records.put_report(run_build(request, {}))
    assert review.build_finished(_end(request)) == BuildSent(sent=True, kind="diff", build_status="SUCCEEDED")
    assert _sent(core) == [("success", "tok-diff", {"reported": True})]

    first = review.first_turn("r1", config)
    assert first["ok"] is True
    review.park("r1", "ship_review", "tok-1")
    report = records.get_report("r1", "ship_review", "diff")
    assert report is not None and report.diff is not None
    view = review.view("r1")
    assert view["diff"] == report.diff.model_dump(exclude={"text"})  # GET .../review: the build's stats
    # The companion's first turn and its reply see that diff: the offline companion names its files.
    thread = view["thread"]
    assert all(name in thread[0]["text"] for name in report.diff.files), thread[0]["text"]
    review.act("r1", ReviewDecision(action="reply", reply="checked"), caller="op")
    review.reply_turn("r1", "ship_review")
    assert review.view("r1")["diff"] == view["diff"]


def test_a_gate_with_nothing_to_diff_is_released_at_once(
    review: ReviewService, core: Core, runner: RecordingBuildRunner
) -> None:
    assert review.start_diff("r1", {"gate": "ship"}, "tok-0") == BuildStarted(started=False, handle="")
    assert runner.started == [] and _sent(core) == [("success", "tok-0", {"started": False})]
    # The first turn then refuses it with the reason, as before.
    assert review.first_turn("r1", {"gate": "ship"})["ok"] is False


def test_a_failed_diff_build_refuses_the_gate_with_its_reason(
    review: ReviewService, core: Core, runner: RecordingBuildRunner, records: MemoryBuildRecords, repo: DemoRepo
) -> None:
    config = repo.gate_input(run_branch="baton/no-such-branch")
    review.start_diff("r1", config, "tok-d")
    [request] = runner.started
    records.put_report(run_build(request, {}))
    review.build_finished(_end(request, "FAILED"))
    first = review.first_turn("r1", config)
    assert first["ok"] is False and "baton/no-such-branch" in first["cause"], first


def test_a_diff_build_that_ended_without_a_report_says_so(
    review: ReviewService, core: Core, runner: RecordingBuildRunner, repo: DemoRepo
) -> None:
    review.start_diff("r1", repo.gate_input(), "tok-d")
    [request] = runner.started
    assert review.build_finished(_end(request, "STOPPED"))["sent"] is True
    first = review.first_turn("r1", repo.gate_input())
    assert first["ok"] is False and "ended STOPPED without reporting a diff" in first["cause"]


def _merge_request(review: ReviewService, runner: RecordingBuildRunner, repo: DemoRepo, token: str) -> BuildRequest:
    # A real round: the diff build, the first turn, the park, the operator's approval, then the merge.
    review.start_diff("r1", repo.gate_input(), "tok-diff")
    diff_request = runner.started[-1]
    review.records.put_report(run_build(diff_request, {}))
    review.build_finished(_end(diff_request))
    review.first_turn("r1", repo.gate_input())
    review.park("r1", "ship_review", "tok-park")
    review.act("r1", ReviewDecision(action="approve_merge"), caller="op")
    review.start_merge("r1", "ship_review", token)
    return runner.started[-1]


def test_a_merge_build_end_sends_its_outcome_once(
    review: ReviewService, core: Core, runner: RecordingBuildRunner, records: MemoryBuildRecords, repo: DemoRepo
) -> None:
    request = _merge_request(review, runner, repo, "tok-merge")
    assert request.kind == "merge" and "tok-merge" not in json.dumps(request.environment())
    report = run_build(request, {})
    assert report.outcome is not None and report.outcome.merge_status == "merged"
    records.put_report(report)
    event = CodeBuildStateChange.model_validate(_state_change(request, "SUCCEEDED")).finished()
    assert event is not None
    assert review.build_finished(event)["sent"] is True
    assert review.build_finished(event) == BuildSent(sent=False, reason="this build's end was already handled")
    merge_sends = [s for s in _sent(core) if s[1] == "tok-merge"]
    assert merge_sends == [("success", "tok-merge", report.outcome.model_dump(mode="json"))]
    assert MergeOutcome.model_validate(merge_sends[0][2]).final_commit == report.outcome.final_commit


def test_a_merge_build_that_wrote_nothing_is_a_merge_crashed_failure(
    review: ReviewService, core: Core, runner: RecordingBuildRunner, repo: DemoRepo
) -> None:
    request = _merge_request(review, runner, repo, "tok-merge")
    event = CodeBuildStateChange.model_validate(_state_change(request, "FAILED")).finished()
    assert event is not None
    review.build_finished(event)
    [(kind, token, body)] = [s for s in _sent(core) if s[1] == "tok-merge"]
    assert (kind, token, body["error"]) == ("failure", "tok-merge", "MergeCrashed")
    assert "ended FAILED without reporting an outcome" in body["cause"] and "baton-t-merge:1" in body["cause"]


def test_a_reported_merge_failure_is_sent_with_its_error_and_capped_cause(
    review: ReviewService, core: Core, runner: RecordingBuildRunner, records: MemoryBuildRecords, repo: DemoRepo
) -> None:
    request = _merge_request(review, runner, repo, "tok-merge")
    base = {"run_id": request.run_id, "gate": request.gate, "kind": "merge", "build_key": request.build_key}
    records.put_report(BuildReport(**base, error="MergeInvalidInput", cause="x" * 50_000))  # type: ignore[arg-type]
    review.build_finished(_end(request, "FAILED"))
    [(kind, _, body)] = [s for s in _sent(core) if s[1] == "tok-merge"]
    assert (kind, body["error"], len(body["cause"])) == ("failure", "MergeInvalidInput", 32_000)


def test_an_end_of_another_or_an_older_build_sends_nothing(
    review: ReviewService, core: Core, runner: RecordingBuildRunner, records: MemoryBuildRecords, repo: DemoRepo
) -> None:
    request = _merge_request(review, runner, repo, "tok-merge")
    stale = request.model_copy(update={"build_key": "older"})
    records.put_report(run_build(stale, {}))  # a report of an earlier build of this gate is not this one's
    assert review.build_finished(_end(stale))["sent"] is False
    assert [s for s in _sent(core) if s[1] == "tok-merge"] == []
    # ...and the current build's end, with no report of its own, does not take the stale one.
    review.build_finished(_end(request, "FAILED"))
    [(kind, _, _)] = [s for s in _sent(core) if s[1] == "tok-merge"]
    assert kind == "failure"
    # Not a Baton build at all: the handler ignores it.
    foreign = _state_change(request, "SUCCEEDED")
    foreign["detail"]["additional-information"]["environment"]["environment-variables"] = []
    assert CodeBuildStateChange.model_validate(foreign).finished() is None


def test_a_failed_send_leaves_the_build_to_the_next_delivery(
    review: ReviewService, core: Core, runner: RecordingBuildRunner, records: MemoryBuildRecords, repo: DemoRepo
) -> None:
    request = _merge_request(review, runner, repo, "tok-merge")
    records.put_report(run_build(request, {}))
    tokens = core.tokens
    assert isinstance(tokens, RecordingTaskTokens)
    tokens.fail_next = RuntimeError("ThrottlingException")
    with pytest.raises(RuntimeError):
        review.build_finished(_end(request))
    assert review.build_finished(_end(request))["sent"] is True  # EventBridge's retry delivers it
    # A task that closed meanwhile (its timeout) is not an error: nothing is waiting any more.
    again = _merge_request(review, runner, repo, "tok-late")
    records.put_report(run_build(again, {}))
    tokens.fail_next = TaskTokenError("gone", reason="TaskTimedOut")
    assert review.build_finished(_end(again))["sent"] is False
