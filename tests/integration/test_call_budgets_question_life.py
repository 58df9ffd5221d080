"""AWS calls of one async question's whole life, operation by operation, against declared budgets (counts,
never timings): the ask (the demo agent's Lambda), the await gate's park, the last answer (its budget is
tests/integration/test_call_budgets.py's), the run's end (`run_lifecycle`) and the drain; the gate's timer
is stopped by the release, never fired. A sibling of test_call_budgets.py; bench/parts/cost_model.py prices
the same life.

Each call is attributed to the Lambda handler whose invocation made it, in whichever thread it ran (the
Step Functions engine invokes the ask and the park in its own), counted with botocore `before-call` hooks."""

from __future__ import annotations

import json
import threading
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

import pytest

from baton.domain.deadline import TIMER_STATE_MACHINE
from baton.errors import ConflictError
from baton.events import AwaitStarted, RunEnded, RunPaused
from baton.local.http_adapter import to_proxy_event
from tests.conftest import wait_for

if TYPE_CHECKING:
    from tests.integration.conftest import MotoStack

OPERATOR = "arn:aws:sts::123456789012:assumed-role/operators/op-1"
CallsT = TypeVar("CallsT", bound="HandlerCalls")

# The declared budgets (was: before issue 33's cuts), each the exact count its handler makes. A change that
# adds or removes a call fails here: say why and set the number in the same commit.
LIFE_BUDGETS: dict[str, int] = {
    # (was 6) the run (GetItem), the run's questions (Query: is the node a pause's?), the question, its
    # pending marker, the run's ask count and `human_input_requested` in one transaction, the run's waits
    # (Query, after the write: does a parked gate's scope hold it?), the notification (SNS)
    "ask": 5,
    # (was 12) the run and the gate's wait (one BatchGetItem: an earlier attempt's park?), the scope
    # (Query), the wait and its marks on the questions it names (one transaction), the timer
    # (StartExecution), the scope bumped, the run paused, `await_started` and `run_paused` (one
    # transaction), the re-check (Query) and the merge of what it found answered into the wait (UpdateItem)
    "await gate park": 7,
    # the snapshot Query, the deciding transaction, the send, the release in one transaction, the gate's
    # timer stopped (StopExecution: firing, it would cost a gate_deadline invocation and its wait's GetItem)
    "last answer releasing a gate": 5,
    # (was 4) the run (GetItem: is this execution its run?), the run ended with `run_succeeded` (one
    # transaction), the notification (SNS)
    "run end": 3,
    # (was 3) the node's messages (Query), each claimed by one conditional UpdateItem; the run is read only
    # when nothing was drained (a 404 for a missing run)
    "drain": 2,
}
LIFE_TOTAL = 22  # (was 30) their sum: the whole life; the lower bound is 9 (bench/parts/cost_model.py)


@dataclass
class HandlerCalls:
    """Each AWS call ("service.Operation"), by the handler invocation that made it (`who`)."""

    calls: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    _local: threading.local = field(default_factory=threading.local)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def hook(self, model: Any, **_: Any) -> None:
        who = getattr(self._local, "who", None)
        if who is not None:
            with self._lock:
                self.calls[who].append(f"{model.service_model.service_name}.{model.name}")

    def attribute(self, stack: MotoStack) -> None:
        """Every handler the dispatcher runs, in any thread, is `who` for the calls it makes."""
        original = stack.dispatcher.invoke

        def invoke(function_name: str, event: Any) -> tuple[Any, bool]:
            before = getattr(self._local, "who", None)
            if function_name == "api":
                self._local.who = f"api {event.get('httpMethod')} {event.get('path', '').rsplit('/', 1)[-1]}"
            else:
                self._local.who = function_name
            try:
                return original(function_name, event)
            finally:
                self._local.who = before

        stack.dispatcher.invoke = invoke  # type: ignore[method-assign]


def hooked(found: CallsT, monkeypatch: pytest.MonkeyPatch) -> CallsT:
    """`found` hooked on every client made from now on: requested before `moto_stack`, the stack's too."""
    import botocore.session

    original = botocore.session.Session.create_client

    def create_client(self: Any, *args: Any, **kwargs: Any) -> Any:
        client = original(self, *args, **kwargs)
        client.meta.events.register("before-call.*.*", found.hook)
        return client

    monkeypatch.setattr(botocore.session.Session, "create_client", create_client)
    return found


@pytest.fixture
def handler_calls(monkeypatch: pytest.MonkeyPatch) -> Iterator[HandlerCalls]:
    yield hooked(HandlerCalls(), monkeypatch)


def invoke(stack: MotoStack, function: str, event: dict[str, Any]) -> Any:
    payload, errored = stack.dispatcher.invoke(function, event)
    assert not errored, payload
    return payload


def run_end(stack: MotoStack, run_id: str, status: str = "SUCCEEDED", *, recorded: bool = True) -> None:
    """The run's end as EventBridge hands it to `run_lifecycle` (`recorded`: by this event, not before)."""
    run = stack.services.core.require_run(run_id)
    sfn = stack.clients["stepfunctions"]
    wait_for(lambda: sfn.describe_execution(executionArn=run.execution_arn)["status"] != "RUNNING", timeout=30)
    described = sfn.describe_execution(executionArn=run.execution_arn)
    assert described["status"] == status, described
    detail = {
        "executionArn": run.execution_arn,
        "stateMachineArn": described["stateMachineArn"],
        "name": run_id,
        "status": status,
        "stopDate": int(described["stopDate"].timestamp() * 1000),
        "input": described["input"],
        "output": described.get("output"),
    }
    event = {"source": "aws.states", "detail-type": "Step Functions Execution Status Change", "detail": detail}
    assert invoke(stack, "run_lifecycle", event)["recorded"] is recorded


def timer_statuses(stack: MotoStack, run_id: str) -> list[str]:
    """The statuses of the run's deadline timers (executions of the timer machine, by their input)."""
    sfn = stack.clients["stepfunctions"]
    timers = sfn.list_executions(stateMachineArn=stack.provisioned.state_machine_arns[TIMER_STATE_MACHINE])
    described = [sfn.describe_execution(executionArn=t["executionArn"]) for t in timers["executions"]]
    return [d["status"] for d in described if json.loads(d["input"])["run_id"] == run_id]


def api(stack: MotoStack, method: str, path: str, body: Any = None, *, ok: tuple[int, ...] = (200,)) -> dict[str, Any]:
    """One API request by the operator, through the API handler as API Gateway invokes it: its JSON body."""
    raw = json.dumps(body).encode() if body is not None else b""
    event = to_proxy_event(method, path, {"Content-Type": "application/json"}, raw, "10.0.0.1")
    event["requestContext"]["identity"]["userArn"] = OPERATOR
    payload = invoke(stack, "api", event)
    assert payload["statusCode"] in ok, payload
    body_read: dict[str, Any] = json.loads(payload["body"])
    return body_read


def _life(stack: MotoStack, run_id: str) -> None:
    """One question's whole life on a hosted `await_answers` run: asked and parked by the workflow,
    answered (its gate's timer stopped), ended (the EventBridge event `run_lifecycle` gets) and drained."""
    services = stack.services
    services.runs.start(
        "await_answers",
        {"from": "draft", "node": "draft", "timeout_seconds": 60, "questions": [{"question": "DB?"}]},
        run_id=run_id,
        caller="op",
    )
    store = services.core.store
    # a person answers seconds after the park, not amid it: its re-check has merged the carried answers
    wait_for(lambda: (wait := store.get_wait(run_id, "await")) is not None and wait.carry == "complete")
    [question] = services.questions.pending(run_id)
    path = f"/api/runs/{run_id}/interactions/{question.interaction_id}/answer"
    answered = api(stack, "POST", path, {"answer": "pg"})
    assert answered["resumed"] is True, answered
    run_end(stack, run_id)
    drained = api(stack, "POST", f"/api/runs/{run_id}/nodes/draft/messages/drain")
    assert len(drained["messages"]) == 1, drained
    assert store.get_wait(run_id, "await").status == "released"  # type: ignore[union-attr]
    assert timer_statuses(stack, run_id) == ["ABORTED"]  # stopped by the release: it never fires


def test_a_question_life_stays_in_budget_operation_by_operation(
    handler_calls: HandlerCalls, moto_stack: MotoStack
) -> None:
    handler_calls.attribute(moto_stack)
    _life(moto_stack, "life-warm")  # every handler imported and its clients built once, as warm Lambdas are
    handler_calls.calls.clear()
    _life(moto_stack, "life-q")
    operations = {
        "ask": "demo_agent",
        "await gate park": "await_gate",
        "last answer releasing a gate": "api POST answer",
        "run end": "run_lifecycle",
        "drain": "api POST drain",
    }
    calls = dict(handler_calls.calls)
    listed = "\n  ".join(f"{who}: {', '.join(made)}" for who, made in calls.items())
    for name, who in operations.items():
        made = calls.get(who, [])
        assert made, f"{name}: no calls by {who}:\n  {listed}"
        assert len(made) == LIFE_BUDGETS[name], f"{name}: {len(made)} AWS calls, budget {LIFE_BUDGETS[name]}: {made}"
    whole = sum(len(calls.get(who, [])) for who in operations.values())
    assert whole == LIFE_TOTAL, f"the whole life: {whole} AWS calls, budget {LIFE_TOTAL}:\n  {listed}"
    assert set(calls) <= set(operations.values()), f"calls by a handler no budget names:\n  {listed}"


def test_a_park_on_a_run_another_gate_paused_records_the_bump_and_its_start_alone(moto_stack: MotoStack) -> None:
    """`record_park`'s one transaction; on a run not created or running (another gate paused it) it runs
    again without the pause and without `run_paused`: the scope is bumped all the same."""
    core = moto_stack.services.core
    store = core.store
    core.ensure_run("two-gates")

    def park(gate: str) -> bool:
        started = core.new_event(
            "two-gates", AwaitStarted(gate=gate, from_node=None, timeout_seconds=60, pending=["q"])
        )
        paused = core.new_event("two-gates", RunPaused(gate=gate, kind="await", pending=["q"]))
        return store.record_park("two-gates", events=[started], pause_at=core.now(), if_paused=[paused])

    assert park("a") is True
    assert park("b") is False
    assert store.get_run("two-gates").status == "paused_waiting_human"  # type: ignore[union-attr]
    types = [(e.type, e.data.get("gate")) for e in store.list_events("two-gates") if e.type != "run_started"]
    assert types == [("await_started", "a"), ("run_paused", "a"), ("await_started", "b")]
    assert store.snapshot_run("two-gates").scope_version == 2


def test_a_runs_end_is_written_once_with_its_event(moto_stack: MotoStack) -> None:
    """`end_run`: the run's end and its event in one transaction; a second end (a redelivery) is refused
    whole, its event not written."""
    core = moto_stack.services.core
    store = core.store
    core.ensure_run("ends-once")
    at = core.now()
    ended = {"status": "succeeded", "updated_at": at, "ended_at": at}
    store.end_run("ends-once", ended, core.new_event("ends-once", RunEnded.of_status("succeeded", None)))
    with pytest.raises(ConflictError):
        store.end_run("ends-once", {"ended_at": at}, core.new_event("ends-once", RunEnded.of_status("failed", "x")))
    assert [e.type for e in store.list_events("ends-once") if e.type.startswith("run_")] == [
        "run_started",
        "run_succeeded",
    ]
    assert store.get_run("ends-once").ended_at == at  # type: ignore[union-attr]
