"""Item 7 of issue 10 on the local stack: statemachines/fix_loop_example.asl.json, the demo's request_changes
routed to a bounded implement -> review loop (the seed's fix_loop(5)). Request changes twice, then approve:
the run branch is squash-merged and the run succeeds after two fixes. Request changes six times: the
sixth ends the loop, the run fails with FixLoopExhausted and nothing is merged."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest

from baton.cli.demo_repo import create_demo_repo
from baton.client.sdk import Client
from baton.errors import NotFoundError
from baton.merge.gitcmd import git_out
from tests.e2e.conftest import LocalStackProcess, wait_for

pytestmark = pytest.mark.e2e
TIMEOUT = 60.0


def _start(client: Client, tmp_path: Path) -> tuple[str, Any]:
    repo = create_demo_repo(tmp_path / "repo")
    run_id = f"fix-{uuid.uuid4().hex[:10]}"
    review = repo.gate_input(timeout_seconds=120, merge_timeout_seconds=60)
    client.start_run("fix_loop_example", {"review": review}, run_id=run_id)
    return run_id, repo


def _next_review(client: Client, run_id: str, seen: set[str]) -> str:
    """Wait until a review round the operator has not seen yet is pending with the run paused."""

    def ready() -> str | None:
        try:
            review = client.review(run_id)
        except NotFoundError:  # no review yet while the first round starts
            return None
        fresh = review.status == "pending" and review.interaction_id not in seen
        return review.interaction_id if fresh and client.get_run(run_id).status == "paused_waiting_human" else None

    iid: str = wait_for(ready, timeout=TIMEOUT)
    seen.add(iid)
    return iid


def _ended(client: Client, run_id: str) -> Any:
    return wait_for(lambda: (r := client.get_run(run_id)).status in ("succeeded", "failed") and r, timeout=TIMEOUT)


def test_request_changes_twice_then_approve_merges(local_stack: LocalStackProcess, tmp_path: Path) -> None:
    client = local_stack.client()
    run_id, repo = _start(client, tmp_path)
    seen: set[str] = set()
    for _ in range(2):
        _next_review(client, run_id, seen)
        client.review_action(run_id, "request_changes")
    _next_review(client, run_id, seen)  # the third round: after two fixes
    client.review_action(run_id, "approve_merge")
    run = _ended(client, run_id)
    assert run.status == "succeeded", run
    assert run.output["decision"] == "approved" and run.output["fix_loops"] == 2
    assert run.merge_status == "merged" and run.final_commit == git_out(repo.path, "rev-parse", "main")
    assert len(seen) == 3  # three review rounds, each its own interaction


def test_the_sixth_request_changes_ends_the_loop_with_a_clear_failure(
    local_stack: LocalStackProcess, tmp_path: Path
) -> None:
    client = local_stack.client()
    run_id, repo = _start(client, tmp_path)
    seen: set[str] = set()
    for _ in range(6):
        _next_review(client, run_id, seen)
        client.review_action(run_id, "request_changes")
    run = _ended(client, run_id)
    assert run.status == "failed", run
    assert "(fix_loop): nothing was merged" in str(run.reason), run.reason  # the Fail state's cause
    assert git_out(repo.path, "rev-parse", "main") == repo.base_commit  # nothing was merged
    assert len(seen) == 6
