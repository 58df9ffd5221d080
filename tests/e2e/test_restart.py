"""The local stack keeps its data across restarts (baton.local.persist): killed or stopped, it comes back
with the same token, external runs' questions and interrupts still answerable, and hosted runs whose
executions were lost marked failed with the reason. `--fresh` starts clean."""

from __future__ import annotations

import json
import signal
import time
from typing import TYPE_CHECKING

import pytest

from baton.errors import ConflictError, NotFoundError
from baton.local.persist import DATA_FILE, JOURNAL_FILE, RESTART_REASON
from tests.e2e.conftest import LocalStackProcess, start_local_stack, stop_local_stack, wait_for

if TYPE_CHECKING:
    from pathlib import Path


def _saved_text(stack: LocalStackProcess) -> str:
    """The snapshot and the journal of the writes since it (baton/local/persist.py)."""
    paths = [stack.state_dir / name for name in (DATA_FILE, JOURNAL_FILE)]
    return "".join(path.read_text() for path in paths if path.exists())


def _kill(stack: LocalStackProcess) -> None:
    stack.process.send_signal(signal.SIGKILL)
    stack.process.wait(timeout=10)
    # a killed stack leaves its local.json behind; the next start writes its own (waited for below)
    (stack.state_dir / "local.json").unlink()


def test_killed_then_restarted_the_same_questions_are_answerable_with_the_same_token(tmp_path: Path) -> None:
    first = start_local_stack(tmp_path)
    try:
        with first.client() as client:
            asked = [client.ask_async("ext-1", "draft", f"question {n}?") for n in range(3)]
            interrupt = client.create_interrupt(session_id="ext-1", prompt="which environment?")
            hosted = client.start_run(
                "human_pause", {"prompt": "go on?", "timeout_seconds": 300, "notify": ["console"]}, run_id="hosted-1"
            )
            wait_for(lambda: client.get_run("hosted-1").status == "paused_waiting_human", timeout=30)
        ids = {a.interaction_id for a in asked}
        # journaled before each write's response (kill -9 skips the save on stop)
        wait_for(lambda: all(i in _saved_text(first) for i in ids) and "paused_waiting_human" in _saved_text(first))
    finally:
        _kill(first)

    second = start_local_stack(tmp_path)
    try:
        assert second.token == first.token
        with second.client() as client:
            pending = {q.interaction_id for q in client.pending_questions("ext-1")}
            assert pending == ids
            assert client.get_interrupt(interrupt.interrupt_id).status == "pending"
            run = client.get_run("hosted-1")
            assert run.status == "failed"
            assert run.reason == RESTART_REASON
            events = [e.type for e in client.events("hosted-1").events]
            assert events[-1] == "run_failed"
            assert client.pending_questions("hosted-1") == []
            # answerable after the restart, and the answer itself survives the next one
            result = client.answer("ext-1", asked[0].interaction_id, "yes")
            assert result.interaction_id == asked[0].interaction_id
            assert client.resume_interrupt(interrupt.interrupt_id, "staging").interrupt.status == "answered"
        assert hosted.run_id == "hosted-1"
    finally:
        started = time.monotonic()
        assert stop_local_stack(second) == 0
        assert time.monotonic() - started < 15

    third = start_local_stack(tmp_path)
    try:
        with third.client() as client:
            assert {q.interaction_id for q in client.pending_questions("ext-1")} == ids - {asked[0].interaction_id}
            assert client.get_run("hosted-1").status == "failed"  # closed once, stays closed
    finally:
        stop_local_stack(third)

    fresh = start_local_stack(tmp_path, "--fresh")
    try:
        assert fresh.token != first.token
        with fresh.client() as client, pytest.raises(NotFoundError):
            client.get_run("ext-1")
        saved = json.loads((tmp_path / DATA_FILE).read_text())
        assert saved["token"] == fresh.token
    finally:
        stop_local_stack(fresh)


def test_an_answer_acknowledged_survives_a_kill_right_after_its_200(tmp_path: Path) -> None:
    """No wait between the 200 and `kill -9`: the answer was in the journal before its response left."""
    first = start_local_stack(tmp_path)
    try:
        with first.client() as client:
            asked = [client.ask_async("ext-kill", "draft", f"question {n}?") for n in range(3)]
            answered = client.answer("ext-kill", asked[1].interaction_id, "yes")
            _kill(first)  # at once, from the 200 on
    finally:
        if first.process.poll() is None:
            _kill(first)
    assert answered.interaction_id == asked[1].interaction_id
    assert (tmp_path / JOURNAL_FILE).stat().st_size > 0  # what restores it: the snapshot is from the start

    second = start_local_stack(tmp_path)
    try:
        assert second.token == first.token
        with second.client() as client:
            pending = {q.interaction_id for q in client.pending_questions("ext-kill")}
            assert pending == {asked[0].interaction_id, asked[2].interaction_id}
            with pytest.raises(ConflictError):  # answered before the kill: answering again is refused
                client.answer("ext-kill", asked[1].interaction_id, "no")
    finally:
        stop_local_stack(second)
