"""The Slack worker: what runs after the interaction endpoint acknowledged Slack (`SlackJob`).

It answers through the same services the API uses (`QuestionService.answer`, `InterruptService.resume`)
as the mapped operator, so the answer's event, the claim check and the conditional write are the API's:
of two people clicking at once exactly one answer is stored, and the other gets the 409 with the winner.
Then the message is updated in place: through the click's `response_url`, or `chat.update` for a modal
(which has none): "answered by X with Y", or "already answered by Z with W".
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Protocol

from baton.channels.slack.ack import not_an_operator
from baton.channels.slack.blocks import outcome_blocks
from baton.errors import BatonError, ConflictError, GoneError, NotFoundError
from baton.services.questions import answer_text

if TYPE_CHECKING:
    from baton.channels.slack.payloads import MessageRef, SlackJob
    from baton.models import Interaction
    from baton.runtime.wiring import Services

log = logging.getLogger("baton")


class SlackReplies(Protocol):
    """The two ways back to a message: Slack's `response_url`, or `chat.update` by channel and ts."""

    def respond(self, response_url: str, body: dict[str, Any]) -> None: ...
    def update(self, channel: str, ts: str, *, text: str, blocks: list[dict[str, Any]]) -> None: ...


class SlackWorker:
    def __init__(self, services: Services, replies: SlackReplies) -> None:
        self._services = services
        self._replies = replies

    def run(self, job: SlackJob) -> str:
        """Do the job; returns what the message now says."""
        if job.action == "refuse" or job.operator is None:
            text = not_an_operator(job.slack_user)
            if job.message.response_url:
                body = {"response_type": "ephemeral", "replace_original": False, "text": text}
                self._replies.respond(job.message.response_url, body)
            return text
        interaction = self._services.core.store.get_interaction(job.run_id, job.interaction_id)
        if interaction is None:
            return f"interaction {job.interaction_id} not found"
        outcome = self._answer(interaction, job)
        self._update(interaction, job.message, outcome)
        return outcome

    def _answer(self, interaction: Interaction, job: SlackJob) -> str:
        operator = job.operator
        assert operator is not None
        try:
            value = self._value(interaction, job)
            if interaction.request.kind == "question":
                self._services.questions.answer(job.run_id, job.interaction_id, value, caller=operator)
            elif interaction.request.kind == "interrupt":
                self._services.interrupts.resume(job.interaction_id, value, [], caller=operator)
            else:
                return f"a {interaction.request.kind} is answered in the Baton inbox, not in Slack"
        except ConflictError as err:
            won = err.details.get("winner") or {}
            if won.get("status") == "answered":
                return f"already answered by {won.get('by')} with {answer_text(won.get('value'))}"
            return f"not answered: {err.message}"
        except (GoneError, NotFoundError) as err:
            return f"too late: {err.message}"
        except BatonError as err:
            return f"not answered: {err.message}"
        return f"answered by {operator} with {answer_text(value)}"

    @staticmethod
    def _value(interaction: Interaction, job: SlackJob) -> Any:
        if job.option is None:
            return job.value
        options = interaction.request.options or []
        if job.option >= len(options):
            raise NotFoundError(f"option {job.option} is not one of this question's options")
        return options[job.option]

    def _update(self, interaction: Interaction, message: MessageRef, outcome: str) -> None:
        blocks = outcome_blocks(interaction, outcome)
        try:
            if message.response_url:
                self._replies.respond(
                    message.response_url, {"replace_original": True, "text": outcome, "blocks": blocks}
                )
            elif message.channel and message.ts:
                self._replies.update(message.channel, message.ts, text=outcome, blocks=blocks)
        except Exception:  # the answer is stored: a message left stale is logged, not retried into a second answer
            log.exception("slack message update failed", extra={"run_id": interaction.run_id})
