"""Quorum on a review gate's merge (in-memory ports, baton/services/review/actions.py): approve_merge by N
approvers of a set before the merge runs; request_changes by an approver rejects; the run's starter and
non-approvers are refused (403); the same operator twice counts once; the token (and so the merge) is
sent exactly once, also with 50 at once; no auto-merge on a verdict alone; a rejected merge reopens the
gate for a new round of votes."""

from __future__ import annotations

import threading
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from baton.adapters.companion_offline import OfflineCompanion
from baton.adapters.git_diff import GitDiffSource
from baton.cli.demo_repo import DemoRepo, create_demo_repo
from baton.domain.merge_contracts import MergeOutcome
from baton.domain.review_decision import ReviewDecision
from baton.errors import ConflictError, ForbiddenError
from baton.models import RunSummary
from baton.services.core import Core
from baton.services.review import ReviewService
from tests.fakes import MemoryBuildRecords, RecordingTaskTokens

APPROVAL = {"approvals": 2, "approvers": ["alice", "bob", "carol"]}
APPROVE = ReviewDecision(action="approve_merge")


class _Runner:
    def start(self, request: Any) -> str:
        return "fake-1"


@pytest.fixture
def review(core: Core) -> ReviewService:
    return ReviewService(
        core,
        companion=OfflineCompanion,
        runner=_Runner,
        records=MemoryBuildRecords(),
        diffs=GitDiffSource(),
        merge_runner_kind="local",
    )


@pytest.fixture
def repo(tmp_path: Path) -> DemoRepo:
    return create_demo_repo(tmp_path / "repo")


def _sent(core: Core) -> list[tuple[str, str, Any]]:
    assert isinstance(core.tokens, RecordingTaskTokens)
    return list(core.tokens.sent)


def _open(core: Core, review: ReviewService, repo: DemoRepo, **config: Any) -> None:
    now = core.now()
    core.store.create_run(
        RunSummary(run_id="r1", status="running", created_at=now, updated_at=now, hosted=True, started_by="starter")
    )
    assert review.first_turn("r1", repo.gate_input(approval=APPROVAL, **config))["ok"] is True
    review.park("r1", "ship_review", "tok-1")


def _types(core: Core) -> Counter[str]:
    return Counter(e.type for e in core.store.list_events("r1", limit=500))


def test_two_approvals_of_three_send_the_merge_once_with_the_deciding_action(
    core: Core, review: ReviewService, repo: DemoRepo
) -> None:
    _open(core, review, repo)
    first = review.act("r1", APPROVE, caller="alice")
    assert first["status"] == "pending" and first["resumed"] is False and first["approval"]["approvals"] == 1
    assert review.act("r1", APPROVE, caller="alice")["approval"]["already_counted"] is True
    assert _sent(core) == [] and review.view("r1")["status"] == "pending"
    second = review.act(
        "r1",
        ReviewDecision(action="approve_merge", merge_strategy="merge"),
        caller="bob",
    )
    assert second["status"] == "answered" and second["resumed"] is True
    [(kind, token, output)] = _sent(core)
    assert (kind, token, output["action"], output["merge_strategy"]) == ("success", "tok-1", "approve_merge", "merge")
    assert output["answered_by"] == "alice, bob"
    with pytest.raises(ConflictError):
        review.act("r1", APPROVE, caller="carol")
    types = _types(core)
    assert types["approval_recorded"] == 2 and types["quorum_reached"] == 1 and types["interaction_answered"] == 1


def test_the_run_s_starter_and_a_non_approver_are_refused_and_nothing_is_written(
    core: Core, review: ReviewService, repo: DemoRepo
) -> None:
    _open(core, review, repo)
    with pytest.raises(ForbiddenError) as starter:
        review.act("r1", APPROVE, caller="starter")
    assert starter.value.details["reason"] == "requester_cannot_approve"
    with pytest.raises(ForbiddenError) as outsider:
        review.act("r1", APPROVE, caller="mallory")
    assert outsider.value.details["reason"] == "not_an_approver"
    [pause] = [i for i in core.store.list_run_interactions("r1") if i.request.kind == "review"]
    assert core.store.list_votes("r1", pause.interaction_id) == [] and _sent(core) == []


def test_request_changes_by_an_approver_rejects_at_once_under_the_any_rule(
    core: Core, review: ReviewService, repo: DemoRepo
) -> None:
    _open(core, review, repo)
    review.act("r1", APPROVE, caller="alice")
    rejected = review.act(
        "r1",
        ReviewDecision(action="request_changes", message="tests"),
        caller="bob",
    )
    assert rejected["status"] == "answered" and rejected["approval"]["decision"] == "rejected"
    [(_, _, output)] = _sent(core)
    assert output["action"] == "request_changes" and output["message"] == "tests" and output["answered_by"] == "bob"
    assert _types(core)["approval_rejected"] == 1


def test_a_reply_is_no_vote_and_a_quorum_gate_never_auto_merges(
    core: Core, review: ReviewService, repo: DemoRepo
) -> None:
    _open(core, review, repo, posture="agent_verdict_ok", confidence_threshold=0.0)
    assert _types(core)["review_auto_merge"] == 0
    out = review.act("r1", ReviewDecision(action="reply", reply="why?"), caller="starter")
    assert out["resumed"] is True and out.approval is None


def test_a_rejected_merge_reopens_the_gate_for_a_new_round_of_votes(
    core: Core, review: ReviewService, repo: DemoRepo
) -> None:
    _open(core, review, repo)
    review.act("r1", APPROVE, caller="alice")
    review.act("r1", APPROVE, caller="bob")
    review.start_merge("r1", "ship_review", "tok-2")
    ran = {"strategy": "squash", "run_branch": repo.run_branch, "run_head": "abc"}
    outcome = MergeOutcome(merge_status="rejected", reason="dirty", reject_code="dirty_tree", **ran)
    assert review.record_merge("r1", "ship_review", outcome=outcome)["status"] == "rejected"
    review.park("r1", "ship_review", "tok-3")
    again = review.act("r1", APPROVE, caller="alice")  # a new round: counted again from zero
    assert again["status"] == "pending" and again["approval"]["approvals"] == 1
    assert review.act("r1", APPROVE, caller="carol")["resumed"] is True
    assert [t for _, t, _ in _sent(core)][-1] == "tok-3"


RACERS = 50


def test_fifty_approvals_at_once_send_the_merge_exactly_once(core: Core, review: ReviewService, repo: DemoRepo) -> None:
    _open(core, review, repo)
    barrier = threading.Barrier(RACERS)
    voters = ["alice", "bob", "carol"]

    def vote(n: int) -> str:
        barrier.wait()
        try:
            return str(review.act("r1", APPROVE, caller=voters[n % 3])["status"])
        except ConflictError:
            return "409"

    with ThreadPoolExecutor(RACERS) as pool:
        outcomes = Counter(pool.map(vote, range(RACERS)))
    assert outcomes["answered"] >= 1 and set(outcomes) <= {"answered", "pending", "409"}, outcomes
    assert len(_sent(core)) == 1  # one release: the merge runs once
    [pause] = [i for i in core.store.list_run_interactions("r1") if i.request.kind == "review"]
    assert len(core.store.list_votes("r1", pause.interaction_id)) == 2
    types = _types(core)
    assert types["approval_recorded"] == 2 and types["quorum_reached"] == 1 and types["interaction_answered"] == 1
