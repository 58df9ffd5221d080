"""Web Push routes (issue 32, item 3; operators only): `GET /api/push/key` (the VAPID application server
key; 404 when push is not configured), `POST|GET /api/me/push-subscriptions` and `DELETE
/api/me/push-subscriptions/{subscription_id}` (the caller's own). One call each into
`baton.channels.push.subscriptions.PushService`. And `POST /api/push/answer`, a notification's one-tap answer: no
caller identity (a service worker has neither the inbox's cookie deployed nor its bearer token); the
signed, expiring, single-use credential in the body is the authority (`baton.channels.push.answers.PushAnswers`;
`baton/api/app.py` resolves no caller for it)."""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler import Response, content_types
from aws_lambda_powertools.event_handler.openapi.params import Path
from aws_lambda_powertools.event_handler.router import APIGatewayRouter

from baton.api import deps
from baton.api.contract import answered, responses
from baton.contracts.push import (
    PUSH_ANSWER_PATH,
    PushAnswerRequest,
    PushKey,
    PushSubscriptionDeleted,
    PushSubscriptionList,
    PushSubscriptionRequest,
    PushSubscriptionView,
)
from baton.contracts.questions import AnswerResult

router = APIGatewayRouter()

SubscriptionId = Annotated[str, Path(min_length=1, max_length=64, description="The push subscription's id.")]


@router.get(
    "/api/push/key",
    summary="The VAPID application server key browsers subscribe with; 404 when Web Push is not configured",
    tags=["push"],
    responses=responses({200: PushKey}, 403, 404),
)
def push_key() -> PushKey:
    deps.require_operator("reading the push key")
    return deps.get_services().push_service().key()


@router.post(
    "/api/me/push-subscriptions",
    summary="Subscribe this browser (its PushSubscription.toJSON()) to the caller's notifications; "
    "the same endpoint again: 200 with the same id",
    tags=["push"],
    responses=responses({201: PushSubscriptionView, 200: PushSubscriptionView}, 403),
)
def subscribe(body: PushSubscriptionRequest) -> Response[PushSubscriptionView]:
    caller = deps.require_operator("subscribing to push notifications")
    view, created = deps.get_services().push_service().subscribe(caller.principal, body)
    return Response(status_code=201 if created else 200, content_type=content_types.APPLICATION_JSON, body=view)


@router.get(
    "/api/me/push-subscriptions",
    summary="The caller's push subscriptions",
    tags=["push"],
    responses=responses({200: PushSubscriptionList}, 403),
)
def subscriptions() -> PushSubscriptionList:
    caller = deps.require_operator("reading push subscriptions")
    return deps.get_services().push_service().subscriptions(caller.principal)


@router.delete(
    "/api/me/push-subscriptions/<subscription_id>",
    summary="Revoke one of the caller's push subscriptions",
    tags=["push"],
    responses=responses({200: PushSubscriptionDeleted}, 403, 404),
)
def unsubscribe(subscription_id: SubscriptionId) -> PushSubscriptionDeleted:
    caller = deps.require_operator("revoking a push subscription")
    return deps.get_services().push_service().unsubscribe(caller.principal, subscription_id)


@router.post(
    PUSH_ANSWER_PATH,
    summary="A notification's one-tap answer: its signed credential and the answer it was made for; answers "
    "once as the operator the push was sent to (no caller identity: the credential is the authority)",
    tags=["push"],
    responses=responses({200: AnswerResult, 202: AnswerResult}, 403, 404, 409, 410),
)
def push_answer(body: PushAnswerRequest) -> Response[AnswerResult]:
    return answered(deps.get_services().push_answers().answer(body))
