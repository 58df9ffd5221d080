"""The field types of an interrupt, shared by `InterruptSpec` (`baton/domain/interrupt_spec.py`), the
commands of `baton/contracts/interrupts.py` (a resume, a cancel, a claim's), the API's request models and
the MCP door's `interrupt` tool: each check raises the Baton error of its status code (a
bad timeout, channel, key or prompt 422). Kept apart from `InterruptSpec` so that a model using only these
types (the MCP tools, a route's request model) imports neither the answer schemas nor the ladder."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field

from baton.domain.fields import refuse_non_numbers
from baton.errors import ValidationFailedError

MAX_TIMEOUT_MS = 7 * 86400 * 1000
MAX_PROMPT_CHARS = 4000
MAX_KEY_CHARS = 200
MAX_REASON_CHARS = 1000  # a cancel's, a take-over's or a reassignment's reason
# A claim's lease (`baton/services/claims.py`): 15 minutes unless the claim asks for 1 minute..8 hours.
DEFAULT_LEASE_SECONDS = 15 * 60
MIN_LEASE_SECONDS = 60
MAX_LEASE_SECONDS = 8 * 3600


def _check_prompt(prompt: str) -> str:
    prompt = prompt.strip()
    if not prompt:
        raise ValidationFailedError("prompt must be a non-empty string", details={"field": "prompt"})
    if len(prompt) > MAX_PROMPT_CHARS:
        raise ValidationFailedError(f"prompt is longer than {MAX_PROMPT_CHARS} characters", details={"field": "prompt"})
    return prompt


def _check_timeout_ms(timeout_ms: int | None) -> int | None:
    if timeout_ms is not None and (isinstance(timeout_ms, bool) or not 0 < timeout_ms <= MAX_TIMEOUT_MS):
        raise ValidationFailedError(
            f"timeoutMs must be an integer in 1..{MAX_TIMEOUT_MS}", details={"field": "timeoutMs"}
        )
    return timeout_ms


def _check_notify(notify: list[str] | None) -> list[str] | None:
    # The channel names live with the notification model, imported by the first list checked (the MCP
    # door's and a route module's import need not build that model).
    from baton.notify.model import CHANNELS

    for n, channel in enumerate(notify or []):
        if channel not in CHANNELS:
            raise ValidationFailedError(
                f"unknown notify channel {channel!r}; expected some of {', '.join(CHANNELS)}",
                details={"path": f"notify[{n}]", "field": "notify"},
            )
    return notify


def _check_key(key: str | None) -> str | None:
    if key is not None and not 0 < len(key) <= MAX_KEY_CHARS:
        raise ValidationFailedError(f"key must be 1-{MAX_KEY_CHARS} characters", details={"field": "key"})
    return key


# The document says what _check_prompt enforces: some non-space text, at most MAX_PROMPT_CHARS of it.
_PROMPT_SCHEMA = {"pattern": r"\S", "maxLength": MAX_PROMPT_CHARS}
Prompt = Annotated[str, AfterValidator(_check_prompt), Field(json_schema_extra=_PROMPT_SCHEMA)]
TimeoutMs = Annotated[int | None, BeforeValidator(refuse_non_numbers), AfterValidator(_check_timeout_ms)]
NotifyChannels = Annotated[list[str] | None, AfterValidator(_check_notify)]
InterruptKey = Annotated[str | None, AfterValidator(_check_key)]
# A whole number of seconds: 60.0 is one (JSON Schema's "integer"), 60.5 and "60" and true are not.
LeaseSeconds = (
    Annotated[int, Field(ge=MIN_LEASE_SECONDS, le=MAX_LEASE_SECONDS), BeforeValidator(refuse_non_numbers)] | None
)
Reason = Annotated[str | None, Field(max_length=MAX_REASON_CHARS)]


class GateAction(BaseModel):
    """The action an interrupt gates, for the policy to decide (`pass_gate` on `Gate::"<name>"`, the
    arguments as the resource's tags), and the resume value each enforced decision passes the gate with."""

    model_config = ConfigDict(populate_by_name=True, frozen=True, extra="forbid")

    name: str = Field(min_length=1, max_length=200, description='The gated action: the policy\'s `Gate::"<name>"`.')
    arguments: dict[str, Any] = Field(default_factory=dict, description="The action's arguments (the gate's tags).")
    on_allow: Any = Field(alias="onAllow", description="The resume value when a rule allows the action.")
    on_deny: Any = Field(alias="onDeny", description="The resume value when a rule denies it (never the allow one).")
