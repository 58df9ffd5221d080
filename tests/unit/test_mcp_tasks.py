"""Durable MCP tasks (baton/mcp/tasks.py) at the JSON-RPC level, on in-memory services: a task-augmented
call posts its question or tool approval and answers with a task handle; a new session (a new handler:
the server keeps nothing between requests) re-attaches by task id once a person answered through the
services the API calls; cancel; another run's task and a forged task id are refused."""

from __future__ import annotations

from typing import Any

import pytest

from baton.api.auth import agent_token
from baton.errors import GoneError
from baton.mcp.tasks import decode_task_id, encode_task_id
from baton.services.core import Core
from baton.services.tool_approvals import ToolApprovalService
from tests.conftest import FixedClock
from tests.unit.test_mcp_server import RUN, TOKEN, FakeTime, Mcp

APPROVAL = {
    "tool": "deploy",
    "arguments": {"env": "prod"},
    "reason": "ship the fix",
    "risk": "high",
    "timeout_seconds": 600,
}


@pytest.fixture
def fake(clock: FixedClock) -> FakeTime:
    return FakeTime(clock)


def session(core: Core, fake: FakeTime) -> Mcp:
    """A fresh client session: a new handler over the same table."""
    return Mcp(core, fake)


def start(mcp: Mcp, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    body = mcp.request("tools/call", {"name": tool, "arguments": arguments, "task": {"ttl": 60000}})
    assert "result" in body, body
    task: dict[str, Any] = body["result"]["task"]
    return task


def test_initialize_and_tools_list_declare_task_support(core: Core, fake: FakeTime) -> None:
    mcp = session(core, fake)
    init = mcp.request(
        "initialize", {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    )["result"]
    assert init["capabilities"]["tasks"] == {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}
    tools = {t["name"]: t for t in mcp.request("tools/list")["result"]["tools"]}
    assert tools["request_tool_approval"]["execution"] == {"taskSupport": "required"}
    assert tools["ask_user"]["execution"] == {"taskSupport": "optional"}
    assert "execution" not in tools["drain_messages"]


def test_a_tool_approval_task_survives_a_disconnect_and_reads_the_decision(core: Core, fake: FakeTime) -> None:
    task = start(session(core, fake), "request_tool_approval", APPROVAL)
    assert task["status"] == "working" and task["pollInterval"] == 2000 and task["ttl"] is None
    assert decode_task_id(task["taskId"])[0] == RUN
    iid = decode_task_id(task["taskId"])[1]
    stored = core.store.get_interaction(RUN, iid)  # stored before the handle went out
    assert stored is not None and stored.request.kind == "tool_approval"
    ToolApprovalService(core).answer(
        RUN, iid, {"decision": "edit", "arguments": {"env": "staging"}, "reason": "not prod"}, caller="op"
    )
    again = session(core, fake)  # the first client is gone; a new one re-attaches by id
    got = again.request("tasks/get", {"taskId": task["taskId"]})["result"]
    assert got["status"] == "completed" and got["taskId"] == task["taskId"]
    result = again.request("tasks/result", {"taskId": task["taskId"]})["result"]
    assert result["isError"] is False
    assert result["structuredContent"]["decision"]["decision"] == "edit"
    assert result["structuredContent"]["decision"]["arguments"] == {"env": "staging"}
    assert result["_meta"]["io.modelcontextprotocol/related-task"] == {"taskId": task["taskId"]}


def test_a_question_task_completes_with_the_answer(core: Core, fake: FakeTime) -> None:
    task = start(session(core, fake), "ask_user", {"question": "Which region?", "timeout_seconds": 600})
    listed = session(core, fake).request("tasks/list")["result"]["tasks"]
    assert [t["taskId"] for t in listed] == [task["taskId"]]
    mcp = session(core, fake)
    mcp.services.questions.answer(RUN, decode_task_id(task["taskId"])[1], "eu-west-1", caller="op")
    assert mcp.request("tasks/get", {"taskId": task["taskId"]})["result"]["status"] == "completed"
    result = mcp.request("tasks/result", {"taskId": task["taskId"]})["result"]
    assert result["structuredContent"]["answer"] == "eu-west-1" and result["isError"] is False


def test_tasks_result_of_a_pending_task_waits_within_the_bound_then_says_poll(core: Core, fake: FakeTime) -> None:
    mcp = session(core, fake)
    task = start(mcp, "ask_user_async", {"question": "Name?"})
    error = mcp.request("tasks/result", {"taskId": task["taskId"]})["error"]
    assert error["data"] == {"taskId": task["taskId"], "status": "working"}
    assert sum(fake.slept) <= 20


def test_cancel_withdraws_the_approval_and_it_cannot_be_answered_or_cancelled_again(core: Core, fake: FakeTime) -> None:
    mcp = session(core, fake)
    task = start(mcp, "request_tool_approval", APPROVAL)
    cancelled = mcp.request("tasks/cancel", {"taskId": task["taskId"]})["result"]
    assert cancelled["status"] == "cancelled"
    again = mcp.request("tasks/cancel", {"taskId": task["taskId"]})["error"]
    assert again["data"]["status"] == 410
    result = session(core, fake).request("tasks/result", {"taskId": task["taskId"]})["result"]
    assert result["isError"] is True and "do not run" in result["content"][0]["text"]
    # The withdrawal is in the run's log, with who withdrew it; a late answer is refused (410, naming the
    # withdrawal: a closed pause of every kind answers so, by the one engine baton.services.decide).
    logged = [e for e in core.store.list_events(RUN) if e.type == "interrupt_cancelled"]
    assert [(e.data["by"], e.data["interaction_id"]) for e in logged] == [
        (f"agent:{RUN}", decode_task_id(task["taskId"])[1])
    ]
    with pytest.raises(GoneError) as refused:
        ToolApprovalService(core).answer(RUN, decode_task_id(task["taskId"])[1], {"decision": "approve"}, caller="op")
    assert refused.value.details["winner"]["by"] == f"agent:{RUN}"


def test_a_foreign_or_forged_task_id_is_refused(core: Core, fake: FakeTime) -> None:
    mcp = session(core, fake)
    task = start(mcp, "ask_user_async", {"question": "Mine?"})
    iid = decode_task_id(task["taskId"])[1]
    other = encode_task_id("run-b", iid)  # a well-formed id of another run
    refused = mcp.request("tasks/get", {"taskId": other})["error"]
    assert refused["data"]["status"] == 403
    forged = task["taskId"][:-1] + ("0" if task["taskId"][-1] != "0" else "1")
    assert mcp.request("tasks/get", {"taskId": forged})["error"]["data"] == {"field": "taskId"}
    # run-b's own agent cannot read run-a's task either: its connection is bound to run-b.
    status, body = mcp.post(
        {"jsonrpc": "2.0", "id": 9, "method": "tasks/get", "params": {"taskId": task["taskId"]}},
        token=agent_token(TOKEN, "run-b"),
        run="run-b",
    )
    assert status == 200 and body["error"]["data"]["status"] == 403


def test_request_tool_approval_without_a_task_is_refused_with_a_readable_error(core: Core, fake: FakeTime) -> None:
    body = session(core, fake).request("tools/call", {"name": "request_tool_approval", "arguments": APPROVAL})
    result = body["result"]
    assert result["isError"] is True and result["structuredContent"]["error"] == "task_required"


def test_an_unanswered_approval_completes_denied_at_its_deadline_and_a_withdrawn_one_stays_cancelled(
    core: Core, clock: FixedClock, fake: FakeTime
) -> None:
    mcp = session(core, fake)
    unanswered = start(mcp, "request_tool_approval", APPROVAL)
    withdrawn = start(mcp, "request_tool_approval", {**APPROVAL, "arguments": {"env": "dev"}})
    mcp.request("tasks/cancel", {"taskId": withdrawn["taskId"]})
    clock.advance(601)
    ToolApprovalService(core).take_due_defaults()  # the reconciler's pass
    again = session(core, fake)
    assert again.request("tasks/get", {"taskId": withdrawn["taskId"]})["result"]["status"] == "cancelled"
    assert again.request("tasks/get", {"taskId": unanswered["taskId"]})["result"]["status"] == "completed"
    denied = again.request("tasks/result", {"taskId": unanswered["taskId"]})["result"]["structuredContent"]
    assert denied["decision"]["decision"] == "deny" and denied["decision"]["outcome"] == "timed_out_default"


def test_a_task_id_of_this_run_naming_no_task_is_not_found(core: Core, fake: FakeTime) -> None:
    error = session(core, fake).request("tasks/get", {"taskId": encode_task_id(RUN, "no-such")})["error"]
    assert error["data"]["status"] == 404
