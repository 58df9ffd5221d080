"""The job the interaction endpoint hands to the worker after its ack, and where the message to update
is. Plain dataclasses, so the endpoint's fast path (`ack.py`) builds and sends one without pydantic; the
worker validates what it receives (`SlackJob.from_event`, pydantic over the same dataclasses).

A job names the run, the interaction and what was picked, nothing more: never a task token (tokens stay
in the table, `WAIT#<gate>`).
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

OPTION_ACTION = "baton_option"  # action_id prefix of an option button: baton_option_<n>
OPEN_FORM_ACTION = "baton_open_form"  # the "Answer…" button
REVIEW_ACTION = "baton_review"  # action_id prefix of a review button: baton_review_<action>
MODAL_CALLBACK = "baton_answer"  # callback_id of the answer modal
ID_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,79}$")  # a run id (domain/fields.py) or an interaction id


@dataclass(frozen=True)
class MessageRef:
    """Where the message to update is: Slack's `response_url` for a click, channel + ts for a modal."""

    response_url: str | None = None
    channel: str | None = None
    ts: str | None = None


@dataclass(frozen=True)
class SlackJob:
    """What the worker does after the ack: answer as `operator` (an option by its index, a modal's value,
    or a review action), or tell an unmapped user why not; then update the message in place."""

    action: Literal["answer", "refuse"]
    slack_user: str
    run_id: str
    interaction_id: str
    operator: str | None = None
    option: int | None = None  # a button's option index
    value: Any = None  # a modal's answer (already checked against the answer schema)
    review_action: str | None = None  # a review button: request_changes | approve_merge
    from_modal: bool = False
    message: MessageRef = field(default_factory=MessageRef)

    def to_json(self) -> bytes:
        return json.dumps(asdict(self), separators=(",", ":")).encode("utf-8")

    @classmethod
    def from_event(cls, event: Any) -> SlackJob:
        """The worker's door: the event validated field by field (a 4xx-shaped ValueError otherwise)."""
        from pydantic import TypeAdapter

        job = TypeAdapter(cls).validate_python(event)
        if not (ID_PATTERN.match(job.run_id) and ID_PATTERN.match(job.interaction_id)):
            raise ValueError("a Slack job names a run and an interaction by their ids")
        return job
