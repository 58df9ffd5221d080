"""The push to an operator's devices when an item is escalated or assigned to them (`WebPush`: the
`OperatorPush` port, through `Core.push`), with a one-tap credential per offered answer (`credential_signer`:
an email answer link under the push context, `baton/channels/email/links.py`, signed with a key derived from
the VAPID key, `VapidKeys.answer_key`: the functions that push already read it).

A push is best effort: no VAPID key and nothing is sent; a subscription the push service no longer serves
(404/410) is deleted, any other failure is logged, and the escalation or reassign goes on."""

from __future__ import annotations

import logging
from dataclasses import KW_ONLY, dataclass, field
from datetime import UTC, datetime, timedelta
from functools import partial
from typing import TYPE_CHECKING, Any, Final

from baton.channels.email.links import (
    PUSH_ANSWER_CONTEXT,
    LinkClaims,
    answer_digest,
    new_link_id,
    sign_link,
)
from baton.channels.push.web_push import DEFAULT_SUBJECT, MAX_PLAINTEXT_BYTES, SubscriptionGone, send_web_push
from baton.contracts.push import push_payload
from baton.ids import parse_iso

if TYPE_CHECKING:
    from collections.abc import Callable

    from baton.channels.push.web_push import VapidKeys
    from baton.contracts.push import PushReason, PushSubscription
    from baton.models import Interaction
    from baton.push_ports import PushSubscriptionStore

log = logging.getLogger("baton")

CREDENTIAL_SECONDS: Final = 3600  # a one-tap answer lives an hour at most (less when its item closes sooner)


def credential_signer(interaction: Interaction, operator: str, key: bytes, now: datetime) -> Callable[[Any], str]:
    """An answer -> its one-tap credential for `operator` on `interaction` (bound to the answer's digest, a
    new link id each), until the item's deadline or `CREDENTIAL_SECONDS` from now, whichever is first."""
    until = now + timedelta(seconds=CREDENTIAL_SECONDS)
    if interaction.expires_at:
        until = min(until, parse_iso(interaction.expires_at))

    def sign(answer: Any) -> str:
        claims = LinkClaims(
            link_id=new_link_id(),
            run_id=interaction.run_id,
            interaction_id=interaction.interaction_id,
            recipient=operator,
            expires_at=int(until.timestamp()),
            answer=answer_digest(answer),
        )
        return sign_link(claims, key, context=PUSH_ANSWER_CONTEXT)

    return sign


@dataclass(frozen=True)
class WebPush:
    """One push per subscription of the operator, of `baton.contracts.push.push_payload` (`send`: a test's own)."""

    store: PushSubscriptionStore
    keys: Callable[[], VapidKeys | None]
    _: KW_ONLY
    subject: str = DEFAULT_SUBJECT
    send: Callable[..., int] = send_web_push
    clock: Callable[[], datetime] = field(default=partial(datetime.now, UTC))  # immutable: one is shared

    def push(self, operator: str, interaction: Interaction, reason: PushReason) -> int:
        """How many subscriptions took it. Never raises."""
        try:
            keys = self.keys()
            if keys is None:
                return 0
            sign = credential_signer(interaction, operator, keys.answer_key, self.clock())
            payload = push_payload(interaction, reason, sign)
            data = payload.model_dump_json(by_alias=True).encode()
            if len(data) > MAX_PLAINTEXT_BYTES:  # long options: sent without actions (a tap opens the item)
                data = payload.model_copy(update={"one_tap": []}).model_dump_json(by_alias=True).encode()
            return sum(self._push_one(s, data, keys) for s in self.store.list_subscriptions(operator))
        except Exception:
            log.exception("web push failed", extra={"run_id": interaction.run_id, "operator": operator})
            return 0

    def _push_one(self, subscription: PushSubscription, data: bytes, keys: VapidKeys) -> int:
        try:
            self.send(subscription.info(), data, keys, subject=self.subject)
        except SubscriptionGone:
            log.info("push subscription gone: deleted", extra={"subscription_id": subscription.subscription_id})
            self.store.delete_subscription(subscription.operator, subscription.subscription_id)
            return 0
        except Exception:
            log.exception("web push failed", extra={"subscription_id": subscription.subscription_id})
            return 0
        return 1
