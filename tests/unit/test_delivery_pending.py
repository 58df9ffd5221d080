"""Issue 28 item 10, at the edges: a stored answer whose send failed is a 202 with `delivery: pending`
(declared in the OpenAPI), and the CLI says so and exits 5, through the SDK into the real resolver on
in-memory services (an httpx MockTransport). The send fails as AWS would make it fail after botocore's
retries (`RecordingTaskTokens.fail_next`); tests/integration/test_faults.py injects the throttling
itself on moto."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import httpx
import pytest
from typer.testing import CliRunner

from baton.api import deps
from baton.api.app import create_app
from baton.cli.main import app as cli_app
from baton.client.sdk import Client
from baton.contracts import AskRequest, ResumeInterrupt
from baton.domain.approval import ApprovalPolicy
from baton.domain.ballot import Voter
from baton.domain.gate_payloads import ParkPayload
from baton.domain.interrupt_spec import InterruptSpec
from baton.local.http_adapter import to_proxy_event
from baton.models import RunSummary
from baton.runtime.settings import Settings
from baton.runtime.wiring import Services
from baton.services.interrupts import InterruptService
from baton.services.pauses import Resume
from baton.services.questions import QuestionService
from baton.services.reconciler import Reconciler
from baton.services.runs import RunService

if TYPE_CHECKING:
    from baton.services.core import Core
    from tests.fakes import RecordingTaskTokens

TOKEN = "local-secret"
THROTTLED = RuntimeError("ThrottlingException on SendTaskSuccess (reached max retries)")
PENDING_EXIT = 5
TWO = ApprovalPolicy(approvals=2, approvers=["alice", "bob", "carol"])


class Api:
    def __init__(self, core: Core) -> None:
        settings = Settings.model_validate({"BATON_TABLE_NAME": "t", "BATON_LOCAL_API_TOKEN": TOKEN})
        deps.set_services_provider(lambda: Services(settings=settings, core=core, runs=RunService(core)))
        self.app = create_app()

    def call(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        headers = {"Content-Type": "application/json", "Authorization": f"Bearer {TOKEN}"}
        event = to_proxy_event(method, path, headers, json.dumps(body).encode() if body else b"", "127.0.0.1")
        result = self.app.resolve(event, None)
        return result["statusCode"], json.loads(result["body"]) if result.get("body") else None

    def handle(self, request: httpx.Request) -> httpx.Response:
        event = to_proxy_event(
            request.method, request.url.raw_path.decode(), dict(request.headers), request.content, "127.0.0.1"
        )
        result = self.app.resolve(event, None)
        return httpx.Response(result["statusCode"], content=(result.get("body") or "").encode())


@pytest.fixture
def api(core: Core, monkeypatch: pytest.MonkeyPatch) -> Iterator[Api]:
    served = Api(core)
    client = Client("http://baton.test", TOKEN, transport=httpx.MockTransport(served.handle))
    monkeypatch.setattr("baton.cli.common.client", lambda: client)
    yield served
    deps.set_services_provider(deps._default_provider)


def _tokens(core: Core) -> RecordingTaskTokens:
    return core.tokens  # type: ignore[return-value]


def _paused(runs: RunService) -> None:
    runs.start("human_pause", {}, run_id="r1", caller="op")
    runs.park(ParkPayload(run_id="r1", node="approve", token="tok-1", prompt="Ship?", timeout_seconds=60))


def test_a_resume_whose_send_fails_is_a_202_with_its_delivery_pending_and_then_a_200(
    api: Api, core: Core, runs: RunService
) -> None:
    _paused(runs)
    _tokens(core).fail_next = THROTTLED
    status, body = api.call("POST", "/api/runs/r1/resume", {"answers": {"ship": True}})
    assert status == 202 and (body["resumed"], body["delivery"]) == (False, "pending"), body
    assert core.store.get_wait("r1", "approve").status == "parked"  # type: ignore[union-attr]
    status, body = api.call("POST", "/api/runs/r1/resume", {"answers": {"ship": True}})  # the retry sends it
    assert status == 200 and (body["resumed"], body["delivery"]) == (True, "delivered"), body
    assert [t for _, t, _ in _tokens(core).sent] == ["tok-1"]


def test_baton_resume_says_the_answer_is_stored_and_exits_5_when_its_delivery_is_pending(
    api: Api, core: Core, runs: RunService
) -> None:
    _paused(runs)
    _tokens(core).fail_next = THROTTLED
    out = CliRunner().invoke(cli_app, ["resume", "--run-id", "r1", "--answer", "ship=true"])
    assert out.exit_code == PENDING_EXIT, out.output
    assert "answer stored; its delivery is pending" in out.output and "resumed" not in out.output
    out = CliRunner().invoke(cli_app, ["resume", "--run-id", "r1", "--answer", "ship=true", "--json"])
    assert out.exit_code == 0 and json.loads(out.output)["delivery"] == "delivered", out.output


def test_baton_runs_answer_exits_5_when_the_gate_it_completes_was_not_sent(api: Api, core: Core) -> None:
    questions = QuestionService(core)
    iid = questions.ask("r2", AskRequest(node="draft", question="DB?"), caller="agent")["interaction_id"]
    questions.park_gate(run_id="r2", gate="sync", token="tok-gate", timeout_seconds=60)
    _tokens(core).fail_next = THROTTLED
    out = CliRunner().invoke(cli_app, ["runs", "answer", "r2", iid, "postgres"])
    assert out.exit_code == PENDING_EXIT, out.output
    assert "its delivery is pending" in out.output


def test_resume_interrupt_exits_5_when_the_workflow_was_not_sent_its_value(api: Api, core: Core) -> None:
    core.ensure_run("r3")
    interrupts = InterruptService(core)
    parked, _ = interrupts.create(InterruptSpec(session_id="r3", prompt="Target?"), caller="wf", token="tok-int")
    _tokens(core).fail_next = THROTTLED
    out = CliRunner().invoke(
        cli_app, ["workflow", "resume-interrupt", "r3", "--interrupt-id", parked.interaction_id, "--input", '"prod"']
    )
    assert out.exit_code == PENDING_EXIT, out.output
    assert "its delivery is pending" in out.output and "the workflow continues" not in out.output


def test_the_openapi_declares_the_202_of_every_answer_route(api: Api) -> None:
    status, doc = api.call("GET", "/api/openapi.json")
    assert status == 200
    for path in (
        "/api/runs/{run_id}/resume",
        "/api/runs/{run_id}/interactions/{interaction_id}/answer",
        "/api/v1/interrupts/{interrupt_id}/resume",
    ):
        declared = doc["paths"][path]["post"]["responses"]
        assert {"200", "202"} <= set(declared), (path, sorted(declared))


def test_the_deciding_vote_of_a_quorum_whose_send_fails_is_stored_with_its_delivery_pending(
    core: Core, runs: RunService
) -> None:
    """The vote that meets a quorum answers the pause and sends its token: a failed send leaves it
    answered and pending (the reconciler sends it), never an error to the deciding voter."""
    now = core.now()
    core.store.create_run(
        RunSummary(run_id="h1", status="running", created_at=now, updated_at=now, hosted=True, started_by="starter")
    )
    runs.park(
        ParkPayload(run_id="h1", node="approve", token="tok-h1", prompt="Ship?", timeout_seconds=600, approval=TWO)
    )
    assert (
        runs.resume(Resume("h1", {"decision": "approve"}, caller="alice"))["delivery"] is None
    )  # one vote: nothing sent
    _tokens(core).fail_next = THROTTLED
    deciding = runs.resume(Resume("h1", {"decision": "approve"}, caller="bob"))
    assert (deciding["status"], deciding["resumed"], deciding["delivery"]) == ("answered", False, "pending")
    assert Reconciler(core, runs=runs).reconcile().wire()["released"] == [
        {"run_id": "h1", "gate": "approve", "kind": "ask"}
    ]
    assert [t for _, t, _ in _tokens(core).sent] == ["tok-h1"]


def test_the_deciding_approval_of_a_hosted_quorum_interrupt_whose_send_fails_is_pending(core: Core) -> None:
    core.ensure_run("r4")
    interrupts = InterruptService(core)
    spec = InterruptSpec(session_id="r4", prompt="Deploy?", approval=TWO)
    parked, _ = interrupts.create(spec, caller="wf", token="tok-q")
    assert (
        interrupts.resume(parked.interaction_id, ResumeInterrupt(input="go"), caller="alice", voter=Voter("alice"))[
            "resumed"
        ]
        is False
    )
    _tokens(core).fail_next = THROTTLED
    deciding = interrupts.resume(parked.interaction_id, ResumeInterrupt(input="go"), caller="bob", voter=Voter("bob"))
    assert (deciding["resumed"], deciding["delivery"]) == (False, "pending")
    assert core.store.find_interaction(parked.interaction_id).state.status == "answered"  # type: ignore[union-attr]
