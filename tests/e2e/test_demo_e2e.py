"""The newcomer's demo, end to end, driven the way the README shows: the CLI in another process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from baton.cli.demo_repo import create_demo_repo
from baton.merge.gitcmd import run_git
from tests.e2e.conftest import LocalStackProcess, start_local_stack, stop_local_stack, wait_for

pytestmark = pytest.mark.e2e


def _cli(stack: LocalStackProcess, *args: str) -> Any:
    env = {**os.environ, "BATON_API_URL": stack.api_url, "BATON_TOKEN": stack.token}
    result = subprocess.run(
        [sys.executable, "-m", "baton.cli", *args], capture_output=True, text=True, env=env, timeout=60
    )
    assert result.returncode == 0, result.stderr + result.stdout
    return json.loads(result.stdout) if "--json" in args else result.stdout


def test_demo_workflow_questions_gate_interrupt_review_merge(local_stack: LocalStackProcess, tmp_path: Path) -> None:
    repo = create_demo_repo(tmp_path / "repo")
    run_id = "demo-e2e"
    client = local_stack.client()
    client.start_run("demo", {"review": repo.gate_input(), "work_seconds": 1}, run_id=run_id)

    # The draft node posted two questions and kept working; the gate waits for them.
    questions = wait_for(lambda: len(q := _cli(local_stack, "runs", "questions", run_id, "--json")) == 2 and q)
    by_prompt = {q["request"]["prompt"]: q["interaction_id"] for q in questions}
    db_question = next(iid for prompt, iid in by_prompt.items() if "database" in prompt)
    name_question = next(iid for prompt, iid in by_prompt.items() if "release" in prompt)
    _cli(local_stack, "runs", "answer", run_id, db_question, "postgres")
    _cli(local_stack, "runs", "answer", run_id, name_question, "first light")

    # The gate released; the interrupt asks for a typed value and offers the state for edits.
    wait_for(lambda: _cli(local_stack, "workflow", "inspect", run_id, "--json")["interrupts"], timeout=30)
    _cli(
        local_stack, "workflow", "resume-interrupt", run_id, "--input", '"staging"', "--edit-state", "config.flag=true"
    )

    # The review gate: the companion's numbered steps, a reply, then approve → squash merge. The review
    # exists once the gate's diff build has reported: until then `review show` says not_found.
    def pending_review() -> Any:
        try:
            review = _cli(local_stack, "review", "show", run_id, "--json")
        except AssertionError as err:
            assert "not_found" in str(err), err
            return None
        # Pending with the companion's first turn: the turn is written right after the review itself.
        return review.get("status") == "pending" and review.get("thread") and review

    review = wait_for(pending_review)
    assert review["thread"][0]["test_steps"], "the companion's first turn lists test steps"
    _cli(
        local_stack,
        "resume",
        "--run-id",
        run_id,
        "--answer",
        "__review_action=reply",
        "--answer",
        "__review_reply=What should I test first?",
    )
    wait_for(
        lambda: (
            len(_cli(local_stack, "review", "show", run_id, "--json")["thread"]) >= 3
            and _cli(local_stack, "review", "show", run_id, "--json")["status"] == "pending"
        )
    )
    _cli(local_stack, "resume", "--run-id", run_id, "--answer", "__review_action=approve_merge")

    summary = wait_for(lambda: (s := client.get_run(run_id))["status"] in ("succeeded", "failed") and s, timeout=40)
    assert summary["status"] == "succeeded", summary
    assert summary["merge_status"] == "merged" and summary["merged_into"] == "main"
    output = summary["output"]
    assert output["decision"] == "approved" and output["target"] == "staging"
    assert output["state"]["config"]["flag"] is True
    assert {a["answer"] for a in output["answers"]} == {"postgres", "first light"}
    head = run_git(repo.path, "rev-parse", "HEAD").stdout.decode().strip()
    assert head == summary["final_commit"]
    subject = run_git(repo.path, "log", "-1", "--format=%s").stdout.decode().strip()
    assert "baton/run-demo" in subject


def test_make_dev_starts_the_demo_and_prints_the_walkthrough(tmp_path: Path) -> None:
    stack = start_local_stack(tmp_path / "with-demo", "--demo")
    try:
        wait_for(lambda: "runs questions" in stack.log(), timeout=30)
        log = stack.log()
        run_id = log.split("demo: run ", 1)[1].split()[0]
        questions = wait_for(
            lambda: (
                len(q := stack.client().request("GET", f"/api/runs/{run_id}/interactions/pending")["pending"]) == 2
                and q
            )
        )
        assert all(q["request"]["node"] == "draft" for q in questions)
    finally:
        assert stop_local_stack(stack) == 0
