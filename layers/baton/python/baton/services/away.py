"""Operators away and who decides in their place (issue 32 item 4; `baton.contracts.away`): the caller's own
away (`/api/me/away`), and whose away a claim or a deadline's escalation follows (`delegate_for`). One hop
only: setting a delegate who is away too is a 409 naming them; a seat's delegate is never followed further."""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING

from baton.contracts.away import MAX_AWAY_DAYS, Away, AwayView
from baton.errors import ConflictError, ValidationFailedError
from baton.ids import iso

if TYPE_CHECKING:
    from baton.contracts.away import AwaySet
    from baton.services.core import Core


class AwayService:
    def __init__(self, core: Core) -> None:
        self.core = core

    def set(self, operator: str, body: AwaySet) -> AwayView:
        core, now = self.core, self.core.clock.now()
        if body.until <= now:
            raise ValidationFailedError("until must be in the future", details={"path": "until"})
        if body.until > now + timedelta(days=MAX_AWAY_DAYS):
            raise ValidationFailedError(
                f"until is at most {MAX_AWAY_DAYS} days ahead", details={"path": "until", "max_days": MAX_AWAY_DAYS}
            )
        if body.delegate == operator:
            raise ValidationFailedError("the delegate must be someone else", details={"path": "delegate"})
        aways = [a for a in core.store.list_aways() if a.operator != operator]
        theirs = next((a for a in aways if a.operator == body.delegate and a.active(core.now())), None)
        if theirs is not None:  # one hop: never a chain of delegates
            raise ConflictError(
                f"{body.delegate} is away too (until {theirs.until}); choose a delegate who is here",
                details={"delegate": body.delegate, "until": theirs.until},
            )
        away = Away(operator=operator, until=iso(body.until), delegate=body.delegate, set_at=core.now())
        core.store.put_away(away)
        return AwayView.of(operator, [*aways, away], core.now())

    def get(self, operator: str) -> AwayView:
        return AwayView.of(operator, self.core.store.list_aways(), self.core.now())

    def clear(self, operator: str) -> AwayView:
        self.core.store.delete_away(operator)
        others = [a for a in self.core.store.list_aways() if a.operator != operator]
        return AwayView.of(operator, others, self.core.now())


def delegate_for(core: Core, operator: str) -> Away | None:
    """`operator`'s away while it lasts (its delegate takes what is addressed to them), else None."""
    away = core.store.get_away(operator)
    return away if away is not None and away.active(core.now()) else None
