"""Web Push (issue 32, item 3): an operator's push subscriptions and the payload sent to them.

The routes (`baton/api/routes_push.py`): `GET /api/push/key` (the VAPID application server key),
`POST|GET /api/me/push-subscriptions`, `DELETE /api/me/push-subscriptions/{subscription_id}`. The payload
(`PushPayload`) is what the inbox's service worker decrypts when an item is escalated or assigned to the
operator; its `one_tap` actions are the answer requests the worker sends (`one_tap_actions`: empty when
the item needs its page). Each action carries a signed credential for its one answer (`auth:
"credential"`): the worker POSTs `{credential, answer}` to `POST /api/push/answer` with no cookie and no
bearer (deployed, the inbox's Cognito token lives only in the page), and the answer is recorded as the
operator the push was sent to (`baton/channels/push/answers.py` PushAnswers)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, JsonValue

from baton.contracts.base import Contract
from baton.domain.fields import refuse_non_numbers

if TYPE_CHECKING:
    from collections.abc import Callable

    from baton.models import Interaction

PushReason = Literal["escalated", "assigned"]
DENIED_FROM_A_NOTIFICATION = "denied from a notification"
INBOX_PATH = "/inbox/"  # the inbox app, served beside the API (the push's url is relative to it)
MAX_ONE_TAP_OPTIONS = 2  # a notification shows two actions on most platforms
ONE_TAP_KINDS = ("question", "tool_approval")  # the only kinds `one_tap_answers` offers an answer for
PUSH_ANSWER_PATH = "/api/push/answer"  # public: the one-tap credential in its body is the authority
MAX_CREDENTIAL_CHARS = 2048


class PushKeys(BaseModel):
    """The browser's keys of one subscription (base64url): its ECDH public key and its auth secret."""

    model_config = ConfigDict(extra="ignore")

    p256dh: str = Field(min_length=1, max_length=256)
    auth: str = Field(min_length=1, max_length=64)


class PushSubscriptionRequest(BaseModel):
    """`PushSubscription.toJSON()` as the browser gives it (the body of `POST /api/me/push-subscriptions`)."""

    model_config = ConfigDict(extra="ignore")

    endpoint: str = Field(min_length=1, max_length=2048, pattern=r"^https?://")
    expirationTime: Annotated[float, BeforeValidator(refuse_non_numbers)] | None = None  # `true` is not 1.0
    keys: PushKeys


class PushSubscription(BaseModel):
    """One stored subscription of an operator (one item under the operator: `baton/adapters/push_subscriptions.py`)."""

    operator: str
    subscription_id: str
    endpoint: str
    keys: PushKeys
    created_at: str

    def info(self) -> dict[str, Any]:
        """The `subscription_info` pywebpush takes."""
        return {"endpoint": self.endpoint, "keys": self.keys.model_dump()}


class PushSubscriptionView(Contract):
    """A subscription as the routes show it: never its keys."""

    subscription_id: str
    endpoint: str
    created_at: str

    @classmethod
    def of(cls, subscription: PushSubscription) -> PushSubscriptionView:
        return cls(
            subscription_id=subscription.subscription_id,
            endpoint=subscription.endpoint,
            created_at=subscription.created_at,
        )


class PushSubscriptionList(Contract):
    subscriptions: list[PushSubscriptionView]


class PushSubscriptionDeleted(Contract):
    deleted: bool = True


class PushKey(Contract):
    """`GET /api/push/key`: the VAPID application server key (base64url, uncompressed P-256 point)."""

    public_key: str


class OneTapAction(Contract):
    """One notification action: the answer request the service worker sends. `auth` says how: with the
    credential in its body and no cookie or bearer (`credential`), or with the inbox session (`session`)."""

    action: str
    title: str
    method: Literal["POST"] = "POST"
    path: str
    body: dict[str, Any]
    auth: Literal["session", "credential"] = "session"
    # Ask once more before sending (the worker shows a notification with one Confirm button): approving a
    # medium-risk tool call. A low-risk one is one tap; a high-risk one needs its page (and a passkey).
    confirm: bool = False


class PushAnswerRequest(BaseModel):
    """The body of `POST /api/push/answer`: a one-tap action's credential and the answer it was made for."""

    model_config = ConfigDict(extra="forbid")

    credential: str = Field(min_length=1, max_length=MAX_CREDENTIAL_CHARS)
    answer: JsonValue


class PushPayload(Contract):
    """What one push carries (JSON, encrypted aes128gcm to each subscription)."""

    title: str
    body: str
    url: str
    run_id: str
    interaction_id: str
    kind: str
    reason: PushReason
    one_tap: list[OneTapAction] = Field(default_factory=list)


def one_tap_answers(i: Interaction) -> list[tuple[str, str, Any, bool]]:
    """The answers a notification may give, as (action, title, answer, confirm): a question's first two
    options, a low or medium risk tool approval's approve (a medium one's after a confirmation) and deny;
    none for an item that needs its page (an interrupt, a review, a tool call whose approve takes a passkey:
    `needs_second_factor`, a question with free text only)."""
    from baton.domain.tool_calls import needs_second_factor
    from baton.models import ToolApprovalPause

    request = i.request
    if request.kind == "question" and request.options:
        options = request.options[:MAX_ONE_TAP_OPTIONS]
        return [(f"answer-{n}", option, option, False) for n, option in enumerate(options)]
    if isinstance(request, ToolApprovalPause) and not needs_second_factor(request.tool):
        deny = {"decision": "deny", "reason": DENIED_FROM_A_NOTIFICATION}
        confirm = request.tool.risk == "medium"  # a call runs on it: one look more than a low-risk one
        return [("approve", "Approve", {"decision": "approve"}, confirm), ("deny", "Deny", deny, False)]
    return []


def one_tap_actions(i: Interaction, sign: Callable[[Any], str] | None = None) -> list[OneTapAction]:
    """The notification's actions: with `sign` (an answer -> its credential), each POSTs its credential to
    `PUSH_ANSWER_PATH`; without, the item's own answer route with the inbox session."""
    if sign is None:
        path = f"/api/runs/{i.run_id}/interactions/{i.interaction_id}/answer"
        return [
            OneTapAction(action=action, title=title, path=path, body={"answer": answer}, confirm=confirm)
            for action, title, answer, confirm in one_tap_answers(i)
        ]
    return [
        OneTapAction(
            action=action,
            title=title,
            path=PUSH_ANSWER_PATH,
            body={"credential": sign(answer), "answer": answer},
            auth="credential",
            confirm=confirm,
        )
        for action, title, answer, confirm in one_tap_answers(i)
    ]


_TITLE: dict[PushReason, str] = {"escalated": "Escalated to you", "assigned": "Assigned to you"}


def push_payload(i: Interaction, reason: PushReason, sign: Callable[[Any], str] | None = None) -> PushPayload:
    """The payload for `i` escalated or assigned to an operator (`sign`: see `one_tap_actions`)."""
    from baton.notify.model import default_title, inbox_item_url

    kind = i.request.kind
    return PushPayload(
        title=_TITLE[reason],
        body=default_title(kind, i.request.prompt),
        url=inbox_item_url(INBOX_PATH, kind, i.run_id, i.interaction_id),
        run_id=i.run_id,
        interaction_id=i.interaction_id,
        kind=kind,
        reason=reason,
        one_tap=one_tap_actions(i, sign),
    )
