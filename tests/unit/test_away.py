"""The rules of an away that need no store: the ladder spells an operator's name as the interrupt fields do,
and an away reads as over from its `until` on."""

from __future__ import annotations

from baton.contracts.away import Away
from baton.domain import interrupt_fields, ladder


def test_the_ladder_spells_an_operator_as_the_interrupt_fields_do() -> None:
    spelled = [repr(m) for m in ladder.Principal.__metadata__]  # type: ignore[attr-defined]
    assert spelled == [repr(m) for m in interrupt_fields.Principal.__metadata__]  # type: ignore[attr-defined]


def test_an_away_lasts_until_its_until_and_says_for_whom() -> None:
    away = Away(operator="alice", until="2026-12-10T09:00:00.000Z", delegate="bob", set_at="2026-12-01T09:00:00.000Z")
    assert away.active("2026-12-10T08:59:59.999Z") and not away.active("2026-12-10T09:00:00.000Z")
    assert away.for_whom() == "for alice (away until 2026-12-10T09:00:00.000Z)"
