"""Items 5 and 6 of issue 10 on the local stack: an agent that is not a workflow blocks on ask_user until
an operator answers through the CLI; a run whose input breaks its workflow's schema, or whose review
gate has no repository, is a 422 naming the field before anything is asked."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import uuid
from typing import Any

import pytest

from baton.api.auth import agent_token
from baton.client.sdk import Client
from baton.errors import NotFoundError, ValidationFailedError
from tests.e2e.conftest import LocalStackProcess, wait_for

pytestmark = pytest.mark.e2e


def _cli(stack: LocalStackProcess, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "BATON_API_URL": stack.api_url, "BATON_TOKEN": stack.token, "COLUMNS": "200"}
    return subprocess.run(
        [sys.executable, "-m", "baton.cli", *args], capture_output=True, text=True, timeout=60, env=env
    )


def test_an_agent_blocks_on_ask_user_until_the_operator_answers(local_stack: LocalStackProcess) -> None:
    run_id = f"e2e-ask-{uuid.uuid4().hex[:8]}"
    agent = Client(local_stack.api_url, agent_token(local_stack.token, run_id))
    outcome: dict[str, Any] = {}

    def ask() -> None:
        outcome["view"] = agent.ask_user(
            run_id, "cleanup", "Drop the users table?", timeout_seconds=120, options=["yes", "no"], poll_seconds=5
        )

    waiter = threading.Thread(target=ask)
    waiter.start()
    operator = local_stack.client()
    wait_for(lambda: _pending_asks(operator, run_id), timeout=20)
    listed = _cli(local_stack, "runs", "questions", run_id)
    assert listed.returncode == 0, listed.stderr
    assert "blocking ask" in listed.stdout and "Drop the users table?" in listed.stdout
    assert f"baton resume --run-id {run_id}" in listed.stdout
    answered = _cli(local_stack, "resume", "--run-id", run_id, "--answer", "drop=no")
    assert answered.returncode == 0, answered.stderr
    waiter.join(timeout=30)
    assert not waiter.is_alive()
    view = outcome["view"]
    assert view.status == "answered" and view.answers == {"drop": "no"} and view.answered_by == "local-operator"
    assert operator.get_run(run_id).status == "running"


def _pending_asks(client: Client, run_id: str) -> list[Any]:
    try:
        return client.pending_asks(run_id)
    except NotFoundError:  # the agent's first request creates its run
        return []


def test_a_bad_run_input_is_a_422_naming_the_field_before_anything_is_asked(local_stack: LocalStackProcess) -> None:
    client = local_stack.client()
    for workflow, payload, field in [
        ("demo", {}, "input.review"),
        ("review_gate", {}, "input.run_branch"),
        ("demo", {"review": {"run_branch": "baton/run-1"}}, "input.review.repo_path"),
    ]:
        run_id = f"e2e-bad-{uuid.uuid4().hex[:8]}"
        with pytest.raises(ValidationFailedError) as refused:
            client.start_run(workflow, payload, run_id=run_id)
        assert refused.value.details["path"] == field, refused.value.message
        with pytest.raises(NotFoundError):  # nothing was recorded, started or asked
            client.get_run(run_id)
