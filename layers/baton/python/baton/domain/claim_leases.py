"""A claim lease's states, pure (baton.services.claims reads, decides who may change it, and writes): who
holds it since when, until when. Past its lease a claim is nobody's (`InteractionStatus.without_lapsed_claim`)."""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING, Any

from baton.domain.interrupt_fields import DEFAULT_LEASE_SECONDS
from baton.errors import winner
from baton.ids import iso

if TYPE_CHECKING:
    from datetime import datetime

    from baton.models import InteractionStatus


def lease_until(now: datetime, lease_seconds: int | None) -> str:
    return iso(now + timedelta(seconds=lease_seconds or DEFAULT_LEASE_SECONDS))


def claimed(state: InteractionStatus, holder: str, now: datetime, lease_seconds: int | None) -> InteractionStatus:
    update = {"claimed_by": holder, "claimed_at": iso(now), "lease_expires_at": lease_until(now, lease_seconds)}
    return state.model_copy(update=update)


def unclaimed(state: InteractionStatus) -> InteractionStatus:
    return state.model_copy(update={"claimed_by": None, "claimed_at": None, "lease_expires_at": None})


def held_details(state: InteractionStatus, shown: dict[str, Any]) -> dict[str, Any]:
    """A 409's details for a claim another holds: the claim, the item as `shown` (under its kind's name),
    and the holder as the winner."""
    won = winner(status="claimed", value=state.claimed_by, by=state.claimed_by, at=state.claimed_at)
    held = {"claimedBy": state.claimed_by, "claimedAt": state.claimed_at, "leaseExpiresAt": state.lease_expires_at}
    return held | shown | {"winner": won}
