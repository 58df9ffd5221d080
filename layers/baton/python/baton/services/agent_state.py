"""An agent's opaque state kept with its run (issue 30; `baton.contracts.agent_state`): the route checks
who may touch it (the run's own agent or an operator); this bounds its size and keeps it only for a run
Baton knows. Nothing here is recorded as an event: the state is the agent's, not a decision."""

from __future__ import annotations

from typing import TYPE_CHECKING

from baton.contracts.agent_state import MAX_AGENT_STATE_BYTES, AgentStateDeleted, AgentStateView, AgentStateWritten
from baton.errors import NotFoundError, PayloadTooLargeError

if TYPE_CHECKING:
    from baton.contracts.agent_state import AgentStateWrite
    from baton.services.core import Core


class AgentStateService:
    def __init__(self, core: Core) -> None:
        self.core = core

    def put(self, run_id: str, key: str, body: AgentStateWrite) -> AgentStateWritten:
        size = len(body.state.encode())
        if size > MAX_AGENT_STATE_BYTES:
            raise PayloadTooLargeError(
                f"the state is {size} bytes; the limit is {MAX_AGENT_STATE_BYTES}",
                details={"bytes": size, "max_bytes": MAX_AGENT_STATE_BYTES},
            )
        self.core.require_run(run_id)  # never an orphan item under a run nobody started
        return self.core.store.put_agent_state(
            run_id, key, body.state, expected_version=body.version, at=self.core.now()
        )

    def get(self, run_id: str, key: str) -> AgentStateView:
        found = self.core.store.get_agent_state(run_id, key)
        if found is None:
            raise NotFoundError(f"run {run_id} keeps no agent state {key}", details={"run_id": run_id, "key": key})
        return found

    def delete(self, run_id: str, key: str) -> AgentStateDeleted:
        deleted = self.core.store.delete_agent_state(run_id, key)
        return AgentStateDeleted(run_id=run_id, key=key, deleted=deleted)
