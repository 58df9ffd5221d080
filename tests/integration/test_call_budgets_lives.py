"""AWS calls of the other pause kinds' whole lives, operation by operation, against declared budgets (counts,
never timings): the blocking ask (ask, answer, the waiter's read), the hosted pause (parked by its workflow,
resumed, the run's end), the hosted interrupt (created and parked by its workflow, claimed, resumed, the
run's end, its timer stopped by the release) and the tool approval (request, answer, consume). A sibling of
test_call_budgets_question_life.py (its `HandlerCalls` attributes each call to the handler invocation that
made it); bench/parts/cost_model.py prices the same lives. A failing budget lists each call with the code
that made it (`CallsNamed`)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest

from baton.contracts.tool_approvals import ToolApprovalRequest
from baton.domain.tool_calls import ToolCall
from tests.conftest import wait_for
from tests.integration.test_call_budgets_question_life import HandlerCalls, api, hooked, run_end, timer_statuses

if TYPE_CHECKING:
    from tests.integration.conftest import MotoStack


# Per kind, each operation's handler and its budget: the exact count it makes. A change that adds or removes
# a call fails here: say why and set the number in the same commit.
BLOCKING_ASK: dict[str, tuple[str, int]] = {
    # (was 6) the run (GetItem: an agent's run comes into being with its first request), the ask, its
    # pending marker, `human_input_requested` and `run_paused` (one transaction), the run paused (its own
    # conditional UpdateItem: a run elsewhere is left alone, the ask stored all the same), the notification
    "ask": ("api POST asks", 4),
    # (was 9) the run's open part (the route's Query: the pending ask's marker, its chain head, no wait at
    # its node), is a review waiting there (the review wing's Query of the run's interactions), the answer
    # with its event and chain head (one transaction), the run running again with `run_resumed` (one
    # transaction, conditional on the run paused; was 5: an UpdateItem, then a PutItem if the run moved)
    "answer": ("api POST resume", 4),
    # the waiter's read that sees the answer (GetItem; each long-poll before it is one more)
    "the waiter's read": ("api GET {id}", 1),
}
BLOCKING_ASK_TOTAL = 9  # (was 16, then 10) the lower bound is 3 (bench/parts/cost_model.py)

HOSTED_PAUSE: dict[str, tuple[str, int]] = {
    # (was 10) the park task: the run (GetItem), the wait (GetItem: an earlier attempt's park?), the pause,
    # its pending marker, `human_input_requested` and `run_paused` (one transaction; the events were a
    # PutItem each), the wait again (GetItem: parked by a twin?), the wait with the pause's mark (one
    # transaction), the deadline timer (StartExecution), the run paused (UpdateItem), the notification (SNS)
    "park": ("park", 8),
    # the snapshot Query (the parked pause, its wait, the chain head), the deciding transaction, the send
    # (SendTaskSuccess), the release with `run_resumed` (one transaction), the timer stopped (StopExecution);
    # test_call_budgets.py's "resume"
    "resume": ("api POST resume", 5),
    # the run (GetItem: is this execution its run?), the run ended with `run_succeeded` (one transaction),
    # the notification (SNS)
    "run end": ("run_lifecycle", 3),
}
HOSTED_PAUSE_TOTAL = 16

INTERRUPT: dict[str, tuple[str, int]] = {
    # the park task: the wait (GetItem: an earlier attempt's park?), the interrupt by its id (GetItem: a
    # retried create?), the run (GetItem), the run paused (UpdateItem), the interrupt and its index items
    # (one transaction), the wait again (GetItem: parked by a twin?), the wait with the interrupt's marks
    # (one transaction), the deadline timer (StartExecution), `human_input_requested` and `run_paused`
    # (a PutItem each), the notification (SNS)
    "create": ("interrupt_park", 11),
    # the interrupt by its id (GetItem), its run's wait and chain head (BatchGetItem), the claim with its
    # event (one transaction)
    "claim": ("api POST claim", 3),
    # the same two reads, the deciding transaction, the send (SendTaskSuccess), the run's waits (Query:
    # does another still hold the run?), the release with `run_resumed` (one transaction), the gate's
    # timer stopped (StopExecution: firing, it would cost a gate_deadline invocation and a GetItem)
    "resume": ("api POST resume", 7),
    # the run (GetItem: is this execution its run?), the run ended with `run_succeeded` (one
    # transaction), the notification (SNS)
    "run end": ("run_lifecycle", 3),
}
INTERRUPT_TOTAL = 24  # the lower bound of the SDK's interrupt is 3 (bench/parts/cost_model.py)

TOOL_APPROVAL: dict[str, tuple[str, int]] = {
    # the run (GetItem: an agent's run comes into being with its first request), an open approval of the
    # same call (GetItem by its digest: a repeat gets it back), the run's interactions (Query: a policy or
    # a grant may decide it), the approval with its digest key and `human_input_requested` (one
    # transaction; was a PutItem of its own), the notification (SNS)
    "request": ("api POST tool-approvals", 5),
    # the run's open part (Query), the approval read three times on its way (GetItem: the questions route,
    # the tool-approval route, the tool-approval service; left, issue 33), the chain head (GetItem), the
    # decision with its event (one transaction)
    "answer": ("api POST answer", 6),
    # the approval (GetItem), consumed (one conditional PutItem on its version)
    "consume": ("api POST consume", 2),
}
TOOL_APPROVAL_TOTAL = 13  # (was 14) the lower bound is 4 (bench/parts/cost_model.py)


def _made_by() -> str:
    """The Baton code that made a call: its innermost frames in services/, adapters/ and api/."""
    frame = sys._getframe(2)
    names = []
    while frame is not None and len(names) < 3:
        path = frame.f_code.co_filename
        if "/baton/" in path and any(part in path for part in ("/services/", "/adapters/", "/api/")):
            names.append(f"{path.rsplit('/', 1)[-1]}:{frame.f_code.co_name}")
        frame = frame.f_back  # type: ignore[assignment]
    return " < ".join(names)


class CallsNamed(HandlerCalls):
    """`HandlerCalls` with each call's maker: "service.Operation (file:function < ...)"."""

    def hook(self, model: Any, **_: Any) -> None:
        who = getattr(self._local, "who", None)
        if who is not None:
            made = f"{model.service_model.service_name}.{model.name} ({_made_by()})"
            with self._lock:
                self.calls[who].append(made)


@pytest.fixture
def calls_named(monkeypatch: pytest.MonkeyPatch) -> Iterator[CallsNamed]:
    yield hooked(CallsNamed(), monkeypatch)


def _api(stack: MotoStack, method: str, path: str, body: Any = None) -> dict[str, Any]:
    return api(stack, method, path, body, ok=(200, 201))


def _check(kind: str, budgets: dict[str, tuple[str, int]], total: int, found: CallsNamed, **names: str) -> None:
    """Each operation's calls exactly its budget, their sum the life's total, and no call by a handler
    no budget names. `names`: a handler's name as labelled ("api GET {id}" with its id)."""
    calls = dict(found.calls)
    listed = "\n  ".join(f"{who}:\n    " + "\n    ".join(made) for who, made in calls.items())
    handlers = {operation: who.format(**names) for operation, (who, _) in budgets.items()}
    for operation, (_, budget) in budgets.items():
        made = calls.get(handlers[operation], [])
        assert len(made) == budget, f"{kind} {operation}: {len(made)} AWS calls, budget {budget}:\n  {listed}"
    whole = sum(len(calls.get(who, [])) for who in handlers.values())
    assert whole == total, f"{kind}'s whole life: {whole} AWS calls, budget {total}:\n  {listed}"
    assert set(calls) <= set(handlers.values()), f"{kind}: calls by a handler no budget names:\n  {listed}"


def _blocking_ask_life(stack: MotoStack, run_id: str) -> str:
    """An agent's blocking ask on its run: asked, answered, the waiter's read of the answer. Its id."""
    body = {"node": "agent", "question": "Drop the table?", "timeout_seconds": 60, "options": ["yes", "no"]}
    asked = _api(stack, "POST", f"/api/runs/{run_id}/asks", body)
    resumed = _api(stack, "POST", f"/api/runs/{run_id}/resume", {"answers": {"drop": "no"}, "node": "agent"})
    assert resumed["resumed"] is True, resumed
    read = _api(stack, "GET", f"/api/runs/{run_id}/asks/{asked['interaction_id']}")
    assert read["status"] == "answered", read
    interaction_id: str = asked["interaction_id"]
    return interaction_id


def test_a_blocking_ask_life_stays_in_budget_operation_by_operation(
    calls_named: CallsNamed, moto_stack: MotoStack
) -> None:
    calls_named.attribute(moto_stack)
    _blocking_ask_life(moto_stack, "life-ask")  # warm handlers; the agent's run made by its first ask
    calls_named.calls.clear()
    asked = _blocking_ask_life(moto_stack, "life-ask")
    _check("blocking ask", BLOCKING_ASK, BLOCKING_ASK_TOTAL, calls_named, id=asked)


def _hosted_pause_life(stack: MotoStack, run_id: str) -> None:
    """A hosted run's plain pause: parked by its workflow, resumed by an operator, the run's end (the
    EventBridge event `run_lifecycle` gets); the release stops its deadline timer."""
    store = stack.services.core.store
    stack.services.runs.start("human_pause", {"prompt": "Ship?", "timeout_seconds": 60}, run_id=run_id, caller="op")
    wait_for(lambda: store.list_run_waits(run_id) and timer_statuses(stack, run_id))  # parked, its timer started
    [wait] = store.list_run_waits(run_id)
    resumed = _api(stack, "POST", f"/api/runs/{run_id}/resume", {"answers": {"ship": True}})
    assert resumed["resumed"] is True, resumed
    run_end(stack, run_id)
    assert store.get_wait(run_id, wait.gate).status == "released"  # type: ignore[union-attr]
    assert timer_statuses(stack, run_id) == ["ABORTED"]  # stopped by the release: it never fires


def test_a_hosted_pause_life_stays_in_budget_operation_by_operation(
    calls_named: CallsNamed, moto_stack: MotoStack
) -> None:
    calls_named.attribute(moto_stack)
    _hosted_pause_life(moto_stack, "life-pause-warm")
    calls_named.calls.clear()
    _hosted_pause_life(moto_stack, "life-pause")
    _check("hosted pause", HOSTED_PAUSE, HOSTED_PAUSE_TOTAL, calls_named)


def _interrupt_life(stack: MotoStack, run_id: str) -> None:
    """A hosted interrupt: created and parked by its workflow, claimed, resumed, the run's end (the
    EventBridge event `run_lifecycle` gets); the release stops its deadline timer."""
    services = stack.services
    store = services.core.store
    services.runs.start("interrupt", {"prompt": "Where?", "timeout_seconds": 60}, run_id=run_id, caller="op")
    wait_for(lambda: store.list_run_interactions(run_id, kind="interrupt"))
    [interrupt] = store.list_run_interactions(run_id, kind="interrupt")
    gate = interrupt.request.node
    wait_for(lambda: (wait := store.get_wait(run_id, gate)) is not None and wait.status == "parked")
    wait_for(lambda: timer_statuses(stack, run_id))  # the park starts its timer just after it stores the wait
    claimed = _api(stack, "POST", f"/api/v1/interrupts/{interrupt.interaction_id}/claim", {})
    assert claimed["claimed"] is True, claimed
    resumed = _api(stack, "POST", f"/api/v1/interrupts/{interrupt.interaction_id}/resume", {"input": "production"})
    assert resumed["resumed"] is True, resumed
    run_end(stack, run_id)
    assert store.get_wait(run_id, gate).status == "released"  # type: ignore[union-attr]
    assert timer_statuses(stack, run_id) == ["ABORTED"]  # stopped by the release: it never fires


def test_a_hosted_interrupt_life_stays_in_budget_operation_by_operation(
    calls_named: CallsNamed, moto_stack: MotoStack
) -> None:
    calls_named.attribute(moto_stack)
    _interrupt_life(moto_stack, "life-int-warm")
    calls_named.calls.clear()
    _interrupt_life(moto_stack, "life-int")
    _check("interrupt", INTERRUPT, INTERRUPT_TOTAL, calls_named)


def _tool_approval_life(stack: MotoStack, run_id: str, command: str) -> None:
    """An agent's tool call: its approval requested, approved by an operator, consumed by the agent."""
    call = ToolCall(tool="run_shell", arguments={"command": command})
    request = ToolApprovalRequest(call=call, session="s", reason="deploy", timeout_seconds=600)
    asked = _api(stack, "POST", f"/api/runs/{run_id}/tool-approvals", request.model_dump(mode="json"))
    iid = asked["interaction_id"]
    answered = _api(stack, "POST", f"/api/runs/{run_id}/interactions/{iid}/answer", {"answer": {"decision": "approve"}})
    assert answered["resumed"] is True, answered
    path = f"/api/runs/{run_id}/tool-approvals/{iid}/consume"
    assert _api(stack, "POST", path, {"digest": call.digest})["consumed"] is True


def test_a_tool_approval_life_stays_in_budget_operation_by_operation(
    calls_named: CallsNamed, moto_stack: MotoStack
) -> None:
    calls_named.attribute(moto_stack)
    _tool_approval_life(moto_stack, "life-tool", "make deploy 1")  # warm; the agent's run made
    calls_named.calls.clear()
    _tool_approval_life(moto_stack, "life-tool", "make deploy 2")
    _check("tool approval", TOOL_APPROVAL, TOOL_APPROVAL_TOTAL, calls_named)
