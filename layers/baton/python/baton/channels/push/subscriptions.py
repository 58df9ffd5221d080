"""An operator's Web Push subscriptions (`PushService`, behind `baton/api/routes_push.py`) and the stack's
public key. No VAPID key configured: push is off, and `GET /api/push/key` is a 404 that says so."""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Final

from baton.contracts.push import (
    PushKey,
    PushSubscription,
    PushSubscriptionDeleted,
    PushSubscriptionList,
    PushSubscriptionView,
)
from baton.errors import NotFoundError

if TYPE_CHECKING:
    from collections.abc import Callable

    from baton.channels.push.web_push import VapidKeys
    from baton.contracts.push import PushSubscriptionRequest
    from baton.push_ports import PushSubscriptionStore

PUSH_NOT_CONFIGURED: Final = (
    "Web Push is not configured on this stack: no VAPID key (deployed: fill the secret with "
    "`baton push init-vapid --secret-id <id>`; locally `baton dev` makes one)"
)


def subscription_id_of(endpoint: str) -> str:
    """A subscription's id: its endpoint's digest, so the same browser subscribing again is the same one."""
    return "ps-" + hashlib.sha256(endpoint.encode()).hexdigest()[:24]


class PushService:
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
