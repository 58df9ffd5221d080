"""Faults moto never makes (tests/integration/faults.py), through the real adapters and the API handler.

Each targeted test queues one fault where AWS can return it and checks that Baton's call still does its
work once, with its attempts counted: a single write refused for a transaction on its item, a
transaction cancelled for a conflict on one of its items. The seeded job drives questions, answers,
resumes and interrupts through the API with faults at a fixed rate and checks that no answer is lost or
doubled and that every retry is bounded."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import boto3
import pytest
from botocore.retries.standard import ExponentialBackoff

from baton.adapters.clients import MAX_ATTEMPTS
from baton.contracts import AskRequest
from baton.domain.approval import ApprovalPolicy
from baton.domain.interrupt_spec import InterruptSpec
from baton.local.http_adapter import to_proxy_event
from tests.conftest import wait_for
from tests.integration.faults import (
    CANCELLED_FOR_CONFLICT,
    LAMBDA_THROTTLED,
    THROTTLED,
    THROUGHPUT_EXCEEDED,
    TRANSACTION_CONFLICT,
    FaultInjector,
    on_every_client,
)

if TYPE_CHECKING:
    from collections.abc import Iterator

    from tests.integration.conftest import MotoStack

OPERATOR = "arn:aws:sts::123456789012:assumed-role/operators/op-1"


@pytest.fixture
def faults(monkeypatch: pytest.MonkeyPatch) -> Iterator[FaultInjector]:
    """Every botocore client created while the test runs gets the injector. Requested before
    `moto_stack`, so the stack's clients and its handler copies' get it too. botocore's backoff is
    computed as always and not slept (the retries are counted, not timed)."""
    computed = ExponentialBackoff.delay_amount

    def unslept(self: ExponentialBackoff, context: Any) -> float:
        computed(self, context)
        return 0.0

    monkeypatch.setattr(ExponentialBackoff, "delay_amount", unslept)
    yield on_every_client(monkeypatch)


def _api(stack: MotoStack, method: str, path: str, body: Any = None, caller: str = OPERATOR) -> tuple[int, Any]:
    raw = json.dumps(body).encode() if body is not None else b""
    event = to_proxy_event(method, path, {"Content-Type": "application/json"}, raw, "10.0.0.1")
    event["requestContext"]["identity"]["userArn"] = caller
    payload, errored = stack.dispatcher.invoke("api", event)
    assert not errored, payload
    return payload["statusCode"], json.loads(payload["body"])


def _events(stack: MotoStack, run_id: str) -> Counter[str]:
    return Counter(str(e.type) for e in stack.services.core.store.list_events(run_id, limit=1000))


def test_single_write_refused_for_a_transaction_is_retried(faults: FaultInjector, moto_stack: MotoStack) -> None:
    """DynamoDB refuses a PutItem on an item a transaction is writing (TransactionConflictException, HTTP
    400), and botocore's standard mode does not retry it: Baton's DynamoDB client does, as throttling."""
    questions = moto_stack.services.questions
    faults.queue("dynamodb.PutItem", TRANSACTION_CONFLICT)
    with faults.active():
        asked = questions.ask("conflict-put", AskRequest(node="draft", question="Which DB?"), caller="agent")
    assert [q.interaction_id for q in questions.pending("conflict-put")] == [asked["interaction_id"]]
    assert faults.injected == {"dynamodb.PutItem TransactionConflictException": 1}
    assert faults.attempts("dynamodb.PutItem")[0] == 2  # refused, then written


def test_interrupt_whose_transaction_met_a_conflict_is_created(faults: FaultInjector, moto_stack: MotoStack) -> None:
    """A new interrupt (its item and its id's pointer in one transaction) cancelled for TransactionConflict
    was reported as "already exists" (409) and never stored. A cancelled transaction wrote nothing, so it
    is sent again."""
    interrupts = moto_stack.services.interrupts
    faults.queue("dynamodb.TransactWriteItems", CANCELLED_FOR_CONFLICT)
    with faults.active():
        created, _ = interrupts.create(InterruptSpec(session_id="conflict-int", prompt="deploy?"), caller="agent")
    stored = moto_stack.services.core.store.find_interaction(created.interaction_id)
    assert stored is not None and stored.state.status == "pending"
    assert faults.attempts("dynamodb.TransactWriteItems") == [1, 1]  # cancelled, then sent again


def test_answer_whose_transaction_met_a_conflict_is_recorded_once(faults: FaultInjector, moto_stack: MotoStack) -> None:
    """The deciding transaction of an answer cancelled for TransactionConflict on the question's item is
    sent again as it was, and the answer recorded once. (Before the transaction's own retry, the answer's
    scope guard turned the conflict into a fresh read and a second decision: it passed then too.)"""
    asked = moto_stack.services.questions.ask(
        "conflict-answer", AskRequest(node="draft", question="Which?"), caller="agent"
    )
    path = f"/api/runs/conflict-answer/interactions/{asked['interaction_id']}/answer"
    _api(moto_stack, "GET", "/api/runs/conflict-answer/interactions/pending")  # the handler copy is warm
    faults.queue("dynamodb.TransactWriteItems", replace(CANCELLED_FOR_CONFLICT, item=0))  # the question's item
    with faults.active():
        status, body = _api(moto_stack, "POST", path, {"answer": "postgres"})
    assert status == 200 and body["status"] == "answered", body
    assert faults.attempts("dynamodb.TransactWriteItems") == [1, 1]
    answered = moto_stack.services.core.store.get_interaction("conflict-answer", asked["interaction_id"])
    assert answered is not None and answered.state.answer == "postgres"
    events = moto_stack.services.core.store.list_events("conflict-answer", limit=100)
    assert [str(e.type) for e in events].count("interaction_answered") == 1


def test_claim_whose_transaction_met_a_conflict_is_taken(faults: FaultInjector, moto_stack: MotoStack) -> None:
    """A claim's transaction (the interrupt's conditional put and its decision chained on the run's log)
    cancelled for TransactionConflict on the interrupt's item was a 500; it is sent again and the claim
    holds."""
    created, _ = moto_stack.services.interrupts.create(
        InterruptSpec(session_id="conflict-claim", prompt="deploy?"), caller="agent"
    )
    _api(moto_stack, "GET", "/api/runs/conflict-claim/interactions/pending")  # the handler copy is warm
    faults.queue("dynamodb.TransactWriteItems", replace(CANCELLED_FOR_CONFLICT, item=0))
    with faults.active():
        status, body = _api(moto_stack, "POST", f"/api/v1/interrupts/{created.interaction_id}/claim", {})
    assert status == 200 and body["interrupt"]["claimedBy"] == OPERATOR, body
    assert faults.attempts("dynamodb.TransactWriteItems") == [1, 1]
    events = moto_stack.services.core.store.list_events("conflict-claim", limit=100)
    assert [str(e.type) for e in events].count("interrupt_claimed") == 1


def test_vote_whose_tally_stayed_in_conflict_is_read_again_and_counted_once(
    faults: FaultInjector, moto_stack: MotoStack
) -> None:
    """A quorum vote's transaction cancelled for TransactionConflict on its tally (item 1: every vote on
    the pause updates it) past the transaction's own retries: a race like a lost head, so the vote reads
    the head again and is sent once more (the head-race rule alone would have raised it as a 500)."""
    questions = moto_stack.services.questions
    policy = ApprovalPolicy(approvals=2)
    iid = questions.ask("conflict-vote", AskRequest(node="deploy", question="ship?", approval=policy), caller="agent")[
        "interaction_id"
    ]
    faults.queue("dynamodb.TransactWriteItems", *[replace(CANCELLED_FOR_CONFLICT, item=1)] * 3)
    with faults.active():
        voted = questions.answer("conflict-vote", iid, "approve", caller="op-1")
    assert voted["status"] == "pending", voted
    assert faults.attempts("dynamodb.TransactWriteItems") == [1, 1, 1, 1]  # 3 in conflict, then written
    store = moto_stack.services.core.store
    assert [v.operator for v in store.list_votes("conflict-vote", iid)] == ["op-1"]
    assert store.get_tally("conflict-vote", iid).approvals == 1
    assert _events(moto_stack, "conflict-vote")["approval_recorded"] == 1


def test_resume_whose_transaction_met_a_conflict_resumes_once(faults: FaultInjector, moto_stack: MotoStack) -> None:
    """A run's resume at a human pause whose deciding transaction was cancelled for TransactionConflict on
    the pause's item: sent again, the run resumed once (its guard made it a second decision before)."""
    runs = moto_stack.services.runs
    runs.start("human_pause", {"prompt": "Ship?", "timeout_seconds": 60}, run_id="conflict-pause", caller="op")
    wait_for(lambda: runs.get("conflict-pause")["status"] == "paused_waiting_human")
    _api(moto_stack, "GET", "/api/runs/conflict-pause/interactions/pending")
    faults.queue("dynamodb.TransactWriteItems", replace(CANCELLED_FOR_CONFLICT, item=0))
    with faults.active():
        status, body = _api(moto_stack, "POST", "/api/runs/conflict-pause/resume", {"answers": {"ship": True}})
    assert status == 200 and body["resumed"] is True, body
    assert faults.attempts("sfn.SendTaskSuccess") == [1]
    events = moto_stack.services.core.store.list_events("conflict-pause", limit=100)
    assert [str(e.type) for e in events].count("run_resumed") == 1


def test_answer_still_throttled_after_the_retries_is_a_503_to_send_again(
    faults: FaultInjector, moto_stack: MotoStack
) -> None:
    """DynamoDB throttling every attempt of the answer's read (botocore gives up after MAX_ATTEMPTS) was
    an unhandled exception: the Lambda failed and API Gateway answered 502 with no Baton error. It is a
    503 `service_busy` with Retry-After; the client sends the answer again and it is recorded once."""
    asked = moto_stack.services.questions.ask(
        "throttled-answer", AskRequest(node="draft", question="Which?"), caller="agent"
    )
    path = f"/api/runs/throttled-answer/interactions/{asked['interaction_id']}/answer"
    _api(moto_stack, "GET", "/api/runs/throttled-answer/interactions/pending")  # the handler copy is warm
    faults.queue("dynamodb.Query", *[THROUGHPUT_EXCEEDED] * MAX_ATTEMPTS)
    with faults.active():
        status, body = _api(moto_stack, "POST", path, {"answer": "postgres"})
        assert status == 503 and body["error"] == "service_busy", body
        assert body["reason"] == "ProvisionedThroughputExceededException" and body["operation"] == "Query", body
        assert faults.attempts("dynamodb.Query") == [MAX_ATTEMPTS]
        status, body = _api(moto_stack, "POST", path, {"answer": "postgres"})
    assert status == 200 and body["status"] == "answered", body
    assert _events(moto_stack, "throttled-answer")["interaction_answered"] == 1


def test_claim_whose_transaction_stays_throttled_is_a_503_to_send_again(
    faults: FaultInjector, moto_stack: MotoStack
) -> None:
    """A chained write (a claim: its decision and the head's advance) throttled past botocore's attempts
    is not a cancelled transaction: it has no cancellation codes, and the head-race check read the last
    of none (an IndexError, a 500). It is the throttling's own 503 `service_busy`; sent again, it holds."""
    created, _ = moto_stack.services.interrupts.create(
        InterruptSpec(session_id="throttled-claim", prompt="deploy?"), caller="agent"
    )
    path = f"/api/v1/interrupts/{created.interaction_id}/claim"
    _api(moto_stack, "GET", "/api/runs/throttled-claim/interactions/pending")  # the handler copy is warm
    faults.queue("dynamodb.TransactWriteItems", *[THROUGHPUT_EXCEEDED] * MAX_ATTEMPTS)
    with faults.active():
        status, body = _api(moto_stack, "POST", path, {})
        assert status == 503 and body["error"] == "service_busy", body
        assert faults.attempts("dynamodb.TransactWriteItems") == [MAX_ATTEMPTS]
        status, body = _api(moto_stack, "POST", path, {})
    assert status == 200 and body["interrupt"]["claimedBy"] == OPERATOR, body
    assert _events(moto_stack, "throttled-claim")["interrupt_claimed"] == 1


def test_lambda_invoke_throttled_is_retried_within_the_attempts(faults: FaultInjector, moto_stack: MotoStack) -> None:
    """Lambda's TooManyRequestsException (HTTP 429) on the Slack worker's asynchronous invoke: botocore's
    standard mode retries it, MAX_ATTEMPTS attempts at most, then raises it as the invoke's error."""
    from botocore.exceptions import ClientError

    from baton.adapters.clients import CLIENT_CONFIG
    from baton.adapters.slack import LambdaJobs
    from baton.channels.slack.jobs import SlackJob

    jobs = LambdaJobs(boto3.client("lambda", config=CLIENT_CONFIG), "no-such-worker")
    job = SlackJob(action="refuse", slack_user="U1", run_id="r1", interaction_id="i1")
    faults.queue("lambda.Invoke", LAMBDA_THROTTLED, LAMBDA_THROTTLED)
    with faults.active(), pytest.raises(ClientError) as reached:
        jobs.submit(job)  # throttled twice, then Lambda's own answer: the worker does not exist
    assert reached.value.response["Error"]["Code"] == "ResourceNotFoundException"
    faults.queue("lambda.Invoke", *[LAMBDA_THROTTLED] * MAX_ATTEMPTS)
    with faults.active(), pytest.raises(ClientError) as throttled:
        jobs.submit(job)
    assert throttled.value.response["Error"]["Code"] == "TooManyRequestsException"
    assert faults.attempts("lambda.Invoke") == [3, MAX_ATTEMPTS]


def _execution_ends(stack: MotoStack, arn: str) -> str:
    sfn = stack.clients["stepfunctions"]
    wait_for(lambda: sfn.describe_execution(executionArn=arn)["status"] != "RUNNING")
    return str(sfn.describe_execution(executionArn=arn)["status"])


def _parked(stack: MotoStack, arn: str) -> bool:
    """The park Lambda returned (its TaskSubmitted is in the history): nothing but the test sends its token."""
    history = stack.clients["stepfunctions"].get_execution_history(executionArn=arn, maxResults=1000)["events"]
    return any(event["type"] == "TaskSubmitted" for event in history)


def test_resume_whose_send_stays_throttled_is_stored_with_its_delivery_pending(
    faults: FaultInjector, moto_stack: MotoStack
) -> None:
    """Issue 28 item 10: Step Functions throttling StartExecution (retried by botocore) and then every
    attempt of a resume's SendTaskSuccess. The resume is stored, so the API answers 202 with its delivery
    pending, not an error (it was a 503, a 502 before that); a retry meanwhile gets the same 202 and the
    reconciler's pass sends it: the run is resumed once and ends. A repeat afterwards gets the 200."""
    runs = moto_stack.services.runs
    faults.queue("sfn.StartExecution", THROTTLED, THROTTLED)
    with faults.active():
        run = runs.start(
            "human_pause", {"prompt": "Ship?", "timeout_seconds": 60}, run_id="throttled-send", caller="op"
        )
    assert faults.attempts("sfn.StartExecution") == [3]
    wait_for(lambda: runs.get("throttled-send")["status"] == "paused_waiting_human")
    _api(moto_stack, "GET", "/api/runs/throttled-send/interactions/pending")  # the handler copy is warm
    faults.queue("sfn.SendTaskSuccess", *[THROTTLED] * (2 * MAX_ATTEMPTS))
    with faults.active():
        status, body = _api(moto_stack, "POST", "/api/runs/throttled-send/resume", {"answers": {"ship": True}})
        assert status == 202 and body["delivery"] == "pending" and body["resumed"] is False, body
        status, body = _api(moto_stack, "POST", "/api/runs/throttled-send/resume", {"answers": {"ship": True}})
        assert status == 202 and body["delivery"] == "pending", body  # still unsent: the same truth
    assert faults.attempts("sfn.SendTaskSuccess") == [MAX_ATTEMPTS, MAX_ATTEMPTS]
    [stored] = moto_stack.services.core.store.list_run_interactions("throttled-send", kind="ask")
    assert stored.state.status == "answered" and stored.state.answer == {"ship": True}
    released = moto_stack.services.reconciler.reconcile()["released"]
    assert [(r["run_id"], r["kind"]) for r in released] == [("throttled-send", "ask")]
    status, body = _api(moto_stack, "POST", "/api/runs/throttled-send/resume", {"answers": {"ship": True}})
    assert status == 200 and body["resumed"] is True and body["delivery"] == "delivered", body
    assert _execution_ends(moto_stack, run.execution_arn or "") == "SUCCEEDED"
    events = _events(moto_stack, "throttled-send")
    assert (events["interaction_answered"], events["run_resumed"]) == (1, 1), events


def test_an_answer_whose_gate_send_stays_throttled_is_a_202_and_the_reconciler_releases_the_gate(
    faults: FaultInjector, moto_stack: MotoStack
) -> None:
    """The answer that completes an await gate's scope, its SendTaskSuccess throttled past the retries:
    202, delivery pending, the gate not in `released`; the reconciler releases it once, the run ends."""
    services = moto_stack.services
    run = services.runs.start(
        "await_answers",
        {"timeout_seconds": 60, "questions": [{"question": "Q?"}]},
        run_id="throttled-gate",
        caller="op",
    )
    wait_for(lambda: _parked(moto_stack, run.execution_arn or ""))
    [question] = services.questions.pending("throttled-gate")
    path = f"/api/runs/throttled-gate/interactions/{question.interaction_id}/answer"
    _api(moto_stack, "GET", "/api/runs/throttled-gate/interactions/pending")  # the handler copy is warm
    faults.queue("sfn.SendTaskSuccess", *[THROTTLED] * MAX_ATTEMPTS)
    with faults.active():
        status, body = _api(moto_stack, "POST", path, {"answer": "yes"})
    assert status == 202 and body["delivery"] == "pending", body
    assert (body["status"], body["resumed"], body["released"]) == ("answered", False, []), body
    assert services.reconciler.reconcile().wire()["released"] == [
        {"run_id": "throttled-gate", "gate": "await", "kind": "await"}
    ]
    assert services.reconciler.reconcile()["released"] == []
    assert _execution_ends(moto_stack, run.execution_arn or "") == "SUCCEEDED"
    assert _events(moto_stack, "throttled-gate")["await_released"] == 1


def test_an_interrupt_resume_whose_send_stays_throttled_is_a_202_and_the_reconciler_delivers_it(
    faults: FaultInjector, moto_stack: MotoStack
) -> None:
    """A hosted interrupt's resume, its SendTaskSuccess throttled past the retries: 202, delivery
    pending (the value and edits stored); the reconciler sends them, the workflow ends with them."""
    services = moto_stack.services
    run = services.runs.start(
        "interrupt", {"prompt": "Target?", "timeout_seconds": 60}, run_id="throttled-int", caller="op"
    )
    wait_for(lambda: _parked(moto_stack, run.execution_arn or ""))
    [interrupt] = services.interrupts.list_page(status="pending", session_id="throttled-int")[0]
    path = f"/api/v1/interrupts/{interrupt.interaction_id}/resume"
    _api(moto_stack, "GET", f"/api/v1/interrupts/{interrupt.interaction_id}")  # the handler copy is warm
    faults.queue("sfn.SendTaskSuccess", *[THROTTLED] * MAX_ATTEMPTS)
    with faults.active():
        status, body = _api(moto_stack, "POST", path, {"input": "staging"})
    assert status == 202 and body["delivery"] == "pending" and body["resumed"] is False, body
    assert body["interrupt"]["status"] == "answered", body
    released = services.reconciler.reconcile()["released"]
    assert [(r["run_id"], r["kind"]) for r in released] == [("throttled-int", "interrupt")]
    assert _execution_ends(moto_stack, run.execution_arn or "") == "SUCCEEDED"
    output = json.loads(
        moto_stack.clients["stepfunctions"].describe_execution(executionArn=run.execution_arn)["output"]
    )
    assert output["input"] == "staging"


# ---- the seeded job: many requests, faults at a fixed rate -------------------------------------------------

FAULT_RATE = 0.25  # of the attempts at the operations FAULTS names (seeded: the same faults every run)
RESENDS = 3  # a client sends a request again on a 503 (service_busy), as its Retry-After says
QUESTION_RUNS, QUESTIONS, INTERRUPTS, PAUSES = 3, 5, 5, 2


def _send(stack: MotoStack, busy: Counter[str], method: str, path: str, body: Any) -> tuple[int, Any]:
    """A request as a client sends it: again while the answer is 503 (counted in `busy`)."""
    for _ in range(RESENDS + 1):
        status, out = _api(stack, method, path, body)
        if status != 503:
            return status, out
        assert out["error"] == "service_busy", out
        busy[f"{method} {path.rsplit('/', 1)[-1]} {out['reason']}"] += 1
    return status, out


def _questions_answered(stack: MotoStack, busy: Counter[str]) -> dict[str, str]:
    """QUESTIONS asked on each of QUESTION_RUNS runs, then each answered: interaction id → run id."""
    asked: dict[str, str] = {}
    for run_id in (f"faulted-q-{n}" for n in range(QUESTION_RUNS)):
        for n in range(QUESTIONS):
            question = {"node": "draft", "question": f"question {n}?"}
            status, body = _send(stack, busy, "POST", f"/api/runs/{run_id}/questions", question)
            assert status == 201, body
            asked[body["interaction_id"]] = run_id
    for iid, run_id in asked.items():
        status, body = _send(stack, busy, "POST", f"/api/runs/{run_id}/interactions/{iid}/answer", {"answer": iid})
        assert status == 200, body
    return asked


def _interrupts_resumed(stack: MotoStack, busy: Counter[str]) -> list[str]:
    """INTERRUPTS created (each with a key, as an agent that may send it twice does), claimed, resumed."""
    interrupts = []
    for n in range(INTERRUPTS):
        spec = {"sessionId": f"faulted-int-{n}", "prompt": "deploy?", "key": f"deploy-{n}"}
        status, body = _send(stack, busy, "POST", "/api/v1/interrupts", spec)
        assert status in (200, 201), body
        interrupts.append(body["id"])
    for iid in interrupts:
        status, body = _send(stack, busy, "POST", f"/api/v1/interrupts/{iid}/claim", {})
        assert status == 200, body
        status, body = _send(stack, busy, "POST", f"/api/v1/interrupts/{iid}/resume", {"input": f"go {iid}"})
        assert status == 200, body
    return interrupts


def test_no_answer_lost_or_doubled_under_injected_faults(faults: FaultInjector, moto_stack: MotoStack) -> None:
    """Questions asked and answered; interrupts created, claimed and resumed; hosted human pauses started
    (through the service: StartExecution) and resumed: through the API handler, with a quarter of the
    attempts at DynamoDB and Step Functions answered with a fault. Every request ends 200 (after a 503
    resend where AWS stayed busy past the retries), every decision is recorded once with its value, and
    no call is tried more than MAX_ATTEMPTS times."""
    services, store = moto_stack.services, moto_stack.services.core.store
    busy: Counter[str] = Counter()
    faults.rate = FAULT_RATE
    pauses = [f"faulted-pause-{n}" for n in range(PAUSES)]
    with faults.active():
        for run_id in pauses:
            services.runs.start("human_pause", {"prompt": "Ship?", "timeout_seconds": 60}, run_id=run_id, caller="op")
        asked = _questions_answered(moto_stack, busy)
        interrupts = _interrupts_resumed(moto_stack, busy)
    for run_id in pauses:
        wait_for(lambda run_id=run_id: services.runs.get(run_id)["status"] == "paused_waiting_human")
    # One throttled send for sure: the seeded draw depends on how many calls came before (a path that
    # gains a call moves it), and the check below wants a send fault, whatever the draw.
    faults.queue("sfn.SendTaskSuccess", THROTTLED)
    with faults.active():
        for run_id in pauses:
            status, body = _send(moto_stack, busy, "POST", f"/api/runs/{run_id}/resume", {"answers": {"ship": True}})
            assert status == 200 and body["resumed"] is True, body

    for iid, run_id in asked.items():  # none lost: each question holds its own answer
        answered = store.get_interaction(run_id, iid)
        assert answered is not None and answered.state.answer == iid, answered
    for run_id in {*asked.values()}:  # none doubled: QUESTIONS questions and answers a run, no more
        events = _events(moto_stack, run_id)
        assert events["human_input_requested"] == QUESTIONS and events["interaction_answered"] == QUESTIONS, events
    for n, iid in enumerate(interrupts):
        resumed = store.find_interaction(iid)
        assert resumed is not None and resumed.state.status == "answered", resumed
        events = _events(moto_stack, f"faulted-int-{n}")
        assert (events["human_input_requested"], events["interrupt_claimed"], events["interrupt_resumed"]) == (1, 1, 1)
    for run_id in pauses:
        assert _events(moto_stack, run_id)["run_resumed"] == 1
        wait_for(lambda run_id=run_id: services.runs.get(run_id)["status"] == "succeeded")

    attempts = Counter(n for _, n in faults.calls)
    assert max(attempts) <= MAX_ATTEMPTS, attempts  # every retry bounded
    injected = {name.split(" ", 1)[1] for name in faults.injected}
    expected = {f.name for f in (TRANSACTION_CONFLICT, CANCELLED_FOR_CONFLICT, THROUGHPUT_EXCEEDED, THROTTLED)}
    assert expected <= injected, faults.injected
    assert any(name.startswith("sfn.") for name in faults.injected), faults.injected
    print(f"calls by attempts {dict(attempts)}; injected {dict(faults.injected)}; resent on 503 {dict(busy)}")
