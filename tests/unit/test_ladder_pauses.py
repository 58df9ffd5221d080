"""Issue 13 item 3 on every pause (round 5): async questions, await gates, blocking asks and SDK
interrupts walk the same one timer machine (`baton.services.deadlines`), on in-memory ports with an
injected clock and the timers recorded.

- a question's ladder reminds and escalates about that question; its default is taken at its own
  deadline as `timed_out_default` (nobody's answer), lands in the node's queue and releases the await gate
  it completes; a ladder needs the question's own `timeout_seconds` (422), a quorum takes no default;
- an await gate's ladder reminds and escalates about its still-unanswered questions; at its deadline
  `use_question_defaults` gives each unanswered question its own default (the gate is released), and one
  without a default fails the gate as today, named in the cause;
- a blocking ask and an SDK interrupt (no gate parked) get their own timer, named after the interaction,
  so a retried create starts none twice.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from baton.contracts import AskRequest, AwaitAnswered, AwaitPending, AwaitRequest, BlockingAskRequest, ResumeInterrupt
from baton.domain.approval import ApprovalPolicy
from baton.domain.deadline import INTERACTION_GATE
from baton.domain.gate_payloads import GateDeadlinePayload
from baton.domain.interrupt_spec import InterruptSpec
from baton.domain.ladder import AnswerCheck, Ladder
from baton.errors import GoneError, ValidationFailedError
from baton.services.asks import AskService
from baton.services.deadline_timers import Deadlines
from baton.services.interrupts import InterruptService
from baton.services.questions import QuestionService
from baton.services.reconciler import Reconciler
from tests.fakes import RecordingDeadlineTimers

if TYPE_CHECKING:
    from baton.services.core import Core
    from tests.conftest import FixedClock
    from tests.fakes import RecordingNotifier, RecordingTaskTokens
    from tests.fakes.timers import StartedTimer

QUESTION_LADDER = Ladder(remind_after=10, escalate_after=20, escalate_to=["slack"], on_timeout={"default": "no"})


@pytest.fixture
def timers(core: Core) -> RecordingDeadlineTimers:
    core.timers = RecordingDeadlineTimers()
    return core.timers


@pytest.fixture
def questions(core: Core, timers: RecordingDeadlineTimers) -> QuestionService:
    core.ensure_run("r1")
    return QuestionService(core)


def _deadlines(core: Core, clock: FixedClock) -> Deadlines:
    reconciler = Reconciler(core)
    return Deadlines(
        reconciler,
        sleep=clock.advance,
    )


def _walk(core: Core, clock: FixedClock, started: StartedTimer) -> list[dict[str, Any]]:
    """Do what the timer machine does until it ends: wait, fire, take the returned next step."""
    fired: list[dict[str, Any]] = []
    payload, wait_seconds = started.payload, started.wait_seconds
    while True:
        clock.advance(wait_seconds)
        result = _deadlines(core, clock).fire(payload).model_dump(mode="json", exclude_unset=True)  # the task's output
        fired.append(result)
        nxt = result.get("next")
        if not nxt:
            return fired
        payload, wait_seconds = GateDeadlinePayload.model_validate(nxt), nxt["wait_seconds"]


def _types(core: Core, run_id: str = "r1") -> list[str]:
    return [e.type for e in core.store.list_events(run_id, limit=1000)]


def _notified(core: Core) -> list[tuple[str, list[str]]]:
    notifier: RecordingNotifier = core.notifier  # type: ignore[assignment]
    return [(n.event, list(n.channels)) for n in notifier.notifications]


def _sent(core: Core) -> list[tuple[str, str, dict[str, Any]]]:
    tokens: RecordingTaskTokens = core.tokens  # type: ignore[assignment]
    return list(tokens.sent)


def _ask(questions: QuestionService, ladder: Ladder | None = QUESTION_LADDER, **extra: Any) -> str:
    request = AskRequest(
        node="planner",
        question="Use the fast path?",
        options=["yes", "no"],
        timeout_seconds=extra.pop("timeout_seconds", 60),
        **(ladder.model_dump(exclude_defaults=True) if ladder else {}),
        **extra,
    )
    posted = questions.ask("r1", request, caller="agent")
    return str(posted["interaction_id"])


# ---- async questions ---------------------------------------------------------------------------------
def test_a_question_reminds_escalates_then_takes_its_default_into_the_node_queue_and_releases_the_gate(
    questions: QuestionService, core: Core, clock: FixedClock, timers: RecordingDeadlineTimers
) -> None:
    iid = _ask(questions)
    questions.park_gate(run_id="r1", gate="sync", token="tok-a", timeout_seconds=3600, from_node="planner")
    question_timer = next(t for t in timers.started if t.payload.gate == INTERACTION_GATE)
    assert (question_timer.payload.step, question_timer.wait_seconds) == ("remind", 10)
    assert question_timer.payload.interaction_id == iid

    fired = _walk(core, clock, question_timer)
    assert [f["step"] for f in fired] == ["remind", "escalate", "deadline"]
    assert fired[-1]["reason"] == "timed_out_default"
    types = _types(core)
    assert types.index("reminder_sent") < types.index("escalated") < types.index("timed_out_default")
    assert ("reminder_sent", ["console"]) in _notified(core) and ("escalated", ["slack"]) in _notified(core)
    st = core.store.get_interaction("r1", iid).state  # type: ignore[union-attr]
    assert (st.status, st.answer, st.answered_by, st.outcome) == ("answered", "no", None, "timed_out_default")
    assert "interaction_answered" not in types  # nobody answered
    ((kind, token, output),) = _sent(core)  # the await gate counted it as any answer
    assert (kind, token) == ("success", "tok-a") and [a["answer"] for a in output["answers"]] == ["no"]
    (message,) = questions.drain("r1", "planner")
    assert "A: no" in message.text and "timed_out_default" in message.text
    with pytest.raises(GoneError):  # a person after the default: late (410), kept as answer_late (issue 28)
        questions.answer("r1", iid, "yes", caller="alice")
    assert "answer_late" in _types(core)


def test_a_question_answered_in_time_ends_its_timer_and_nothing_more_is_sent(
    questions: QuestionService, core: Core, clock: FixedClock, timers: RecordingDeadlineTimers
) -> None:
    iid = _ask(questions)
    (timer,) = timers.started
    questions.answer("r1", iid, "yes", caller="alice")
    notified = len(_notified(core))
    fired = _walk(core, clock, timer)
    assert [f["reason"] for f in fired] == ["not_pending"]
    assert len(_notified(core)) == notified and "reminder_sent" not in _types(core)
    assert core.store.get_interaction("r1", iid).state.answered_by == "alice"  # type: ignore[union-attr]


def test_a_question_without_a_default_stays_open_at_its_deadline_for_its_gate_to_decide(
    questions: QuestionService, core: Core, clock: FixedClock, timers: RecordingDeadlineTimers
) -> None:
    iid = _ask(questions, Ladder(remind_after=5))
    (timer,) = timers.started
    fired = _walk(core, clock, timer)
    assert [(f["step"], f.get("next")) for f in fired] == [("remind", None)]  # no deadline step: nothing to take
    assert core.store.get_interaction("r1", iid).state.status == "pending"  # type: ignore[union-attr]


def test_a_question_with_only_a_default_is_timed_for_its_deadline(
    questions: QuestionService, core: Core, clock: FixedClock, timers: RecordingDeadlineTimers
) -> None:
    iid = _ask(questions, Ladder(on_timeout={"default": "yes"}), timeout_seconds=30)
    (timer,) = timers.started
    assert (timer.payload.step, timer.wait_seconds) == ("deadline", 30)
    _walk(core, clock, timer)
    assert core.store.get_interaction("r1", iid).state.outcome == "timed_out_default"  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("ladder", "extra", "path"),
    [
        (QUESTION_LADDER, {"timeout_seconds": None}, "timeout_seconds"),  # a ladder needs its own deadline
        (Ladder(on_timeout={"default": "maybe"}), {}, "on_timeout.default"),  # not one of the options
        (Ladder(remind_after=60), {}, "remind_after"),  # not before the deadline
        (Ladder(on_timeout="use_question_defaults"), {}, "on_timeout"),  # an await gate's, not a question's
        (
            Ladder(on_timeout={"default": "yes"}),
            {"approval": ApprovalPolicy(approvals=2, approve_option="yes")},
            "on_timeout.default",
        ),  # a quorum is met by votes, never by a default
    ],
)
def test_a_question_with_a_ladder_it_cannot_keep_is_a_422_and_nothing_is_stored(
    questions: QuestionService, core: Core, ladder: Ladder, extra: dict[str, Any], path: str
) -> None:
    with pytest.raises(ValidationFailedError) as refused:
        _ask(questions, ladder, **extra)
    assert refused.value.http_status == 422 and refused.value.details["path"] == path
    assert core.store.list_run_interactions("r1") == []


# ---- await gates ---------------------------------------------------------------------------------------
AWAIT_LADDER = Ladder(remind_after=10, escalate_after=20, escalate_to=["email"], on_timeout="use_question_defaults")


def _park_await(questions: QuestionService, ladder: Ladder = AWAIT_LADDER) -> None:
    questions.park_gate(run_id="r1", gate="sync", token="tok-a", timeout_seconds=60, from_node="planner", ladder=ladder)


def test_an_await_gate_reminds_and_escalates_about_its_unanswered_questions_then_takes_their_defaults(
    questions: QuestionService, core: Core, clock: FixedClock, timers: RecordingDeadlineTimers
) -> None:
    first = _ask(questions, None)
    second = _ask(questions, Ladder(on_timeout={"default": "no"}), timeout_seconds=3600)
    questions.answer("r1", first, "yes", caller="alice")
    _park_await(questions)
    gate_timer = next(t for t in timers.started if t.payload.gate == "sync")
    assert (gate_timer.payload.step, gate_timer.wait_seconds) == ("remind", 10)

    fired = _walk(core, clock, gate_timer)
    assert [f.get("step") for f in fired] == ["remind", "escalate", None]  # a wait's deadline: ended
    assert fired[-1]["ended"] is True
    reminders = [e for e in core.store.list_events("r1", limit=100) if e.type in ("reminder_sent", "escalated")]
    assert [(e.type, e.data["interaction_ids"], e.data["channels"]) for e in reminders] == [
        ("reminder_sent", [second], ["console"]),  # only the still-unanswered one
        ("escalated", [second], ["email"]),
    ]
    ((kind, _, output),) = _sent(core)  # released: the unanswered question took its own default
    assert kind == "success" and [a["answer"] for a in output["answers"]] == ["yes", "no"]
    st = core.store.get_interaction("r1", second).state  # type: ignore[union-attr]
    assert (st.answered_by, st.outcome) == (None, "timed_out_default")
    assert core.store.get_interaction("r1", first).state.answered_by == "alice"  # type: ignore[union-attr]


def test_use_question_defaults_still_fails_the_gate_naming_questions_with_no_default(
    questions: QuestionService, core: Core, clock: FixedClock, timers: RecordingDeadlineTimers
) -> None:
    bare = _ask(questions, None)
    defaulted = _ask(questions, Ladder(on_timeout={"default": "no"}), timeout_seconds=3600)
    _park_await(questions, Ladder(on_timeout="use_question_defaults"))
    gate_timer = next(t for t in timers.started if t.payload.gate == "sync")
    assert gate_timer.payload.step == "deadline"
    _walk(core, clock, gate_timer)
    ((kind, _, output),) = _sent(core)
    assert kind == "failure" and bare in output["cause"] and "no declared default" in output["cause"]
    assert defaulted not in output["cause"]
    assert core.store.get_interaction("r1", defaulted).state.outcome == "timed_out_default"  # type: ignore[union-attr]


def test_an_await_gate_without_use_question_defaults_fails_as_today(
    questions: QuestionService, core: Core, clock: FixedClock, timers: RecordingDeadlineTimers
) -> None:
    defaulted = _ask(questions, Ladder(on_timeout={"default": "no"}), timeout_seconds=3600)
    _park_await(questions, Ladder(remind_after=10))
    gate_timer = next(t for t in timers.started if t.payload.gate == "sync")
    _walk(core, clock, gate_timer)
    ((kind, _, output),) = _sent(core)
    assert kind == "failure" and defaulted in output["cause"]
    assert core.store.get_interaction("r1", defaulted).state.outcome != "timed_out_default"  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("ladder", "path"),
    [
        (Ladder(on_timeout={"default": "yes"}), "on_timeout"),  # a gate has no answer of its own
        (Ladder(remind_after=60), "remind_after"),
    ],
)
def test_an_await_gate_ladder_it_cannot_keep_is_refused_at_park(
    questions: QuestionService, core: Core, ladder: Ladder, path: str
) -> None:
    with pytest.raises(ValidationFailedError) as refused:
        _park_await(questions, ladder)
    assert refused.value.details["path"] == path and core.store.get_wait("r1", "sync") is None


def test_the_await_check_refuses_a_default_and_takes_use_question_defaults() -> None:
    Ladder(on_timeout="use_question_defaults").check_for(60, answer_is=AnswerCheck(kind="await"))
    with pytest.raises(ValidationFailedError):
        Ladder(on_timeout="use_question_defaults").check_for(60, answer_is=AnswerCheck(kind="answers"))


# ---- pauses an agent waits at (no gate parked) ---------------------------------------------------------
def test_a_blocking_ask_reminds_and_escalates_with_its_own_timer(
    core: Core, clock: FixedClock, timers: RecordingDeadlineTimers
) -> None:
    core.ensure_run("r1")
    ladder = Ladder(remind_after=5, escalate_after=10, escalate_to=["webhook"])
    asked = AskService(core).ask(
        "r1",
        BlockingAskRequest(
            node="agent", question="Drop it?", timeout_seconds=60, **ladder.model_dump(exclude_defaults=True)
        ),
        caller="agent",
    )
    (timer,) = timers.started
    assert (timer.payload.gate, timer.payload.interaction_id, timer.wait_seconds) == (
        INTERACTION_GATE,
        asked.interaction_id,
        5,
    )
    fired = _walk(core, clock, timer)
    assert [(f["step"], f["reason"]) for f in fired] == [("remind", "sent"), ("escalate", "sent")]
    assert fired[-1]["next"] is None  # its waiter's read settles the deadline (AskService.get)
    assert _types(core)[-2:] == ["reminder_sent", "escalated"]
    assert _notified(core)[-2:] == [("reminder_sent", ["console"]), ("escalated", ["webhook"])]


def test_an_sdk_interrupt_reminds_once_even_when_its_create_is_retried(
    core: Core, clock: FixedClock, timers: RecordingDeadlineTimers
) -> None:
    core.ensure_run("r1")
    interrupts = InterruptService(core)
    spec = InterruptSpec(
        session_id="r1", prompt="Deploy?", key="deploy-1", timeout_ms=60_000, ladder=Ladder(remind_after=5)
    )
    first, created = interrupts.create(spec, caller="agent")
    again, created_again = interrupts.create(spec, caller="agent")  # the SDK retried: the same interrupt
    assert created and not created_again and again.interaction_id == first.interaction_id
    (timer,) = timers.started  # started once
    fired = _walk(core, clock, timer)
    assert [f["reason"] for f in fired] == ["sent"] and _types(core).count("reminder_sent") == 1
    interrupts.resume(first.interaction_id, ResumeInterrupt(input={"ok": True}), caller="alice")
    assert _deadlines(core, clock).fire(timer.payload)["reason"] == "not_pending"  # answered: nothing more


# ---- review gates --------------------------------------------------------------------------------------
class _NoRunner:
    def start(self, token: str, request: Any) -> str:
        raise AssertionError("a default never merges")


def _review_service(core: Core) -> Any:
    from baton.adapters.companion_offline import OfflineCompanion
    from baton.adapters.git_diff import GitDiffSource
    from baton.services.review import ReviewService
    from tests.fakes import MemoryBuildRecords

    return ReviewService(
        core,
        companion=OfflineCompanion,
        runner=_NoRunner,
        records=MemoryBuildRecords(),
        diffs=GitDiffSource(),
        merge_runner_kind="local",
    )


def test_a_review_gate_reminds_then_takes_request_changes_as_timed_out_default_never_an_approval(
    core: Core, clock: FixedClock, timers: RecordingDeadlineTimers, tmp_path: Any
) -> None:
    from baton.cli.demo_repo import create_demo_repo

    core.ensure_run("r1")
    review = _review_service(core)
    repo = create_demo_repo(tmp_path / "repo")
    ladder = {"remind_after": 10, "on_timeout": {"default": "request_changes"}}
    review.first_turn("r1", repo.gate_input(timeout_seconds=60, ladder=ladder))
    iid = review.park("r1", "ship_review", "tok-r", clock.now())["interaction_id"]
    (timer,) = timers.started
    assert (timer.payload.gate, timer.payload.step, timer.wait_seconds) == ("ship_review", "remind", 10)

    reconciler = Reconciler(core, review=lambda: review)
    deadlines = Deadlines(
        reconciler,
        sleep=clock.advance,
    )
    clock.advance(timer.wait_seconds)
    reminded = deadlines.fire(timer.payload)
    assert reminded["reason"] == "sent" and _types(core)[-1] == "reminder_sent"
    nxt = reminded["next"]
    clock.advance(nxt["wait_seconds"])
    ended = deadlines.fire(GateDeadlinePayload.model_validate(nxt))
    assert ended["ended"] is True
    st = core.store.get_interaction("r1", iid).state  # type: ignore[union-attr]
    assert (st.status, st.answered_by, st.outcome) == ("answered", None, "timed_out_default")
    assert st.answer["action"] == "request_changes"
    ((kind, token, output),) = _sent(core)
    assert (kind, token, output["action"], output["answered_by"]) == ("success", "tok-r", "request_changes", None)
    types = _types(core)
    assert "timed_out_default" in types and "interaction_answered" not in types and "review_merged" not in types


@pytest.mark.parametrize("default", ["approve_merge", "force_merge", "reply"])
def test_a_review_gate_refuses_a_default_that_could_merge(default: str, tmp_path: Any) -> None:
    from baton.cli.demo_repo import create_demo_repo
    from baton.domain.review_gate import parse_gate_config

    repo = create_demo_repo(tmp_path / "repo")
    raw = repo.gate_input(timeout_seconds=60, ladder={"on_timeout": {"default": default}})
    with pytest.raises(ValidationFailedError) as refused:
        parse_gate_config(raw, merge_runner="local")
    assert "request_changes" in refused.value.message and "never" in refused.value.message


# ---- `baton check`: await and review gates' literal ladders ---------------------------------------------
def _await_flow(ladder: dict[str, Any]) -> dict[str, Any]:
    from baton.workflows.asl_rules import LAMBDA_RETRIER
    from baton.workflows.gate_states import await_gate_states

    states = await_gate_states("Sync", gate="sync", next=None, from_node="planner", timeout_seconds=60, ladder=ladder)
    asker = {
        "Type": "Task",
        "Resource": "arn:aws:states:::lambda:invoke",
        "Parameters": {"FunctionName": "${AgentArn}", "Payload": {"node": "planner"}},
        "Retry": [LAMBDA_RETRIER],
        "Next": "Sync",
    }
    return {"StartAt": "Plan", "States": {"Plan": asker, **states}}


@pytest.mark.parametrize(
    ("ladder", "code"),
    [
        ({"on_timeout": {"default": "yes"}}, "C261"),  # an await gate has no answer of its own
        ({"remind_after": 90}, "C261"),  # after the 60 s timeout
    ],
)
def test_baton_check_refuses_an_await_gate_ladder_its_park_would_refuse(ladder: dict[str, Any], code: str) -> None:
    from baton.workflows.asl import check_definition

    problems = check_definition(_await_flow(ladder), "flow.asl.json")
    assert [p.code for p in problems] == [code], problems


def test_baton_check_accepts_an_await_gate_ladder_and_the_payload_model_takes_it() -> None:
    from baton.domain.gate_payloads import AwaitGatePayload
    from baton.workflows.asl import check_definition

    ladder = {"remind_after": 10, "escalate_after": 20, "escalate_to": ["slack"], "on_timeout": "use_question_defaults"}
    flow = _await_flow(ladder)
    assert check_definition(flow, "flow.asl.json") == []
    payload = {k: v for k, v in flow["States"]["Sync"]["Parameters"]["Payload"].items() if not k.endswith(".$")}
    parsed = AwaitGatePayload.model_validate(
        {**payload, "token": "t", "run_id": "r1", "gate": "sync", "timeout_seconds": 60}
    )
    assert parsed.ladder is not None and parsed.ladder.on_timeout == "use_question_defaults"


def _review_flow(ladder: dict[str, Any]) -> dict[str, Any]:
    config = {"gate": "ship", "run_branch": "baton/run", "timeout_seconds": 60, "ladder": ladder}
    review = {
        "Type": "Task",
        "Resource": "arn:aws:states:::states:startExecution.sync:2",
        "Parameters": {"StateMachineArn": "${ReviewGateStateMachineArn}", "Input": {"input": config}},
        "End": True,
    }
    return {"StartAt": "Review", "States": {"Review": review}}


@pytest.mark.parametrize(
    ("ladder", "code"),
    [
        ({"on_timeout": {"default": "approve_merge"}}, "C260"),
        ({"on_timeout": {"default": "force_merge"}}, "C260"),
        ({"remind_after": 60}, "C251"),
    ],
)
def test_baton_check_refuses_a_review_default_that_could_merge(ladder: dict[str, Any], code: str) -> None:
    from baton.workflows.asl import check_definition

    problems = check_definition(_review_flow(ladder), "flow.asl.json")
    assert [p.code for p in problems] == [code], problems
    if code == "C260":
        assert "never approve or merge" in problems[0].message


def test_baton_check_accepts_a_review_ladder_with_request_changes() -> None:
    from baton.workflows.asl import check_definition

    ladder = {"remind_after": 10, "on_timeout": {"default": "request_changes"}}
    assert check_definition(_review_flow(ladder), "flow.asl.json") == []


def test_the_ladders_channels_are_the_notification_channels() -> None:
    from typing import get_args

    from baton.domain import ladder
    from baton.notify import model

    assert get_args(ladder.Channel) == get_args(model.Channel)


# ---- the await tool form -------------------------------------------------------------------------------
def test_the_await_tool_reminds_about_pending_questions_then_takes_their_defaults_at_its_expiry(
    questions: QuestionService, core: Core, clock: FixedClock, timers: RecordingDeadlineTimers
) -> None:
    iid = _ask(questions, Ladder(on_timeout={"default": "no"}), timeout_seconds=3600)
    ladder = Ladder(remind_after=5, on_timeout="use_question_defaults")
    pending = questions.await_tool(
        "r1",
        AwaitRequest(timeout_seconds=30, from_="planner", **ladder.model_dump(exclude_defaults=True)),
        caller="agent",
    )
    assert isinstance(pending, AwaitPending) and pending.pending == [iid]
    (tool_timer,) = [t for t in timers.started if t.payload.gate == "tool"]
    assert (tool_timer.payload.step, tool_timer.wait_seconds) == ("remind", 5)
    fired = _walk(core, clock, tool_timer)
    assert fired[0]["reason"] == "sent" and fired[-1] == {"ended": False, "released": False, "reason": "not_pending"}
    reminder = next(e for e in core.store.list_events("r1", limit=100) if e.type == "reminder_sent")
    assert (reminder.data["gate"], reminder.data["interaction_ids"]) == ("tool", [iid])
    st = core.store.get_interaction("r1", iid).state  # type: ignore[union-attr]
    assert (st.outcome, st.answered_by) == ("timed_out_default", None)
    awaiting = core.store.get_interaction("r1", pending["interaction_id"])
    assert awaiting is not None and awaiting.state.status == "answered"  # completed by the default, not timed out
    answered = questions.await_tool("r1", AwaitRequest(timeout_seconds=30, from_="planner"), caller="agent")
    assert isinstance(answered, AwaitAnswered) and [a.answer for a in answered.answers] == ["no"]


def test_the_await_tool_without_defaults_times_out_as_today(
    questions: QuestionService, core: Core, clock: FixedClock, timers: RecordingDeadlineTimers
) -> None:
    _ask(questions, None)
    ladder = Ladder(remind_after=5)
    pending = questions.await_tool(
        "r1",
        AwaitRequest(timeout_seconds=30, from_="planner", **ladder.model_dump(exclude_defaults=True)),
        caller="agent",
    )
    (tool_timer,) = [t for t in timers.started if t.payload.gate == "tool"]
    fired = _walk(core, clock, tool_timer)
    assert fired[-1]["reason"] == "timed_out"
    awaiting = core.store.get_interaction("r1", pending["interaction_id"])
    assert awaiting is not None and awaiting.state.status == "timed_out"


# ---- the REST doors -------------------------------------------------------------------------------------
@pytest.fixture
def api(core: Core, timers: RecordingDeadlineTimers) -> Any:
    """The HTTP API through the real resolver on these in-memory services (as tests/unit/test_ladder.py)."""
    import json

    from baton.api import deps
    from baton.api.app import create_app
    from baton.local.http_adapter import to_proxy_event
    from baton.runtime.settings import Settings
    from baton.runtime.wiring import Services
    from baton.services.runs import RunService

    settings = Settings.model_validate({"BATON_TABLE_NAME": "t", "BATON_LOCAL_API_TOKEN": "local-secret"})
    services = Services(settings=settings, core=core, runs=RunService(core))
    deps.set_services_provider(lambda: services)
    app = create_app()

    def call(method: str, path: str, body: Any = None) -> tuple[int, Any]:
        headers = {"Content-Type": "application/json", "Authorization": "Bearer local-secret"}
        event = to_proxy_event(method, path, headers, json.dumps(body).encode() if body else b"", "127.0.0.1")
        result = app.resolve(event, None)
        return result["statusCode"], json.loads(result["body"]) if result.get("body") else None

    yield call
    deps.set_services_provider(deps._default_provider)


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/api/runs/r9/questions", {"node": "a", "question": "Q?", "remind_after": 5}),  # no timeout_seconds
        ("/api/runs/r9/questions", {"node": "a", "question": "Q?", "timeout_seconds": 60, "escalate_after": 5}),
        ("/api/runs/r9/asks", {"node": "a", "question": "Q?", "timeout_seconds": 60, "escalate_to": ["slack"]}),
        ("/api/runs/r9/asks", {"node": "a", "question": "Q?", "timeout_seconds": 60, "remind_after": 60}),
        ("/api/v1/interrupts", {"sessionId": "r9", "prompt": "Go?", "escalateAfter": 5}),
        ("/api/runs/r9/await", {"timeout_seconds": 60, "on_timeout": {"default": "x"}}),
    ],
)
def test_rest_refuses_a_ladder_it_cannot_keep_with_a_422_and_stores_nothing(
    api: Any, core: Core, path: str, body: dict[str, Any]
) -> None:
    core.ensure_run("r9")
    status, refused = api("POST", path, body)
    assert status == 422, refused
    assert core.store.list_run_interactions("r9") == []


def test_rest_takes_a_ladder_on_a_question_an_ask_an_interrupt_and_starts_their_timers(
    api: Any, core: Core, timers: RecordingDeadlineTimers
) -> None:
    core.ensure_run("r9")
    ladder = {"remind_after": 5, "escalate_after": 10, "escalate_to": ["slack"]}
    status, _ = api("POST", "/api/runs/r9/questions", {"node": "a", "question": "Q?", "timeout_seconds": 60, **ladder})
    assert status == 201
    status, _ = api("POST", "/api/runs/r9/asks", {"node": "b", "question": "Q?", "timeout_seconds": 60, **ladder})
    assert status == 201
    camel = {"remindAfter": 5, "escalateAfter": 10, "escalateTo": ["slack"]}
    status, _ = api("POST", "/api/v1/interrupts", {"sessionId": "r9", "prompt": "Go?", "timeoutMs": 60_000, **camel})
    assert status == 201
    assert [(t.payload.gate, t.payload.step, t.wait_seconds) for t in timers.started] == [
        (INTERACTION_GATE, "remind", 5)
    ] * 3
