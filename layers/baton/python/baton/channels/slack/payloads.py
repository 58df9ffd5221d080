"""The shapes that cross the Slack boundary: what a button carries, what a modal remembers, the parts of
Slack's interaction payloads Baton reads, and the job the interaction function hands to the worker.

A button names the run, the interaction and the option's index, nothing more: never a task token
(tokens stay in the table, `WAIT#<gate>`). Slack's payloads carry far more than this; unknown fields are
ignored, missing required ones are a 400.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

# The names the Slack messages use, and the job's shapes, live in jobs.py (no pydantic: the ack's fast path).
from baton.channels.slack.jobs import ID_PATTERN
from baton.channels.slack.jobs import MODAL_CALLBACK as MODAL_CALLBACK
from baton.channels.slack.jobs import OPEN_FORM_ACTION as OPEN_FORM_ACTION
from baton.channels.slack.jobs import OPTION_ACTION as OPTION_ACTION
from baton.channels.slack.jobs import REVIEW_ACTION as REVIEW_ACTION
from baton.channels.slack.jobs import MessageRef as MessageRef
from baton.channels.slack.jobs import SlackJob as SlackJob

_ID = ID_PATTERN.pattern


class ButtonValue(BaseModel):
    """The `value` of a Baton button (JSON, compact): run, interaction and, for an option, its index."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    r: str = Field(pattern=_ID)
    i: str = Field(pattern=_ID)
    o: int | None = Field(default=None, ge=0)


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
