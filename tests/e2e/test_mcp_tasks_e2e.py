"""Durable MCP tasks end to end: the official `mcp` client SDK against `baton dev` over Streamable HTTP
(`/mcp`, the deployed `mcp` Lambda's code path). A client creates a tool-approval task and a question
task, disconnects; a person answers through the HTTP API (`POST .../interactions/{id}/answer`); a NEW
client session re-attaches by task id and reads the results. Cancel, and another run's agent refused."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError

from baton.api.auth import agent_token
from baton.mcp.tasks import decode_task_id
from tests.e2e.conftest import LocalStackProcess, start_local_stack, stop_local_stack

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalStackProcess]:
    started = start_local_stack(tmp_path_factory.mktemp("baton-mcp-tasks"), env={"BATON_MCP_MAX_WAIT_SECONDS": "2"})
    yield started
    stop_local_stack(started)


@asynccontextmanager
async def session(stack: LocalStackProcess, run: str) -> AsyncIterator[Client]:
    headers = {"Authorization": f"Bearer {agent_token(stack.token, run)}"}
    async with (
        create_mcp_http_client(headers=headers) as http,
        Client(streamable_http_client(f"{stack.api_url}/mcp", http_client=http)) as client,
    ):
        yield client


async def start_task(client: Client, tool: str, arguments: dict[str, Any]) -> types.Task:
    call = types.CallToolRequestParams(name=tool, arguments=arguments, task=types.TaskMetadata(ttl=60_000))
    return (await client.session.send_request(types.CallToolRequest(params=call), types.CreateTaskResult)).task


async def get_task(client: Client, task_id: str) -> types.GetTaskResult:
    request = types.GetTaskRequest(params=types.GetTaskRequestParams(task_id=task_id))
    return await client.session.send_request(request, types.GetTaskResult)


async def task_result(client: Client, task_id: str) -> types.CallToolResult:
    request = types.GetTaskPayloadRequest(params=types.GetTaskPayloadRequestParams(task_id=task_id))
    return await client.session.send_request(request, types.CallToolResult)


def answer_over_the_api(stack: LocalStackProcess, run: str, task_id: str, answer: Any) -> None:
    interaction_id = decode_task_id(task_id)[1]
    with httpx.Client(base_url=stack.api_url, timeout=30) as http:
        answered = http.post(
            f"/api/runs/{run}/interactions/{interaction_id}/answer",
            json={"answer": answer},
            headers={"Authorization": f"Bearer {stack.token}"},
        )
    assert answered.status_code == 200, answered.text


def test_a_client_disconnects_mid_task_and_a_new_session_reads_the_answers(stack: LocalStackProcess) -> None:
    run = f"mcpt-{uuid.uuid4().hex[:10]}"

    async def scenario() -> None:
        async with session(stack, run) as first:
            approval = await start_task(
                first,
                "request_tool_approval",
                {"tool": "deploy", "arguments": {"env": "prod"}, "reason": "ship", "timeout_seconds": 600},
            )
            question = await start_task(first, "ask_user_async", {"question": "Release name?"})
            assert approval.status == question.status == "working"
        answer_over_the_api(stack, run, approval.task_id, {"decision": "deny", "reason": "freeze until Monday"})
        answer_over_the_api(stack, run, question.task_id, "first light")
        async with session(stack, run) as second:
            assert (await get_task(second, approval.task_id)).status == "completed"
            denied = await task_result(second, approval.task_id)
            assert denied.structured_content is not None
            assert denied.structured_content["decision"]["reason"] == "freeze until Monday"
            assert "do not run the call" in str(denied.content)
            named = await task_result(second, question.task_id)
            assert named.structured_content is not None and named.structured_content["answer"] == "first light"

    anyio.run(scenario)


def test_cancel_over_http_and_another_runs_agent_is_refused(stack: LocalStackProcess) -> None:
    run, other = f"mcpt-{uuid.uuid4().hex[:10]}", f"mcpt-{uuid.uuid4().hex[:10]}"

    async def scenario() -> None:
        async with session(stack, run) as mine:
            task = await start_task(mine, "ask_user", {"question": "Merge?", "timeout_seconds": 600})
        async with session(stack, other) as theirs:
            with pytest.raises(MCPError) as refused:
                await get_task(theirs, task.task_id)
            assert refused.value.error.data["status"] == 403
        async with session(stack, run) as again:
            request = types.CancelTaskRequest(params=types.CancelTaskRequestParams(task_id=task.task_id))
            assert (await again.session.send_request(request, types.CancelTaskResult)).status == "cancelled"
            assert (await get_task(again, task.task_id)).status == "cancelled"

    anyio.run(scenario)
    assert stack.client().pending_questions(run) == []


# ---- the io.modelcontextprotocol/tasks extension (2026-07-28) at the JSON-RPC level over /mcp ----------
EXTENSION = "io.modelcontextprotocol/tasks"
DECLARES = {"io.modelcontextprotocol/clientCapabilities": {"extensions": {EXTENSION: {}}}}


def rpc(stack: LocalStackProcess, run: str, method: str, params: dict[str, Any]) -> dict[str, Any]:
    """One JSON-RPC request declaring the extension, on its own HTTP connection (no session survives)."""
    message = {"jsonrpc": "2.0", "id": 1, "method": method, "params": {**params, "_meta": DECLARES}}
    headers = {"Authorization": f"Bearer {agent_token(stack.token, run)}", "Accept": "application/json"}
    with httpx.Client(base_url=stack.api_url, timeout=30) as http:
        response = http.post("/mcp", json=message, headers=headers)
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def test_the_extension_shape_create_reattach_result_cancel_and_a_foreign_task_refused(
    stack: LocalStackProcess,
) -> None:
    run, other = f"mcpx-{uuid.uuid4().hex[:10]}", f"mcpx-{uuid.uuid4().hex[:10]}"
    approval = {"tool": "deploy", "arguments": {"env": "prod"}, "reason": "ship", "timeout_seconds": 600}
    created = rpc(stack, run, "tools/call", {"name": "request_tool_approval", "arguments": approval})["result"]
    assert created["resultType"] == "task" and created["status"] == "working" and created["ttlMs"] is None
    assert rpc(stack, run, "tasks/get", {"taskId": created["taskId"]})["result"]["status"] == "working"
    answer_over_the_api(stack, run, created["taskId"], {"decision": "approve", "reason": "go"})
    done = rpc(stack, run, "tasks/get", {"taskId": created["taskId"]})["result"]  # a new connection re-attaches
    assert done["resultType"] == "complete" and done["status"] == "completed"
    assert done["result"]["structuredContent"]["decision"]["decision"] == "approve"
    assert rpc(stack, other, "tasks/get", {"taskId": created["taskId"]})["error"]["data"]["status"] == 403

    question = rpc(
        stack, run, "tools/call", {"name": "ask_user", "arguments": {"question": "Merge?", "timeout_seconds": 600}}
    )["result"]
    assert question["resultType"] == "task"
    assert rpc(stack, other, "tasks/cancel", {"taskId": question["taskId"]})["error"]["data"]["status"] == 403
    assert rpc(stack, run, "tasks/cancel", {"taskId": question["taskId"]})["result"] == {"resultType": "complete"}
    assert rpc(stack, run, "tasks/get", {"taskId": question["taskId"]})["result"]["status"] == "cancelled"
    assert stack.client().pending_questions(run) == []
