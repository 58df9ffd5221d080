"""Async questions: post, list pending, answer, drain the node's messages, and the await tool form."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.event_handler import Response, content_types
from aws_lambda_powertools.event_handler.router import APIGatewayRouter
from pydantic import BaseModel, Field

from baton.api import deps
from baton.api.contract import DELIVERY_PENDING, InteractionId, NodeName, RunId, responses
from baton.api.contract import answered as answered_response
from baton.contracts import (
    AnswerResult,
    AskRequest,
    AskResult,
    AwaitAnswered,
    AwaitPending,
    AwaitRequest,
    DrainResult,
    MessageView,
    PendingQuestions,
    QuestionView,
)
from baton.errors import NotFoundError

router = APIGatewayRouter()


class AnswerRequest(BaseModel):
    answer: Any = Field(description="The operator's answer: a string, or any non-empty JSON value.")
    passkey: dict[str, Any] | None = Field(
        default=None,
        description="An approve of a high risk tool call, where passkeys are set up: the assertion "
        "(PublicKeyCredential.toJSON() of navigator.credentials.get) for the challenge "
        "POST /api/me/webauthn/step-up/options issued for this item and this answer.",
    )

    model_config = {"extra": "forbid"}


@router.post(
    "/api/runs/<run_id>/questions",
    summary="ask_user_async: post a question and keep working",
    tags=["questions"],
    responses=responses({201: AskResult}, 400, 403, 404, 409, 413),
)
def ask(run_id: RunId, body: AskRequest) -> Response[AskResult]:
    deps.require_run(run_id)
    asked = deps.get_services().questions.ask(run_id, body, caller=deps.current_caller().principal)
    return Response(status_code=201, content_type=content_types.APPLICATION_JSON, body=asked)


@router.get(
    "/api/runs/<run_id>/interactions/pending",
    summary="The run's pending questions",
    tags=["questions"],
    responses=responses({200: PendingQuestions}, 400, 403, 404),
)
def pending(run_id: RunId) -> PendingQuestions:
    deps.require_run(run_id)
    questions = deps.get_services().questions
    found = questions.pending(run_id)
    return PendingQuestions(run_id=run_id, pending=[QuestionView.of(i, questions.approval_of(i)) for i in found])


@router.post(
    "/api/runs/<run_id>/interactions/<interaction_id>/answer",
    summary="Answer a question (409 with the winning answer if already answered); on a quorum question, vote",
    tags=["questions"],
    responses=responses({200: AnswerResult, DELIVERY_PENDING: AnswerResult}, 400, 403, 404, 409, 410, 413),
)
def answer(run_id: RunId, interaction_id: InteractionId, body: AnswerRequest) -> Response[AnswerResult]:
    services, operator = deps.get_services(), deps.require_operator("answering a question")
    caller = operator.principal
    # A repeat (same caller, same answer) gets the first one's 200 from the stored answer; a different
    # answer meets the deciding write's 409 with the winner (baton.services.questions).
    try:
        answered = services.questions.answer(run_id, interaction_id, body.answer, caller=caller, groups=operator.groups)
    except NotFoundError:  # a tool approval is answered here too (one more read, only then)
        tool_answered = _answer_tool_approval(run_id, interaction_id, body, caller, operator.groups)
        if tool_answered is None:
            raise
        answered = tool_answered
    return answered_response(answered)


def _answer_tool_approval(
    run_id: str, interaction_id: str, body: AnswerRequest, caller: str, groups: frozenset[str]
) -> AnswerResult | None:
    from baton.services.tool_approvals import KIND, ToolApprovalService

    found = deps.get_services().core.store.get_interaction(run_id, interaction_id)
    if found is None or found.request.kind != KIND:
        return None
    service = ToolApprovalService(deps.get_services().core)
    return service.answer(run_id, interaction_id, body.answer, caller=caller, groups=groups, passkey=body.passkey)


@router.post(
    "/api/runs/<run_id>/nodes/<node>/messages/drain",
    summary="Deliver the node's queued messages (each exactly once, oldest first)",
    tags=["questions"],
    responses=responses({200: DrainResult}, 400, 403, 404),
)
def drain(run_id: RunId, node: NodeName) -> DrainResult:
    deps.require_run(run_id)
    messages = deps.get_services().questions.drain(run_id, node)
    return DrainResult(run_id=run_id, node=node, messages=[MessageView.of(m) for m in messages])


@router.post(
    "/api/runs/<run_id>/await",
    summary="await_answers as a tool: 200 with the answers, or 202 with the pending ids",
    tags=["questions"],
    responses=responses({200: AwaitAnswered, 202: AwaitPending}, 400, 403, 404),
)
def await_answers(run_id: RunId, body: AwaitRequest) -> Response[AwaitAnswered | AwaitPending]:
    deps.require_run(run_id)
    outcome = deps.get_services().questions.await_tool(run_id, body, caller=deps.current_caller().principal)
    status = 200 if isinstance(outcome, AwaitAnswered) else 202
    return Response(status_code=status, content_type=content_types.APPLICATION_JSON, body=outcome)
