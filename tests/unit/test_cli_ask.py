"""`baton runs ask` (baton/cli/ask.py): the blocking ask's ladder and quorum flags, through the SDK into the
real resolver on in-memory services (an httpx MockTransport, as tests/unit/test_interrupts_api.py). What
the server stored is asserted; a flag the models refuse is exit 2 naming the flag, with nothing sent."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import httpx
import pytest
from typer.testing import CliRunner

from baton.api import deps
from baton.api.app import create_app
from baton.api.auth import operator_token
from baton.cli.main import app as cli_app
from baton.client.sdk import Client
from baton.domain.approval import ApprovalPolicy
from baton.domain.deadline import INTERACTION_GATE
from baton.domain.ladder import Ladder, TimeoutDefault
from baton.local.http_adapter import to_proxy_event
from baton.runtime.settings import Settings
from baton.runtime.wiring import Services
from baton.services.runs import RunService
from tests.fakes import RecordingDeadlineTimers

if TYPE_CHECKING:
    from baton.models import Interaction
    from baton.services.core import Core
    from tests.conftest import FixedClock

TOKEN = "local-secret"
RUN = "cli-run"


class Api:
    """The resolver, the requests it got, and what to do when the waiter's first long-poll arrives."""

    def __init__(self, core: Core) -> None:
        settings = Settings.model_validate({"BATON_TABLE_NAME": "t", "BATON_LOCAL_API_TOKEN": TOKEN})
        services = Services(settings=settings, core=core, runs=RunService(core))
        deps.set_services_provider(lambda: services)
        self.app = create_app()
        self.core = core
        self.sent: list[tuple[str, str]] = []
        self.on_first_poll: list[Callable[[str], None]] = []  # given the ask's id

    def call(self, method: str, path: str, body: Any = None, *, token: str = TOKEN) -> tuple[int, Any]:
        headers = {"Content-Type": "application/json", "Authorization": f"Bearer {token}"}
        event = to_proxy_event(method, path, headers, json.dumps(body).encode() if body else b"", "127.0.0.1")
        result = self.app.resolve(event, None)
        return result["statusCode"], json.loads(result["body"]) if result.get("body") else None

    def handle(self, request: httpx.Request) -> httpx.Response:
        path = request.url.raw_path.decode()
        self.sent.append((request.method, path.split("?")[0]))
        if request.method == "GET" and "/asks/" in path:
            ask_id = path.split("?")[0].rsplit("/", 1)[1]
            while self.on_first_poll:
                self.on_first_poll.pop(0)(ask_id)
        event = to_proxy_event(request.method, path, dict(request.headers), request.content, "127.0.0.1")
        result = self.app.resolve(event, None)
        return httpx.Response(result["statusCode"], content=(result.get("body") or "").encode())

    def the_ask(self) -> Interaction:
        [ask] = self.core.store.list_run_interactions(RUN, kind="ask")
        return ask


@pytest.fixture
def timers(core: Core) -> RecordingDeadlineTimers:
    core.timers = RecordingDeadlineTimers()
    return core.timers


@pytest.fixture
def api(core: Core, timers: RecordingDeadlineTimers, monkeypatch: pytest.MonkeyPatch) -> Iterator[Api]:
    served = Api(core)
    client = Client("http://baton.test", TOKEN, transport=httpx.MockTransport(served.handle))
    monkeypatch.setattr("baton.cli.common.client", lambda: client)
    core.ensure_run(RUN)
    yield served
    deps.set_services_provider(deps._default_provider)


def cli(*args: str) -> Any:
    return CliRunner().invoke(cli_app, ["runs", "ask", RUN, "deploy", "Ship 2.0?", *args])


def vote(api: Api, operator: str, decision: str) -> Callable[[str], None]:
    def cast(_: str) -> None:
        status, body = api.call(
            "POST",
            f"/api/runs/{RUN}/resume",
            {"answers": {"decision": decision}},
            token=operator_token(TOKEN, operator),
        )
        assert status == 200, body

    return cast


def test_the_ladder_flags_reach_the_stored_ask_and_its_timer(api: Api, timers: RecordingDeadlineTimers) -> None:
    api.on_first_poll.append(vote(api, "alice", "ship"))
    flags = ["-o", "ship", "-o", "hold", "--timeout", "600", "--remind-after", "60", "--escalate-after", "120"]
    out = cli(*flags, "--escalate-to", "slack", "--default", '{"decision": "hold"}', "--json")
    assert out.exit_code == 0, out.output
    shown = json.loads(out.output)
    assert (
        shown["status"] == "answered" and shown["answers"] == {"decision": "ship"} and shown["answered_by"] == "alice"
    )
    assert api.the_ask().request.ladder == Ladder(
        remind_after=60,
        escalate_after=120,
        escalate_to=["slack"],
        on_timeout=TimeoutDefault(default={"decision": "hold"}),
    )
    assert [(t.payload.gate, t.payload.step, t.wait_seconds) for t in timers.started] == [
        (INTERACTION_GATE, "remind", 60)
    ]


def test_the_default_taken_at_the_timeout_is_shown_as_nobodys_answer(api: Api, clock: FixedClock) -> None:
    api.on_first_poll.append(lambda _: clock.advance(601))
    out = cli(
        "-o", "ship", "-o", "hold", "--timeout", "600", "--on-timeout", "default", "--default", '{"decision": "hold"}'
    )
    assert out.exit_code == 0, out.output
    assert 'timed_out_default (nobody answered): {"decision": "hold"}' in out.output


def test_the_quorum_flags_make_a_two_of_three_ask_that_the_asker_cannot_vote_on(api: Api) -> None:
    status, refused = 0, None

    def requester_votes(_: str) -> None:
        nonlocal status, refused
        status, refused = api.call("POST", f"/api/runs/{RUN}/resume", {"answers": {"decision": "ship"}})

    api.on_first_poll += [requester_votes, vote(api, "alice", "ship"), vote(api, "bob", "ship")]
    approvers = ["--approver", "alice", "--approver", "bob", "--approver", "carol"]
    out = cli("-o", "ship", "-o", "hold", "--approvals", "2", *approvers, "--rejection", "majority", "--json")
    assert out.exit_code == 0, out.output
    assert status == 403 and refused["reason"] == "requester_cannot_approve"
    assert getattr(api.the_ask().request, "approval", None) == ApprovalPolicy(
        approvals=2, approvers=["alice", "bob", "carol"], rejection="majority"
    )
    shown = json.loads(out.output)
    assert shown["status"] == "answered" and shown["answers"]["decision"] == "ship"


@pytest.mark.parametrize(
    ("flags", "said"),
    [
        (["--escalate-after", "60"], "--escalate-after needs --escalate-to"),
        (["--escalate-after", "60", "--escalate-to", "pager"], "--escalate-to:"),
        (["--remind-after", "90", "--escalate-after", "60", "--escalate-to", "slack"], "must come after"),
        (["--approver", "alice"], "need --approvals N"),
        (["--approvals", "3", "--approver", "a", "--approver", "b"], "can never be met"),
        (["--on-timeout", "default"], "--on-timeout default needs --default"),
        (["--on-timeout", "fail", "--default", '{"decision": "hold"}'], "contradict"),
        (["--default", "{not json"], "not JSON"),
    ],
)
def test_a_flag_the_models_refuse_is_a_usage_error_and_nothing_is_sent(api: Api, flags: list[str], said: str) -> None:
    out = cli("--timeout", "600", *flags)
    assert out.exit_code == 2, out.output
    assert said in out.output
    assert api.sent == []


def test_what_only_the_server_can_check_is_its_422_and_nothing_is_stored(api: Api) -> None:
    out = cli("-o", "ship", "-o", "hold", "--timeout", "600", "--remind-after", "700")
    assert out.exit_code == 1 and "must come before the pause's timeout" in out.output
    out = cli("-o", "ship", "-o", "hold", "--timeout", "600", "--default", '{"decision": "maybe"}')
    assert out.exit_code == 1 and "not one of the options" in out.output
    out = cli("-o", "ship", "-o", "hold", "--approvals", "2", "--approve-option", "maybe")
    assert out.exit_code == 1 and "approve_option 'maybe' is not one of the options" in out.output
    assert api.core.store.list_run_interactions(RUN) == []


def test_help_teaches_the_ladder_and_the_quorum() -> None:
    out = CliRunner().invoke(cli_app, ["runs", "ask", "--help"], env={"COLUMNS": "200"})
    assert out.exit_code == 0
    for taught in ("--remind-after", "--escalate-to", "--on-timeout", "--approvals", "--approver", "--json"):
        assert taught in out.output
    assert "timed_out_default" in out.output and "decision=approve" in out.output and "Example:" in out.output
