"""Issue 13 item 3 (deadline ladders and safe defaults), on in-memory ports with an injected clock and
the timers recorded: the one timer per park walks the ladder (remind, escalate, then the deadline) in
order, a step after an answer is skipped and ends the timer, a default is taken at the deadline as
`timed_out_default` (nobody's answer) and released as an answer would be, a person's answer before the
deadline wins, and a default that is not a valid answer is refused when the pause is created."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import timedelta
from typing import TYPE_CHECKING, Any

import pytest
from pydantic import ValidationError

from baton.contracts import BlockingAskRequest, ResumeInterrupt
from baton.domain.deadline import TIMER_PRECISION_SECONDS
from baton.domain.gate_payloads import GateDeadlinePayload, ParkPayload
from baton.domain.interrupt_spec import InterruptSpec
from baton.domain.ladder import AnswerCheck, Ladder, LadderFields
from baton.errors import GoneError, ValidationFailedError
from baton.services.deadline_timers import Deadlines
from baton.services.interrupts import InterruptService
from baton.services.pauses import Resume
from tests.fakes import RecordingDeadlineTimers

if TYPE_CHECKING:
    from baton.services.core import Core
    from baton.services.runs import RunService
    from tests.conftest import FixedClock
    from tests.fakes import RecordingNotifier, RecordingTaskTokens

TIMEOUT = 60
LADDER = Ladder(remind_after=10, escalate_after=20, escalate_to=["slack"], on_timeout={"default": {"approved": False}})


@pytest.fixture
def timers(core: Core) -> RecordingDeadlineTimers:
    core.timers = RecordingDeadlineTimers()
    return core.timers


@pytest.fixture
def started(runs: RunService, timers: RecordingDeadlineTimers) -> RunService:
    runs.start("human_pause", {}, run_id="r1", caller="op")
    return runs


def _deadlines(core: Core, clock: FixedClock) -> Deadlines:
    from baton.services.reconciler import Reconciler

    reconciler = Reconciler(core)
    return Deadlines(
        reconciler,
        sleep=clock.advance,
    )


def _park(runs: RunService, core: Core, ladder: Ladder | None = LADDER) -> str:
    return runs.park(
        ParkPayload(
            run_id="r1",
            node="approve",
            token="tok-1",
            prompt="Ship it?",
            timeout_seconds=TIMEOUT,
            entered_at=core.clock.now(),
            ladder=ladder,
        )
    ).interaction_id


def _types(core: Core) -> list[str]:
    return [e.type for e in core.store.list_events("r1", limit=1000)]


def _notified(core: Core) -> list[tuple[str, list[str]]]:
    notifier: RecordingNotifier = core.notifier  # type: ignore[assignment]
    return [(n.event, list(n.channels)) for n in notifier.notifications]


def _sent(core: Core) -> list[tuple[str, str, dict[str, Any]]]:
    tokens: RecordingTaskTokens = core.tokens  # type: ignore[assignment]
    return list(tokens.sent)


def _walk(core: Core, clock: FixedClock, timer: GateDeadlinePayload, wait_seconds: int) -> dict[str, Any]:
    """Do what the timer machine does: wait, fire, and hand back what the Lambda returned."""
    clock.advance(wait_seconds)
    return _deadlines(core, clock).fire(timer)


def test_the_timer_walks_remind_then_escalate_then_takes_the_default(
    started: RunService, core: Core, clock: FixedClock, timers: RecordingDeadlineTimers
) -> None:
    iid = _park(started, core)
    _park(started, core)  # a retried park: still one timer
    (timer,) = timers.started
    assert timer.payload.step == "remind" and timer.wait_seconds == 10  # due at the first step, not the deadline

    reminded = _walk(core, clock, timer.payload, timer.wait_seconds)
    assert reminded["done"] is False and reminded["next"]["step"] == "escalate"
    assert reminded["next"]["wait_seconds"] == 10
    assert _types(core)[-1] == "reminder_sent" and _notified(core)[-1] == ("reminder_sent", ["console"])

    escalated = _walk(core, clock, GateDeadlinePayload.model_validate(reminded["next"]), 10)
    assert escalated["done"] is False and escalated["next"]["step"] == "deadline"
    assert _types(core)[-1] == "escalated" and _notified(core)[-1] == ("escalated", ["slack"])
    notifier: RecordingNotifier = core.notifier  # type: ignore[assignment]
    titles = [n.title for n in notifier.notifications[-2:]]
    assert titles == ["Reminder: Question (agent waiting): Ship it?", "Escalated: Question (agent waiting): Ship it?"]
    assert notifier.notifications[-1].extra["deadline"] == core.store.get_wait("r1", "approve").deadline  # type: ignore[union-attr]
    deadline = clock.now() + timedelta(seconds=TIMEOUT - 20)
    assert escalated["next"]["wait_seconds"] == int((deadline - clock.now()).total_seconds())

    ended = _walk(core, clock, GateDeadlinePayload.model_validate(escalated["next"]), escalated["next"]["wait_seconds"])
    assert ended.get("next") is None  # the timer ends here
    interaction = core.store.get_interaction("r1", iid)
    assert interaction is not None
    st = interaction.state
    assert (st.status, st.answer, st.answered_by, st.outcome) == (
        "answered",
        {"approved": False},
        None,
        "timed_out_default",
    )
    ((kind, _token, output),) = _sent(core)  # released with the default, as an answer would be
    assert kind == "success" and output["answers"] == {"approved": False} and output["answered_by"] is None
    types = _types(core)
    assert types.index("reminder_sent") < types.index("escalated") < types.index("timed_out_default")
    assert "interaction_answered" not in types and "human_input_timed_out" not in types  # nobody answered
    assert core.store.get_wait("r1", "approve").status == "released"  # type: ignore[union-attr]


def test_steps_after_an_answer_are_skipped_and_end_the_timer(
    started: RunService, core: Core, clock: FixedClock, timers: RecordingDeadlineTimers
) -> None:
    _park(started, core)
    (timer,) = timers.started
    clock.advance(5)
    started.resume(Resume("r1", {"approved": True}, caller="alice"))
    notified_before = len(_notified(core))
    fired = _walk(core, clock, timer.payload, 5)
    assert fired["done"] is True and fired.get("next") is None
    assert "reminder_sent" not in _types(core) and len(_notified(core)) == notified_before
    ((_, _, output),) = _sent(core)
    assert output["answered_by"] == "alice" and output["answers"] == {"approved": True}


def test_an_answer_just_before_the_deadline_wins_over_the_default(
    started: RunService, core: Core, clock: FixedClock, timers: RecordingDeadlineTimers
) -> None:
    _park(started, core, Ladder(on_timeout={"default": {"approved": False}}))
    (timer,) = timers.started
    assert timer.payload.step == "deadline"  # no steps: due at the deadline as before
    clock.advance(timer.wait_seconds - 1.1)  # 0.1 s before Baton's deadline
    started.resume(Resume("r1", {"approved": True}, caller="alice"))  # a 200
    fired = _walk(core, clock, timer.payload, 2)
    assert fired["ended"] is False
    ((_, _, output),) = _sent(core)  # the person's answer is the one delivered, exactly once
    assert output["answers"] == {"approved": True} and "timed_out_default" not in _types(core)


def test_an_answer_after_the_default_was_taken_is_a_410_kept_as_late(
    started: RunService, core: Core, clock: FixedClock, timers: RecordingDeadlineTimers
) -> None:
    _park(started, core, Ladder(on_timeout={"default": {"approved": False}}))
    (timer,) = timers.started
    _walk(core, clock, timer.payload, timer.wait_seconds)
    with pytest.raises(GoneError):
        started.resume(Resume("r1", {"approved": True}, caller="alice"))
    ((_, _, output),) = _sent(core)
    assert output["answers"] == {"approved": False} and "answer_late" in _types(core)


def test_a_step_the_pause_did_not_declare_sends_nothing_and_goes_on_to_the_deadline(
    started: RunService, core: Core, clock: FixedClock, timers: RecordingDeadlineTimers
) -> None:
    _park(started, core, Ladder(remind_after=10))
    (timer,) = timers.started
    forged = timer.payload.model_copy(update={"step": "escalate"})  # no escalation was declared
    fired = _walk(core, clock, forged, timer.wait_seconds)
    assert fired["reason"] == "not_a_step" and fired["next"]["step"] == "deadline"
    assert "escalated" not in _types(core) and [e for e, _ in _notified(core)] == ["human_input_requested"]


def test_without_a_default_the_ladder_ends_in_todays_failure(
    started: RunService, core: Core, clock: FixedClock, timers: RecordingDeadlineTimers
) -> None:
    _park(started, core, Ladder(remind_after=10))
    (timer,) = timers.started
    reminded = _walk(core, clock, timer.payload, timer.wait_seconds)
    nxt = reminded["next"]
    assert nxt["step"] == "deadline"
    ended = _walk(core, clock, GateDeadlinePayload.model_validate(nxt), nxt["wait_seconds"] + TIMER_PRECISION_SECONDS)
    assert ended["ended"] is True
    ((kind, _, _),) = _sent(core)
    assert kind == "failure" and "timed_out_default" not in _types(core)


def test_a_hosted_interrupt_with_a_default_is_released_with_it_at_its_deadline(
    started: RunService, core: Core, clock: FixedClock, timers: RecordingDeadlineTimers
) -> None:
    interrupts = InterruptService(core)
    spec = InterruptSpec(
        session_id="r1",
        node="confirm",
        prompt="Deploy?",
        timeout_ms=TIMEOUT * 1000,
        json_schema={"type": "string", "enum": ["go", "stop"]},
        ladder=Ladder(on_timeout={"default": "stop"}),
    )
    interrupt, _ = interrupts.create(spec, caller="workflow:r1", token="tok-i", entered_at=clock.now())
    (timer,) = timers.started
    clock.advance(timer.wait_seconds)
    seen = interrupts.get(interrupt.interaction_id)  # a read at the deadline takes the default, too
    assert seen.state.outcome == "timed_out_default" and seen.state.answer["input"] == "stop"
    _deadlines(core, clock).fire(timer.payload)
    ((kind, _, output),) = _sent(core)  # released once
    assert kind == "success" and output["input"] == "stop" and output["resolved_by"] is None
    with pytest.raises(GoneError):
        interrupts.resume(interrupt.interaction_id, ResumeInterrupt(input="go"), caller="alice")
    assert "answer_late" in _types(core)


# ---- refused at creation ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("ladder", "timeout"),
    [
        ({"remind_after": 60}, 60),  # not before the timeout
        ({"escalate_after": 30, "escalate_to": ["slack"], "remind_after": 40}, 60),  # out of order
    ],
)
def test_steps_that_do_not_come_before_the_timeout_in_order_are_refused(ladder: dict[str, Any], timeout: int) -> None:
    with pytest.raises((ValidationError, ValidationFailedError)):
        Ladder.model_validate(ladder).check_for(timeout, answer_is=AnswerCheck(kind="answers"))


@pytest.mark.parametrize(
    "fields",
    [
        {"escalate_after": 10},  # to whom?
        {"escalate_to": ["slack"]},  # when?
        {"escalate_after": 10, "escalate_to": ["pager"]},  # no such channel
        {"on_timeout": "approve"},
        {"on_timeout": {"value": 1}},
    ],
)
def test_a_malformed_ladder_is_refused(fields: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        LadderFields.model_validate(fields).ladder()


@pytest.mark.parametrize(
    ("check", "default"),
    [
        (AnswerCheck(kind="answers"), "yes"),  # an ask is resumed with an object of answers
        (AnswerCheck(kind="answers"), {}),
        (AnswerCheck(kind="answers", options=["yes", "no"], allow_free_text=False), {"choice": "maybe"}),
        (AnswerCheck(kind="interrupt", json_schema={"type": "string", "enum": ["go", "stop"]}), "later"),
        (AnswerCheck(kind="interrupt", schema_={"type": "number"}), "ten"),
    ],
)
def test_a_default_that_is_not_a_valid_answer_is_a_422_at_creation(check: AnswerCheck, default: Any) -> None:
    with pytest.raises(ValidationFailedError) as refused:
        Ladder(on_timeout={"default": default}).check_for(60, answer_is=check)
    assert refused.value.http_status == 422 and str(refused.value.details["path"]).startswith("on_timeout.default")


def test_an_interrupt_whose_default_breaks_its_schema_is_refused_and_nothing_is_stored(
    started: RunService, core: Core
) -> None:
    before = core.store.list_run_interactions("r1")
    with pytest.raises(ValidationFailedError):
        InterruptService(core).create(
            InterruptSpec(
                session_id="r1",
                prompt="Deploy?",
                json_schema={"type": "string", "enum": ["go", "stop"]},
                ladder=Ladder(on_timeout={"default": "later"}),
            ),
            caller="agent",
        )
    assert core.store.list_run_interactions("r1") == before


def test_the_park_payload_takes_a_ladder_as_the_workflow_input_declares_it() -> None:
    payload = ParkPayload.model_validate(
        {
            "token": "t",
            "run_id": "r1",
            "node": "approve",
            "prompt": "OK?",
            "timeout_seconds": 60,
            "ladder": {"remind_after": 5, "on_timeout": {"default": {"approved": False}}},
        }
    )
    assert payload.ladder is not None and payload.ladder.default is not None
    assert ParkPayload.model_validate({**payload.model_dump(exclude={"ladder"}), "ladder": None}).ladder is None


def test_steps_count_from_the_task_entry_in_order_and_those_past_the_deadline_are_left_out(
    clock: FixedClock,
) -> None:
    began = clock.now()
    deadline = began + timedelta(seconds=60)  # Core.deadline_of of a 60 s task entered now
    steps = LADDER.steps(deadline, 60)
    assert [(s.step, (s.at - began).total_seconds()) for s in steps] == [("remind", 10.0), ("escalate", 20.0)]
    short = began + timedelta(seconds=20)  # a 20 s task: its deadline comes with the escalation
    assert [s.step for s in LADDER.steps(short, 20)] == ["remind"]


# ---- the REST doors: 422 at creation, the default shown as such ---------------------------------------
@pytest.fixture
def api(core: Core) -> Iterator[Any]:
    """The HTTP API through the real resolver on these in-memory services (as tests/unit/test_api.py)."""
    from baton.api import deps
    from baton.api.app import create_app
    from baton.local.http_adapter import to_proxy_event
    from baton.runtime.settings import Settings
    from baton.runtime.wiring import Services
    from baton.services.runs import RunService as Runs

    settings = Settings.model_validate({"BATON_TABLE_NAME": "t", "BATON_LOCAL_API_TOKEN": "local-secret"})
    services = Services(settings=settings, core=core, runs=Runs(core))
    deps.set_services_provider(lambda: services)
    app = create_app()

    def call(method: str, path: str, body: Any = None) -> tuple[int, Any]:
        headers = {"Content-Type": "application/json", "Authorization": "Bearer local-secret"}
        event = to_proxy_event(method, path, headers, json.dumps(body).encode() if body else b"", "127.0.0.1")
        result = app.resolve(event, None)
        return result["statusCode"], json.loads(result["body"]) if result.get("body") else None

    yield call
    deps.set_services_provider(deps._default_provider)


def test_rest_refuses_a_default_that_is_not_a_valid_answer_and_stores_nothing(api: Any, core: Core) -> None:
    core.ensure_run("r9")
    status, body = api(
        "POST",
        "/api/runs/r9/asks",
        {
            "node": "agent",
            "question": "Drop it?",
            "options": ["yes", "no"],
            "timeout_seconds": 60,
            "on_timeout": {"default": {"choice": "maybe"}},
        },
    )
    assert status == 422 and "maybe" in body["message"] and body["path"] == "on_timeout.default.choice", body
    status, body = api(
        "POST",
        "/api/v1/interrupts",
        {"sessionId": "r9", "prompt": "Go?", "jsonSchema": {"enum": ["go", "stop"]}, "onTimeout": {"default": "later"}},
    )
    assert status == 422, body
    status, body = api(
        "POST", "/api/v1/interrupts", {"sessionId": "r9", "prompt": "Go?", "onTimeout": {"value": "stop"}}
    )
    assert status == 422, body
    assert core.store.list_run_interactions("r9") == []


def test_a_blocking_ask_takes_its_default_at_the_deadline_shown_as_timed_out_default(
    api: Any, core: Core, clock: FixedClock
) -> None:
    core.ensure_run("r9")
    status, asked = api(
        "POST",
        "/api/runs/r9/asks",
        {"node": "agent", "question": "Drop it?", "timeout_seconds": 30, "on_timeout": {"default": {"drop": "no"}}},
    )
    assert status == 201 and asked["outcome"] is None
    clock.advance(31)
    status, view = api("GET", f"/api/runs/r9/asks/{asked['interaction_id']}")
    assert status == 200 and view["status"] == "answered"
    assert (view["outcome"], view["answered_by"], view["answers"]) == ("timed_out_default", None, {"drop": "no"})
    status, run = api("GET", "/api/runs/r9")
    assert run["interactions"] == {"timed_out_default": 1} and run["status"] == "running"
    status, _ = api("POST", "/api/runs/r9/resume", {"answers": {"drop": "yes"}})
    assert status == 410 and "answer_late" in _types_of(core, "r9")


def test_a_blocking_ask_keeps_its_steps_for_its_own_timer_and_refuses_one_past_its_timeout(core: Core) -> None:
    # Round 5: a blocking ask's remind/escalate are walked by its own timer (tests/unit/test_ladder_pauses.py);
    # a step that does not come before its timeout is still a 422 with nothing stored.
    from baton.services.asks import AskService

    core.ensure_run("r9")
    with pytest.raises(ValidationFailedError) as refused:
        AskService(core).ask(
            "r9",
            BlockingAskRequest(node="agent", question="Drop it?", timeout_seconds=60, remind_after=60),
            caller="agent",
        )
    assert refused.value.details["path"] == "remind_after" and core.store.list_run_interactions("r9") == []
    asked = AskService(core).ask(
        "r9",
        BlockingAskRequest(node="agent", question="Drop it?", timeout_seconds=60, remind_after=5),
        caller="agent",
    )
    assert asked.request.ladder is not None and asked.request.ladder.remind_after == 5


def _types_of(core: Core, run_id: str) -> list[str]:
    return [e.type for e in core.store.list_events(run_id, limit=1000)]


# ---- `baton check`: a literal ladder in a workflow's gate parameters --------------------------------
def _park_flow(ladder: Any, *, interrupt: bool = False) -> dict[str, Any]:
    from baton.workflows.asl_rules import LAMBDA_RETRIER

    payload: dict[str, Any] = {"token.$": "$$.Task.Token", "run_id.$": "$.run_id", "node": "approve"}
    if interrupt:
        payload["request"] = {"prompt": "Go?", "timeout_seconds": 60, "ladder": ladder}
    else:
        payload.update({"prompt": "OK?", "timeout_seconds": 60, "ladder": ladder})
    park = {
        "Type": "Task",
        "Resource": "arn:aws:states:::lambda:invoke.waitForTaskToken",
        "Parameters": {"FunctionName": "${ParkFunctionArn}", "Payload": payload},
        "TimeoutSeconds": 65,  # the declared 60 s + baton.domain.deadline.GRACE_SECONDS (C245)
        "Retry": [LAMBDA_RETRIER],
        "End": True,
    }
    return {"StartAt": "Approve", "States": {"Approve": park}}


@pytest.mark.parametrize(
    ("ladder", "interrupt"),
    [
        ({"remind_after": 90}, False),  # after the 60 s timeout
        ({"escalate_after": 10}, False),  # to nobody
        ({"on_timeout": {"default": "yes"}}, False),  # an ask resumes with an object of answers
        ({"on_timeout": "approve"}, True),
    ],
)
def test_baton_check_refuses_a_literal_ladder_the_park_would_refuse(ladder: Any, interrupt: bool) -> None:
    from baton.workflows.asl import check_definition

    problems = check_definition(_park_flow(ladder, interrupt=interrupt), "flow.asl.json")
    assert [p.code for p in problems] == ["C251"], problems


def test_baton_check_judges_a_ladder_against_the_declared_timeout_not_the_graced_task_timeout() -> None:
    from baton.workflows.asl import check_definition

    # 62 s is before the Task's TimeoutSeconds (65) but after the 60 s the park checks the ladder against.
    for interrupt in (False, True):
        problems = check_definition(_park_flow({"remind_after": 62}, interrupt=interrupt), "flow.asl.json")
        assert [p.code for p in problems] == ["C251"], problems


def test_baton_check_accepts_a_valid_ladder_and_one_from_the_input() -> None:
    from baton.workflows.asl import check_definition

    good = {"remind_after": 10, "escalate_after": 20, "escalate_to": ["slack"], "on_timeout": {"default": {"a": 1}}}
    assert check_definition(_park_flow(good), "flow.asl.json") == []
    assert check_definition(_park_flow({"on_timeout": {"default": "stop"}}, interrupt=True), "f.asl.json") == []
    from_input = _park_flow(None)
    from_input["States"]["Approve"]["Parameters"]["Payload"]["ladder.$"] = "$.input.ladder"
    assert check_definition(from_input, "flow.asl.json") == []
