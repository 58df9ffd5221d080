"""The Slack worker: what runs after the interaction endpoint acknowledged Slack (`SlackJob`).

It answers through the same services the API uses, as the mapped operator, so the answer's event, the
claim check, the quorum's vote and the conditional write are the API's: of two people clicking at once
exactly one answer is stored, and the other gets the 409 with the winner.

- a question: `QuestionService.answer` (`POST .../interactions/{id}/answer`); on a quorum question each
  click is that operator's vote;
- an ask (a hosted pause or an agent's blocking ask): `RunService.resume` with `{"answer": <value>}`
  (`POST /api/runs/{run}/resume`, the inbox's own form);
- an interrupt: `InterruptService.resume` (a vote on a quorum interrupt);
- a tool approval: `ToolApprovalService.answer` (the route `POST .../interactions/{id}/answer` takes): its
  Approve button is `{"decision": "approve"}`, its Deny modal `{"decision": "deny", "reason": <the text>}`;
- a review: `ReviewService.act` with `__review_action` = `request_changes` or `approve_merge` (the route
  `POST /api/runs/{run}/resume` takes), so its guards hold here too: `approve_merge` is refused when the
  companion's verdict asks for changes or lists blockers, and whatever rule the service applies to who
  may merge applies to a Slack click exactly as to the API.

Then the message is updated in place: through the click's `response_url`, or `chat.update` for a modal
(which has none): "answered by X with Y", "already answered by Z with W", or, for a vote that did not
settle the pause, the count with the buttons left for the others.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from baton.channels.answering import answer_as
from baton.channels.slack.ack import not_an_operator
from baton.channels.slack.blocks import message_blocks, outcome_blocks
from baton.domain.questions import answer_text
from baton.errors import BatonError, ConflictError, GoneError, NotFoundError

if TYPE_CHECKING:
    from baton.channels.slack.jobs import MessageRef, SlackJob
    from baton.contracts import ApprovalView
    from baton.models import Interaction
    from baton.runtime.wiring import Services

log = logging.getLogger("baton")
REVIEW_DONE = {"request_changes": "changes requested", "approve_merge": "approved for merge"}


class SlackReplies(Protocol):
    """The two ways back to a message: Slack's `response_url`, or `chat.update` by channel and ts."""

    def respond(self, response_url: str, body: dict[str, Any]) -> None: ...
    def update(self, channel: str, ts: str, *, text: str, blocks: list[dict[str, Any]]) -> None: ...


@dataclass(frozen=True)
class Outcome:
    text: str
    still_open: bool = False  # a vote counted, the quorum not met: the buttons stay for the others


class SlackWorker:
    def __init__(self, services: Services, replies: SlackReplies, *, inbox_url: str = "") -> None:
        self._services = services
        self._replies = replies
        self._inbox_url = inbox_url

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
        outcome = self._answer(interaction, job, job.operator)
        self._update(interaction, job.message, outcome)
        return outcome.text

    def _answer(self, interaction: Interaction, job: SlackJob, operator: str) -> Outcome:
        try:
            if interaction.request.kind == "review":
                return self._review(interaction, job, operator)
            value = self._value(interaction, job)
            result = answer_as(self._services.core, interaction, value, operator)
        except BatonError as err:
            return _refused(err)
        if result is None:
            return Outcome(f"a {interaction.request.kind} is answered in the Baton inbox, not in Slack")
        if result.approval is not None:
            return self._vote(interaction, result.approval, operator, value)
        if interaction.request.kind == "tool_approval":
            denied = f"denied by {operator}: {value.get('reason')}"
            return Outcome(f"approved by {operator}" if value.get("decision") == "approve" else denied)
        return Outcome(f"answered by {operator} with {answer_text(value)}")

    def _review(self, interaction: Interaction, job: SlackJob, operator: str) -> Outcome:
        action = job.review_action
        if action not in REVIEW_DONE:
            return Outcome("a review is answered with its Request changes / Approve & merge buttons")
        from baton.domain.review_decision import ReviewDecision  # the review wing: loaded by a review only

        decision = ReviewDecision.from_answers({"__review_action": action})
        self._services.review_service().act(
            interaction.run_id, decision, caller=operator, node=interaction.request.node
        )
        return Outcome(f"{REVIEW_DONE[action]} by {operator}")

    def _vote(self, interaction: Interaction, approval: ApprovalView, operator: str, value: Any) -> Outcome:
        count = f"{approval.approvals} of {approval.needed} approvals"
        if approval.decision is None:
            counted = "was already counted" if approval.already_counted else f"counted: {answer_text(value)}"
            return Outcome(f"{operator}'s vote {counted} ({count}; waiting for more votes)", still_open=True)
        current = self._services.core.store.get_interaction(interaction.run_id, interaction.interaction_id)
        settled = current.state if current is not None else None
        if settled is not None and settled.status == "answered":
            decided = f"answered with {answer_text(settled.answer)}"
        else:
            decided = f"{settled.status if settled else 'settled'}"
        return Outcome(f"quorum {approval.decision} with {operator}'s vote ({count}): {decided}")

    @staticmethod
    def _value(interaction: Interaction, job: SlackJob) -> Any:
        if interaction.request.kind == "tool_approval":  # Approve is option 0; the modal's text is the deny's reason
            if job.option is None:
                return {"decision": "deny", "reason": job.value}
            if job.option != 0:
                raise NotFoundError(f"option {job.option} is not one of this tool approval's buttons")
            return {"decision": "approve"}
        if job.option is None:
            return job.value
        options = interaction.request.options or []
        if job.option >= len(options):
            raise NotFoundError(f"option {job.option} is not one of this question's options")
        return options[job.option]

    def _update(self, interaction: Interaction, message: MessageRef, outcome: Outcome) -> None:
        if outcome.still_open:
            blocks = message_blocks(interaction, inbox_url=self._inbox_url, note=outcome.text)
        else:
            blocks = outcome_blocks(interaction, outcome.text)
        try:
            if message.response_url:
                self._replies.respond(
                    message.response_url, {"replace_original": True, "text": outcome.text, "blocks": blocks}
                )
            elif message.channel and message.ts:
                self._replies.update(message.channel, message.ts, text=outcome.text, blocks=blocks)
        except Exception:  # the answer is stored: a message left stale is logged, not retried into a second answer
            log.exception("slack message update failed", extra={"run_id": interaction.run_id})


def _refused(err: BatonError) -> Outcome:
    """What the message says when the service refused: who won a race, too late, or the reason."""
    if isinstance(err, ConflictError):
        won = err.details.get("winner") or {}
        if won.get("status") == "answered":
            return Outcome(f"already answered by {won.get('by')} with {answer_text(won.get('value'))}")
    if isinstance(err, GoneError | NotFoundError):
        return Outcome(f"too late: {err.message}")
    return Outcome(f"not answered: {err.message}")
