"""The rules of setting an away (issue 32 item 4; stored by `baton.services.away`): `until` is in the future
and at most `MAX_AWAY_DAYS` ahead, the delegate is someone else, and is not away too (one hop: a seat's
delegate is never followed further, so there is never a chain of delegates)."""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING

from baton.contracts.away import MAX_AWAY_DAYS
from baton.errors import ConflictError, ValidationFailedError

if TYPE_CHECKING:
    from collections.abc import Iterable
    from datetime import datetime

    from baton.contracts.away import Away, AwaySet


def check_away(operator: str, body: AwaySet, now: datetime) -> None:
    """Refuse (422, naming the field) an away `operator` may not set at `now`, before anything is read."""
    if body.until <= now:
        raise ValidationFailedError("until must be in the future", details={"path": "until"})
    if body.until > now + timedelta(days=MAX_AWAY_DAYS):
        raise ValidationFailedError(
            f"until is at most {MAX_AWAY_DAYS} days ahead", details={"path": "until", "max_days": MAX_AWAY_DAYS}
        )
    if body.delegate == operator:
        raise ValidationFailedError("the delegate must be someone else", details={"path": "delegate"})


def check_delegate_here(delegate: str, aways: Iterable[Away], now: str) -> None:
    """Refuse (409, naming them) a delegate who is among `aways` at `now`: one hop, never a chain."""
    theirs = next((a for a in aways if a.operator == delegate and a.active(now)), None)
    if theirs is not None:
        raise ConflictError(
            f"{delegate} is away too (until {theirs.until}); choose a delegate who is here",
            details={"delegate": delegate, "until": theirs.until},
        )
