"""Issue 28 item 2 on moto with the real handlers and the gate's real timer: an answer stored 0.5 s before
a pause's deadline whose SendTaskSuccess is throttled twice (standard retries, 1 s apart: the send takes
2 s, so the deadline passes and the timer fires while it is under way) is delivered, never failed, for
each kind of parked pause (plain pause, await gate, hosted interrupt; the review gate's is in
tests/unit/test_deadline_every_kind.py). Step Functions' throttle is injected at the SFN adapter, in the
answering thread only (tests/integration/faults.py): the timer's own send is not throttled."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import pytest
from botocore.retries.standard import ExponentialBackoff

from baton.contracts import ResumeInterrupt
from baton.ids import parse_iso
from baton.services.pauses import Resume
from tests.conftest import wait_for
from tests.integration.faults import THROTTLED, FaultInjector, on_every_client

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from tests.integration.conftest import MotoStack

DECLARED = 4  # the pause's declared timeout, seconds
STORED_BEFORE = 0.5  # the answer is stored this long before the deadline
RETRY_SECONDS = 1.0  # each throttled attempt is retried this long after (two of them: a 2 s send)


@pytest.fixture
def faults(monkeypatch: pytest.MonkeyPatch) -> Iterator[FaultInjector]:
    """Every botocore client created while the test runs gets the injector (requested before `moto_stack`,
    so the stack's clients get it too); a retry waits RETRY_SECONDS, for real."""
    monkeypatch.setattr(ExponentialBackoff, "delay_amount", lambda self, context: RETRY_SECONDS)
    yield on_every_client(monkeypatch)


def _ask(stack: MotoStack, run_id: str) -> Callable[[], dict[str, Any]]:
    return lambda: stack.services.runs.resume(Resume(run_id, {"ship": "yes"}, caller="alice"))


def _await(stack: MotoStack, run_id: str) -> Callable[[], dict[str, Any]]:
    [question] = stack.services.questions.pending(run_id)
    return lambda: stack.services.questions.answer(run_id, question.interaction_id, "yes", caller="alice")


def _interrupt(stack: MotoStack, run_id: str) -> Callable[[], dict[str, Any]]:
    found = stack.services.interrupts.list_page(status="pending", session_id=run_id)[0]
    [interrupt] = found
    return lambda: stack.services.interrupts.resume(
        interrupt.interaction_id, ResumeInterrupt(input="go"), caller="alice"
    )


PAUSES: dict[str, tuple[dict[str, Any], str, Callable[[MotoStack, str], Callable[[], dict[str, Any]]]]] = {
    "human_pause": ({"prompt": "Ship it?"}, "approve", _ask),
    "await_answers": ({"questions": [{"question": "Ship it?"}]}, "await", _await),
    "interrupt": ({"prompt": "Deploy?"}, "interrupt", _interrupt),
}


@pytest.mark.parametrize("workflow", sorted(PAUSES))
def test_an_answer_stored_before_the_deadline_with_a_throttled_send_is_delivered(
    faults: FaultInjector, moto_stack: MotoStack, workflow: str
) -> None:
    given, gate, answerer = PAUSES[workflow]
    run_id = f"race-{workflow.replace('_', '-')}"
    run = moto_stack.services.runs.start(workflow, {**given, "timeout_seconds": DECLARED}, run_id=run_id, caller="op")
    store = moto_stack.services.core.store
    wait = wait_for(lambda: store.get_wait(run_id, gate))
    assert wait.deadline is not None
    answer = wait_for(lambda: answerer(moto_stack, run_id))
    time.sleep(
        max(0.0, (parse_iso(wait.deadline) - moto_stack.services.core.clock.now()).total_seconds() - STORED_BEFORE)
    )
    faults.queue("sfn.SendTaskSuccess", THROTTLED, THROTTLED)
    with faults.active():
        result = answer()  # stored before the deadline; its send takes 2 s
    assert faults.attempts("sfn.SendTaskSuccess") == [3]  # the answer's own send was throttled twice
    assert bool(result.get("resumed", result.get("released"))), result  # delivered, and said so
    sfn = moto_stack.clients["stepfunctions"]
    arn = run.execution_arn or ""
    wait_for(lambda: sfn.describe_execution(executionArn=arn)["status"] != "RUNNING", timeout=20)
    assert sfn.describe_execution(executionArn=arn)["status"] == "SUCCEEDED"
    history = sfn.get_execution_history(executionArn=arn, maxResults=1000)["events"]
    assert not [e for e in history if e["type"] in ("TaskFailed", "TaskTimedOut")]
    events = {str(e.type) for e in store.list_events(run_id, limit=1000)}
    assert "run_resumed" in events and not {"human_input_timed_out", "interrupt_timed_out", "answer_late"} & events
