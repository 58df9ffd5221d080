"""`baton smoke` against the local stack (`baton dev` in its own process), run as a team runs it after a
deploy: the CLI in its own interpreter, `--json` read back. A working stack passes every check it can; a
broken one (a wrong URL or credentials, nothing listening, a state machine missing) is reported in words
and exits non-zero."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import boto3
import pytest

from baton.api.auth import agent_token
from tests.e2e.conftest import LocalStackProcess, start_local_stack, stop_local_stack, wait_for

pytestmark = pytest.mark.e2e

WORKING_STACK = {
    "api": "ok",
    "ask": "ok",
    "answer": "ok",
    "await gate": "ok",
    "interrupt": "ok",
    "review": "ok",
    "notify console": "ok",
    "notify email": "ok",  # the local stack always subscribes email (its outbox)
    "notify webhook": "skipped",
    "notify slack": "skipped",
}


def _smoke(api_url: str, token: str, *extra: str) -> tuple[int, dict[str, Any], str]:
    env = {k: v for k, v in os.environ.items() if k not in ("BATON_API_URL", "BATON_TOKEN")}
    done = subprocess.run(
        [sys.executable, "-m", "baton.cli", "smoke", "--api-url", api_url, "--token", token, *extra],
        capture_output=True,
        text=True,
        timeout=120,
        env={**env, "COLUMNS": "200"},
    )
    report = json.loads(done.stdout) if "--json" in extra else {}
    return done.returncode, report, done.stdout + done.stderr


def _outcomes(report: dict[str, Any]) -> dict[str, str]:
    return {check["name"]: check["outcome"] for check in report["checks"]}


def test_smoke_passes_every_check_the_local_stack_can_and_leaves_nothing_open(local_stack: LocalStackProcess) -> None:
    code, report, output = _smoke(local_stack.api_url, local_stack.token, "--json", "--timeout", "60")
    assert code == 0, output
    assert _outcomes(report) == WORKING_STACK, output
    details = {check["name"]: check["detail"] for check in report["checks"]}
    assert "not configured on this deployment (configured: console, email)" in details["notify slack"]
    assert "delivery cannot be seen from the API" in details["notify console"]
    client = local_stack.client()
    tag = report["tag"]
    for check in ("await", "interrupt", "review"):
        run = client.get_run(f"{tag}-{check}")
        assert run.status == "succeeded", run
    review_run = client.get_run(f"{tag}-review")
    assert review_run.merge_status == "not_merged" and review_run.merged_into is None  # merge_into none
    for check in ("ask", "notify"):
        assert client.pending_questions(f"{tag}-{check}") == []
    [removed] = [note for note in report["cleanup"] if note.startswith("removed the throwaway repository")]
    assert not Path(removed.rsplit(" ", 1)[1]).exists()
    # What the API cannot see, the local stack shows: each published notification was delivered.
    printed = re.compile(rf"run={tag}-notify interaction=\S+ node=smoke\n +Question: \[baton smoke\] console notif")
    assert wait_for(lambda: printed.search(local_stack.log()))
    outbox = local_stack.state_dir / "outbox"
    assert wait_for(lambda: [m for m in outbox.glob("*.json") if f"{tag}-notify" in m.read_text()])


@pytest.mark.parametrize(
    ("case", "expected"),
    [
        ("a path the API does not serve", "GET /api/me answered 404 (not_found)"),
        ("a wrong token", "GET /api/me answered 401 (unauthorized)"),
        ("an agent's credentials", "is an agent (run smoke-agent); the smoke test answers and resumes"),
        ("nothing listening", "cannot reach the Baton API at http://127.0.0.1:9"),
    ],
)
def test_a_broken_deployment_is_reported_in_words_and_exits_non_zero(
    local_stack: LocalStackProcess, case: str, expected: str
) -> None:
    api_url, token = {
        "a path the API does not serve": (f"{local_stack.api_url}/nope", local_stack.token),
        "a wrong token": (local_stack.api_url, "not-the-token"),
        "an agent's credentials": (local_stack.api_url, agent_token(local_stack.token, "smoke-agent")),
        "nothing listening": ("http://127.0.0.1:9", local_stack.token),
    }[case]
    code, _, output = _smoke(api_url, token)
    assert code == 1, output
    lines = output.splitlines()
    [api_line] = [line for line in lines if line.startswith("api ")]
    assert "failed: " in api_line and expected in api_line, output
    assert sum("skipped: not tried: the api check failed" in line for line in lines) == len(WORKING_STACK) - 1, output
    assert "1 of 10 checks failed" in output


def test_a_stack_missing_a_state_machine_fails_that_check_in_words(tmp_path: Path) -> None:
    stack = start_local_stack(tmp_path / "stack")
    try:
        moto = boto3.client(
            "stepfunctions",
            endpoint_url=stack.state["moto_url"],
            region_name=stack.state["region"],
            aws_access_key_id="testing",
            aws_secret_access_key="testing",
        )
        moto.delete_state_machine(stateMachineArn=stack.state["workflows"]["await_answers"])
        code, report, output = _smoke(stack.api_url, stack.token, "--json", "--timeout", "30")
    finally:
        stop_local_stack(stack)
    assert code == 1, output
    assert _outcomes(report) == {**WORKING_STACK, "await gate": "failed"}, output
    [gate] = [check for check in report["checks"] if check["name"] == "await gate"]
    assert gate["detail"].startswith("start the await_answers run answered 410 (gone)")
    assert "state machine is not available: StateMachineDoesNotExist" in gate["detail"]
