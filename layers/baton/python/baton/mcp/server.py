"""The MCP server: one JSON-RPC message in, one out, stateless (every request stands alone, so it runs in
a Lambda and behind any number of them).

It speaks the initialize-handshake revisions of the protocol (`mcp_types.version.HANDSHAKE_PROTOCOL_VERSIONS`)
with the official SDK's message models (`mcp_types`, the SDK's pure-Python types package). The SDK's own
server (`mcp.server`) is not used here because it cannot ship in the Lambda: it imports `cryptography`
and other native wheels that the layers do not carry, and takes ~2.4 s to import (docs/agents.md,
"MCP"). `server/discover` answers with the handshake revisions only (and the capabilities, where the
`io.modelcontextprotocol/tasks` extension is declared), so a client on the newer per-request revision
falls back to `initialize`, as the SDK's client does for such an advertisement.

Methods: initialize, ping, tools/list, tools/call, prompts/list, prompts/get, resources/list,
resources/read, resources/templates/list, server/discover, and the durable tasks' tasks/get, tasks/result,
tasks/cancel, tasks/list (baton/mcp/tasks.py) and the extension's tasks/update (baton/mcp/tasks_ext.py).
Tool errors are results with `isError` (a model can read them): a bad argument names its field; a Baton
error says its code and status (409: who won, 410: what ended); anything unexpected is logged here and
answered without a stack trace.
"""

from __future__ import annotations

import json
import logging
from importlib.resources import files
from typing import TYPE_CHECKING, Any

import mcp_types as types
from mcp_types.jsonrpc import INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, LATEST_HANDSHAKE_VERSION
from pydantic import BaseModel, ValidationError

from baton.errors import BatonError, NotFoundError
from baton.mcp.rpc_error import McpError
from baton.mcp.tasks import CreatedTask, McpTasks, keep_ttl
from baton.mcp.tasks_ext import EXTENSIONS, TasksExtension, WireResult, discover, negotiated
from baton.mcp.tools import TOOLS, TOOLS_BY_NAME

if TYPE_CHECKING:
    from collections.abc import Callable

    from baton.mcp.agent import AgentTools, Outcome

log = logging.getLogger("baton")

PROMPT_NAME = "async_questions_protocol"
QUESTION_URI = "baton://runs/{run_id}/questions/{interaction_id}"
# Fields of the per-request protocol revision (2026-07-28) the handshake revisions do not have.
_NEWER_FIELDS = {"result_type", "ttl_ms", "cache_scope"}


def protocol_prompt() -> str:
    """The system-prompt section that teaches the async-questions protocol (protocol_prompt.md)."""
    return files("baton.mcp").joinpath("protocol_prompt.md").read_text(encoding="utf-8")


def _dump(result: BaseModel) -> dict[str, Any]:
    if isinstance(result, WireResult):
        return result.wire
    dumped: dict[str, Any] = result.model_dump(mode="json", by_alias=True, exclude_none=True, exclude=_NEWER_FIELDS)
    return keep_ttl(result, dumped)


def _problems(err: ValidationError) -> list[dict[str, str]]:
    return [
        {"field": ".".join(str(p) for p in e.get("loc", ())) or "$", "problem": str(e.get("msg"))}
        for e in err.errors(include_url=False, include_input=False)
    ]


def _hint(err: BatonError) -> str:
    if err.http_status == 409:
        return " Somebody else changed it first; the details say what won. Do not repeat the call as it was."
    if err.http_status == 410:
        return " What this was for has ended (its deadline passed or it finished); do not wait for it again."
    if err.http_status in (400, 413, 422):
        return " Fix the named field and call again."
    return ""


def _error_result(data: dict[str, Any], text: str) -> types.CallToolResult:
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text + "\n" + json.dumps(data, default=str))],
        structured_content=data,
        is_error=True,
    )


class McpServer:
    """The JSON-RPC methods over one run's `AgentTools`."""

    def __init__(self, tools: AgentTools, *, version: str = "0") -> None:
        self.tools = tools
        self.version = version
        self.tasks = McpTasks(tools)
        self.tasks_extension = TasksExtension(self.tasks)
        self._methods: dict[str, Callable[[dict[str, Any]], BaseModel]] = {
            "initialize": self._initialize,
            "server/discover": lambda _: discover(self._capabilities(), protocol_prompt()),
            "ping": lambda _: types.EmptyResult(),
            "tools/list": self._list_tools,
            "tools/call": self._call_tool,
            "prompts/list": self._list_prompts,
            "prompts/get": self._get_prompt,
            "resources/list": self._list_resources,
            "resources/read": self._read_resource,
            "resources/templates/list": lambda _: types.ListResourceTemplatesResult(resource_templates=[]),
            "tasks/get": self.tasks_extension.get,
            "tasks/result": self.tasks.result,
            "tasks/cancel": self.tasks_extension.cancel,
            "tasks/list": self.tasks.list,
            "tasks/update": self.tasks_extension.update,
        }

    def handle(self, message: Any) -> dict[str, Any] | None:
        """One message. A request gets its response (or error); a notification or a response gets None."""
        try:
            request = self._request(message)
        except McpError as err:
            return self._error(None, err.code, err.message, err.data)
        return None if request is None else self._dispatch(request)

    def _dispatch(self, request: types.JSONRPCRequest) -> dict[str, Any]:
        method = self._methods.get(request.method)
        try:
            if method is None:
                raise McpError(METHOD_NOT_FOUND, f"method {request.method!r} is not offered")
            result = method(request.params or {})
        except McpError as err:
            return self._error(request.id, err.code, err.message, err.data)
        except ValidationError as err:
            return self._error(request.id, INVALID_PARAMS, "invalid params", {"problems": _problems(err)})
        except BatonError as err:
            return self._error(request.id, INVALID_PARAMS, err.message, {"error": err.code, "status": err.http_status})
        except Exception:
            log.exception("MCP method failed", extra={"method": request.method, "run_id": self.tools.run_id})
            return self._error(request.id, INTERNAL_ERROR, "Baton failed on this request (it is logged)")
        return types.JSONRPCResponse(jsonrpc="2.0", id=request.id, result=_dump(result)).model_dump(mode="json")

    @staticmethod
    def _request(message: Any) -> types.JSONRPCRequest | None:
        """The request in `message`; None for a notification or a response (nothing to answer)."""
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
            raise McpError(INVALID_REQUEST, "not a JSON-RPC 2.0 message (one object; batches are not used)")
        if "method" not in message:
            return None  # a response to a server request: this server sends none
        try:
            return types.JSONRPCRequest.model_validate(message)
        except ValidationError:
            if "id" not in message:
                return None  # a notification (notifications/initialized, cancelled)
            raise McpError(INVALID_REQUEST, "invalid JSON-RPC request", _problems_of(message)) from None

    @staticmethod
    def _error(request_id: Any, code: int, message: str, data: Any = None) -> dict[str, Any]:
        error = types.ErrorData(code=code, message=message, data=data)
        return types.JSONRPCError(jsonrpc="2.0", id=request_id, error=error).model_dump(mode="json", exclude_none=True)

    # ---- lifecycle -----------------------------------------------------------------------------
    def _initialize(self, params: dict[str, Any]) -> types.InitializeResult:
        asked = types.InitializeRequestParams.model_validate(params).protocol_version
        version = asked if asked in HANDSHAKE_PROTOCOL_VERSIONS else LATEST_HANDSHAKE_VERSION
        return types.InitializeResult(
            protocol_version=version,
            capabilities=self._capabilities(),
            server_info=types.Implementation(name="baton", title="Baton: ask a human", version=self.version),
            instructions=protocol_prompt(),
        )

    @staticmethod
    def _capabilities() -> types.ServerCapabilities:
        return types.ServerCapabilities(
            tools=types.ToolsCapability(list_changed=False),
            prompts=types.PromptsCapability(list_changed=False),
            resources=types.ResourcesCapability(subscribe=False, list_changed=False),
            tasks=types.ServerTasksCapability(  # the 2025-11-25 task wire
                list=types.TasksListCapability(),
                cancel=types.TasksCancelCapability(),
                requests=types.ServerTasksRequestsCapability(
                    tools=types.TasksToolsCapability(call=types.TasksCallCapability())
                ),
            ),
            extensions=EXTENSIONS,  # the io.modelcontextprotocol/tasks extension (2026-07-28)
        )

    # ---- tools ---------------------------------------------------------------------------------
    def _list_tools(self, _: dict[str, Any]) -> types.ListToolsResult:
        return types.ListToolsResult(
            tools=[
                types.Tool(
                    name=spec.name,
                    description=spec.description,
                    input_schema=spec.args.model_json_schema(),
                    annotations=types.ToolAnnotations(read_only_hint=spec.read_only, open_world_hint=True),
                    execution=None
                    if spec.task_support == "forbidden"
                    else types.ToolExecution(task_support=spec.task_support),
                )
                for spec in TOOLS
            ]
        )

    def _call_tool(self, params: dict[str, Any]) -> types.CallToolResult | CreatedTask | WireResult:
        call = types.CallToolRequestParams.model_validate(params)
        spec = TOOLS_BY_NAME.get(call.name)
        if spec is None:
            raise McpError(INVALID_PARAMS, f"unknown tool {call.name!r}; the tools are {sorted(TOOLS_BY_NAME)}")
        # With the extension the server decides: a tool that can wait for a person runs as a task.
        extension = negotiated(params)
        as_task = (call.task is not None or extension) and spec.task_support != "forbidden"
        if spec.task_support == "required" and not as_task:
            return _error_result(
                {"error": "task_required", "status": 400},
                f"{spec.name} runs only as a durable task: call it with the `task` param (tasks capability).",
            )
        try:
            args = spec.args.model_validate(call.arguments or {})
            if as_task:
                created = self.tasks.start(spec.name, args)
                return self.tasks_extension.created(created) if extension else created
            outcome: Outcome = getattr(self.tools, spec.name)(args)
        except ValidationError as err:
            problems = _problems(err)
            listed = "; ".join(f"{p['field']}: {p['problem']}" for p in problems)
            return _error_result(
                {"error": "validation_failed", "status": 422, "problems": problems},
                f"invalid arguments for {spec.name}: {listed}. Fix the named field and call again.",
            )
        except BatonError as err:
            data = {"error": err.code, "status": err.http_status, "message": err.message, **err.details}
            return _error_result(data, f"{err.code} ({err.http_status}): {err.message}.{_hint(err)}")
        except Exception:
            log.exception("MCP tool failed", extra={"tool": spec.name, "run_id": self.tools.run_id})
            return _error_result(
                {"error": "internal_error", "status": 500},
                "internal_error: Baton failed on this call (it is logged); your arguments are not the cause. "
                "Try again later.",
            )
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=outcome.text + "\n" + json.dumps(outcome.data, default=str))],
            structured_content=outcome.data,
            is_error=False,
        )

    # ---- prompts -------------------------------------------------------------------------------
    def _list_prompts(self, _: dict[str, Any]) -> types.ListPromptsResult:
        return types.ListPromptsResult(
            prompts=[
                types.Prompt(
                    name=PROMPT_NAME,
                    title="Async questions protocol",
                    description="The system-prompt section that teaches an agent to ask people through Baton: "
                    "front-load questions, keep working, sync only when truly blocked.",
                )
            ]
        )

    def _get_prompt(self, params: dict[str, Any]) -> types.GetPromptResult:
        name = types.GetPromptRequestParams.model_validate(params).name
        if name != PROMPT_NAME:
            raise McpError(INVALID_PARAMS, f"unknown prompt {name!r}; the prompt is {PROMPT_NAME!r}")
        return types.GetPromptResult(
            description="Add this to the agent's system prompt.",
            messages=[types.PromptMessage(role="user", content=types.TextContent(type="text", text=protocol_prompt()))],
        )

    # ---- resources: one per pending question ---------------------------------------------------
    def _list_resources(self, _: dict[str, Any]) -> types.ListResourcesResult:
        run_id = self.tools.run_id
        try:
            pending = self.tools.services.questions.pending(run_id)
        except NotFoundError:
            pending = []  # the run comes into being with its first question
        return types.ListResourcesResult(
            resources=[
                types.Resource(
                    uri=QUESTION_URI.format(run_id=run_id, interaction_id=i.interaction_id),
                    name=f"question {i.interaction_id}",
                    title=i.request.prompt[:120],
                    description=f"A pending question of node {i.request.node} in run {run_id}",
                    mime_type="application/json",
                )
                for i in pending
            ]
        )

    def _read_resource(self, params: dict[str, Any]) -> types.ReadResourceResult:
        uri = str(types.ReadResourceRequestParams.model_validate(params).uri)
        run_id = self.tools.run_id
        prefix = QUESTION_URI.format(run_id=run_id, interaction_id="")
        interaction_id = uri.removeprefix(prefix) if uri.startswith(prefix) else ""
        found = self.tools.services.core.store.get_interaction(run_id, interaction_id) if interaction_id else None
        if found is None or found.request.kind != "question":
            raise McpError(
                INVALID_PARAMS,
                f"no question resource {uri!r} in run {run_id}",
                {"uri": uri, "error": NotFoundError.code},
            )
        from baton.contracts import QuestionView  # at the first resource read, not at the door's cold start

        text = QuestionView.of(found, self.tools.services.questions.approval_of(found)).model_dump_json(
            exclude_none=True
        )
        return types.ReadResourceResult(
            contents=[types.TextResourceContents(uri=uri, mime_type="application/json", text=text)]
        )


def _problems_of(message: dict[str, Any]) -> dict[str, Any]:
    return {"fields": sorted(k for k in message if k not in ("jsonrpc", "id", "method", "params"))}


__all__ = ["PROMPT_NAME", "McpError", "McpServer", "protocol_prompt"]
