"""The local stack answers its API before its state machines exist (creating them is most of the
start-up); until they do, every Step Functions call waits for them, and a creation that fails says so.
It starts again at once on a port its last run left in TIME_WAIT, but not on a port another listener
holds; and what it writes is its owner's only."""

from __future__ import annotations

import json
import os
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import httpx
import pytest

from baton.channels.email.mail import Mail
from baton.channels.email.outbox import OutboxMailSender, read_outbox
from baton.local import persist, provision
from baton.local.stack import OUTBOX_DIR, STATE_FILE, LocalStack, PortInUseError, _check_port_free
from baton.workflows.resources import STATE_MACHINES
from tests.local_state import loose_modes, time_wait_port

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
    created: list[Any] = []
    create = provision.create_state_machines

    def recording_create(stepfunctions: Any, provisioned: Any) -> None:
        created.append(provisioned)
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
        # this stack's creation, once (a stack an earlier test stopped may still be creating its own: its
        # thread is not waited for, and it calls the function patched here)
        assert [p for p in created if p is info.provisioned] == [info.provisioned]
        assert stack.wait_for_workflows(1) > 0
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


def test_the_port_probe_lets_a_time_wait_pass_and_refuses_a_live_listener() -> None:
    port = time_wait_port()
    with socket.socket() as plain, pytest.raises(OSError, match="in use"):
        plain.bind(("127.0.0.1", port))  # the situation holds: a bind without SO_REUSEADDR is refused
    _check_port_free("127.0.0.1", port, "Baton API", "--port")
    with socket.create_server(("127.0.0.1", 0)) as listener:
        port = listener.getsockname()[1]
        with pytest.raises(PortInUseError) as refused:
            _check_port_free("127.0.0.1", port, "Baton API", "--port")
    assert refused.value.code == "port_in_use"
    assert f"port {port} on 127.0.0.1 is already in use, so the Baton API cannot start there" in str(refused.value)
    assert "--port <port>" in str(refused.value)


def test_a_restart_on_a_port_in_time_wait_in_a_state_dir_made_looser_before(
    tmp_path: Path, restore_environ: None, empty_moto: None
) -> None:
    state = tmp_path / ".baton"
    outbox = state / OUTBOX_DIR
    outbox.mkdir(parents=True)
    for folder in (state, outbox):
        folder.chmod(0o755)
    old_mail = outbox / "1-1-1.json"  # as an older Baton wrote its mails: readable by all
    old_mail.write_text(json.dumps({"id": "1-1-1", "to": "you@localhost", "subject": "old", "text": "a link"}))
    old_mail.chmod(0o644)
    port = time_wait_port()
    stack = LocalStack(api_port=port, state_dir=state, data="keep")
    info = stack.start()
    try:
        assert info.api_url == f"http://127.0.0.1:{port}"
        answer = httpx.get(f"{info.api_url}/api/runs/x", headers={"Authorization": f"Bearer {info.token}"}, timeout=120)
        assert answer.status_code == 404
        mail = Mail(to="you@localhost", subject="A question", text="Answer: http://127.0.0.1/answer?sig=secret")
        OutboxMailSender(Path(os.environ["BATON_EMAIL_OUTBOX"]), echo=False).send(mail)
        assert [m.subject for m in read_outbox(outbox)] == ["old", "A question"]
        assert (state / STATE_FILE).exists() and (state / persist.JOURNAL_FILE).exists()
        assert loose_modes(state) == []
    finally:
        stack.stop()
    assert (state / persist.DATA_FILE).exists()  # the snapshot, written on stop
    assert loose_modes(state) == []
