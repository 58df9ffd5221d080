"""Durable MCP tasks driven by the official `mcp` client SDK: its Streamable HTTP client talks to the
MCP endpoint's handler in-process (an httpx transport, no socket). A client creates a task, closes its
session; the person answers through the services the API calls; a NEW client session re-attaches with
tasks/get and reads the result with tasks/result. Cancel, and another run's task, too."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from baton.api.auth import agent_token
from baton.local.http_adapter import to_proxy_event
from baton.mcp.tasks import decode_task_id
from baton.services.core import Core
from baton.services.tool_approvals import ToolApprovalService
from tests.conftest import FixedClock
from tests.unit.test_mcp_server import RUN, TOKEN, FakeTime, Mcp

URL = "http://baton.test/mcp"


@pytest.fixture
def fake(clock: FixedClock) -> FakeTime:
    return FakeTime(clock)


def transport(mcp: Mcp) -> httpx.MockTransport:
    """Each HTTP request into the MCP Lambda handler, as API Gateway would hand it over."""

    def handle(request: httpx.Request) -> httpx.Response:
        event = to_proxy_event(request.method, request.url.path, dict(request.headers), request.content, "127.0.0.1")
        result = mcp.handler(event, None)
        return httpx.Response(result["statusCode"], headers=result["headers"], content=result["body"].encode())

    return httpx.MockTransport(handle)


@asynccontextmanager
async def connected(mcp: Mcp, run: str = RUN) -> AsyncIterator[Client]:
    headers = {"Authorization": f"Bearer {agent_token(TOKEN, run)}"}
    async with (
        httpx.AsyncClient(transport=transport(mcp), headers=headers) as http,
        Client(streamable_http_client(URL, http_client=http)) as client,
    ):
        yield client


async def start_task(client: Client, tool: str, arguments: dict[str, Any]) -> types.Task:
    request = types.CallToolRequest(
        params=types.CallToolRequestParams(name=tool, arguments=arguments, task=types.TaskMetadata(ttl=60_000))
    )
    created = await client.session.send_request(request, types.CreateTaskResult)
    return created.task


async def get_task(client: Client, task_id: str) -> types.GetTaskResult:
    request = types.GetTaskRequest(params=types.GetTaskRequestParams(task_id=task_id))
    return await client.session.send_request(request, types.GetTaskResult)


async def task_result(client: Client, task_id: str) -> types.CallToolResult:
    request = types.GetTaskPayloadRequest(params=types.GetTaskPayloadRequestParams(task_id=task_id))
    return await client.session.send_request(request, types.CallToolResult)


def test_sdk_client_reattaches_to_an_answered_tool_approval_and_question(core: Core, fake: FakeTime) -> None:
    mcp = Mcp(core, fake)

    async def scenario() -> None:
        async with connected(mcp) as first:
            approval = await start_task(
                first,
                "request_tool_approval",
                {"tool": "rm", "arguments": {"path": "/tmp/x"}, "reason": "clean up", "timeout_seconds": 600},
            )
            question = await start_task(first, "ask_user", {"question": "Which branch?", "timeout_seconds": 600})
            assert approval.status == question.status == "working"
        # The client is gone; the person answers through the API's services.
        ToolApprovalService(core).answer(RUN, decode_task_id(approval.task_id)[1], {"decision": "approve"}, caller="op")
        mcp.services.questions.answer(RUN, decode_task_id(question.task_id)[1], "main", caller="op")
        async with connected(Mcp(core, fake)) as second:
            assert (await get_task(second, approval.task_id)).status == "completed"
            decided = await task_result(second, approval.task_id)
            assert not decided.is_error and decided.structured_content is not None
            assert decided.structured_content["decision"]["decision"] == "approve"
            assert decided.structured_content["decision"]["arguments"] == {"path": "/tmp/x"}
            answered = await task_result(second, question.task_id)
            assert answered.structured_content == {
                "question_id": decode_task_id(question.task_id)[1],
                "status": "answered",
                "answer": "main",
            }

    anyio.run(scenario)


def test_sdk_client_cancels_and_another_runs_client_is_refused(core: Core, fake: FakeTime) -> None:
    async def scenario() -> types.Task:
        async with connected(Mcp(core, fake)) as mine:
            task = await start_task(mine, "ask_user_async", {"question": "Ship it?"})
        async with connected(Mcp(core, fake), run="run-b") as theirs:
            with pytest.raises(MCPError) as refused:
                await get_task(theirs, task.task_id)
            assert refused.value.error.data["status"] == 403
        async with connected(Mcp(core, fake)) as again:
            request = types.CancelTaskRequest(params=types.CancelTaskRequestParams(task_id=task.task_id))
            cancelled = await again.session.send_request(request, types.CancelTaskResult)
            assert cancelled.status == "cancelled"
            assert (await get_task(again, task.task_id)).status == "cancelled"

        return task

    task = anyio.run(scenario)
    withdrawn = core.store.get_interaction(RUN, decode_task_id(task.task_id)[1])
    assert withdrawn is not None and withdrawn.state.status == "cancelled"
    assert withdrawn.state.answered_by == f"agent:{RUN}"
