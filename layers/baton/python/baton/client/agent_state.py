"""The SDK's agent-state calls (`baton.Client` inherits them): an agent keeps the state it resumes from
with its run in Baton (`baton.contracts.agent_state`), so its process can exit while a person decides."""

from __future__ import annotations

from typing import Any, Protocol

from baton.client.transport import seg
from baton.contracts.agent_state import AgentStateDeleted, AgentStateView, AgentStateWritten
from baton.errors import NotFoundError


class _Requests(Protocol):
    def request(
        self, method: str, path: str, *, json_body: Any = None, params: dict[str, Any] | None = None
    ) -> Any: ...


def _path(run_id: str, key: str) -> str:
    return f"/api/runs/{seg(run_id)}/agent-state/{seg(key)}"


class AgentStateCalls:
    def put_agent_state(
        self: _Requests, run_id: str, key: str, state: str, *, version: int | None = None
    ) -> AgentStateWritten:
        """Keep `state` under `key` as its next version. With `version` (0: none kept yet) the write is
        conditional: a ConflictError whose `details["version"]` is the current one when it moved."""
        body: dict[str, Any] = {"state": state} | ({} if version is None else {"version": version})
        return AgentStateWritten.model_validate(self.request("PUT", _path(run_id, key), json_body=body))

    def get_agent_state(self: _Requests, run_id: str, key: str) -> AgentStateView | None:
        """The state kept under `key`, or None when none is."""
        try:
            return AgentStateView.model_validate(self.request("GET", _path(run_id, key)))
        except NotFoundError:
            return None

    def delete_agent_state(self: _Requests, run_id: str, key: str) -> AgentStateDeleted:
        return AgentStateDeleted.model_validate(self.request("DELETE", _path(run_id, key)))
