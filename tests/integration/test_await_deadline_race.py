"""Issue 17's narrow await-gate race, on the DynamoDB adapter (moto) and on the in-memory fake.

An answer checked just before the gate's deadline whose write lands after the deadline path has read
the scope must never get a 200 while the gate fails: the answer's write is guarded by the gate's wait
still being open before its deadline, and the deadline path first closes the wait (a conditional write)
and only then reads the scope. The other order, an answer that landed before the wait closed, releases
the gate with that answer instead of failing it."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import timedelta
from typing import Any

import boto3
import pytest
from moto import mock_aws

from baton.adapters.dynamo import DynamoStore
from baton.contracts import AskRequest
from baton.errors import GoneError
from baton.ids import iso
from baton.models import ParkedWait, RunSummary
from baton.services.at_deadline import end_at_deadline
from baton.services.core import DEADLINE_ERROR, Core
from baton.services.questions import AwaitDeadline, QuestionService
from baton.workflows.table import create_table_kwargs
from tests.conftest import CountingIds, FixedClock
from tests.fakes import FakeWorkflows, MemoryStore, RecordingNotifier, RecordingTaskTokens

TOKEN = "tok-await"


@pytest.fixture(params=["dynamodb", "memory"])
def store(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    if request.param == "memory":
        yield MemoryStore()
        return
    for key in ("AWS_ENDPOINT_URL", "AWS_PROFILE"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    with mock_aws():
        client = boto3.client("dynamodb")
        client.create_table(**create_table_kwargs("race"))
        yield DynamoStore("race", client)


def _gate(store: Any) -> tuple[Core, QuestionService, FixedClock, RecordingTaskTokens, ParkedWait, str]:
    """A run with one pending question and a parked whole-run await gate whose deadline is 10 s away."""
    clock = FixedClock()
    tokens = RecordingTaskTokens()
    core = Core(store, tokens, FakeWorkflows(), RecordingNotifier(), clock=clock, ids=CountingIds())
    questions = QuestionService(core)
    now = core.now()
    # paused, as the gate's park leaves it (a question pending): the release then records run_resumed
    store.create_run(RunSummary(run_id="r1", status="paused_waiting_human", created_at=now, updated_at=now))
    asked = questions.ask("r1", AskRequest(node="draft", question="Ship it?"), caller="agent")
    wait = ParkedWait(
        run_id="r1",
        gate="await",
        task_token=TOKEN,
        kind="await",
        interaction_ids=[asked["interaction_id"]],
        scope={"from": None, "timeout_seconds": 12},
        parked_at=now,
        deadline=iso(clock.now() + timedelta(seconds=10)),
    )
    store.put_wait(wait)
    clock.advance(10 - 0.1)  # the answer is checked 100 ms before the deadline
    return core, questions, clock, tokens, wait, asked["interaction_id"]


def _around_the_answers_write(store: Any, before: Callable[[], None] | None, after: Callable[[], None] | None) -> None:
    """Run `before` just before the answer's write reaches the store and `after` just after it lands."""
    real = store.transition_interaction
    done = False

    def transition(interaction: Any, new_state: Any, **kwargs: Any) -> Any:
        nonlocal done
        if done or interaction.request.kind != "question" or new_state.status != "answered":
            return real(interaction, new_state, **kwargs)
        done = True
        if before is not None:
            before()
        result = real(interaction, new_state, **kwargs)
        if after is not None:
            after()
        return result

    store.transition_interaction = transition


def test_an_answer_whose_write_lands_after_the_deadline_path_read_the_scope_gets_410(store: Any) -> None:
    core, questions, clock, tokens, wait, iid = _gate(store)

    def deadline_path() -> None:  # the deadline passes and Baton ends the gate before the answer lands
        clock.advance(0.2)
        assert end_at_deadline(AwaitDeadline(questions), core.store.get_wait("r1", "await") or wait) == "timed_out"

    _around_the_answers_write(store, before=deadline_path, after=None)
    with pytest.raises(GoneError) as refused:
        questions.answer("r1", iid, "yes", caller="op")
    assert refused.value.details["reason"] == "deadline_passed"
    assert [(kind, details["error"]) for kind, _, details in tokens.sent] == [("failure", DEADLINE_ERROR)]
    assert store.get_interaction("r1", iid).state.status == "pending"  # nothing of the answer was stored
    assert store.get_wait("r1", "await").status == "timed_out"
    assert [e.type for e in store.list_events("r1")][-1] == "answer_late"


def test_an_answer_that_landed_before_the_wait_closed_releases_the_gate_instead(store: Any) -> None:
    core, questions, clock, tokens, wait, iid = _gate(store)

    def deadline_path() -> None:  # the answer is stored; the deadline passes before its release is sent
        clock.advance(0.2)
        assert end_at_deadline(AwaitDeadline(questions), core.store.get_wait("r1", "await") or wait) == "released"

    _around_the_answers_write(store, before=None, after=deadline_path)
    result = questions.answer("r1", iid, "yes", caller="op")
    assert result["status"] == "answered"  # a 200: and the gate was released with the answer, not failed
    [(kind, token, output)] = tokens.sent
    assert (kind, token) == ("success", TOKEN)
    assert [a["answer"] for a in output["answers"]] == ["yes"]
    assert store.get_wait("r1", "await").status == "released"
    types = [e.type for e in store.list_events("r1")]
    assert "await_released" in types and "run_resumed" in types
