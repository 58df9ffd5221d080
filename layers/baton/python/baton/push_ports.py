"""Web Push's ports (issue 32, item 3): each operator's subscriptions, and the push to an operator's
devices (`baton/channels/push/`). Beside `baton/ports.py` as the review gate's are (`review_ports.py`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from baton.contracts.push import PushReason, PushSubscription
    from baton.models import Interaction


class PushSubscriptionStore(Protocol):
    """An operator's Web Push subscriptions, one item each under the operator. `add_subscription` stores
    one unless the operator has it (the same id: it is the endpoint's) and returns the stored one;
    `delete_subscription` says whether there was one."""

    def add_subscription(self, subscription: PushSubscription) -> tuple[PushSubscription, bool]: ...
    def list_subscriptions(self, operator: str) -> list[PushSubscription]: ...
    def delete_subscription(self, operator: str, subscription_id: str) -> bool: ...


class OperatorPush(Protocol):
    """Pushes an item to every subscription of an operator (escalated or assigned to them). Best effort:
    it never raises (a failed push must not fail the escalation)."""

    def push(self, operator: str, interaction: Interaction, reason: PushReason) -> int: ...
