"""The notification every channel renders: one pydantic model, serialized as the SNS message body.

Questions, interrupts, await gates and review turns all go through the same model and the same path
(`SnsNotifier.publish` → SNS topic → per-channel subscriptions). Subscribers (the notify_* Lambdas)
rebuild it with `Notification.from_message(record["Sns"]["Message"])`; they never rely on SNS message
attributes, which are only used for subscription filter policies.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any, Final, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

Channel = Literal["console", "email", "webhook", "slack"]
Kind = Literal[
    "question", "ask", "await", "interrupt", "review", "tool_approval", "run"
]  # "run": a run ended, nothing to answer

CHANNELS: Final[tuple[Channel, ...]] = get_args(Channel)
KINDS: Final[tuple[Kind, ...]] = get_args(Kind)
DEFAULT_CHANNELS: Final[tuple[Channel, ...]] = ("console",)
DECISION_KEY: Final = "decision"  # an ask's choice among its options (baton/services/pause_answers.py counts it)

DEFAULT_EVENT_BY_KIND: Final[dict[Kind, str]] = {
    "question": "human_input_requested",
    "ask": "human_input_requested",
    "await": "await_started",
    "interrupt": "interrupt_created",
    "review": "review_turn",
    "run": "run_succeeded",
}


def _now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def review_actions_hint() -> str:
    """The review actions as one `a|b|c` choice: the list the review service accepts
    (`domain/review_gate.py` ACTIONS), the final ones first."""
    from baton.domain.review_gate import ACTIONS, FINAL_ACTIONS

    return "|".join((*FINAL_ACTIONS, *(a for a in ACTIONS if a not in FINAL_ACTIONS)))


def how_to_answer_for(
    kind: Kind, run_id: str, interaction_id: str | None = None, *, options: list[str] | None = None
) -> str:
    """The CLI command and API path an operator uses to answer, as shown in every channel. The
    command is spelled as it runs where the user is (`baton/hints.py`)."""
    from baton.hints import cli_command

    b = cli_command()
    iid = interaction_id or "<interaction-id>"
    if kind == "ask":
        return _ask_hint(b, run_id, options)
    if kind in ("question", "tool_approval"):  # a tool approval's answer is a decision: `runs decide` flags
        cli = (
            f"{b} runs decide {run_id} {iid} --approve | --deny '<reason>' | --edit '<arguments JSON>'"
            if kind == "tool_approval"
            else f'{b} runs answer {run_id} {iid} "<answer>"'
        )
        return f'CLI: {cli}\nAPI: POST /api/runs/{run_id}/interactions/{iid}/answer {{"answer": ...}}'
    if kind == "interrupt":
        return (
            f"CLI: {b} workflow resume-interrupt {run_id} --interrupt-id {iid} --input '<json>'\n"
            f'API: POST /api/v1/interrupts/{iid}/resume {{"input": ..., "stateEdits": []}}'
        )
    if kind == "review":
        return (
            f"CLI: {b} review show {run_id}, then "
            f"{b} resume --run-id {run_id} --answer __review_action=<{review_actions_hint()}>\n"
            f'API: POST /api/runs/{run_id}/resume {{"answers": {{"__review_action": ...}}}}'
        )
    if kind == "run":
        return f"Nothing to answer: the run ended. CLI: {b} runs show {run_id} · {b} runs events {run_id}"
    # await: the gate is released by answering the run's pending questions.
    return (
        f'CLI: {b} runs questions {run_id}, then {b} runs answer {run_id} <interaction-id> "<answer>"\n'
        f"API: GET /api/runs/{run_id}/interactions/pending"
    )


def _ask_hint(b: str, run_id: str, options: list[str] | None) -> str:
    """A hosted run paused at a human node, or an agent's blocking ask: the answers resume it. With
    options the choice goes under `decision` (the key a quorum counts), one of the options."""
    if options:
        return (
            f"CLI: {b} resume --run-id {run_id} --answer {DECISION_KEY}={options[0]} "
            f"({DECISION_KEY}: one of {', '.join(options)})\n"
            f'API: POST /api/runs/{run_id}/resume {{"answers": {{"{DECISION_KEY}": "{options[0]}"}}}}'
        )
    return (
        f"CLI: {b} resume --run-id {run_id} --answer key=value\n"
        f'API: POST /api/runs/{run_id}/resume {{"answers": {{...}}}}'
    )


class Notification(BaseModel):
    """One request for human attention, fanned out to `channels`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    event: str = Field(min_length=1, description="Event name, e.g. human_input_requested, review_turn.")
    kind: Kind
    run_id: str = Field(min_length=1, description="Run id; the same key as an interrupt's sessionId.")
    interaction_id: str | None = None
    node: str | None = None
    title: str = Field(default="", description="Short headline; derived from kind and prompt when empty.")
    prompt: str = Field(min_length=1, description="What the human is asked.")
    options: list[str] | None = None
    channels: list[Channel] = Field(default_factory=lambda: list(DEFAULT_CHANNELS))
    how_to_answer: str = Field(default="", description="CLI command and API path; derived when empty.")
    review_url: str | None = None
    created_at: str = Field(default_factory=_now_iso, description="ISO-8601 timestamp (UTC).")
    extra: dict[str, Any] = Field(default_factory=dict)

    @field_validator("channels")
    @classmethod
    def _dedupe_channels(cls, value: list[Channel]) -> list[Channel]:
        if not value:
            raise ValueError("at least one channel is required")
        return list(dict.fromkeys(value))

    @field_validator("created_at")
    @classmethod
    def _iso_timestamp(cls, value: str) -> str:
        try:
            datetime.fromisoformat(value)
        except ValueError as exc:
            raise ValueError(f"created_at must be an ISO-8601 timestamp, got {value!r}") from exc
        return value

    @model_validator(mode="after")
    def _derive_defaults(self) -> Notification:
        if not self.title:
            title = default_title(self.kind, self.prompt)
            step = _LADDER_TITLE.get(self.event)  # a deadline ladder's step (baton.domain.ladder)
            object.__setattr__(self, "title", f"{step}: {title}" if step else title)
        if not self.how_to_answer:
            hint = how_to_answer_for(self.kind, self.run_id, self.interaction_id, options=self.options)
            object.__setattr__(self, "how_to_answer", hint)
        return self

    def to_message(self) -> str:
        """The JSON body published to SNS (and POSTed to webhooks)."""
        return json.dumps(self.model_dump(mode="json"), sort_keys=True, separators=(",", ":"))

    @classmethod
    def from_message(cls, message: str | bytes) -> Notification:
        return cls.model_validate_json(message)


_TITLE_PREFIX: Final[dict[Kind, str]] = {
    "question": "Question",
    "ask": "Question (agent waiting)",
    "await": "Gate waiting for answers",
    "interrupt": "Interrupt",
    "review": "Review requested",
    "tool_approval": "Tool call needs approval",
    "run": "Run ended",
}


_LADDER_TITLE: Final[dict[str, str]] = {"reminder_sent": "Reminder", "escalated": "Escalated"}


def default_title(kind: Kind, prompt: str) -> str:
    first_line = " ".join(prompt.split())
    if len(first_line) > 80:
        first_line = first_line[:79].rstrip() + "…"
    return f"{_TITLE_PREFIX[kind]}: {first_line}"


# The web inbox's screen of each kind of item (a question's, the default, takes the run and the id).
_INBOX_ROUTE = {
    "interrupt": "#/interrupt/{iid}",
    "review": "#/review/{run}",
    "await": "#/run/{run}",
    "tool_approval": "#/tool/{run}/{iid}",
}


def inbox_item_url(inbox_url: str, kind: str, run_id: str, interaction_id: str) -> str:
    """The web inbox's screen of one item (its hash routes: inbox/src/util.js `itemHref`), for the links
    a notification carries (email, Web Push)."""
    route = _INBOX_ROUTE.get(kind, "#/question/{run}/{iid}").format(run=run_id, iid=interaction_id)
    return inbox_url.split("#", 1)[0] + route
