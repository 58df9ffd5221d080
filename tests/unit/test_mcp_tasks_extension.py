"""The `io.modelcontextprotocol/tasks` extension (2026-07-28, baton/mcp/tasks_ext.py) at the JSON-RPC level:
a client that declares the extension in its request's `_meta` gets `resultType: "task"` with the task
inline, tasks/get with the result inlined, tasks/update and the empty acknowledgements; a client that
does not keeps the 2025-11-25 shape. Create -> disconnect -> re-attach -> result; cancel; a foreign or
forged task id refused; tasks/update without the declaration is -32021."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

import pytest

from baton.api.auth import agent_token
from baton.mcp.tasks import McpTasks, decode_task_id, encode_task_id
from baton.mcp.tasks_ext import TasksExtension
from baton.services.core import Core
from baton.services.tool_approvals import ToolApprovalService
from tests.conftest import FixedClock
from tests.unit.test_mcp_server import RUN, TOKEN, FakeTime, Mcp
from tests.unit.test_mcp_tasks import APPROVAL

if TYPE_CHECKING:
    from baton.mcp.agent import AgentTools

EXTENSION = "io.modelcontextprotocol/tasks"
DECLARES = {"_meta": {"io.modelcontextprotocol/clientCapabilities": {"extensions": {EXTENSION: {}}}}}
TASK_KEYS = {"resultType", "taskId", "status", "statusMessage", "createdAt", "lastUpdatedAt", "ttlMs", "pollIntervalMs"}


@pytest.fixture
def fake(clock: FixedClock) -> FakeTime:
    return FakeTime(clock)


def session(core: Core, fake: FakeTime) -> Mcp:
    """A fresh client session: a new handler over the same table (the server keeps nothing)."""
    return Mcp(core, fake)


def ext(mcp: Mcp, method: str, params: dict[str, Any]) -> dict[str, Any]:
    """A request declaring the extension; its JSON-RPC body."""
    body: dict[str, Any] = mcp.request(method, {**params, **DECLARES})
    return body


def create(mcp: Mcp, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    result: dict[str, Any] = ext(mcp, "tools/call", {"name": tool, "arguments": arguments})["result"]
    return result


def test_discover_and_initialize_declare_the_extension_and_discover_lists_only_handshake_revisions(
    core: Core, fake: FakeTime
) -> None:
    mcp = session(core, fake)
    discovered = mcp.request("server/discover")["result"]
    assert discovered["capabilities"]["extensions"] == {EXTENSION: {}}
    assert discovered["resultType"] == "complete"
    # Only the handshake revisions: the SDK's client falls back to initialize on such an advertisement.
    assert discovered["supportedVersions"] == ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"]
    init = mcp.request(
        "initialize", {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    )["result"]
    assert init["capabilities"]["extensions"] == {EXTENSION: {}}
    assert "resultType" not in init  # the handshake revision's shape is unchanged


def test_an_approval_task_created_durably_survives_a_disconnect_and_the_result_is_inlined(
    core: Core, fake: FakeTime
) -> None:
    # No `task` param: with the extension declared the server decides, and an approval is a task.
    created = create(session(core, fake), "request_tool_approval", APPROVAL)
    assert set(created) == TASK_KEYS
    assert created["resultType"] == "task" and created["status"] == "working"
    assert created["ttlMs"] is None and created["pollIntervalMs"] == 2000
    run_id, iid = decode_task_id(created["taskId"])
    assert run_id == RUN
    stored = core.store.get_interaction(RUN, iid)  # stored before the reply went out
    assert stored is not None and stored.request.kind == "tool_approval"
    working = ext(session(core, fake), "tasks/get", {"taskId": created["taskId"]})["result"]
    assert working["resultType"] == "complete" and working["status"] == "working" and "result" not in working
    ToolApprovalService(core).answer(
        RUN, iid, {"decision": "edit", "arguments": {"env": "staging"}, "reason": "not prod"}, caller="op"
    )
    again = session(core, fake)  # the first client is gone; a new one re-attaches by id
    done = ext(again, "tasks/get", {"taskId": created["taskId"]})["result"]
    assert done["status"] == "completed" and done["taskId"] == created["taskId"] and done["ttlMs"] is None
    assert done["result"]["isError"] is False
    assert done["result"]["structuredContent"]["decision"]["arguments"] == {"env": "staging"}
    assert done["result"]["_meta"]["io.modelcontextprotocol/related-task"] == {"taskId": created["taskId"]}


def test_a_question_becomes_a_task_and_a_timeout_completes_with_an_error_result_not_failed(
    core: Core, fake: FakeTime
) -> None:
    created = create(session(core, fake), "ask_user", {"question": "Which region?", "timeout_seconds": 60})
    assert created["resultType"] == "task"
    stored = core.store.get_interaction(RUN, decode_task_id(created["taskId"])[1])
    assert stored is not None and stored.request.kind == "question"
    # Nobody answered by the deadline: a tool result with isError (the extension keeps `failed` for
    # JSON-RPC errors), where the 2025-11-25 wire says failed.
    timed_out = stored.model_copy(update={"state": stored.state.model_copy(update={"status": "timed_out"})})
    tasks = McpTasks(cast("AgentTools", None))  # task() and outcome() read only the interaction
    assert tasks.task(timed_out).status == "failed"
    got = TasksExtension(tasks).detailed(timed_out).wire
    assert got["status"] == "completed" and got["result"]["isError"] is True
    assert got["result"]["structuredContent"]["status"] == "timed_out"


def test_a_question_answered_by_a_person_completes_with_the_answer(core: Core, fake: FakeTime) -> None:
    created = create(session(core, fake), "ask_user_async", {"question": "Name?"})
    mcp = session(core, fake)
    mcp.services.questions.answer(RUN, decode_task_id(created["taskId"])[1], "Ada", caller="op")
    done = ext(session(core, fake), "tasks/get", {"taskId": created["taskId"]})["result"]
    assert done["status"] == "completed" and done["result"]["structuredContent"]["answer"] == "Ada"


def test_cancel_acknowledges_empty_and_the_task_reads_cancelled(core: Core, fake: FakeTime) -> None:
    mcp = session(core, fake)
    created = create(mcp, "request_tool_approval", APPROVAL)
    assert ext(mcp, "tasks/cancel", {"taskId": created["taskId"]})["result"] == {"resultType": "complete"}
    got = ext(session(core, fake), "tasks/get", {"taskId": created["taskId"]})["result"]
    assert got["status"] == "cancelled" and "result" not in got
    assert ext(mcp, "tasks/cancel", {"taskId": created["taskId"]})["error"]["data"]["status"] == 410


def test_tasks_update_acknowledges_and_never_supplies_the_persons_input(core: Core, fake: FakeTime) -> None:
    mcp = session(core, fake)
    created = create(mcp, "request_tool_approval", APPROVAL)
    responses = {"inputResponses": {"approve": {"action": "accept", "content": {"decision": "approve"}}}}
    acked = ext(mcp, "tasks/update", {"taskId": created["taskId"], **responses})["result"]
    assert acked == {"resultType": "complete"}
    # The agent's own client cannot answer its approval: the task is still waiting for a person.
    got = ext(session(core, fake), "tasks/get", {"taskId": created["taskId"]})["result"]
    assert got["status"] == "working" and "inputRequests" not in got
    stored = core.store.get_interaction(RUN, decode_task_id(created["taskId"])[1])
    assert stored is not None and stored.state.status == "pending"
    # Without the declaration tasks/update is the extension's: -32021 naming what is missing.
    error = mcp.request("tasks/update", {"taskId": created["taskId"], **responses})["error"]
    assert error["code"] == -32021
    assert error["data"] == {"requiredCapabilities": {"extensions": {EXTENSION: {}}}}


def test_a_foreign_or_forged_task_id_is_refused_on_get_update_and_cancel(core: Core, fake: FakeTime) -> None:
    mcp = session(core, fake)
    created = create(mcp, "ask_user_async", {"question": "Mine?"})
    other = encode_task_id("run-b", decode_task_id(created["taskId"])[1])  # well-formed, another run
    forged = created["taskId"][:-1] + ("0" if created["taskId"][-1] != "0" else "1")
    for method in ("tasks/get", "tasks/update", "tasks/cancel"):
        extra = {"inputResponses": {}} if method == "tasks/update" else {}
        assert ext(mcp, method, {"taskId": other, **extra})["error"]["data"]["status"] == 403, method
        refused = ext(mcp, method, {"taskId": forged, **extra})["error"]
        assert refused["code"] == -32602 and refused["data"] == {"field": "taskId"}, method
    status, body = mcp.post(
        {"jsonrpc": "2.0", "id": 9, "method": "tasks/get", "params": {"taskId": created["taskId"], **DECLARES}},
        token=agent_token(TOKEN, "run-b"),
        run="run-b",
    )
    assert status == 200 and body["error"]["data"]["status"] == 403
    # Still pending after all of it.
    assert ext(mcp, "tasks/get", {"taskId": created["taskId"]})["result"]["status"] == "working"


def test_a_client_without_the_extension_keeps_the_2025_11_25_shapes(core: Core, fake: FakeTime) -> None:
    mcp = session(core, fake)
    handle = mcp.request("tools/call", {"name": "request_tool_approval", "arguments": APPROVAL, "task": {}})["result"]
    assert "resultType" not in handle and handle["task"]["ttl"] is None and handle["task"]["pollInterval"] == 2000
    got = mcp.request("tasks/get", {"taskId": handle["task"]["taskId"]})["result"]
    assert "resultType" not in got and "ttl" in got and "result" not in got
    cancelled = mcp.request("tasks/cancel", {"taskId": handle["task"]["taskId"]})["result"]
    assert cancelled["status"] == "cancelled"
    plain = mcp.request("tools/call", {"name": "ask_user_async", "arguments": {"question": "Plain?"}})["result"]
    assert "task" not in plain and "resultType" not in plain  # no task asked, none declared: the plain result
