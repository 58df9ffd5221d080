"""Web Push (issue 32, item 3): an operator's subscriptions (`PushService`, behind `baton/api/routes_push.py`),
the push to them when an item is escalated or assigned to the operator (`WebPush`, the `OperatorPush`
port the ladder's escalation and a claim's reassign call through `Core.push`), and a notification's
one-tap answer (`PushAnswers`, behind `POST /api/push/answer`).

A one-tap credential is an email answer link's format under the push context
(`baton/channels/email/links.py`): bound to the run, the item, the operator the push went to, the digest
of its one answer, and an expiry (the item's deadline or `CREDENTIAL_SECONDS`, whichever is first);
signed with a key derived from the VAPID key (`VapidKeys.answer_key`: the functions that push already
read it); spent once through the email links' record (`AnswerLinkStore.claim_link`, channel `push`).

No VAPID key configured (`keys()` is None): push is off, `GET /api/push/key` is a 404 that says so, and
nothing is sent. A push is best effort: a subscription the push service no longer serves (404/410) is
deleted, any other failure is logged, and the escalation or reassign goes on."""

from __future__ import annotations

import hashlib
import logging
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, Final

from baton.channels.answering import answer_as
from baton.channels.email.links import (
    PUSH_ANSWER_CONTEXT,
    LinkClaims,
    LinkRefused,
    LinkUse,
    answer_digest,
    new_link_id,
    read_link,
    sign_link,
)
from baton.contracts.push import (
    PushKey,
    PushSubscription,
    PushSubscriptionDeleted,
    PushSubscriptionList,
    PushSubscriptionView,
    push_payload,
)
from baton.contracts.questions import AnswerResult
from baton.errors import (
    BadRequestError,
    BatonError,
    ConflictError,
    ForbiddenError,
    GoneError,
    NotFoundError,
    winner,
)
from baton.ids import iso, parse_iso
from baton.notify.push import DEFAULT_SUBJECT, MAX_PLAINTEXT_BYTES, SubscriptionGone, send_web_push

if TYPE_CHECKING:
    from collections.abc import Callable

    from baton.contracts.push import PushAnswerRequest, PushReason, PushSubscriptionRequest
    from baton.models import Interaction
    from baton.notify.push import VapidKeys
    from baton.ports import AnswerLinkStore
    from baton.push_ports import PushSubscriptionStore
    from baton.services.core import Core

log = logging.getLogger("baton")

PUSH_NOT_CONFIGURED: Final = (
    "Web Push is not configured on this stack: no VAPID key (deployed: fill the secret with "
    "`baton push init-vapid --secret-id <id>`; locally `baton dev` makes one)"
)


CREDENTIAL_SECONDS: Final = 3600  # a one-tap answer lives an hour at most (less when its item closes sooner)
PUSH_CHANNEL: Final = "push"  # the decision's `via` (InteractionAnswered)
ONE_TAP_KINDS: Final = ("question", "tool_approval")  # the kinds a notification answers (`one_tap_answers`)
STALE_CLAIM_SECONDS: Final = 60  # a claim whose request died may be taken over after this (as a mail link's)


def _utc_now() -> datetime:
    return datetime.now(UTC)


def credential_expiry(interaction: Interaction, now: datetime) -> int:
    """Unix seconds: the item's deadline or `CREDENTIAL_SECONDS` from now, whichever is first."""
    until = now + timedelta(seconds=CREDENTIAL_SECONDS)
    if interaction.expires_at:
        until = min(until, parse_iso(interaction.expires_at))
    return int(until.timestamp())


def credential_signer(interaction: Interaction, operator: str, key: bytes, now: datetime) -> Callable[[Any], str]:
    """An answer -> its one-tap credential for `operator` on `interaction` (a new link id each)."""
    expires_at = credential_expiry(interaction, now)

    def sign(answer: Any) -> str:
        claims = LinkClaims(
            link_id=new_link_id(),
            run_id=interaction.run_id,
            interaction_id=interaction.interaction_id,
            recipient=operator,
            expires_at=expires_at,
            answer=answer_digest(answer),
        )
        return sign_link(claims, key, context=PUSH_ANSWER_CONTEXT)

    return sign


def subscription_id_of(endpoint: str) -> str:
    """A subscription's id: its endpoint's digest, so the same browser subscribing again is the same one."""
    return "ps-" + hashlib.sha256(endpoint.encode()).hexdigest()[:24]


class PushService:
    """What the push routes do for the calling operator."""

    def __init__(
        self, store: PushSubscriptionStore, keys: Callable[[], VapidKeys | None], now: Callable[[], str]
    ) -> None:
        self._store, self._keys, self._now = store, keys, now

    def key(self) -> PushKey:
        keys = self._keys()
        if keys is None:
            raise NotFoundError(PUSH_NOT_CONFIGURED)
        return PushKey(public_key=keys.public_key)

    def subscribe(self, operator: str, request: PushSubscriptionRequest) -> tuple[PushSubscriptionView, bool]:
        """Store the browser's subscription; the same endpoint again: the stored one, created False."""
        subscription = PushSubscription(
            operator=operator,
            subscription_id=subscription_id_of(request.endpoint),
            endpoint=request.endpoint,
            keys=request.keys,
            created_at=self._now(),
        )
        stored, created = self._store.add_subscription(subscription)
        return PushSubscriptionView.of(stored), created

    def subscriptions(self, operator: str) -> PushSubscriptionList:
        return PushSubscriptionList(
            subscriptions=[PushSubscriptionView.of(s) for s in self._store.list_subscriptions(operator)]
        )

    def unsubscribe(self, operator: str, subscription_id: str) -> PushSubscriptionDeleted:
        """Delete one of the operator's own subscriptions (another's id is a 404, as an unknown one)."""
        if not self._store.delete_subscription(operator, subscription_id):
            raise NotFoundError(
                f"no push subscription {subscription_id} of yours", details={"subscription_id": subscription_id}
            )
        return PushSubscriptionDeleted()


class WebPush:
    """The `OperatorPush` port: one push per subscription of the operator, the payload of
    `baton.contracts.push.push_payload`. `send` is `baton.notify.push.send_web_push` (a test passes its own)."""

    def __init__(
        self,
        store: PushSubscriptionStore,
        keys: Callable[[], VapidKeys | None],
        *,
        subject: str = DEFAULT_SUBJECT,
        send: Callable[..., int] = send_web_push,
        clock: Callable[[], datetime] = _utc_now,
    ) -> None:
        self._store, self._keys, self._subject, self._send, self._clock = store, keys, subject, send, clock

    def push(self, operator: str, interaction: Interaction, reason: PushReason) -> int:
        """How many subscriptions took it. Never raises."""
        try:
            keys = self._keys()
            if keys is None:
                return 0
            sign = credential_signer(interaction, operator, keys.answer_key, self._clock())
            payload = push_payload(interaction, reason, sign)
            data = payload.model_dump_json(by_alias=True).encode()
            if len(data) > MAX_PLAINTEXT_BYTES:  # long options: sent without actions (a tap opens the item)
                data = payload.model_copy(update={"one_tap": []}).model_dump_json(by_alias=True).encode()
            return sum(self._push_one(s, data, keys) for s in self._store.list_subscriptions(operator))
        except Exception:
            log.exception("web push failed", extra={"run_id": interaction.run_id, "operator": operator})
            return 0

    def _push_one(self, subscription: PushSubscription, data: bytes, keys: VapidKeys) -> int:
        try:
            self._send(subscription.info(), data, keys, subject=self._subject)
        except SubscriptionGone:
            log.info("push subscription gone: deleted", extra={"subscription_id": subscription.subscription_id})
            self._store.delete_subscription(subscription.operator, subscription.subscription_id)
            return 0
        except Exception:
            log.exception("web push failed", extra={"subscription_id": subscription.subscription_id})
            return 0
        return 1


class PushAnswers:
    """`POST /api/push/answer`: a one-tap credential's answer, given once, as the operator it was made for,
    through the API's own service for the kind (the same 409 naming the winner, the same 410 past the
    deadline). Refused before any read: no push key (404), a credential that is malformed (400), altered
    or for another answer (403), or expired (410); nothing changes then."""

    def __init__(
        self,
        core: Core,
        links: AnswerLinkStore,
        keys: Callable[[], VapidKeys | None],
        clock: Callable[[], datetime] = _utc_now,
    ) -> None:
        self._core, self._links, self._keys, self._clock = core, links, keys, clock

    def answer(self, request: PushAnswerRequest) -> AnswerResult:
        claims = self._claims(request)
        interaction = self._core.store.get_interaction(claims.run_id, claims.interaction_id)
        if interaction is None:
            raise NotFoundError(f"item {claims.interaction_id} of run {claims.run_id} was not found")
        if (kind := interaction.request.kind) not in ONE_TAP_KINDS:
            raise ConflictError(f"a {kind} is answered in the inbox, not from a notification", details={"kind": kind})
        now = self._clock()
        use = LinkUse.claiming(claims, iso(now), channel="push")
        earlier = self._links.claim_link(use, stale_before=iso(now - timedelta(seconds=STALE_CLAIM_SECONDS)))
        if earlier is not None:
            raise _used(earlier)
        try:
            result = answer_as(self._core, interaction, request.answer, claims.recipient, via=PUSH_CHANNEL)
            assert isinstance(result, AnswerResult)  # a question's or a tool approval's (ONE_TAP_KINDS)
        except Exception:
            self._links.release_link(use)  # not answered: the credential still works
            raise
        self._links.complete_link(use.model_copy(update={"state": "answered", "answer": request.answer}))
        return result

    def _claims(self, request: PushAnswerRequest) -> LinkClaims:
        keys = self._keys()
        if keys is None:
            raise NotFoundError(PUSH_NOT_CONFIGURED)
        try:
            claims = read_link(request.credential, keys.answer_key, now=self._clock(), context=PUSH_ANSWER_CONTEXT)
        except LinkRefused as refused:
            raise _refused(refused) from None
        if claims.answer is None or claims.answer != answer_digest(request.answer):
            raise ForbiddenError(
                "This one-tap credential was made for another answer: it answers only the one its "
                "notification offered. Nothing was changed.",
                details={"reason": "other_answer"},
            )
        return claims


_REFUSED: dict[str, type[BatonError]] = {"malformed": BadRequestError, "tampered": ForbiddenError, "expired": GoneError}


def _refused(refused: LinkRefused) -> BatonError:
    """A refused credential in the notification's words (the link's reasons, its status)."""
    messages = {
        "malformed": "This is not a Baton one-tap credential.",
        "tampered": "This one-tap credential was altered: its signature does not match the item, the operator, "
        "the answer or the expiry it names.",
        "expired": f"This notification's answer has expired: {refused.message.removeprefix('This link has expired: ')}"
        " Open the item in the inbox.",
    }
    error = _REFUSED.get(refused.reason, BadRequestError)
    text = messages.get(refused.reason, refused.message)
    return error(f"{text} Nothing was changed.", details={"reason": refused.reason})


def _used(use: LinkUse) -> ConflictError:
    """A credential spent before: who spent it, with what, when (the 409's winner)."""
    if use.state == "answered":
        return ConflictError(
            f"This notification's answer was already used by {use.recipient} at {use.at}. Nothing was changed.",
            details={
                "reason": "used",
                "winner": winner(status="answered", value=use.answer, by=use.recipient, at=use.at),
            },
        )
    return ConflictError(
        f"This notification's answer is being given right now (since {use.at}). Nothing was changed.",
        details={"reason": "in_use"},
    )
