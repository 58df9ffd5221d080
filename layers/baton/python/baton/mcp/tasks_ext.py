"""The `io.modelcontextprotocol/tasks` extension (2026-07-28) over the same durable tasks as tasks.py.

Negotiation is per request, as the extension says: a client that puts the extension in its request's
`_meta["io.modelcontextprotocol/clientCapabilities"].extensions` gets the extension's shapes; any other
client keeps the 2025-11-25 task wire (the `task` param, tasks/result), byte for byte as before. The
server declares the extension in its capabilities: in `server/discover` (which lists only the handshake
revisions Baton speaks, so an SDK client falls back to `initialize`, as its probe does for such an
advertisement) and in the `initialize` result.

With the extension, the server decides (the client does not ask): every tool that can run as a task
does, because its input comes from a person who may take hours. The reply is `resultType: "task"` with
the task inline, sent after the interaction is stored (a tasks/get for it resolves at once). tasks/get
inlines the result: answered or timed out -> `completed` with the original call's `CallToolResult` (a
timeout is a tool result with `isError`, and the extension keeps `failed` for JSON-RPC errors);
cancelled -> `cancelled`. `input_required` is never used: it would ask the MCP client to supply the
input, and in Baton the input is a person's decision through Baton's channels, never the agent's own
client (which could then approve its own call). So tasks/update finds no outstanding input request: it
checks the task id like tasks/get and acknowledges, ignoring the responses (the extension's rule for
keys that are not outstanding). tasks/update, and a tasks/get or tasks/cancel in the extension's shape,
need the declaration: -32021 for tasks/update without it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import mcp_types as types
from mcp_types.jsonrpc import MISSING_REQUIRED_CLIENT_CAPABILITY
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from pydantic import BaseModel

from baton.mcp.rpc_error import McpError

if TYPE_CHECKING:
    from baton.mcp.tasks import CreatedTask, McpTasks
    from baton.models import Interaction

TASKS_EXTENSION = "io.modelcontextprotocol/tasks"
EXTENSIONS: dict[str, dict[str, Any]] = {TASKS_EXTENSION: {}}  # no settings are defined: {} says "supported"


class WireResult(BaseModel):
    """A result already in its wire shape: the extension's results carry `resultType` and a required
    `ttlMs` (null: kept with its run), which the server's handshake-revision dump leaves out."""

    wire: dict[str, Any]


def negotiated(params: dict[str, Any]) -> bool:
    """Whether this request declares the tasks extension in its per-request client capabilities."""
    meta = params.get("_meta")
    capabilities = meta.get(types.CLIENT_CAPABILITIES_META_KEY) if isinstance(meta, dict) else None
    extensions = capabilities.get("extensions") if isinstance(capabilities, dict) else None
    return isinstance(extensions, dict) and TASKS_EXTENSION in extensions


def discover(capabilities: types.ServerCapabilities, instructions: str) -> WireResult:
    result = types.DiscoverResult(
        supported_versions=list(HANDSHAKE_PROTOCOL_VERSIONS), capabilities=capabilities, instructions=instructions
    )
    return WireResult(wire=result.model_dump(mode="json", by_alias=True, exclude_none=True))


def _fields(task: types.Task) -> dict[str, Any]:
    """A task in the extension's names (`ttlMs`, `pollIntervalMs`)."""
    dumped = task.model_dump(mode="json", by_alias=True, exclude_none=True)
    poll = dumped.pop("pollInterval", None)
    dumped.pop("ttl", None)
    return {**dumped, "ttlMs": task.ttl, **({"pollIntervalMs": poll} if poll is not None else {})}


class TasksExtension:
    """tools/call's task reply and tasks/get, tasks/update, tasks/cancel in the extension's shapes."""

    def __init__(self, tasks: McpTasks) -> None:
        self.tasks = tasks

    @staticmethod
    def created(handle: CreatedTask) -> WireResult:
        return WireResult(wire={"resultType": "task", **_fields(handle.task)})

    def detailed(self, i: Interaction) -> WireResult:
        task = self.tasks.task(i)
        body: dict[str, Any] = {"resultType": "complete", **_fields(task)}
        if i.state.status in ("answered", "timed_out"):
            outcome = self.tasks.outcome(i).model_dump(mode="json", by_alias=True, exclude_none=True)
            body.update(status="completed", result=outcome)
        return WireResult(wire=body)

    def get(self, params: dict[str, Any]) -> BaseModel:
        if not negotiated(params):
            return self.tasks.get(params)
        return self.detailed(self.tasks.of(params))

    def cancel(self, params: dict[str, Any]) -> BaseModel:
        if not negotiated(params):
            return self.tasks.cancel(params)
        self.tasks.cancel(params)
        return WireResult(wire={"resultType": "complete"})  # the extension's empty acknowledgement

    def update(self, params: dict[str, Any]) -> WireResult:
        if not negotiated(params):
            raise McpError(
                MISSING_REQUIRED_CLIENT_CAPABILITY,
                "Missing required client capability",
                {"requiredCapabilities": {"extensions": EXTENSIONS}},
            )
        self.tasks.of(params)  # a task of this run, or the same errors as tasks/get
        return WireResult(wire={"resultType": "complete"})  # no input is ever outstanding: nothing to apply
