"""AWS calls per operation, counted with botocore `before-call` event hooks on every client, against a
declared budget (a count, never a timing). Each operation goes through the real API handler (the
dispatcher's handler copy, moto as AWS), so what is counted is
what one request costs deployed.

Only the calls the request's own thread makes are counted: the Step Functions engine's Lambda invokes
(on AWS, state transitions) and the SNS fan-out run elsewhere. `before send` is what the request does
before it sends the task token (`SendTaskSuccess`): the part a waiting workflow waits for.

Where each remaining call goes is named in docs/architecture.md, "The answer path, call by call"."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

import pytest

from baton.contracts import AskRequest
from baton.contracts.away import Away
from baton.domain.approval import ApprovalPolicy
from baton.ids import iso
from baton.local.http_adapter import to_proxy_event
from tests.conftest import wait_for

if TYPE_CHECKING:
    from tests.integration.conftest import MotoStack

OPERATOR = "arn:aws:sts::123456789012:assumed-role/operators/op-1"
SEND = "stepfunctions.SendTaskSuccess"


@dataclass(frozen=True)
class Budget:
    total: int  # every AWS call of the request
    before_send: int | None = None  # calls before the token is sent (None: the request sends nothing)


# The declared budgets, each the exact count its path makes (a budget above it would hide an added call).
# A change that adds or removes a call on one of these paths fails here: say why in the answer path of
# docs/architecture.md and set the number in the same commit.
BUDGETS: dict[str, Budget] = {
    # (was 4) the snapshot Query; the deciding transaction. A repeat is answered from the stored
    # answer, so Powertools Idempotency's in-progress PutItem and result UpdateItem are gone.
    "answer": Budget(total=2),
    # (was 7/4, then 5/3) the snapshot Query: it holds the gate's wait, and the wait carries the
    # answers of its scope (baton/domain/gate_answers.py), so no read of the scope; the deciding
    # transaction (it carries this answer onto the wait too); the send; the release in one transaction; the
    # gate's timer stopped (StopExecution, after the send: its firing would cost an invocation and a read).
    "last answer releasing a gate": Budget(total=5, before_send=2),
    # (was 10/7, then 5/3) the snapshot Query: it names the parked pause (no review-check Query) and
    # holds the pause's interaction whole (its PEND# marker: no GetItem), its wait and the run's chain
    # head; the deciding transaction; the send; the release in one transaction; the timer stopped.
    "resume": Budget(total=5, before_send=2),
    # (was 9/6, then 5/3) the id's pointer (GetItem), one BatchGetItem of the interrupt, its wait and the
    # run's decision-log head, the deciding transaction, the send, the run's waits (Query: does another
    # branch still hold the run paused? issue 28 item 11; the answer and resume paths have them from their
    # snapshot), the release in one transaction, the gate's timer stopped.
    "hosted interrupt resume": Budget(total=7, before_send=3),
    # (was 7) the id's pointer (GetItem), one BatchGetItem of the interrupt, its wait and the run's
    # decision-log head, the deciding transaction, the task failed (SendTaskFailure) through the wait as
    # read with the interrupt (no read of it again), the wait released, the gate's timer stopped.
    "hosted interrupt cancel": Budget(total=6),
    # (was 5) the id's pointer (GetItem), one BatchGetItem of the interrupt, its wait and the run's
    # decision-log head (`find_for_decision`); the claim's conditional put with `interrupt_claimed` (a
    # decision) and the head's advance in one transaction.
    "claim": Budget(total=3),
    # (was 6) an SDK interrupt read past its deadline: the id's pointer (GetItem), the interrupt (GetItem),
    # its time-out with `interrupt_timed_out` in one conditional write (was a put each), the session's pending
    # interrupts (Query: none, so it runs again) and the run's status (UpdateItem).
    "interrupt timed out by its read": Budget(total=5),
    # a blocking ask read past its deadline (no default): the ask (GetItem), its run's wait at its node (GetItem:
    # none, so not a hosted pause's), its time-out with `human_input_timed_out` in one conditional write (was
    # a PutItem more), the run running again (UpdateItem)
    "blocking ask timed out by its read": Budget(total=4),
    # (was 14, then 12) the vote that meets a quorum interrupt's: the id's pointer (GetItem) and one
    # BatchGetItem (`find_for_decision`), the vote with its event (the chain head, GetItem; one transaction),
    # the tally (GetItem) and the votes (Query), the chain head (GetItem) and the decision (one transaction:
    # the settle writes over the interrupt as the vote read it, a loser reads it again), the session's
    # pending interrupts (Query) and the run running again (UpdateItem), the count's read of the interrupt
    # in its run (GetItem).
    "deciding vote on a quorum interrupt": Budget(total=11),
    # a run's pending questions: the snapshot Query (its open part: the pending markers, each holding its
    # interaction whole, the run, its chain head, its waits)
    "GET pending": Budget(total=1),
    # a repeat of a tool call still pending (issue 30; a Claude Code session repeats its calls): the run
    # (GetItem), the call's open-approval key (GetItem), the approval it names (GetItem): never the run's
    # tool approvals, however many the session made
    "tool approval repeat": Budget(total=3),
    # a tool approval's claim (issue 30): the approval (GetItem), the run's decision-log head (GetItem),
    # the conditional put with `interrupt_claimed` and the head's advance in one transaction
    "tool approval claim": Budget(total=3),
    # the vote that meets a tool approval's quorum: the answer's reads (the run's open part, a Query that
    # finds no question; the approval, GetItem, three times: left, issue 33), the vote with its event (the
    # chain head, GetItem; one transaction), the tally (GetItem) and the votes (Query), the chain head
    # (GetItem) and the decision (one transaction, over the approval as the vote read it: a loser reads it
    # again). Was 12: the approval's re-read (GetItem) after its own settle wrote the decision is gone (the
    # met tally says it); then 11: the settle's read of the approval (GetItem) is gone too
    "tool approval deciding vote": Budget(total=10),
    # a new tool call a policy decides (issue 31): the run (GetItem), the call's open-approval key (GetItem),
    # the run's answered approvals (Query: does a grant cover it?), the decision-log head (GetItem), and one
    # transaction of the approval, its key and `human_input_requested`, `interaction_answered` and
    # `policy_decided` chained; nobody notified, no timer (was 6: the events were a second transaction)
    "tool approval allowed by policy": Budget(total=5),
    "tool approval denied by policy": Budget(total=5),
    # asked by a rule (or no rule matched): the same reads and transaction with `human_input_requested` and
    # `policy_decided` (the head's read: one more call than with no policy), the notification (SNS); was 7
    "tool approval asked by policy": Budget(total=6),
    # answered at once by a remembered grant: the same five calls (was 6, and 7 with each event on its own)
    "tool approval by grant": Budget(total=5),
    # the tool form of await_answers, a question pending: the run (GetItem), its scope (Query: its
    # questions), its pending awaits (Query), the await, its marker and `await_started` (one transaction;
    # was a PutItem more), its timer (StartExecution), the run's scope version (UpdateItem), the run paused
    # (UpdateItem) and `run_paused` (PutItem), then the await and its scope again (GetItem, Query: an answer
    # in between completes it). Was 11
    "tool await started": Budget(total=10),
    # a tool-form await's deadline (its timer, or the reconciler past its expiry), a question pending: the
    # await (GetItem), its scope (Query: the run's questions, read once; was twice), the timeout with its
    # pending marker and `await_timed_out` (one transaction; was a PutItem more), the run back to running:
    # the run's open part (the snapshot Query: the run, its parked waits and its pending awaits; was a
    # GetItem and two Queries), the run running with `run_resumed` (one transaction; was an UpdateItem and
    # a PutItem). Was 10, then 9, then 6
    "tool await timed out": Budget(total=5),
    # the answer that completes a pending tool-form await: the answer's two (the snapshot Query, the
    # deciding transaction), the await's scope (Query: nothing else pending?), the await completed with
    # `await_released` (one transaction), the run back to running: the run's open part (the snapshot Query:
    # the run, its parked waits, its pending awaits), the run running with `run_resumed` (one transaction),
    # the await's timer stopped (StopExecution). Was 10: the run (GetItem), its waits and its awaits (a Query
    # each), the run (UpdateItem) and `run_resumed` (PutItem)
    "answer completing a tool await": Budget(total=7),
    # under `use_question_defaults`: the same, and first each pending question's own default (one with
    # none declared: the question, GetItem; no read of the run's waits), then its scope read again (the
    # defaults answered some of it; the last default's taker completes the await). Was 14, then 13, then
    # 12, then 11, then 8
    "tool await timed out with the questions' defaults": Budget(total=7),
    # passkeys (issue 32 item 3): a step-up's challenge for one answer: the caller's passkeys (Query), the
    # challenge (PutItem)
    "passkey step-up challenge": Budget(total=2),
    # a high risk approve with its passkey: a plain approve's six calls (the snapshot Query that finds no
    # question, the approval's reads, the chain head, the deciding transaction) and the passkey's three: the
    # challenge taken (DeleteItem), the credential (GetItem), its sign count advanced (a conditional UpdateItem)
    "tool approval approved with a passkey": Budget(total=9),
    # a page of decided tool approvals across runs (issue 31, a policy backtest's input): one Query of the
    # by_status index (`tool_approval#answered`) reading the page's items, never the table's other ones
    "decided tool approvals page": Budget(total=1),
    # how long things wait (GET /api/stats/waits): one Query of the all-pending index (oldest first, up
    # to 500 items), one BatchGetItem of their runs (their workflows; 100 runs a call), one by_status
    # Query per kind (6) for its answered and one for its timed-out items (a page of 200 each: no index
    # orders items by answer time). However many are pending or settled, up to those page limits; past
    # 500 pending, up to 12 more (per kind the pending-age alarms' oldest-item Query, and Select=COUNT when any).
    "wait stats": Budget(total=14),
    # the scheduled reconcile run (every minute), nothing due, a question and a tool approval pending:
    # its sweeps, a Query each (the parked waits, the tool-form awaits, the met quorums, the questions,
    # the tool approvals and the blocking asks past their deadline: the asks' was added so an ask whose
    # agent died still ends); the parked gates' age (the parked waits again); per kind of pause (6: tool
    # approvals too, was 5) its oldest pending item (a Query, Limit 1) and, for each of the two kinds with
    # any pending, its count (Select=COUNT, no item read). Every kind pending: 19.
    "reconcile pass": Budget(total=15),
    # an SDK interrupt's creation (no declared action: the policy is not asked): the run (GetItem), the run
    # paused (UpdateItem), the interrupt and its id's pointer in one transaction, `human_input_requested`
    # (PutItem), the notification (SNS)
    "interrupt create": Budget(total=5),
    # one that declares an action a rule allows or denies (issue 31): the same four writes and reads, the
    # decision-log head (GetItem) and `policy_decided` chained after it (one transaction), then the resume by
    # `policy:<rule>` as a person's takes it (the pointer, one BatchGetItem, the deciding transaction, the
    # session's pending interrupts: a Query), and the answered interrupt read back (GetItem); nobody notified
    "interrupt allowed by policy": Budget(total=11),
    "interrupt denied by policy": Budget(total=11),
    # asked by a rule (or no rule matched): the five calls of a plain creation and the head and the
    # transaction chaining `policy_decided`
    "interrupt asked by policy": Budget(total=7),
    # an operator away (issue 32 item 4): the operators away (one Query of their partition: is the
    # delegate away too? whom does the caller stand in for?), the PutItem
    "set away": Budget(total=2),
    "read away": Budget(total=1),  # the Query
    "clear away": Budget(total=2),  # the DeleteItem, the Query
    # a vote by the delegate of an away approver: a named approver's vote's calls and two more, only on
    # this path (the voter named nowhere): the pause's votes (Query: which seat is still open) and the
    # operators away (one Query of their partition)
    "delegate's vote": Budget(total=2),  # more than the approver's own vote
    # a browser's Web Push subscription (issue 32): one conditional PutItem under the operator (the same
    # endpoint again is the same id: the failed condition returns the stored one, no second call)
    "push subscribe": Budget(total=1),
    # a reassign that pushes to the new holder's devices: the claim's three calls, the new holder's away
    # (GetItem: away, the claim goes to their delegate) and one Query of the holder's subscriptions (the
    # push itself is an HTTPS POST to the push service, not an AWS call)
    "reassign with a push": Budget(total=5),
}


def _items_read(operation: str, parsed: dict[str, Any]) -> int:
    """The DynamoDB items a read call read (a Query's ScannedCount: what it read before its filter)."""
    if operation == "Query":
        return int(parsed.get("ScannedCount", parsed.get("Count", 0)))
    if operation == "GetItem":
        return 1 if parsed.get("Item") else 0
    if operation == "BatchGetItem":
        return sum(len(items) for items in (parsed.get("Responses") or {}).values())
    return 0


@dataclass
class CallLog:
    """The calls of the threads that are counting, in order ("service.Operation"), and the DynamoDB
    items their reads read (`items_read`, from each response)."""

    calls: list[str] = field(default_factory=list)
    items_read: int = 0
    _local: threading.local = field(default_factory=threading.local)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def hook(self, model: Any, **_: Any) -> None:
        if getattr(self._local, "on", False):
            with self._lock:
                self.calls.append(f"{model.service_model.service_name}.{model.name}")

    def after(self, model: Any, parsed: Any = None, **_: Any) -> None:
        if getattr(self._local, "on", False) and isinstance(parsed, dict):
            with self._lock:
                self.items_read += _items_read(model.name, parsed)

    def measure(self, action: Any) -> tuple[Any, list[str]]:
        self.calls.clear()
        self.items_read = 0
        self._local.on = True
        try:
            result = action()
        finally:
            self._local.on = False
        return result, list(self.calls)


@pytest.fixture
def call_log(monkeypatch: pytest.MonkeyPatch) -> Iterator[CallLog]:
    """Every botocore client created while the test runs (the stack's are made after this) reports
    each API call to the log. Requested before `moto_stack`, so its clients are counted too."""
    import botocore.session

    log = CallLog()
    original = botocore.session.Session.create_client

    def create_client(self: Any, *args: Any, **kwargs: Any) -> Any:
        client = original(self, *args, **kwargs)
        client.meta.events.register("before-call.*.*", log.hook)
        client.meta.events.register("after-call.dynamodb.*", log.after)
        return client

    monkeypatch.setattr(botocore.session.Session, "create_client", create_client)
    yield log


def _api(stack: MotoStack, method: str, path: str, body: Any = None) -> tuple[int, dict[str, Any]]:
    raw = json.dumps(body).encode() if body is not None else b""
    event = to_proxy_event(method, path, {"Content-Type": "application/json"}, raw, "10.0.0.1")
    event["requestContext"]["identity"]["userArn"] = OPERATOR
    payload, errored = stack.dispatcher.invoke("api", event)
    assert not errored, payload
    return payload["statusCode"], json.loads(payload["body"])


def _check(name: str, calls: list[str]) -> None:
    budget = BUDGETS[name]
    listed = "\n  ".join(calls)
    assert len(calls) == budget.total, f"{name}: {len(calls)} AWS calls, budget {budget.total}:\n  {listed}"
    if budget.before_send is not None:
        assert SEND in calls, f"{name}: the token was never sent:\n  {listed}"
        before = calls.index(SEND)
        assert before == budget.before_send, (
            f"{name}: {before} AWS calls before the send, budget {budget.before_send}:\n  {listed}"
        )


def _warm(stack: MotoStack) -> None:
    """The handler copy is imported and its clients built once, as a warm Lambda container is."""
    status, _ = _api(stack, "GET", "/api/runs/warm-up/interactions/pending")
    assert status in (200, 404)


def test_answer_and_get_pending_stay_in_budget(call_log: CallLog, moto_stack: MotoStack) -> None:
    questions = moto_stack.services.questions
    first = questions.ask("budget-q", AskRequest(node="draft", question="Which DB?"), caller="agent")
    questions.ask("budget-q", AskRequest(node="draft", question="Which region?"), caller="agent")
    _warm(moto_stack)

    (status, body), calls = call_log.measure(lambda: _api(moto_stack, "GET", "/api/runs/budget-q/interactions/pending"))
    assert status == 200 and len(body["pending"]) == 2
    _check("GET pending", calls)

    path = f"/api/runs/budget-q/interactions/{first['interaction_id']}/answer"
    (status, body), calls = call_log.measure(lambda: _api(moto_stack, "POST", path, {"answer": "postgres"}))
    assert status == 200 and body["resumed"] is False, body
    _check("answer", calls)


def _until_parked(stack: MotoStack, run_id: str) -> None:
    """Until the await gate's park has finished: its re-check has merged what its scope answered before
    it into the answers its wait carries (a person answers a gate seconds after it parked, not amid it)."""
    store = stack.services.core.store
    wait_for(lambda: (wait := store.get_wait(run_id, "await")) is not None and wait.carry == "complete")


def test_last_answer_releasing_a_gate_stays_in_budget(call_log: CallLog, moto_stack: MotoStack) -> None:
    services = moto_stack.services
    run = services.runs.start(
        "await_answers",
        {"from": "draft", "node": "draft", "timeout_seconds": 60, "questions": [{"question": "DB?"}]},
        run_id="budget-gate",
        caller="op",
    )
    _until_parked(moto_stack, "budget-gate")
    [question] = services.questions.pending("budget-gate")
    _warm(moto_stack)
    path = f"/api/runs/budget-gate/interactions/{question.interaction_id}/answer"
    (status, body), calls = call_log.measure(lambda: _api(moto_stack, "POST", path, {"answer": "pg"}))
    assert status == 200 and body["resumed"] is True, body
    _check("last answer releasing a gate", calls)
    sfn = moto_stack.clients["stepfunctions"]
    wait_for(lambda: sfn.describe_execution(executionArn=run.execution_arn)["status"] != "RUNNING")
    assert sfn.describe_execution(executionArn=run.execution_arn)["status"] == "SUCCEEDED"


def test_resume_stays_in_budget(call_log: CallLog, moto_stack: MotoStack) -> None:
    runs = moto_stack.services.runs
    runs.start("human_pause", {"prompt": "Ship?", "timeout_seconds": 60}, run_id="budget-pause", caller="op")
    wait_for(lambda: runs.get("budget-pause")["status"] == "paused_waiting_human")
    _warm(moto_stack)
    (status, body), calls = call_log.measure(
        lambda: _api(moto_stack, "POST", "/api/runs/budget-pause/resume", {"answers": {"ship": True}})
    )
    assert status == 200 and body["resumed"] is True, body
    _check("resume", calls)


def test_hosted_interrupt_resume_stays_in_budget(call_log: CallLog, moto_stack: MotoStack) -> None:
    services = moto_stack.services
    services.runs.start("interrupt", {"prompt": "Where?", "timeout_seconds": 60}, run_id="budget-int", caller="op")
    wait_for(lambda: services.core.store.list_run_interactions("budget-int", kind="interrupt"))
    [interrupt] = services.core.store.list_run_interactions("budget-int", kind="interrupt")
    wait_for(lambda: services.core.store.get_wait("budget-int", interrupt.request.node))
    _warm(moto_stack)
    path = f"/api/v1/interrupts/{interrupt.interaction_id}/resume"
    (status, body), calls = call_log.measure(lambda: _api(moto_stack, "POST", path, {"input": "production"}))
    assert status == 200 and body["resumed"] is True, body
    _check("hosted interrupt resume", calls)


def test_hosted_interrupt_cancel_stays_in_budget(call_log: CallLog, moto_stack: MotoStack) -> None:
    services = moto_stack.services
    services.runs.start("interrupt", {"prompt": "Where?", "timeout_seconds": 60}, run_id="budget-int", caller="op")
    wait_for(lambda: services.core.store.list_run_interactions("budget-int", kind="interrupt"))
    [interrupt] = services.core.store.list_run_interactions("budget-int", kind="interrupt")
    wait_for(lambda: services.core.store.get_wait("budget-int", interrupt.request.node))
    _warm(moto_stack)
    path = f"/api/v1/interrupts/{interrupt.interaction_id}/cancel"
    (status, body), calls = call_log.measure(lambda: _api(moto_stack, "POST", path, {"reason": "not today"}))
    assert status == 200 and body["cancelled"] is True and body["workflowFailed"] is True, body
    _check("hosted interrupt cancel", calls)


def test_an_interrupt_timed_out_by_its_read_stays_in_budget(call_log: CallLog, moto_stack: MotoStack) -> None:
    from baton.domain.interrupt_spec import InterruptSpec

    interrupts = moto_stack.services.interrupts
    created, _ = interrupts.create(
        InterruptSpec(session_id="budget-late", prompt="deploy?", timeout_ms=1000), caller="a"
    )
    _warm(moto_stack)
    wait_for(lambda: moto_stack.services.core.is_past(created.expires_at))
    read, calls = call_log.measure(lambda: interrupts.get(created.interaction_id))
    assert read.state.status == "timed_out", read
    assert "interrupt_timed_out" in [e.type for e in moto_stack.services.core.store.list_events("budget-late")]
    _check("interrupt timed out by its read", calls)


def test_a_blocking_ask_timed_out_by_its_read_stays_in_budget(call_log: CallLog, moto_stack: MotoStack) -> None:
    from baton.contracts import BlockingAskRequest
    from baton.services.asks import AskService
    from tests.conftest import FixedClock

    core, run_id = moto_stack.services.core, "budget-ask-late"
    core.ensure_run(run_id)
    asks = AskService(core)
    request = BlockingAskRequest(node="agent", question="Drop the table?", timeout_seconds=60)
    iid = asks.ask(run_id, request, caller="agent").interaction_id
    clock = FixedClock(datetime.now(UTC))
    clock.advance(120)
    core.clock = clock
    read, calls = call_log.measure(lambda: asks.get(run_id, iid))
    assert read.state.status == "timed_out", read
    assert "human_input_timed_out" in [e.type for e in core.store.list_events(run_id)]
    _check("blocking ask timed out by its read", calls)


def test_the_deciding_vote_on_a_quorum_interrupt_stays_in_budget(call_log: CallLog, moto_stack: MotoStack) -> None:
    from baton.contracts.interrupts import ResumeInterrupt
    from baton.domain.ballot import Voter
    from baton.domain.interrupt_spec import InterruptSpec

    interrupts = moto_stack.services.interrupts
    quorum = ApprovalPolicy(approvals=2, approvers=["alice", "bob"])
    created, _ = interrupts.create(InterruptSpec(session_id="budget-quorum", prompt="go?", approval=quorum), caller="a")
    interrupts.resume(created.interaction_id, ResumeInterrupt(input="go"), caller="alice", voter=Voter("alice"))
    _warm(moto_stack)
    resumed, calls = call_log.measure(
        lambda: interrupts.resume(created.interaction_id, ResumeInterrupt(input="go"), caller="bob", voter=Voter("bob"))
    )
    assert resumed.resumed is True and resumed.approval is not None and resumed.approval.decision == "approved"
    _check("deciding vote on a quorum interrupt", calls)


def test_claim_stays_in_budget(call_log: CallLog, moto_stack: MotoStack) -> None:
    from baton.domain.interrupt_spec import InterruptSpec

    created, _ = moto_stack.services.interrupts.create(
        InterruptSpec(session_id="budget-claim", prompt="deploy?"), caller="agent"
    )
    _warm(moto_stack)
    path = f"/api/v1/interrupts/{created.interaction_id}/claim"
    (status, body), calls = call_log.measure(lambda: _api(moto_stack, "POST", path, {}))
    assert status == 200 and body["interrupt"]["claimedBy"] == OPERATOR, body
    _check("claim", calls)


def _history(stack: MotoStack, run_id: str, rounds: int) -> None:
    """`rounds` questions asked at another node and answered on the run (its history, not its open part)."""
    questions = stack.services.questions
    for n in range(rounds):
        asked = questions.ask(run_id, AskRequest(node="history", question=f"round {n}?"), caller="agent")
        questions.answer(run_id, asked["interaction_id"], f"answer {n}", caller="op")


def test_get_pending_reads_stay_flat_as_history_grows(call_log: CallLog, moto_stack: MotoStack) -> None:
    """GET pending is one Query of the run's open part: the items it reads are the pending ones (and
    the run, its chain head, its waits), the same after ten more rounds of answered history."""
    questions = moto_stack.services.questions
    questions.ask("flat-q", AskRequest(node="draft", question="Which DB?"), caller="agent")
    questions.ask("flat-q", AskRequest(node="draft", question="Which region?"), caller="agent")
    _history(moto_stack, "flat-q", 1)  # the chain head exists from the first answer on
    _warm(moto_stack)
    path = "/api/runs/flat-q/interactions/pending"
    (status, body), calls = call_log.measure(lambda: _api(moto_stack, "GET", path))
    assert status == 200 and len(body["pending"]) == 2 and calls == ["dynamodb.Query"], calls
    read_before = call_log.items_read
    assert read_before >= 3, read_before  # the two pending markers and the run, at least
    _history(moto_stack, "flat-q", 10)
    (status, body), calls = call_log.measure(lambda: _api(moto_stack, "GET", path))
    assert status == 200 and len(body["pending"]) == 2 and calls == ["dynamodb.Query"], calls
    assert call_log.items_read == read_before, f"read {read_before} items at history 1, {call_log.items_read} at 11"


def _resume_after_history(call_log: CallLog, stack: MotoStack, rounds: int) -> int:
    """The items one resume reads on a fresh paused run with `rounds` of history (its calls in budget)."""
    runs = stack.services.runs
    run_id = f"flat-pause-{rounds}"
    runs.start("human_pause", {"prompt": "Ship?", "timeout_seconds": 60}, run_id=run_id, caller="op")
    wait_for(lambda: runs.get(run_id)["status"] == "paused_waiting_human")
    _history(stack, run_id, rounds)
    _warm(stack)
    path = f"/api/runs/{run_id}/resume"
    (status, body), calls = call_log.measure(lambda: _api(stack, "POST", path, {"answers": {"ok": 1}}))
    assert status == 200 and body["resumed"] is True, body
    _check("resume", calls)
    return call_log.items_read


def test_resume_reads_stay_flat_as_history_grows(call_log: CallLog, moto_stack: MotoStack) -> None:
    """A resume reads the same items on a run with one round of history as on one with eleven."""
    read = {rounds: _resume_after_history(call_log, moto_stack, rounds) for rounds in (1, 11)}
    assert read[1] >= 3, read  # the run, the pause's marker and its wait, at least
    assert read[11] == read[1], f"a resume read {read[1]} items at history 1, {read[11]} at 11"


def _dialogue(stack: MotoStack, run_id: str, turns: int) -> None:
    """`turns` more turns of a review dialogue on the run (a review gate's thread, as its service stores it)."""
    from baton.models import ReviewTurn

    store = stack.services.core.store
    start = len(store.list_turns(run_id, "review-1"))
    for n in range(start, start + turns):
        role = "companion" if n % 2 == 0 else "operator"
        store.put_turn(ReviewTurn(run_id=run_id, interaction_id="review-1", n=n, role=role, text=f"turn {n}", at="t"))


def test_resume_reads_stay_flat_as_a_review_dialogue_grows(call_log: CallLog, moto_stack: MotoStack) -> None:
    """A run's review dialogue is never read by its answers: a resume (and GET pending) reads the same
    items on a run with one review turn as on one with twenty-one."""
    runs = moto_stack.services.runs
    read: dict[int, tuple[int, int]] = {}
    for turns in (1, 21):
        run_id = f"flat-turns-{turns}"
        runs.start("human_pause", {"prompt": "Ship?", "timeout_seconds": 60}, run_id=run_id, caller="op")
        wait_for(lambda run_id=run_id: runs.get(run_id)["status"] == "paused_waiting_human")  # type: ignore[misc]
        _dialogue(moto_stack, run_id, turns)
        _warm(moto_stack)
        (status, _), calls = call_log.measure(
            lambda run_id=run_id: _api(moto_stack, "GET", f"/api/runs/{run_id}/interactions/pending")
        )  # type: ignore[misc]
        assert status == 200 and calls == ["dynamodb.Query"], calls
        pending_read = call_log.items_read
        path = f"/api/runs/{run_id}/resume"
        (status, body), calls = call_log.measure(
            lambda path=path: _api(moto_stack, "POST", path, {"answers": {"ok": 1}})
        )  # type: ignore[misc]
        assert status == 200 and body["resumed"] is True, body
        _check("resume", calls)
        read[turns] = (pending_read, call_log.items_read)
    assert read[1][1] >= 3, read  # the run, the pause's marker and its wait, at least
    assert read[21] == read[1], f"(GET pending, resume) read {read[1]} items with 1 review turn, {read[21]} with 21"


def _last_answer_after_history(call_log: CallLog, stack: MotoStack, rounds: int) -> tuple[int, dict[str, Any]]:
    """The items the last answer of an await gate reads on a fresh run with `rounds` of history (its
    calls in budget), and the gate's output."""
    services = stack.services
    run_id = f"flat-gate-{rounds}"
    run = services.runs.start(
        "await_answers",
        {"from": "draft", "node": "draft", "timeout_seconds": 60, "questions": [{"question": "DB?"}]},
        run_id=run_id,
        caller="op",
    )
    _until_parked(stack, run_id)
    _history(stack, run_id, rounds)
    [question] = [q for q in services.questions.pending(run_id) if q.request.node == "draft"]
    _warm(stack)
    path = f"/api/runs/{run_id}/interactions/{question.interaction_id}/answer"
    (status, body), calls = call_log.measure(lambda: _api(stack, "POST", path, {"answer": "pg"}))
    assert status == 200 and body["resumed"] is True, body
    _check("last answer releasing a gate", calls)
    read = call_log.items_read
    sfn = stack.clients["stepfunctions"]
    wait_for(lambda: sfn.describe_execution(executionArn=run.execution_arn)["status"] != "RUNNING")
    described = sfn.describe_execution(executionArn=run.execution_arn)
    assert described["status"] == "SUCCEEDED", described
    return read, json.loads(described["output"])


def test_last_answer_reads_stay_flat_as_history_grows(call_log: CallLog, moto_stack: MotoStack) -> None:
    """The last answer releasing an await gate reads the same items with one round of answered history
    on its run as with eleven: the gate's output comes from the answers its wait carries, not from a
    read of the run's interactions (which grew by one item per round)."""
    read: dict[int, int] = {}
    for rounds in (1, 11):
        read[rounds], output = _last_answer_after_history(call_log, moto_stack, rounds)
        assert [(a["node"], a["question"], a["answer"]) for a in output["answers"]] == [("draft", "DB?", "pg")]
    assert read[1] >= 3, read  # the run, the question's marker and the gate's wait, at least
    assert read[11] == read[1], f"the last answer read {read[1]} items at history 1, {read[11]} at 11"


def test_a_wait_stored_before_waits_carried_answers_is_released_from_a_read(
    call_log: CallLog, moto_stack: MotoStack
) -> None:
    """A wait without carried answers (as stored before them) is released as before: after the deciding
    write, one read of the run's questions gives the gate's output, the answer before the park in it."""
    services = moto_stack.services
    run = services.runs.start(
        "await_answers",
        {
            "from": "draft",
            "node": "draft",
            "timeout_seconds": 60,
            "questions": [{"question": "DB?"}, {"question": "Region?"}],
        },
        run_id="legacy-gate",
        caller="op",
    )
    _until_parked(moto_stack, "legacy-gate")
    first, second = services.questions.pending("legacy-gate")
    services.questions.answer("legacy-gate", first.interaction_id, "pg", caller="op")
    moto_stack.clients["dynamodb"].update_item(  # the wait as an older Baton stored it
        TableName=os.environ["BATON_TABLE_NAME"],
        Key={"PK": {"S": "RUN#legacy-gate"}, "SK": {"S": "WAIT#await"}},
        UpdateExpression="REMOVE carry, answers, carry_version, carried_bytes",
    )
    assert services.core.store.get_wait("legacy-gate", "await").carry is None
    _warm(moto_stack)
    path = f"/api/runs/legacy-gate/interactions/{second.interaction_id}/answer"
    (status, body), calls = call_log.measure(lambda: _api(moto_stack, "POST", path, {"answer": "eu"}))
    assert status == 200 and body["resumed"] is True, body
    assert calls[:3] == ["dynamodb.Query", "dynamodb.TransactWriteItems", "dynamodb.Query"], calls
    assert calls[3] == SEND, calls
    sfn = moto_stack.clients["stepfunctions"]
    wait_for(lambda: sfn.describe_execution(executionArn=run.execution_arn)["status"] != "RUNNING")
    described = sfn.describe_execution(executionArn=run.execution_arn)
    assert described["status"] == "SUCCEEDED", described
    answers = json.loads(described["output"])["answers"]
    assert [(a["question"], a["answer"]) for a in answers] == [("DB?", "pg"), ("Region?", "eu")]


def test_a_stop_closes_its_pauses_in_bounded_batch_writes(call_log: CallLog, moto_stack: MotoStack) -> None:
    """A run's stop closes N pending items with one Query of its interactions, one of its waits and one
    transaction per 100 items (a question is two: its item and its pending marker), never a write each."""
    from baton.services.run_stop import close_pauses

    questions = moto_stack.services.questions
    asked = [
        questions.ask("budget-stop", AskRequest(node="draft", question=f"q{n}?"), caller="agent") for n in range(55)
    ]
    closed, calls = call_log.measure(
        lambda: close_pauses(moto_stack.services.core, "budget-stop", by=OPERATOR, cause="stopped by op-1")
    )
    assert sorted(closed) == sorted(a["interaction_id"] for a in asked)
    writes = [c for c in calls if c == "dynamodb.TransactWriteItems"]
    assert len(writes) == 2, calls  # 110 items in 2 transactions
    assert calls.count("dynamodb.Query") == 2 and len(calls) == 4, calls  # its interactions, its waits
    assert moto_stack.services.core.store.list_run_interactions("budget-stop", status="pending") == []


def _tool_history(stack: MotoStack, run_id: str, calls: int) -> None:
    """`calls` tool approvals of other calls on the run, each approved and used (a session's history)."""
    from baton.contracts.tool_approvals import ToolApprovalRequest
    from baton.domain.tool_calls import ToolCall
    from baton.services.tool_approvals import ToolApprovalService

    service = ToolApprovalService(stack.services.core)
    for n in range(calls):
        call = ToolCall(tool="run_shell", arguments={"command": f"ls {n}"})
        asked, _ = service.request(
            run_id, ToolApprovalRequest(call=call, session="s", reason="list", timeout_seconds=600), caller="agent"
        )
        service.answer(run_id, asked.interaction_id, {"decision": "approve"}, caller="op")
        service.consume(run_id, asked.interaction_id, call.digest)


def _tool_repeat_reads(call_log: CallLog, stack: MotoStack, history: int) -> tuple[int, int]:
    """The items a repeat of a pending tool call reads on a run with `history` used approvals (in budget)."""
    run_id = f"tool-repeat-{history}"
    _tool_history(stack, run_id, history)
    call = {"tool": "run_shell", "arguments": {"command": "make deploy"}}
    body = {"call": call, "session": "s", "reason": "deploy", "timeout_seconds": 600}
    path = f"/api/runs/{run_id}/tool-approvals"
    status, first = _api(stack, "POST", path, body)
    assert status == 201, first
    _warm(stack)
    (status, again), calls = call_log.measure(lambda: _api(stack, "POST", path, body))
    assert status == 200 and again["interaction_id"] == first["interaction_id"], again
    _check("tool approval repeat", calls)
    read = call_log.items_read
    (status, _), calls = call_log.measure(lambda: _api(stack, "GET", f"/api/runs/{run_id}/interactions/pending"))
    assert status == 200 and calls == ["dynamodb.Query"], calls
    return read, call_log.items_read  # GET pending never reads the run's open-call keys either


def test_a_tool_approval_repeat_stays_in_budget_and_flat_as_the_session_grows(
    call_log: CallLog, moto_stack: MotoStack
) -> None:
    """A repeat (and GET pending) reads the same items after one used approval in the run as after 21."""
    read = {history: _tool_repeat_reads(call_log, moto_stack, history) for history in (1, 21)}
    assert read[1][0] == 3, read  # the run, the call's key, its approval
    assert read[21] == read[1], f"a repeat and GET pending read {read[1]} items at history 1, {read[21]} at 21"


def test_a_tool_approval_claim_stays_in_budget(call_log: CallLog, moto_stack: MotoStack) -> None:
    call = {"tool": "run_shell", "arguments": {"command": "make deploy"}}
    body = {"call": call, "session": "s", "reason": "deploy", "timeout_seconds": 600}
    status, asked = _api(moto_stack, "POST", "/api/runs/budget-tool-claim/tool-approvals", body)
    assert status == 201, asked
    _warm(moto_stack)
    path = f"/api/runs/budget-tool-claim/tool-approvals/{asked['interaction_id']}/claim"
    (status, claimed), calls = call_log.measure(lambda: _api(moto_stack, "POST", path, {}))
    assert status == 200 and claimed["approval"]["claimed_by"] == OPERATOR, claimed
    _check("tool approval claim", calls)


def test_a_tool_approvals_deciding_vote_stays_in_budget(call_log: CallLog, moto_stack: MotoStack) -> None:
    from baton.contracts.tool_approvals import ToolApprovalRequest
    from baton.domain.tool_calls import ToolCall
    from baton.services.tool_approvals import ToolApprovalService

    service, run_id = ToolApprovalService(moto_stack.services.core), "budget-tool-vote"
    call = ToolCall(tool="run_shell", arguments={"command": "make deploy"})
    body = ToolApprovalRequest(call=call, reason="deploy", timeout_seconds=600, approval=ApprovalPolicy(approvals=2))
    approval, _ = service.request(run_id, body, caller="agent")  # the asking agent, not the voter
    first = service.answer(run_id, approval.interaction_id, {"decision": "approve"}, caller="alice")
    assert first.status == "pending", first
    _warm(moto_stack)
    path = f"/api/runs/{run_id}/interactions/{approval.interaction_id}/answer"
    (status, decided), calls = call_log.measure(lambda: _api(moto_stack, "POST", path, {"answer": "approve"}))
    assert status == 200 and decided["status"] == "answered", decided
    _check("tool approval deciding vote", calls)


POLICY = """
@id("read-only") permit(principal, action == Action::"call_tool", resource in Tool::"run_shell")
when { resource.hasTag("command") && resource.getTag("command") like "ls*" };
@id("deploys") @ask @approvers("alice,bob") @quorum("2")
permit(principal, action == Action::"call_tool", resource in Tool::"run_shell")
when { resource.hasTag("command") && resource.getTag("command") like "make*" };
@id("no-network") @reason("no network") forbid(principal, action == Action::"call_tool", resource)
when { resource.hasTag("command") && resource.getTag("command") like "curl*" };
"""


@pytest.mark.parametrize(
    ("command", "budget", "decision"),
    [
        ("ls -la", "tool approval allowed by policy", "approve"),
        ("curl x", "tool approval denied by policy", "deny"),
        ("make deploy", "tool approval asked by policy", None),
    ],
)
def test_a_tool_call_a_policy_decides_stays_in_budget(
    call_log: CallLog, moto_stack: MotoStack, command: str, budget: str, decision: str | None
) -> None:
    from baton.policy.engine import Policy
    from baton.policy.source import FixedPolicy

    _tool_history(moto_stack, "budget-tool-policy", 1)
    moto_stack.services.core.policy = FixedPolicy(Policy.load(POLICY))
    _warm(moto_stack)
    body = {"call": {"tool": "run_shell", "arguments": {"command": command}}, "reason": "r", "timeout_seconds": 60}
    path = "/api/runs/budget-tool-policy/tool-approvals"
    (status, decided), calls = call_log.measure(lambda: _api(moto_stack, "POST", path, body))
    assert status == 201, decided
    if decision is None:  # asked: a person is notified
        assert decided["status"] == "pending" and "sns.Publish" in calls, calls
    else:  # nobody notified, no timer
        assert decided["decision"]["decision"] == decision, decided
        assert decided["decision"]["decided_by"] == f"policy:{decided['decision']['rule']}", decided
        assert "sns.Publish" not in calls and "stepfunctions.StartExecution" not in calls, calls
    _check(budget, calls)


def test_a_tool_call_a_grant_answers_stays_in_budget(call_log: CallLog, moto_stack: MotoStack) -> None:
    from baton.contracts.tool_approvals import ToolApprovalRequest
    from baton.domain.tool_calls import ToolCall
    from baton.services.tool_approvals import ToolApprovalService

    service = ToolApprovalService(moto_stack.services.core)
    call = ToolCall(tool="run_shell", arguments={"command": "ls"})
    asked, _ = service.request(
        "budget-tool-grant", ToolApprovalRequest(call=call, reason="list", timeout_seconds=60), caller="agent"
    )
    remember = {"scope": "run", "expires_in_seconds": 600}
    service.answer(
        "budget-tool-grant", asked.interaction_id, {"decision": "approve", "remember": remember}, caller="op"
    )
    _warm(moto_stack)
    body = {"call": {"tool": "run_shell", "arguments": {"command": "ls -la"}}, "reason": "r", "timeout_seconds": 60}
    path = "/api/runs/budget-tool-grant/tool-approvals"
    (status, decided), calls = call_log.measure(lambda: _api(moto_stack, "POST", path, body))
    assert status == 201 and decided["decision"]["outcome"] == "grant", decided
    _check("tool approval by grant", calls)


def test_a_page_of_decided_tool_approvals_is_one_query_reading_the_page(
    call_log: CallLog, moto_stack: MotoStack
) -> None:
    call = {"tool": "run_shell", "arguments": {"command": "make deploy"}}
    for n in range(5):
        body = {"call": call, "session": f"s{n}", "reason": "deploy", "timeout_seconds": 600}
        status, asked = _api(moto_stack, "POST", f"/api/runs/budget-decided-{n}/tool-approvals", body)
        assert status == 201, asked
        path = f"/api/runs/budget-decided-{n}/interactions/{asked['interaction_id']}/answer"
        assert _api(moto_stack, "POST", path, {"answer": {"decision": "deny", "reason": "no"}})[0] == 200
    _warm(moto_stack)
    (status, page), calls = call_log.measure(lambda: _api(moto_stack, "GET", "/api/tool-approvals?limit=2"))
    assert status == 200 and page["count"] == 2 and page["next"], page
    _check("decided tool approvals page", calls)
    assert calls == ["dynamodb.Query"] and call_log.items_read == 2, (calls, call_log.items_read)


def test_wait_stats_stay_in_budget_as_items_settle(call_log: CallLog, moto_stack: MotoStack) -> None:
    """The same calls with 3 pending and 1 answered as with 23 more answered across more runs."""
    questions = moto_stack.services.questions
    for run_id in ("budget-waits-a", "budget-waits-b"):
        questions.ask(run_id, AskRequest(node="draft", question="Which DB?"), caller="agent")
    asked = questions.ask("budget-waits-a", AskRequest(node="draft", question="Region?"), caller="agent")
    status, _ = _api(
        moto_stack, "POST", f"/api/runs/budget-waits-a/interactions/{asked['interaction_id']}/answer", {"answer": "eu"}
    )
    assert status == 200
    _warm(moto_stack)
    (status, stats), calls = call_log.measure(lambda: _api(moto_stack, "GET", "/api/stats/waits"))
    assert status == 200 and stats["pending"]["count"] == 2 and stats["answers"]["windows"][0]["answered"] == 1, stats
    _check("wait stats", calls)
    assert "dynamodb.Scan" not in calls and calls.count("dynamodb.BatchGetItem") == 1, calls
    for n in range(23):
        run_id = f"budget-waits-{n}"
        more = questions.ask(run_id, AskRequest(node="draft", question=f"q{n}?"), caller="agent")
        questions.ask(run_id, AskRequest(node="draft", question=f"still open {n}?"), caller="agent")
        questions.answer(run_id, more["interaction_id"], "yes", caller="op")
    (status, stats), again = call_log.measure(lambda: _api(moto_stack, "GET", "/api/stats/waits"))
    assert status == 200 and stats["pending"]["count"] == 25 and stats["answers"]["windows"][0]["answered"] == 24
    assert sorted(again) == sorted(calls), again


def test_the_scheduled_reconcile_pass_stays_in_budget_per_kind(call_log: CallLog, moto_stack: MotoStack) -> None:
    """One reconcile run (every minute): its sweeps over what is parked or due, then the pending-age
    metrics of every kind (tool approvals too) from the pending index; the same calls with one item of a
    kind pending as with 20 (the count is Select=COUNT, never an item read)."""
    questions = moto_stack.services.questions
    questions.ask("budget-ages", AskRequest(node="draft", question="Which DB?"), caller="agent")
    call = {"tool": "run_shell", "arguments": {"command": "make deploy"}}
    body = {"call": call, "session": "s-ages", "reason": "deploy", "timeout_seconds": 600}
    assert _api(moto_stack, "POST", "/api/runs/budget-ages/tool-approvals", body)[0] == 201
    moto_stack.dispatcher.invoke("reconcile", {})  # warm: its handler copy imported, its clients built
    (result, errored), calls = call_log.measure(lambda: moto_stack.dispatcher.invoke("reconcile", {}))
    assert not errored and set(result["oldest_pending_age_seconds"]) == {"question", "tool_approval"}, result
    _check("reconcile pass", calls)
    assert "dynamodb.Scan" not in calls, calls
    for n in range(19):
        questions.ask(f"budget-ages-{n}", AskRequest(node="draft", question=f"q{n}?"), caller="agent")
    (result, errored), again = call_log.measure(lambda: moto_stack.dispatcher.invoke("reconcile", {}))
    assert not errored and sorted(again) == sorted(calls), again


GATE_POLICY = """
@id("staging-ok") permit(principal, action == Action::"pass_gate", resource == Gate::"deploy")
when { resource.hasTag("env") && resource.getTag("env") == "staging" };
@id("no-lab") forbid(principal, action == Action::"pass_gate", resource == Gate::"deploy")
when { resource.hasTag("env") && resource.getTag("env") == "lab" };
@id("prod") @ask @approvers("alice,bob") @quorum("2")
permit(principal, action == Action::"pass_gate", resource == Gate::"deploy")
when { resource.hasTag("env") && resource.getTag("env") == "prod" };
"""


@pytest.mark.parametrize(
    ("env", "budget", "status"),
    [
        (None, "interrupt create", "pending"),
        ("staging", "interrupt allowed by policy", "answered"),
        ("lab", "interrupt denied by policy", "answered"),
        ("prod", "interrupt asked by policy", "pending"),
    ],
)
def test_an_interrupt_create_stays_in_budget_with_and_without_a_policy(
    call_log: CallLog, moto_stack: MotoStack, env: str | None, budget: str, status: str
) -> None:
    from baton.policy.engine import Policy
    from baton.policy.source import FixedPolicy

    moto_stack.services.core.policy = FixedPolicy(Policy.load(GATE_POLICY))
    _api(moto_stack, "POST", "/api/v1/interrupts", {"sessionId": "budget-gate", "prompt": "first?"})  # the run exists
    _warm(moto_stack)
    body: dict[str, Any] = {
        "sessionId": "budget-gate",
        "prompt": "Deploy?",
        "schema": {"type": "enum", "enum": ["go", "stop"]},
    }
    if env is not None:
        body["action"] = {"name": "deploy", "arguments": {"env": env}, "onAllow": "go", "onDeny": "stop"}
    (code, created), calls = call_log.measure(lambda: _api(moto_stack, "POST", "/api/v1/interrupts", body))
    assert code == 201 and created["status"] == status, created
    if status == "answered":  # nobody notified
        assert "sns.Publish" not in calls, calls
    _check(budget, calls)


def test_an_away_and_a_delegates_vote_stay_in_budget(call_log: CallLog, moto_stack: MotoStack) -> None:
    """`_api`'s operator (its principal: the ARN): its own away, then a vote in its own seat and one as
    op-2's delegate, each on a pause needing two approvals (neither releases it)."""
    questions = moto_stack.services.questions
    own = ApprovalPolicy(approvals=2, approvers=[OPERATOR, "op-2"])
    seat = ApprovalPolicy(approvals=2, approvers=["op-2", "op-3"])
    asked = [
        questions.ask("budget-away", AskRequest(node="deploy", question=f"ship {n}?", approval=p), caller="agent")
        for n, p in enumerate((own, seat))
    ]
    _warm(moto_stack)
    until = iso(datetime.now(UTC) + timedelta(days=3))
    body = {"until": until, "delegate": "op-9"}
    (status, _), calls = call_log.measure(lambda: _api(moto_stack, "PUT", "/api/me/away", body))
    assert status == 200
    _check("set away", calls)
    (status, away), calls = call_log.measure(lambda: _api(moto_stack, "GET", "/api/me/away"))
    assert status == 200 and away["away"] is True
    _check("read away", calls)
    (status, away), calls = call_log.measure(lambda: _api(moto_stack, "DELETE", "/api/me/away"))
    assert status == 200 and away["away"] is False
    _check("clear away", calls)

    moto_stack.services.core.store.put_away(Away(operator="op-2", until=until, delegate=OPERATOR, set_at=until))
    votes = [f"/api/runs/budget-away/interactions/{a['interaction_id']}/answer" for a in asked]
    (status, _), in_own_seat = call_log.measure(lambda: _api(moto_stack, "POST", votes[0], {"answer": "approve"}))
    assert status == 200
    (status, _), standing_in = call_log.measure(lambda: _api(moto_stack, "POST", votes[1], {"answer": "approve"}))
    assert status == 200
    assert moto_stack.services.core.store.list_votes("budget-away", asked[1]["interaction_id"])[0].operator == "op-2"
    extra = len(standing_in) - len(in_own_seat)
    assert extra == BUDGETS["delegate's vote"].total, (in_own_seat, standing_in)
    assert "dynamodb.Scan" not in standing_in, standing_in


@pytest.fixture
def vapid_key_file(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> str:
    """Web Push configured as `baton dev` configures it; requested before `moto_stack`, whose handlers read it."""
    from baton.channels.push.web_push import VapidKeys

    path = tmp_path / "vapid.pem"
    path.write_bytes(VapidKeys.generate().private_pem)
    monkeypatch.setenv("BATON_VAPID_KEY_FILE", str(path))
    return str(path)


def test_a_push_subscription_and_a_reassign_that_pushes_stay_in_budget(
    call_log: CallLog, vapid_key_file: str, moto_stack: MotoStack
) -> None:
    from baton.domain.interrupt_spec import InterruptSpec
    from tests.push_service import PushService

    created, _ = moto_stack.services.interrupts.create(
        InterruptSpec(session_id="budget-push", prompt="deploy?"), caller="agent"
    )
    _warm(moto_stack)
    with PushService() as service:
        browser = service.browser()
        (status, body), calls = call_log.measure(
            lambda: _api(moto_stack, "POST", "/api/me/push-subscriptions", browser.subscription)
        )
        assert status == 201, body
        _check("push subscribe", calls)
        (status, again), calls = call_log.measure(
            lambda: _api(moto_stack, "POST", "/api/me/push-subscriptions", browser.subscription)
        )
        assert (status, again) == (200, body)
        _check("push subscribe", calls)

        path = f"/api/v1/interrupts/{created.interaction_id}/reassign"
        (status, body), calls = call_log.measure(lambda: _api(moto_stack, "POST", path, {"to": OPERATOR}))
        assert status == 200 and body["interrupt"]["claimedBy"] == OPERATOR, body
        _check("reassign with a push", calls)
        payload = service.received(count=1, timeout=10)[0].payload
        assert payload["reason"] == "assigned" and payload["kind"] == "interrupt"
        assert payload["interaction_id"] == created.interaction_id and payload["one_tap"] == []  # needs its page

        # The push service no longer serves it (410): the subscription is deleted, the reassign still made.
        service.gone.add(browser.endpoint.removeprefix(service.url))
        back = _api(moto_stack, "POST", path, {"to": "op-2"})
        assert back[0] == 200, back
        status, body = _api(moto_stack, "POST", path, {"to": OPERATOR})
        assert status == 200, body
        assert _api(moto_stack, "GET", "/api/me/push-subscriptions") == (200, {"subscriptions": []})


@pytest.fixture
def passkeys_on(monkeypatch: pytest.MonkeyPatch) -> None:
    """Passkeys configured before the stack's services are built (requested before `moto_stack`)."""
    monkeypatch.setenv("BATON_WEBAUTHN_RP_ID", "inbox.example.test")
    monkeypatch.setenv("BATON_WEBAUTHN_ORIGINS", "https://inbox.example.test")


def test_a_high_risk_approve_with_a_passkey_stays_in_budget(
    call_log: CallLog, passkeys_on: None, moto_stack: MotoStack
) -> None:
    from tests.passkey_authenticator import SoftAuthenticator

    device = SoftAuthenticator("https://inbox.example.test")
    status, options = _api(moto_stack, "POST", "/api/me/webauthn/register/options")
    assert status == 200, options
    status, added = _api(
        moto_stack, "POST", "/api/me/webauthn/register", {"credential": device.create(options["options"])}
    )
    assert status == 201, added
    call = {"tool": "run_shell", "arguments": {"command": "make deploy"}}
    body = {"call": call, "risk": "high", "reason": "deploy", "timeout_seconds": 600}
    status, asked = _api(moto_stack, "POST", "/api/runs/budget-passkey/tool-approvals", body)
    assert status == 201, asked
    _warm(moto_stack)
    approve = {"decision": "approve"}
    step_up = {"run_id": "budget-passkey", "interaction_id": asked["interaction_id"], "answer": approve}
    (status, issued), calls = call_log.measure(
        lambda: _api(moto_stack, "POST", "/api/me/webauthn/step-up/options", step_up)
    )
    assert status == 200, issued
    _check("passkey step-up challenge", calls)
    answer = {"answer": approve, "passkey": device.get(issued["options"])}
    path = f"/api/runs/budget-passkey/interactions/{asked['interaction_id']}/answer"
    (status, answered), calls = call_log.measure(lambda: _api(moto_stack, "POST", path, answer))
    assert status == 200 and answered["status"] == "answered", answered
    _check("tool approval approved with a passkey", calls)

    body = {"call": call | {"arguments": {"command": "make lint"}}, "reason": "lint", "timeout_seconds": 600}
    status, plain = _api(moto_stack, "POST", "/api/runs/budget-passkey/tool-approvals", body)  # medium: no passkey
    assert status == 201, plain
    path = f"/api/runs/budget-passkey/interactions/{plain['interaction_id']}/answer"
    (status, answered), plain_calls = call_log.measure(lambda: _api(moto_stack, "POST", path, {"answer": approve}))
    assert status == 200, answered
    assert len(calls) == len(plain_calls) + 3, (calls, plain_calls)  # the passkey's three, nothing else


@pytest.mark.parametrize(
    ("on_timeout", "budget"),
    [(None, "tool await timed out"), ("use_question_defaults", "tool await timed out with the questions' defaults")],
)
def test_a_tool_awaits_timeout_stays_in_budget(
    call_log: CallLog, moto_stack: MotoStack, on_timeout: str | None, budget: str
) -> None:
    from baton.contracts import AwaitRequest
    from tests.conftest import FixedClock

    questions, run_id = moto_stack.services.questions, "budget-tool-await"
    questions.ask(run_id, AskRequest(node="draft", question="Which DB?"), caller="agent")
    body = {"timeout_seconds": 30} | ({"on_timeout": on_timeout} if on_timeout else {})
    waiting = questions.await_tool(run_id, AwaitRequest.model_validate(body), caller="agent")
    assert waiting.status == "pending"
    clock = FixedClock(datetime.now(UTC))
    clock.advance(60)
    moto_stack.services.core.clock = clock
    ended, calls = call_log.measure(lambda: questions.time_out_tool_await(run_id, waiting.interaction_id))
    assert ended is True
    _check(budget, calls)


def test_the_answer_completing_a_tool_await_stays_in_budget(call_log: CallLog, moto_stack: MotoStack) -> None:
    from baton.contracts import AwaitRequest

    questions, run_id = moto_stack.services.questions, "budget-tool-await-answer"
    asked = questions.ask(run_id, AskRequest(node="draft", question="Which DB?"), caller="agent")
    waiting = questions.await_tool(run_id, AwaitRequest(timeout_seconds=30), caller="agent")
    assert waiting.status == "pending"
    _warm(moto_stack)
    path = f"/api/runs/{run_id}/interactions/{asked.interaction_id}/answer"
    (status, body), calls = call_log.measure(lambda: _api(moto_stack, "POST", path, {"answer": "postgres"}))
    assert status == 200, body
    assert moto_stack.services.core.require_run(run_id).status == "running"  # the await no longer holds it
    _check("answer completing a tool await", calls)


def test_a_tool_await_started_stays_in_budget(call_log: CallLog, moto_stack: MotoStack) -> None:
    from baton.contracts import AwaitRequest

    questions, run_id = moto_stack.services.questions, "budget-tool-await-start"
    questions.ask(run_id, AskRequest(node="draft", question="Which DB?"), caller="agent")
    request = AwaitRequest(timeout_seconds=30)
    waiting, calls = call_log.measure(lambda: questions.await_tool(run_id, request, caller="agent"))
    assert waiting.status == "pending"
    _check("tool await started", calls)
