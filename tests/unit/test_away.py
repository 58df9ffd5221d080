"""The rules of an away that need no store: the ladder, the claims and the away spell an operator's name
once, an away reads as over from its `until` on, and what may be set (`baton.domain.away`)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from baton.contracts import away as away_contracts
from baton.contracts import interrupts
from baton.contracts.away import MAX_AWAY_DAYS, Away, AwaySet
from baton.domain import fields, ladder
from baton.domain.away import check_away, check_delegate_here
from baton.errors import ConflictError, ValidationFailedError


def test_the_ladder_the_claims_and_the_away_spell_an_operator_once() -> None:
    spellings = {id(module.Principal) for module in (ladder, interrupts, away_contracts)}  # type: ignore[attr-defined]
    assert spellings == {id(fields.Principal)}


def test_an_away_lasts_until_its_until_and_says_for_whom() -> None:
    away = Away(operator="alice", until="2026-12-10T09:00:00.000Z", delegate="bob", set_at="2026-12-01T09:00:00.000Z")
    assert away.active("2026-12-10T08:59:59.999Z") and not away.active("2026-12-10T09:00:00.000Z")
    assert away.for_whom() == "for alice (away until 2026-12-10T09:00:00.000Z)"


def test_an_away_is_refused_in_the_past_too_far_ahead_or_to_oneself_and_a_delegate_away_too() -> None:
    now = datetime(2026, 12, 1, 9, tzinfo=UTC)
    check_away("alice", AwaySet(until=now + timedelta(days=MAX_AWAY_DAYS), delegate="bob"), now)
    for until, delegate, path in [
        (now, "bob", "until"),
        (now + timedelta(days=MAX_AWAY_DAYS, seconds=1), "bob", "until"),
        (now + timedelta(days=1), "alice", "delegate"),
    ]:
        with pytest.raises(ValidationFailedError) as refused:
            check_away("alice", AwaySet(until=until, delegate=delegate), now)
        assert refused.value.details["path"] == path
    bobs = Away(operator="bob", until="2026-12-10T09:00:00.000Z", delegate="carol", set_at="2026-12-01T09:00:00.000Z")
    check_delegate_here("bob", [bobs], "2026-12-10T09:00:00.000Z")  # back by then
    with pytest.raises(ConflictError) as chained:
        check_delegate_here("bob", [bobs], "2026-12-02T09:00:00.000Z")
    assert chained.value.details == {"delegate": "bob", "until": "2026-12-10T09:00:00.000Z"}
