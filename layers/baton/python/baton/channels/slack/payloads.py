"""The shapes that cross the Slack boundary: what a button carries, what a modal remembers, the parts of
Slack's interaction payloads Baton reads, and the job the interaction function hands to the worker.

A button names the run, the interaction and the option's index, nothing more: never a task token
(tokens stay in the table, `WAIT#<gate>`). Slack's payloads carry far more than this; unknown fields are
ignored, missing required ones are a 400.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

OPTION_ACTION = "baton_option"  # action_id prefix of an option button: baton_option_<n>
OPEN_FORM_ACTION = "baton_open_form"  # the "Answer…" button
MODAL_CALLBACK = "baton_answer"  # callback_id of the answer modal
_ID = r"^[A-Za-z0-9][A-Za-z0-9_-]{0,79}$"  # a run id (baton/domain/fields.py RUN_ID_PATTERN) or an interaction id


class ButtonValue(BaseModel):
    """The `value` of a Baton button (JSON, compact): run, interaction and, for an option, its index."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    r: str = Field(pattern=_ID)
    i: str = Field(pattern=_ID)
    o: int | None = Field(default=None, ge=0)


class MessageRef(BaseModel):
    """Where the message to update is: Slack's `response_url` for a click, channel + ts for a modal."""

    model_config = ConfigDict(frozen=True)

    response_url: str | None = None
    channel: str | None = None
    ts: str | None = None


class ModalMetadata(BaseModel):
    """The modal's `private_metadata`: which interaction it answers and the message to update."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    r: str = Field(pattern=_ID)
    i: str = Field(pattern=_ID)
    c: str | None = None
    t: str | None = None


class _Loose(BaseModel):
    model_config = ConfigDict(extra="ignore")


class SlackUser(_Loose):
    id: str = Field(min_length=1, max_length=64)
    username: str | None = None
    name: str | None = None


class SlackAction(_Loose):
    action_id: str = ""
    value: str | None = None
    block_id: str | None = None


class Container(_Loose):
    channel_id: str | None = None
    message_ts: str | None = None


class SlackView(_Loose):
    callback_id: str = ""
    private_metadata: str = ""
    state: dict[str, dict[str, dict[str, dict[str, Any]]]] = Field(default_factory=dict)

    @property
    def values(self) -> dict[str, dict[str, Any]]:
        return dict(self.state.get("values") or {})


class InteractionPayload(_Loose):
    """A `block_actions` (a button) or a `view_submission` (a modal's Submit); other types are ignored."""

    type: str
    user: SlackUser
    trigger_id: str | None = None
    response_url: str | None = None
    actions: list[SlackAction] = Field(default_factory=list)
    container: Container | None = None
    view: SlackView | None = None


class SlackJob(BaseModel):
    """What the worker does after the ack: answer as `operator`, or tell an unmapped user why not; then
    update the message in place."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    action: Literal["answer", "refuse"]
    slack_user: str
    operator: str | None = None
    run_id: str
    interaction_id: str
    option: int | None = None  # a button's option index
    value: Any = None  # a modal's answer (already checked against the answer schema)
    from_modal: bool = False
    message: MessageRef = Field(default_factory=MessageRef)
