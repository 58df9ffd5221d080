"""The SDK's async-question calls (`baton.Client` inherits them): ask and keep working, list, answer,
drain the node's messages, and the await tool (`await_once`, `await_answers`). A question's ladder and
quorum are the API's own models (`baton.client.pauses`); an await's ladder is `AwaitLadderFields`
(`on_timeout`: "fail" or "use_question_defaults")."""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING, Any

from baton.client.base import ClientBase
from baton.client.pauses import body_of, ladder_fields, request_of
from baton.client.transport import decode, seg
from baton.contracts import (
    AnswerResult,
    AskRequest,
    AskResult,
    AwaitAnswered,
    AwaitPending,
    DrainResult,
    MessageView,
    PendingQuestions,
)
from baton.domain.ladder import AwaitLadderFields
from baton.errors import BatonError

if TYPE_CHECKING:
    from baton.client.pauses import ApprovalArg, LadderArg
    from baton.contracts import CollectedAnswer, QuestionView


class AwaitTimeoutError(BatonError):
    """`await_answers(timeout=...)` ran out of time; `details["pending"]` lists the unanswered question ids."""

    code = "await_timed_out"
    http_status = 408


def _await_timeout(run_id: str, timeout: float, pending: AwaitPending) -> AwaitTimeoutError:
    return AwaitTimeoutError(
        f"{len(pending.pending)} question(s) still unanswered after {timeout}s",
        details={"run_id": run_id, "pending": pending.pending},
    )


class QuestionCalls(ClientBase):
    def ask_async(  # noqa: PLR0913 - keyword form of post_question: builds the API's AskRequest
        self,
        run_id: str,
        node: str,
        question: str,
        *,
        options: list[str] | None = None,
        allow_free_text: bool | None = None,
        map_item: int | str | None = None,
        approval: ApprovalArg = None,
        timeout_seconds: int | None = None,
        ladder: LadderArg = None,
        notify: list[str] | None = None,
    ) -> AskResult:
        """ask_user_async: post a question for `node` and return at once (its interaction_id, a message).
        `approval` (`ApprovalPolicy`, or its JSON object: `{"approvals": 2, "approvers": ["alice",
        "group:release"]}`) makes it a quorum question: each operator's answer is a vote; `answer` says
        `pending` with the count until it is met. A `ladder` (`LadderFields`: `{"remind_after": 600,
        "on_timeout": {"default": "no"}}`) needs its `timeout_seconds`."""
        given = {"options": options, "allow_free_text": allow_free_text, "map_item": map_item, "notify": notify}
        asked = request_of(
            AskRequest, ladder, approval, node=node, question=question, timeout_seconds=timeout_seconds, **given
        )
        return self.post_question(run_id, asked)

    def post_question(self, run_id: str, request: AskRequest) -> AskResult:
        """`ask_async` with the API's own request model (`baton.contracts.AskRequest`), as the MCP tools send it."""
        path = f"/api/runs/{seg(run_id)}/questions"
        return AskResult.model_validate(self.request("POST", path, json_body=body_of(request)))

    def pending_questions(self, run_id: str) -> list[QuestionView]:
        found = PendingQuestions.model_validate(self.request("GET", f"/api/runs/{seg(run_id)}/interactions/pending"))
        return found.pending

    def answer(self, run_id: str, interaction_id: str, answer: Any) -> AnswerResult:
        """Answer a question (queued, resumed, released); ConflictError (409) with the winning answer if answered.
        `delivery == "pending"` (HTTP 202): stored, but a gate's send failed; the reconciler delivers it."""
        path = f"/api/runs/{seg(run_id)}/interactions/{seg(interaction_id)}/answer"
        return AnswerResult.model_validate(self.request("POST", path, json_body={"answer": answer}))

    def drain_messages(self, run_id: str, node: str) -> list[MessageView]:
        """The node's queued messages (answers arrive as `[Answer to question <id>] Q: ... — A: ...`), once each."""
        drained = self.request("POST", f"/api/runs/{seg(run_id)}/nodes/{seg(node)}/messages/drain")
        return DrainResult.model_validate(drained).messages

    async def drain_messages_async(self, run_id: str, node: str) -> list[MessageView]:
        """`drain_messages` for asyncio code."""
        return await asyncio.to_thread(self.drain_messages, run_id, node)

    def await_once(
        self,
        run_id: str,
        *,
        timeout: float,
        from_node: str | None = None,
        ladder: AwaitLadderFields | dict[str, Any] | None = None,
    ) -> AwaitAnswered | AwaitPending:
        """One call of the await tool: the answers (200) or the pending ids (202); never blocks. `ladder`
        (`AwaitLadderFields`, first call only): reminders / escalation about the pending questions, and
        `on_timeout` "fail" or "use_question_defaults" at the expiry (docs/workflows.md, "Deadline ladders")."""
        body = ladder_fields(ladder, model=AwaitLadderFields) | {"timeout_seconds": max(1, int(timeout + 0.999))}
        if from_node:
            body["from"] = from_node
        resp = self._transport.send("POST", f"/api/runs/{seg(run_id)}/await", json_body=body)
        result = decode(resp)
        if resp.status_code == 200:
            return AwaitAnswered.model_validate(result)
        return AwaitPending.model_validate(result)

    def await_answers(
        self,
        run_id: str,
        *,
        timeout: float,
        from_node: str | None = None,
        poll_interval: float = 1.0,
        ladder: AwaitLadderFields | dict[str, Any] | None = None,
    ) -> list[CollectedAnswer]:
        """Block until no question in scope is pending; return its answers (interaction_id, node,
        question, answer). The timeout is mandatory; on expiry raises AwaitTimeoutError listing the
        pending ids (with `ladder.on_timeout == "use_question_defaults"` the server's defaults answer
        them at the expiry and they are returned instead)."""
        deadline = time.monotonic() + timeout
        while True:
            outcome = self.await_once(run_id, timeout=timeout, from_node=from_node, ladder=ladder)
            if isinstance(outcome, AwaitAnswered):
                return outcome.answers
            left = deadline - time.monotonic()
            if left <= 0:
                raise _await_timeout(run_id, timeout, outcome)
            time.sleep(min(poll_interval, left))

    async def await_answers_async(
        self,
        run_id: str,
        *,
        timeout: float,
        from_node: str | None = None,
        poll_interval: float = 1.0,
        ladder: AwaitLadderFields | dict[str, Any] | None = None,
    ) -> list[CollectedAnswer]:
        """`await_answers` for asyncio code: the polling sleeps without blocking the event loop."""
        deadline = time.monotonic() + timeout
        while True:
            outcome = await asyncio.to_thread(
                self.await_once, run_id, timeout=timeout, from_node=from_node, ladder=ladder
            )
            if isinstance(outcome, AwaitAnswered):
                return outcome.answers
            left = deadline - time.monotonic()
            if left <= 0:
                raise _await_timeout(run_id, timeout, outcome)
            await asyncio.sleep(min(poll_interval, left))
