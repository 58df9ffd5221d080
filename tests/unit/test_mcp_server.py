"""The MCP endpoint (baton/mcp/http.py) on in-memory services: the handshake, the tools, the run binding,
bounded waits on an injected clock, and errors a model can act on."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS

from baton.api.auth import agent_token
from baton.contracts import CancelInterrupt, ResumeInterrupt
from baton.domain.approval import ApprovalPolicy
from baton.local.http_adapter import to_proxy_event
from baton.mcp.agent import WaitPolicy
from baton.mcp.http import McpHttpHandler
from baton.mcp.server import PROMPT_NAME
from baton.policy.engine import Policy
from baton.policy.source import FixedPolicy
from baton.runtime.settings import Settings
from baton.runtime.wiring import Services
from baton.services.core import Core
from baton.services.questions import QuestionService
from baton.services.runs import RunService
from tests.conftest import FixedClock

TOKEN = "local-secret"
RUN = "run-a"
STAGING_OK = """
@id("staging-ok")
permit(principal, action == Action::"pass_gate", resource == Gate::"deploy")
when { resource.hasTag("env") && resource.getTag("env") == "staging" };
"""


class FakeTime:
    """A monotonic clock and a sleep that advance the domain clock too: waits cost no real time."""

    def __init__(self, clock: FixedClock) -> None:
        self.clock = clock
        self.now = 1000.0
        self.slept: list[float] = []
        self.on_sleep: list[Any] = []

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds
        self.clock.advance(seconds)
        while self.on_sleep:
            self.on_sleep.pop(0)()


class Mcp:
    def __init__(self, core: Core, fake: FakeTime) -> None:
        settings = Settings.model_validate({"BATON_TABLE_NAME": "t", "BATON_LOCAL_API_TOKEN": TOKEN})
        self.services = Services(settings=settings, core=core, runs=RunService(core))
        policy = WaitPolicy(sleep=fake.sleep, monotonic=fake.monotonic)
        self.handler = McpHttpHandler(lambda: self.services, policy=policy)
        self.next_id = 0

    def post(self, message: Any, *, token: str | None = None, run: str | None = RUN, method: str = "POST") -> Any:
        headers = {"Content-Type": "application/json", "Authorization": f"Bearer {token or agent_token(TOKEN, RUN)}"}
        if run is not None:
            headers["X-Baton-Run"] = run
        event = to_proxy_event(method, "/mcp", headers, json.dumps(message).encode(), "127.0.0.1")
        result = self.handler(event, None)
        return result["statusCode"], json.loads(result["body"]) if result["body"] else None

    def request(self, method: str, params: dict[str, Any] | None = None, **kw: Any) -> Any:
        self.next_id += 1
        status, body = self.post({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params or {}}, **kw)
        assert status == 200, body
        return body

    def call(self, tool: str, *, token: str | None = None, run: str | None = RUN, **arguments: Any) -> dict[str, Any]:
        body = self.request("tools/call", {"name": tool, "arguments": arguments}, token=token, run=run)
        result: dict[str, Any] = body["result"]
        return result


@pytest.fixture
def fake(clock: FixedClock) -> FakeTime:
    return FakeTime(clock)


@pytest.fixture
def mcp(core: Core, fake: FakeTime) -> Mcp:
    return Mcp(core, fake)


def test_the_handshake_lists_tools_prompt_and_instructions(mcp: Mcp) -> None:
    init = mcp.request(
        "initialize", {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    )["result"]
    assert init["protocolVersion"] == "2025-06-18" and "front-load" in init["instructions"].lower()
    assert mcp.post({"jsonrpc": "2.0", "method": "notifications/initialized"}) == (202, None)
    tools = {t["name"]: t for t in mcp.request("tools/list")["result"]["tools"]}
    assert set(tools) == {
        "ask_user_async",
        "await_answers",
        "ask_user",
        "interrupt",
        "get_interrupt",
        "drain_messages",
        "request_tool_approval",
    }
    assert "timeout_seconds" in tools["await_answers"]["inputSchema"]["required"]
    assert "keep working" in tools["ask_user_async"]["description"]
    prompt = mcp.request("prompts/get", {"name": PROMPT_NAME})["result"]
    assert "sync only when truly blocked" in prompt["messages"][0]["content"]["text"].lower()
    # A client on the per-request revision probes server/discover first and falls back to initialize: the
    # answer (which declares the tasks extension) lists only the handshake revisions.
    discovered = mcp.request("server/discover")["result"]
    assert discovered["supportedVersions"] == list(HANDSHAKE_PROTOCOL_VERSIONS)
    assert not set(discovered["supportedVersions"]) & set(MODERN_PROTOCOL_VERSIONS)


def test_ask_two_await_is_bounded_then_returns_both(mcp: Mcp, fake: FakeTime) -> None:
    first = mcp.call("ask_user_async", question="Which database?", options=["postgres", "dynamodb"])
    assert first["structuredContent"]["message"] == "question posted; keep working"
    second = mcp.call("ask_user_async", question="Release name?")
    q1, q2 = first["structuredContent"]["interaction_id"], second["structuredContent"]["interaction_id"]
    mcp.services.questions.answer(RUN, q1, "postgres", caller="op")
    before = fake.now
    pending = mcp.call("await_answers", timeout_seconds=600)["structuredContent"]
    assert pending["status"] == "pending" and [q["interaction_id"] for q in pending["pending"]] == [q2]
    # The bound (20 s) less the reserve for the final reads (1 s): the whole call stays within 20 s.
    assert fake.now - before == pytest.approx(19.0) and pending["waited_s"] == 19.0
    assert max(fake.slept) <= 2.5
    deadline = pending["deadline"]
    mcp.services.questions.answer(RUN, q2, "first light", caller="op")
    done = mcp.call("await_answers", timeout_seconds=5)["structuredContent"]
    assert done["status"] == "answered"
    assert {a["interaction_id"]: a["answer"] for a in done["answers"]} == {q1: "postgres", q2: "first light"}
    assert deadline.startswith("2026-11-30T12:10")  # the first call's 600 s, not re-armed


def test_an_answer_during_the_wait_returns_at_once(mcp: Mcp, fake: FakeTime) -> None:
    q = mcp.call("ask_user_async", question="Go?")["structuredContent"]["interaction_id"]
    fake.on_sleep.append(lambda: mcp.services.questions.answer(RUN, q, "yes", caller="op"))
    done = mcp.call("await_answers", timeout_seconds=60)["structuredContent"]
    assert done["status"] == "answered" and done["waited_s"] < 1


def test_the_deadline_is_kept_across_calls_and_names_the_unanswered(mcp: Mcp, fake: FakeTime) -> None:
    q = mcp.call("ask_user_async", question="Which region?")["structuredContent"]["interaction_id"]
    assert mcp.call("await_answers", timeout_seconds=30)["structuredContent"]["status"] == "pending"
    # A later call asking for a longer wait does not move the stored deadline.
    late = mcp.call("await_answers", timeout_seconds=3600)["structuredContent"]
    assert late["status"] == "timed_out" and [u["interaction_id"] for u in late["unanswered"]] == [q]
    assert fake.now - 1000.0 <= 30.5  # two calls, each within the bound and the deadline


def test_the_call_that_meets_the_deadline_ends_the_await_as_its_timer_would(
    mcp: Mcp, core: Core, clock: FixedClock
) -> None:
    """on_timeout "fail" too: the call ends the await through the service's own deadline path, so the store,
    the run and the reconciler agree with what the agent is told, and a later call says the same."""
    q = mcp.call("ask_user_async", question="Which region?")["structuredContent"]["interaction_id"]
    assert mcp.call("await_answers", timeout_seconds=30)["structuredContent"]["status"] == "pending"
    clock.advance(60)
    late = mcp.call("await_answers", timeout_seconds=30)
    [awaiting] = core.store.list_run_interactions(RUN, kind="await")
    assert awaiting.state.status == "timed_out"
    timed_out = [e.data for e in core.store.list_events(RUN, limit=100) if e.type == "await_timed_out"]
    assert [[u["interaction_id"] for u in e["unanswered"]] for e in timed_out] == [[q]]
    run = core.store.get_run(RUN)
    assert run is not None and run.status != "paused_waiting_human"
    assert QuestionService(core).reconcile_tool_awaits() == ([], [])  # nothing left for the timer
    again = mcp.call("await_answers", timeout_seconds=30)
    assert again == late and late["structuredContent"]["unanswered"] == [
        {"interaction_id": q, "node": "agent", "question": "Which region?"}
    ]


def test_ask_user_blocks_within_the_bound_and_continues_by_id(mcp: Mcp, fake: FakeTime) -> None:
    pending = mcp.call("ask_user", question="Ship it?", options=["yes", "no"], timeout_seconds=300)
    data = pending["structuredContent"]
    assert data["status"] == "pending" and data["waited_s"] == 19.0 and "question_id" in pending["content"][0]["text"]
    mcp.services.questions.answer(RUN, data["question_id"], "yes", caller="op")
    done = mcp.call("ask_user", question_id=data["question_id"], timeout_seconds=300)["structuredContent"]
    assert done == {**done, "status": "answered", "answer": "yes", "question_id": data["question_id"]}
    assert len(mcp.services.questions.pending(RUN)) == 0  # continuing did not post the question again


def test_interrupt_resolution_with_a_state_edit(mcp: Mcp) -> None:
    made = mcp.call(
        "interrupt",
        prompt="Deploy where?",
        schema={"type": "string", "enum": ["staging", "production"]},
        state={"config": {"flag": False}},
        timeout_seconds=600,
    )["structuredContent"]
    assert made["status"] == "pending" and made["waited_s"] == 19.0
    mcp.services.interrupts.resume(
        made["interrupt_id"], ResumeInterrupt(input="staging", stateEdits=["config.flag=true"]), caller="op"
    )
    done = mcp.call("get_interrupt", interrupt_id=made["interrupt_id"])["structuredContent"]
    assert done["status"] == "answered" and done["value"] == "staging" and done["state"] == {"config": {"flag": True}}


def test_drain_delivers_each_answer_once(mcp: Mcp) -> None:
    q = mcp.call("ask_user_async", question="Name?")["structuredContent"]["interaction_id"]
    mcp.services.questions.answer(RUN, q, "Ada", caller="op")
    first = mcp.call("drain_messages", node="agent")["structuredContent"]["messages"]
    assert len(first) == 1 and "Ada" in first[0]["text"]
    assert mcp.call("drain_messages")["structuredContent"]["messages"] == []


def test_pending_questions_are_resources(mcp: Mcp) -> None:
    q = mcp.call("ask_user_async", question="Colour?")["structuredContent"]["interaction_id"]
    listed = mcp.request("resources/list")["result"]["resources"]
    assert [r["uri"] for r in listed] == [f"baton://runs/{RUN}/questions/{q}"]
    read = mcp.request("resources/read", {"uri": listed[0]["uri"]})["result"]["contents"][0]
    assert json.loads(read["text"])["request"]["prompt"] == "Colour?"


def test_an_agent_token_for_run_a_cannot_touch_run_b(mcp: Mcp, core: Core) -> None:
    status, body = mcp.post({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, run="run-b")
    assert status == 403 and "scoped to run run-a" in body["error"]["message"]
    other = agent_token(TOKEN, "run-b")
    made = mcp.call("interrupt", prompt="B's", timeout_seconds=60, token=other, run="run-b")
    refused = mcp.call("get_interrupt", interrupt_id=made["structuredContent"]["interrupt_id"])
    assert refused["isError"] and refused["structuredContent"]["status"] == 403
    assert core.store.list_run_interactions("run-a") == []


def test_http_refusals_come_before_any_work(mcp: Mcp, core: Core) -> None:
    status, body = mcp.post({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, token="wrong")
    assert status == 401 and body["error"]["data"]["error"] == "unauthorized"
    status, body = mcp.post({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, token=TOKEN, run=None)
    assert status == 400 and body["error"]["data"]["field"] == "X-Baton-Run"
    status, _ = mcp.post({}, method="GET")
    assert status == 405
    status, body = mcp.post([{"jsonrpc": "2.0", "id": 1, "method": "ping"}])
    assert status == 200 and body["error"]["code"] == -32600
    assert core.store.list_run_interactions(RUN) == []


def test_bad_arguments_name_the_field_and_change_nothing(mcp: Mcp, core: Core) -> None:
    bad = mcp.call("await_answers", timeout_seconds=0)
    assert bad["isError"] and "timeout_seconds" in bad["content"][0]["text"]
    missing = mcp.call("interrupt", prompt="x")
    assert missing["isError"] and missing["structuredContent"]["problems"][0]["field"] == "timeout_seconds"
    extra = mcp.call("ask_user_async", question="q", run_id="run-b")
    assert extra["isError"] and extra["structuredContent"]["problems"][0]["field"] == "run_id"
    empty = mcp.call("ask_user_async", question="  ")
    assert empty["isError"] and empty["structuredContent"]["path"] == "question"
    assert "Traceback" not in json.dumps([bad, missing, extra, empty])
    assert core.store.list_run_interactions(RUN) == []
    unknown = mcp.request("tools/call", {"name": "answer", "arguments": {}})
    assert unknown["error"]["code"] == -32602  # operator actions are not tools


def test_a_conflict_says_what_happened(mcp: Mcp) -> None:
    made = mcp.call("interrupt", prompt="Approve?", timeout_seconds=60)["structuredContent"]
    mcp.services.interrupts.cancel(made["interrupt_id"], CancelInterrupt(reason="not needed"), caller="op")
    done = mcp.call("get_interrupt", interrupt_id=made["interrupt_id"])["structuredContent"]
    assert done["status"] == "cancelled" and done["reason"] == "not needed" and done["timed_out"] is False


def test_the_docs_carry_the_protocol_prompt_as_served() -> None:
    """The README shows the MCP client configs (`baton dev`'s banner points to its "Agents over MCP");
    docs/agents.md quotes the protocol prompt, word for word as the server sends it."""
    from pathlib import Path

    from baton.mcp.server import protocol_prompt

    root = Path(__file__).resolve().parents[2]
    readme, agents = (root / "README.md").read_text(), (root / "docs" / "agents.md").read_text()
    quoted = "\n".join(f"> {line}" if line else ">" for line in protocol_prompt().rstrip("\n").split("\n"))
    assert "\n### Agents over MCP\n" in readme and quoted in agents
    assert '"url": "http://127.0.0.1:8787/mcp"' in readme and '"mcp", "--run"' in readme


def test_deployed_the_run_comes_from_the_agent_roles_session(core: Core, fake: FakeTime) -> None:
    settings = Settings.model_validate({"BATON_TABLE_NAME": "t", "BATON_AGENT_ROLE_NAME": "baton-ci-agent"})
    services = Services(settings=settings, core=core, runs=RunService(core))
    handler = McpHttpHandler(lambda: services, policy=WaitPolicy(sleep=fake.sleep, monotonic=fake.monotonic))

    def post(session: str, run: str | None = None) -> Any:
        headers = {"Content-Type": "application/json"} | ({"X-Baton-Run": run} if run else {})
        ask = {"name": "ask_user_async", "arguments": {"question": "Deploy?"}}
        event = to_proxy_event(
            "POST",
            "/mcp",
            headers,
            json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": ask}).encode(),
            "10.0.0.1",
        )
        event["requestContext"]["identity"]["userArn"] = (
            f"arn:aws:sts::123456789012:assumed-role/baton-ci-agent/{session}"
        )
        result = handler(event, None)
        return result["statusCode"], json.loads(result["body"])

    status, body = post("run-run-a")
    assert status == 200 and not body["result"]["isError"]
    assert [i.run_id for i in core.store.list_run_interactions("run-a")] == ["run-a"]
    assert post("run-run-a", run="run-b")[0] == 403  # the header disagrees with the session
    assert post("laptop")[0] == 403  # an agent session not named for a run touches nothing
    assert core.store.list_run_interactions("run-b") == []


def test_the_local_stack_routes_mcp_to_the_mcp_function() -> None:
    from baton.local.http_adapter import function_for_path

    assert function_for_path("/mcp") == "mcp" and function_for_path("/mcp/") == "mcp"
    assert function_for_path("/api/runs") == "api" and function_for_path("/mcpx") == "api"


def test_a_new_run_has_no_resources_yet_and_a_failing_store_is_no_stack_trace(mcp: Mcp, core: Core) -> None:
    assert mcp.request("resources/list")["result"]["resources"] == []  # the run does not exist yet

    def broken(*_: Any, **__: Any) -> Any:
        raise RuntimeError("the table is unreachable")

    core.store.get_run = broken  # type: ignore[method-assign]
    core.store.snapshot_run = broken  # type: ignore[method-assign]  # the pending listing's one read
    failed = mcp.request("resources/list")
    assert failed["error"]["code"] == -32603 and "unreachable" not in json.dumps(failed)
    tool = mcp.call("await_answers", timeout_seconds=5)
    assert tool["isError"] and tool["structuredContent"]["error"] == "internal_error"
    assert "Traceback" not in json.dumps(tool) and "unreachable" not in json.dumps(tool)


# ---- deadline ladders on the pause tools (baton/mcp/tools.py AwaitArgs, AskUserArgs) ----------------------
def test_await_answers_takes_the_questions_defaults_at_its_expiry_and_names_the_rest(
    mcp: Mcp, core: Core, fake: FakeTime
) -> None:
    with_default = mcp.call(
        "ask_user_async", question="Which db?", timeout_seconds=3600, on_timeout={"default": "postgres"}
    )["structuredContent"]["interaction_id"]
    without = mcp.call("ask_user_async", question="Release name?")["structuredContent"]["interaction_id"]
    first = mcp.call("await_answers", timeout_seconds=30, on_timeout="use_question_defaults", remind_after=5)
    assert first["structuredContent"]["status"] == "pending"
    [awaiting] = core.store.list_run_interactions(RUN, kind="await")
    assert awaiting.request.ladder is not None and awaiting.request.ladder.on_timeout == "use_question_defaults"
    # No timer runs here: the call that meets the stored deadline takes the defaults itself.
    late = mcp.call("await_answers", timeout_seconds=30)["structuredContent"]
    assert late["status"] == "timed_out" and [u["interaction_id"] for u in late["unanswered"]] == [without]
    taken = core.store.get_interaction(RUN, with_default)
    assert taken is not None and taken.state.answer == "postgres" and taken.state.reason == "timed_out_default"
    assert fake.now - 1000.0 <= 30.5


def test_await_answers_answered_by_the_defaults_alone(mcp: Mcp, fake: FakeTime) -> None:
    q = mcp.call("ask_user_async", question="Go?", timeout_seconds=3600, on_timeout={"default": "no"})
    iid = q["structuredContent"]["interaction_id"]
    first = mcp.call("await_answers", timeout_seconds=25, on_timeout="use_question_defaults")["structuredContent"]
    assert first["status"] == "pending"
    done = mcp.call("await_answers", timeout_seconds=25)["structuredContent"]
    assert done["status"] == "answered" and done["answers"][0] == {
        "interaction_id": iid,
        "node": "agent",
        "question": "Go?",
        "answer": "no",
    }


def test_the_reconciler_takes_the_questions_defaults_at_a_tool_awaits_expiry_as_its_timer_does(
    mcp: Mcp, core: Core, clock: FixedClock
) -> None:
    """A tool-form await nobody calls again, past its expiry: the reconciler's pass is the same deadline as
    its timer's (`time_out_tool_await`), so `use_question_defaults` answers it with the defaults."""
    q = mcp.call("ask_user_async", question="Go?", timeout_seconds=3600, on_timeout={"default": "no"})
    iid = q["structuredContent"]["interaction_id"]
    first = mcp.call("await_answers", timeout_seconds=25, on_timeout="use_question_defaults")["structuredContent"]
    assert first["status"] == "pending"
    clock.advance(60)
    QuestionService(core).reconcile_tool_awaits()
    taken = core.store.get_interaction(RUN, iid)
    assert taken is not None and taken.state.answer == "no" and taken.state.reason == "timed_out_default"
    [awaiting] = core.store.list_run_interactions(RUN, kind="await")
    assert awaiting.state.status == "answered"


def test_await_answers_refuses_a_default_of_its_own_naming_the_field(mcp: Mcp, core: Core) -> None:
    refused = mcp.call("await_answers", timeout_seconds=30, on_timeout={"default": "x"})
    assert refused["isError"] and refused["structuredContent"]["problems"][0]["field"].startswith("on_timeout")
    steps = mcp.call("await_answers", timeout_seconds=30, escalate_after=5)  # escalate_after needs escalate_to
    assert steps["isError"] and "escalate_to" in steps["content"][0]["text"]
    assert core.store.list_run_interactions(RUN) == []


def test_ask_user_with_a_default_says_nobody_answered(mcp: Mcp, core: Core, fake: FakeTime) -> None:
    first = mcp.call(
        "ask_user", question="Ship it?", options=["yes", "no"], timeout_seconds=30, on_timeout={"default": "no"}
    )["structuredContent"]
    assert first["status"] == "pending"
    question = core.store.get_interaction(RUN, first["question_id"])
    assert question is not None and question.request.ladder is not None and question.expires_at is not None
    done = mcp.call("ask_user", question_id=first["question_id"], timeout_seconds=30)
    data = done["structuredContent"]
    assert data["status"] == "answered" and data["answer"] == "no" and data["outcome"] == "timed_out_default"
    assert "nobody answered" in done["content"][0]["text"]


def test_the_interrupt_tool_takes_a_quorum_the_agent_cannot_meet_alone(mcp: Mcp, core: Core) -> None:
    approval = {"approvals": 2, "approvers": ["alice", "bob"]}
    made = mcp.call("interrupt", prompt="Deploy?", timeout_seconds=600, approval=approval)["structuredContent"]
    assert made["status"] == "pending"
    stored = core.store.get_interaction(RUN, made["interrupt_id"])
    assert stored is not None and getattr(stored.request, "approval", None) == ApprovalPolicy(**approval)
    mcp.services.interrupts.resume(made["interrupt_id"], ResumeInterrupt(input="go"), caller="alice")
    one = mcp.call("get_interrupt", interrupt_id=made["interrupt_id"])["structuredContent"]
    assert one["status"] == "pending"  # one approval of two
    mcp.services.interrupts.resume(made["interrupt_id"], ResumeInterrupt(input="go"), caller="bob")
    done = mcp.call("get_interrupt", interrupt_id=made["interrupt_id"])["structuredContent"]
    assert done["status"] == "answered" and done["value"] == "go"


def test_text_not_unicode_and_nan_are_refused_at_the_door_by_path(mcp: Mcp, core: Core) -> None:
    for arguments, words in (
        ({"question": "q\ud800"}, "lone surrogate"),
        ({"question": "q", "timeout_seconds": math.nan}, "NaN"),
    ):
        message = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "ask_user_async", "arguments": arguments},
        }
        status, body = mcp.post(message)  # json.dumps writes `\ud800` and `NaN`, as a client might
        assert status == 422 and body["error"]["data"]["error"] == "validation_failed", body
        [problem] = body["error"]["data"]["problems"]
        assert problem["path"].startswith("params.arguments.") and words in problem["problem"], body
    assert core.store.list_run_interactions(RUN) == []


def test_the_interrupt_tool_passes_its_gated_action_and_a_rules_allow_resumes_it_at_once(
    mcp: Mcp, core: Core, fake: FakeTime
) -> None:
    core.policy = FixedPolicy(Policy.load(STAGING_OK))
    tools = {t["name"]: t for t in mcp.request("tools/list")["result"]["tools"]}
    declared = tools["interrupt"]["inputSchema"]
    gate_schema = declared["$defs"][declared["properties"]["action"]["anyOf"][0]["$ref"].split("/")[-1]]
    assert set(gate_schema["required"]) == {"name", "onAllow", "onDeny"}  # GateAction's own wire names
    gate = {"name": "deploy", "arguments": {"env": "staging"}, "onAllow": "go", "onDeny": "stop"}
    schema = {"type": "enum", "enum": ["go", "stop"]}
    done = mcp.call("interrupt", prompt="Deploy?", schema=schema, timeout_seconds=600, action=gate)
    data = done["structuredContent"]
    assert (data["status"], data["value"], data["resolved_by"]) == ("answered", "go", "policy:staging-ok")
    assert fake.slept == []  # decided at creation: no wait
    # a value the schema refuses is refused at the door, naming the field, and nothing is created
    bad = mcp.call("interrupt", prompt="Deploy?", schema=schema, timeout_seconds=600, action={**gate, "onDeny": "x"})
    assert bad["isError"] and "action.onDeny" in json.dumps(bad["structuredContent"])
    assert len(core.store.list_run_interactions(RUN)) == 1
