"""Operators away and who decides in their place (issue 32 item 4; `baton.contracts.away`): the caller's own
away (`/api/me/away`), and whose away a claim or a deadline's escalation follows (`delegate_for`). One hop
only: setting a delegate who is away too is a 409 naming them; a seat's delegate is never followed further."""

from __future__ import annotations

from typing import TYPE_CHECKING

from baton.contracts.away import Away, AwayView
from baton.domain.away import check_away, check_delegate_here
from baton.ids import iso

if TYPE_CHECKING:
    from baton.contracts.away import AwaySet
    from baton.services.core import Core


class AwayService:
    def __init__(self, core: Core) -> None:
        self.core = core

    def set(self, operator: str, body: AwaySet) -> AwayView:
        core = self.core
        check_away(operator, body, core.clock.now())
        aways = [a for a in core.store.list_aways() if a.operator != operator]
        check_delegate_here(body.delegate, aways, core.now())
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
