"""`baton mcp --run ID`: Baton's MCP server on stdio, for agent configs that launch a command.

The official SDK's stdio transport (`mcp.server.stdio.stdio_server`) reads and writes the JSON-RPC
lines; each message is sent to Baton's own MCP endpoint (`POST <api>/mcp`, `baton/mcp/http.py`) with
the CLI's credentials (the SDK's `Transport`: the local stack's token from `.baton/local.json` or
`BATON_TOKEN`; deployed, SigV4 from your AWS credential chain) and the run as `?run=`. So stdio and
HTTP clients get the same tools, the same per-call bound and the same run binding: an agent token
for another run than `--run` is refused by the server. Requests are forwarded concurrently (a ping is
answered while a tool call waits).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

if TYPE_CHECKING:
    from baton.client.transport import Transport

MCP_PATH = "/mcp"
HTTP_TIMEOUT_SECONDS = 60.0  # above the server's ~20 s bound per call and API Gateway's 29 s


def _error_for(request_id: Any, message: str, data: Any = None) -> dict[str, Any]:
    from mcp_types.jsonrpc import INTERNAL_ERROR

    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": INTERNAL_ERROR, "message": message, "data": data}}


def forward(transport: Transport, run_id: str | None, message: dict[str, Any]) -> dict[str, Any] | None:
    """One message to the HTTP endpoint; its answer (None for a notification's 202)."""
    from baton.client.transport import ApiUnavailableError

    params = {"run": run_id} if run_id else None
    request_id = message.get("id")
    try:
        resp = transport.send("POST", MCP_PATH, json_body=message, params=params, timeout=HTTP_TIMEOUT_SECONDS)
    except ApiUnavailableError as err:
        return None if request_id is None else _error_for(request_id, err.message)
    if resp.status_code == 202 or not resp.content:
        return None
    try:
        body = resp.json()
    except ValueError:
        body = None
    if not isinstance(body, dict) or body.get("jsonrpc") != "2.0":
        text = f"the Baton MCP endpoint answered HTTP {resp.status_code} without a JSON-RPC body"
        return None if request_id is None else _error_for(request_id, text)
    if request_id is not None and body.get("id") is None and "error" in body:
        body = {**body, "id": request_id}  # an HTTP-level refusal (401/403/400) answers this request
    return None if request_id is None else body


async def serve(transport: Transport, run_id: str | None) -> None:
    import anyio
    import mcp_types as types
    from mcp.server.stdio import stdio_server
    from mcp.shared.message import SessionMessage

    async with stdio_server() as (read_stream, write_stream), anyio.create_task_group() as tg:

        async def relay(message: dict[str, Any]) -> None:
            answer = await anyio.to_thread.run_sync(forward, transport, run_id, message)
            if answer is not None:
                await write_stream.send(SessionMessage(types.jsonrpc_message_adapter.validate_python(answer)))

        async for incoming in read_stream:
            if isinstance(incoming, Exception):
                continue  # a line that is not JSON-RPC: the SDK's reader already skipped it
            dumped = incoming.message.model_dump(mode="json", by_alias=True, exclude_unset=True)
            tg.start_soon(relay, dumped)
        tg.cancel_scope.cancel()  # stdin closed: the client is gone


def mcp_command(
    run: Annotated[
        str | None,
        typer.Option("--run", help="The run the tools act on (not needed with an agent token, which names it)."),
    ] = None,
) -> None:
    """Serve Baton's agent tools over MCP on stdio (for agent configs that launch a command)."""
    import anyio

    from baton.cli.common import fail
    from baton.client.transport import Transport
    from baton.errors import BatonError

    try:
        transport = Transport(timeout=HTTP_TIMEOUT_SECONDS)
    except BatonError as err:
        fail(err)
    try:
        anyio.run(serve, transport, run)
    finally:
        transport.close()
