"""An agent's opaque state kept in Baton (issue 30): `/api/runs/{run}/agent-state/{key}`. A run's agent
keeps what it needs to resume after its process exits (the OpenAI Agents SDK's serialised `RunState`)
next to the run, readable only by that run's agent or an operator, and never shown in the inbox. Every
write bumps the version; a write naming a version is conditional on it (409 names the current one)."""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import AfterValidator, BaseModel, BeforeValidator, Field, WithJsonSchema

from baton.contracts.base import Contract
from baton.domain.fields import refuse_non_numbers
from baton.errors import BadRequestError

# Bounded well under DynamoDB's 400 KB item and the API's 256 KB body (the JSON escaping of a state
# can make its body larger than the state itself).
MAX_AGENT_STATE_BYTES = 200 * 1024
AGENT_STATE_KEY_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$")  # one character class: linear


def check_agent_state_key(key: str) -> str:
    if not AGENT_STATE_KEY_PATTERN.match(key):
        raise BadRequestError(
            "an agent-state key must be 1-128 characters of letters, digits, '_', '.', ':' or '-', starting "
            "with a letter or digit",
            details={"key": key[:200]},
        )
    return key


AgentStateKey = Annotated[
    str,
    AfterValidator(check_agent_state_key),
    WithJsonSchema(
        {"type": "string", "pattern": AGENT_STATE_KEY_PATTERN.pattern, "description": "The state's key in its run."}
    ),
]


class AgentStateWrite(BaseModel):
    """`PUT /api/runs/{run}/agent-state/{key}`: the state, conditional on `version` when given."""

    state: str = Field(description=f"The agent's opaque state (at most {MAX_AGENT_STATE_BYTES} bytes as UTF-8).")
    # a count of writes, exact as a JSON number anywhere; `true` is not 1 (refuse_non_numbers)
    version: Annotated[int, Field(ge=0, le=2**53 - 1), BeforeValidator(refuse_non_numbers)] | None = Field(
        default=None,
        description="Write only if the stored version is this one (0: only if none is stored); 409 otherwise.",
    )

    model_config = {"extra": "forbid"}


class AgentStateWritten(Contract):
    """The state's new version."""

    run_id: str
    key: str
    version: int = Field(description="1 for the first write, one more for each write after it.")
    updated_at: str


class AgentStateView(AgentStateWritten):
    """A run's agent state, as its last write left it."""

    state: str


class AgentStateDeleted(Contract):
    """The state is gone (`deleted` is false when there was none)."""

    run_id: str
    key: str
    deleted: bool
