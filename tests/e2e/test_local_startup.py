"""The local stack answers its API before its state machines exist (creating them is most of the
start-up); until they do, every Step Functions call waits for them, and a creation that fails says so."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import httpx
import pytest

from baton.local import provision
from baton.local.stack import LocalStack
from baton.workflows.resources import STATE_MACHINES

pytestmark = pytest.mark.e2e


@pytest.fixture
def restore_environ() -> Iterator[None]:
    saved = dict(os.environ)
    yield
    os.environ.clear()
    os.environ.update(saved)


@pytest.fixture
def empty_moto() -> Iterator[None]:
    """moto's backends outlive a stack in this process: each test starts and leaves them empty."""
    from moto.moto_api._internal.models import moto_api_backend

    moto_api_backend.reset()
    yield
    moto_api_backend.reset()


def test_the_api_answers_while_the_state_machines_are_created_and_step_functions_calls_wait(
    tmp_path: Path, restore_environ: None, empty_moto: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    created: list[str] = []
    create = provision.create_state_machines

    def recording_create(stepfunctions: Any, provisioned: Any) -> None:
        created.append("started")
        create(stepfunctions, provisioned)

    monkeypatch.setattr("baton.local.stack.create_state_machines", recording_create)
    stack = LocalStack(api_port=0, state_dir=tmp_path, data="off")
    info = stack.start()
    try:
        answer = httpx.get(
            f"{info.api_url}/api/runs/no-such-run", headers={"Authorization": f"Bearer {info.token}"}, timeout=120
        )
        assert answer.status_code == 404  # the API answers (from the table) whether or not they exist yet
        # over the emulator's port, as another process would call it: waits, then sees all of them
        sfn = boto3.client("stepfunctions", endpoint_url=info.moto_url)
        names = {m["name"] for m in sfn.list_state_machines()["stateMachines"]}
        assert names == {f"baton-local-{w}" for w in STATE_MACHINES}
        assert set(info.provisioned.state_machine_arns.values()) == {
            m["stateMachineArn"] for m in sfn.list_state_machines()["stateMachines"]
        }
        assert created == ["started"] and stack.wait_for_workflows(1) > 0
        assert info.provisioned.pending_definitions == {}
    finally:
        stack.stop()


def test_a_failed_creation_is_reported_to_whoever_waits(
    tmp_path: Path, restore_environ: None, empty_moto: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    def failing_create(stepfunctions: Any, provisioned: Any) -> None:
        raise ValueError("an ASL file that does not parse")

    monkeypatch.setattr("baton.local.stack.create_state_machines", failing_create)
    stack = LocalStack(api_port=0, state_dir=tmp_path, data="off")
    stack.start()
    try:
        with pytest.raises(RuntimeError, match="does not parse"):
            stack.wait_for_workflows(30)
    finally:
        stack.stop()
