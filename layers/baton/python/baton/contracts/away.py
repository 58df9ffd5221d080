"""An operator away, with a delegate (issue 32 item 4): `PUT/GET/DELETE /api/me/away`, the caller's own.

While `until` is ahead, what is addressed to the operator by name goes to the delegate and says so: a
quorum seat naming them (the delegate votes in their place, counted once as their seat), a ladder's
escalation to them, a claim reassigned to them. One hop only: a delegate who is away too is refused."""

from __future__ import annotations

from datetime import UTC, datetime

from pydantic import BaseModel, ConfigDict, Field, field_validator

from baton.contracts.base import Contract
from baton.domain.fields import Principal

MAX_AWAY_DAYS = 90


class AwaySet(BaseModel):
    """`PUT /api/me/away`: away until `until` (in the future, at most 90 days ahead), `delegate` in your place."""

    model_config = ConfigDict(extra="forbid")

    until: datetime = Field(description="When you are back (ISO 8601; no zone: UTC).")
    delegate: Principal = Field(description="Who decides in your place meanwhile (not you; not someone away).")

    @field_validator("until")
    @classmethod
    def _in_utc(cls, until: datetime) -> datetime:
        try:
            return until.astimezone(UTC) if until.tzinfo is not None else until.replace(tzinfo=UTC)
        except (OverflowError, ValueError):  # a time that leaves years 1..9999 in UTC
            raise ValueError("until is out of range") from None


class StandingIn(Contract):
    """An operator away who named the caller their delegate, and until when."""

    operator: str
    until: str


class AwayView(Contract):
    """An operator's away: until when, and who decides in their place (`away: false` when not away); and
    whom they stand in for now (those away who named them their delegate)."""

    operator: str
    away: bool = Field(description="True while `until` is ahead.")
    until: str | None = None
    delegate: str | None = None
    set_at: str | None = None
    standing_in_for: list[StandingIn] = Field(
        default_factory=list, description="Operators away now who named this operator their delegate."
    )

    @classmethod
    def of(cls, operator: str, aways: list[Away], now: str) -> AwayView:
        """`operator`'s away and whom they stand in for, from every stored away."""
        active = [a for a in aways if a.active(now)]
        standing_in = [StandingIn(operator=a.operator, until=a.until) for a in active if a.delegate == operator]
        own = next((a for a in active if a.operator == operator), None)
        shown = own.model_dump(include={"until", "delegate", "set_at"}) if own is not None else {}
        return cls(operator=operator, away=own is not None, standing_in_for=standing_in, **shown)


class Away(BaseModel):
    """The stored record (one per operator): what `AwayStore` keeps."""

    model_config = ConfigDict(frozen=True)

    operator: str
    until: str
    delegate: str
    set_at: str

    def active(self, now: str) -> bool:
        return self.until > now

    def for_whom(self) -> str:
        """How a substitution names the one it stands in for: "for alice (away until ...)"."""
        return f"for {self.operator} (away until {self.until})"
