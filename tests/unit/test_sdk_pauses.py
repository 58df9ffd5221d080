"""Every pause the SDK creates takes the REST body's own ladder and quorum models (baton/client/pauses.py):
the blocking ask (`create_ask`, `ask_user`), the async question (`ask_async`), the interrupt
(`create_interrupt`) and the await tool (`await_once`, `AwaitLadderFields`). Through the real resolver on
in-memory services (an httpx MockTransport into it, as tests/unit/test_interrupts_api.py), so what the
server stored is what is asserted; a malformed ladder or policy is refused before any request."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import httpx
import pytest
from pydantic import ValidationError

from baton.api import deps
from baton.api.app import create_app
from baton.api.routes_questions import AwaitRequest
from baton.client.sdk import Client
from baton.contracts import AskRequest, BlockingAskRequest
from baton.domain.approval import ApprovalPolicy
from baton.domain.deadline import INTERACTION_GATE
from baton.domain.interrupt_fields import GateAction
from baton.domain.ladder import AwaitLadderFields, Ladder, LadderFields, TimeoutDefault
from baton.errors import ValidationFailedError
from baton.local.http_adapter import to_proxy_event
from baton.models import AwaitToolRequest
from baton.policy.engine import Policy
from baton.policy.source import FixedPolicy
from baton.runtime.settings import Settings
from baton.runtime.wiring import Services
from baton.services.runs import RunService
from tests.fakes import RecordingDeadlineTimers

if TYPE_CHECKING:
    from baton.services.core import Core

TOKEN = "local-secret"
RUN = "sdk-run"
TWO_OF_THREE = ApprovalPolicy(approvals=2, approvers=["alice", "bob", "carol"])
LADDER = LadderFields(remind_after=5, escalate_after=10, escalate_to=["slack"])


class Recorded:
    """The requests the SDK sent (method, path, JSON body), so "refused before any request" is seen."""

    def __init__(self) -> None:
        self.bodies: list[tuple[str, str, Any]] = []


@pytest.fixture
def timers(core: Core) -> RecordingDeadlineTimers:
    core.timers = RecordingDeadlineTimers()
    return core.timers


@pytest.fixture
def sent() -> Recorded:
    return Recorded()


@pytest.fixture
def client(core: Core, timers: RecordingDeadlineTimers, sent: Recorded) -> Iterator[Client]:
    settings = Settings.model_validate({"BATON_TABLE_NAME": "t", "BATON_LOCAL_API_TOKEN": TOKEN})
    services = Services(settings=settings, core=core, runs=RunService(core))
    deps.set_services_provider(lambda: services)
    app = create_app()

    def handle(request: httpx.Request) -> httpx.Response:
        path = request.url.raw_path.decode()
        sent.bodies.append((request.method, path, json.loads(request.content) if request.content else None))
        event = to_proxy_event(request.method, path, dict(request.headers), request.content, "127.0.0.1")
        result = app.resolve(event, None)
        return httpx.Response(result["statusCode"], content=(result.get("body") or "").encode())

    core.ensure_run(RUN)
    yield Client("http://baton.test", TOKEN, transport=httpx.MockTransport(handle))
    deps.set_services_provider(deps._default_provider)


def test_create_ask_takes_the_ladder_and_the_quorum_as_the_api_models(
    client: Client, core: Core, timers: RecordingDeadlineTimers
) -> None:
    asked = client.create_ask(
        RUN,
        "deploy",
        "Ship it?",
        timeout_seconds=60,
        options=["ship", "hold"],
        ladder=LADDER,
        approval=TWO_OF_THREE,
    )
    stored = core.store.get_interaction(RUN, asked.interaction_id)
    assert stored is not None
    assert stored.request.ladder == Ladder(remind_after=5, escalate_after=10, escalate_to=["slack"])
    assert getattr(stored.request, "approval", None) == TWO_OF_THREE
    # the ask's own timer walks the ladder from its first step
    assert [(t.payload.gate, t.payload.step, t.wait_seconds) for t in timers.started] == [
        (INTERACTION_GATE, "remind", 5)
    ]
    # `on_timeout` on its own joins the ladder (one body, as ask_user sends it)
    defaulted = client.create_ask(
        RUN, "other", "Go?", timeout_seconds=60, ladder=LADDER, on_timeout={"default": {"decision": "hold"}}
    )
    stored = core.store.get_interaction(RUN, defaulted.interaction_id)
    assert stored is not None and stored.request.ladder is not None
    assert stored.request.ladder.default == TimeoutDefault(default={"decision": "hold"})


def test_ask_user_sends_its_ladder_and_approval_and_the_server_checks_them(client: Client, sent: Recorded) -> None:
    # A step after the timeout passes the model (it cannot know the timeout) and is the server's 422:
    # raised before any wait, with the body the SDK built from the models.
    with pytest.raises(ValidationFailedError, match="must come before the pause's timeout"):
        client.ask_user(RUN, "n", "Q?", timeout_seconds=60, ladder={"remind_after": 90}, approval=TWO_OF_THREE)
    assert len(sent.bodies) == 1
    method, path, body = sent.bodies[0]
    assert (method, path) == ("POST", f"/api/runs/{RUN}/asks")
    assert body["remind_after"] == 90 and body["approval"] == TWO_OF_THREE.model_dump(exclude_defaults=True)


def test_a_malformed_ladder_or_policy_is_refused_before_any_request(client: Client, sent: Recorded) -> None:
    with pytest.raises(ValidationError, match="escalate_after needs escalate_to"):
        client.create_ask(RUN, "n", "Q?", timeout_seconds=60, ladder={"escalate_after": 5})
    with pytest.raises(ValidationError, match="can never be met"):
        client.ask_user(RUN, "n", "Q?", timeout_seconds=60, approval={"approvals": 3, "approvers": ["a", "b"]})
    with pytest.raises(ValueError, match="on_timeout is given twice"):
        client.create_ask(
            RUN,
            "n",
            "Q?",
            timeout_seconds=60,
            ladder={"on_timeout": {"default": {"a": 1}}},
            on_timeout={"default": {"a": 2}},
        )
    with pytest.raises(ValidationError):
        client.create_interrupt(session_id=RUN, prompt="Go?", approval={"approvals": 0})
    with pytest.raises(TypeError, match="given twice"):
        client.create_interrupt(session_id=RUN, prompt="Go?", ladder=LADDER, remind_after=3)
    assert sent.bodies == []


def test_the_whole_request_is_the_api_model_sent_as_given(client: Client, sent: Recorded, core: Core) -> None:
    # One typed request for the API, the MCP tools and the SDK: the keyword form builds the same model, so a
    # field the API would refuse is refused here, before any request; the typed form posts the model as is.
    with pytest.raises(ValidationError, match="options"):
        client.create_ask(RUN, "n", "Q?", timeout_seconds=60, options=[])
    with pytest.raises(ValidationFailedError, match="unknown notify channel"):
        client.ask_async(RUN, "n", "Q?", notify=["carrier-pigeon"])
    assert sent.bodies == []
    asked = AskRequest(node="n", question="Q?", options=["a", "b"], timeout_seconds=60)
    posted = client.post_question(RUN, asked)
    assert sent.bodies[-1][2] == {"node": "n", "question": "Q?", "options": ["a", "b"], "timeout_seconds": 60}
    stored = core.store.get_interaction(RUN, posted.interaction_id)
    assert stored is not None and stored.request.options == ["a", "b"]
    blocking = client.post_ask(RUN, BlockingAskRequest(node="n", question="Go?", timeout_seconds=60))
    assert sent.bodies[-1][2] == {"node": "n", "question": "Go?", "timeout_seconds": 60}
    assert blocking.status == "pending"


def test_ask_async_takes_the_models_and_its_notify(client: Client, core: Core) -> None:
    posted = client.ask_async(
        RUN,
        "planner",
        "Which database?",
        options=["postgres", "dynamodb"],
        timeout_seconds=60,
        ladder=LadderFields(remind_after=5, on_timeout=TimeoutDefault(default="postgres")),
        notify=["console"],
    )
    stored = core.store.get_interaction(RUN, posted.interaction_id)
    assert stored is not None and stored.request.ladder is not None
    assert stored.request.ladder.default == TimeoutDefault(default="postgres")
    assert stored.request.notify == ["console"]
    quorum = client.ask_async(
        RUN, "planner", "Ship?", options=["ship", "hold"], approval=ApprovalPolicy(approvals=1, approve_option="ship")
    )
    stored = core.store.get_interaction(RUN, quorum.interaction_id)
    assert stored is not None
    assert getattr(stored.request, "approval", None) == ApprovalPolicy(approvals=1, approve_option="ship")


def test_create_interrupt_takes_the_ladder_model_in_camel_case_and_a_quorum(client: Client, core: Core) -> None:
    ladder = LadderFields(remind_after=5, on_timeout=TimeoutDefault(default="staging"))
    made = client.create_interrupt(
        session_id=RUN,
        prompt="Deploy where?",
        schema={"type": "enum", "enum": ["staging", "production"]},
        timeout_ms=60_000,
        ladder=ladder,
        approval=TWO_OF_THREE,
    )
    stored = core.store.get_interaction(RUN, made.interrupt_id)
    assert stored is not None and stored.request.ladder == Ladder(
        remind_after=5, on_timeout=TimeoutDefault(default="staging")
    )
    assert getattr(stored.request, "approval", None) == TWO_OF_THREE


def test_the_await_tool_takes_use_question_defaults_and_refuses_a_default_before_sending(
    client: Client, core: Core, sent: Recorded
) -> None:
    client.ask_async(RUN, "planner", "Q?")
    sent.bodies.clear()
    with pytest.raises(ValidationError, match="use_question_defaults"):
        client.await_once(RUN, timeout=30, ladder={"on_timeout": {"default": "x"}})
    assert sent.bodies == []
    pending = client.await_once(
        RUN,
        timeout=30,
        from_node="planner",
        ladder=AwaitLadderFields(remind_after=5, on_timeout="use_question_defaults"),
    )
    assert pending.status == "pending"
    awaiting = core.store.list_run_interactions(RUN, kind="await")[0]
    assert awaiting.request_as(AwaitToolRequest).from_node == "planner"
    assert awaiting.request.ladder == Ladder(remind_after=5, on_timeout="use_question_defaults")


def test_the_await_ladder_is_one_model_for_the_api_the_sdk_and_its_schema_names_the_two_choices() -> None:
    assert issubclass(AwaitRequest, AwaitLadderFields)
    on_timeout = AwaitLadderFields.model_json_schema()["properties"]["on_timeout"]
    assert on_timeout["enum"] == ["fail", "use_question_defaults"] and on_timeout["default"] == "fail"
    assert AwaitLadderFields(on_timeout="use_question_defaults").ladder() == Ladder(on_timeout="use_question_defaults")
    assert AwaitLadderFields().ladder() is None
    with pytest.raises(ValidationError):
        AwaitLadderFields.model_validate({"on_timeout": {"default": "yes"}})


STAGING_OK = """
@id("staging-ok")
permit(principal, action == Action::"pass_gate", resource == Gate::"deploy")
when { resource.hasTag("env") && resource.getTag("env") == "staging" };

@id("no-lab")
forbid(principal, action == Action::"pass_gate", resource == Gate::"deploy")
when { resource.hasTag("env") && resource.getTag("env") == "lab" };
"""


def test_create_interrupt_passes_its_gated_action_as_the_api_model(client: Client, core: Core, sent: Recorded) -> None:
    # The policy in force decides the declared action at creation: a rule's allow resumes it with onAllow.
    core.policy = FixedPolicy(Policy.load(STAGING_OK))
    gate = GateAction(name="deploy", arguments={"env": "staging"}, on_allow="go", on_deny="stop")
    made = client.create_interrupt(
        session_id=RUN,
        prompt="Deploy?",
        schema={"type": "enum", "enum": ["go", "stop"]},
        timeout_ms=60_000,
        action=gate,
    )
    assert (made.status, made.value, made.resolved_by) == ("answered", "go", "policy:staging-ok")
    action_sent = {"name": "deploy", "arguments": {"env": "staging"}, "onAllow": "go", "onDeny": "stop"}
    assert sent.bodies[-1][2]["action"] == action_sent  # the API's camelCase wire names, from the one model
    # its JSON object goes through the same model: a rule's deny resumes it with onDeny
    denied = client.create_interrupt(
        session_id=RUN, prompt="Deploy?", action={**action_sent, "arguments": {"env": "lab"}}
    )
    assert (denied.status, denied.value, denied.resolved_by) == ("answered", "stop", "policy:no-lab")
    undecided = client.create_interrupt(session_id=RUN, prompt="Deploy?", action={**action_sent, "arguments": {}})
    assert undecided.status == "pending"  # no rule matched: a person is asked, as without an action
    sent.bodies.clear()
    with pytest.raises(ValidationError, match="onAllow"):
        client.create_interrupt(session_id=RUN, prompt="Go?", action={"name": "deploy", "onDeny": "stop"})
    assert sent.bodies == []
