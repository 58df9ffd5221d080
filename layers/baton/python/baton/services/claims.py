"""Claim leases on interrupts: who is working on one, until when.

A claim carries a lease (`lease_expires_at`): DEFAULT_LEASE_SECONDS (15 min) unless the claim asks for
`leaseSeconds` (MIN_LEASE_SECONDS..MAX_LEASE_SECONDS, 1 min..8 h). Past its lease a claim is nobody's:
every read shows the interrupt unclaimed (`InteractionStatus.without_lapsed_claim`, one clock: the
injected `Core.clock`), and a new claim over it needs no force. A claim stored before leases has no lease
and is not held either.

- claim: unclaimed (or lapsed) -> the caller's; already the caller's -> a no-op (200, changed false);
  another operator's live claim -> 409 naming the holder and until when, unless `force` with a `reason`
  (422 without one): a take-over, recorded as `interrupt_claimed` with `previous` and `reason`.
- renew: the holder extends the lease (from now); anyone else gets a 409 (`interrupt_claim_renewed`).
- release: the holder lets it go (`interrupt_claim_released`); someone else's claim is a 409; an
  unclaimed interrupt is a 200 with changed false.
- reassign: an operator gives the claim to a named operator, over any claim (`interrupt_reassigned`
  with `previous` and the optional reason).

A take-over and a reassign may name the claim they were decided on (`holder`: the holder the operator
saw); then a claim held by anyone else is a 409 naming them, so of many at once exactly one wins and
every other is told who holds it now. Without it, the claim read at the door is the one overridden.

Every change is one conditional write (`InteractionStore.write_claim`): the version read, and the
holder seen then (or, for a free one, "no live lease": `lease_expires_at <= now`), with its event (a
decision, chained after the run's head read with the interrupt: `find_for_decision`) in the same
transaction, so a claim costs three calls (the pointer, one BatchGetItem, the transaction). A write that loses
is decided again on a fresh read. Claims stay advisory: resume and cancel are allowed to any operator
(`baton.services.interrupts`).
"""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING, Any, Final

from baton.errors import ConflictError, ValidationFailedError
from baton.events import InterruptClaimed, InterruptClaimReleased, InterruptClaimRenewed, InterruptReassigned
from baton.ids import iso
from baton.services.interrupts import interrupt_winner, public_view

if TYPE_CHECKING:
    from collections.abc import Callable

    from baton.domain.audit import AuditHead
    from baton.events import EventPayload
    from baton.models import Interaction, InteractionStatus
    from baton.services.interrupts import InterruptService

    # A claim change decided: the state to write, and the event of it given the interrupt written.
    Decision = tuple[InteractionStatus, Callable[[Interaction], EventPayload]]
    # What a change decides on the interrupt as read (and whether this is a decision again after a
    # lost write): a Decision, None for nothing to change, or an error raised.
    Decide = Callable[[Interaction, bool], Decision | None]

DEFAULT_LEASE_SECONDS: Final = 15 * 60
MIN_LEASE_SECONDS: Final = 60
MAX_LEASE_SECONDS: Final = 8 * 3600
MAX_REASON_CHARS: Final = 1000


def check_lease_seconds(lease_seconds: int | None) -> int:
    """The lease asked for, or the default; 422 outside MIN..MAX (the route's model checks it first)."""
    if lease_seconds is None:
        return DEFAULT_LEASE_SECONDS
    if (
        isinstance(lease_seconds, bool)
        or not isinstance(lease_seconds, int)
        or not (MIN_LEASE_SECONDS <= lease_seconds <= MAX_LEASE_SECONDS)
    ):
        raise ValidationFailedError(
            f"leaseSeconds must be a whole number of seconds from {MIN_LEASE_SECONDS} to {MAX_LEASE_SECONDS}",
            details={"field": "leaseSeconds"},
        )
    return lease_seconds


def check_reason(reason: str | None, *, required: bool) -> str | None:
    text = (reason or "").strip()
    if required and not text:
        raise ValidationFailedError("a take-over needs a reason (force=true with reason)", details={"field": "reason"})
    if len(text) > MAX_REASON_CHARS:
        raise ValidationFailedError(
            f"reason must be at most {MAX_REASON_CHARS} characters", details={"field": "reason"}
        )
    return text or None


class ClaimService:
    """Claim, renew, release and reassign an interrupt's claim (the routes in `baton/api/routes_claims.py`
    and `baton/api/routes_interrupts.py`)."""

    def __init__(self, interrupts: InterruptService) -> None:
        self.interrupts = interrupts
        self.core = interrupts.core

    def _now(self) -> str:
        return self.core.now()

    def _until(self, lease_seconds: int) -> str:
        return iso(self.core.clock.now() + timedelta(seconds=lease_seconds))

    def _held_elsewhere(self, i: Interaction, verb: str, hint: str) -> ConflictError:
        st = i.state
        return ConflictError(
            f"interrupt {i.interaction_id} is claimed by {st.claimed_by} until {st.lease_expires_at}; "
            f"you cannot {verb} it{hint}",
            details={
                "claimedBy": st.claimed_by,
                "claimedAt": st.claimed_at,
                "leaseExpiresAt": st.lease_expires_at,
                "interrupt": public_view(i),
                "winner": interrupt_winner(i),
            },
        )

    def _result(self, i: Interaction, *, changed: bool) -> dict[str, Any]:
        return {"interrupt": public_view(i), "claimed": i.state.claimed_by is not None, "changed": changed}

    def _write(
        self, i: Interaction, state: InteractionStatus, event_of: Callable[[Interaction], EventPayload], head: AuditHead
    ) -> Interaction | None:
        """The claim change and its event (a decision, chained after `head`) in one write, conditional on
        what `i` showed (None: it lost; decide again)."""
        written = i.model_copy(update={"state": state.model_copy(update={"version": i.state.version + 1})})
        event = self.core.new_event(i.run_id, event_of(written))
        try:
            return self.core.store.write_claim(
                i, state, expected_holder=i.state.claimed_by, now=self._now(), with_records=[event], audit_head=head
            )
        except ConflictError as err:
            if err.details.get("reason") == "contention":
                raise
            return None

    def _claimed_state(self, i: Interaction, operator: str, lease_seconds: int) -> InteractionStatus:
        return i.state.model_copy(
            update={"claimed_by": operator, "claimed_at": self._now(), "lease_expires_at": self._until(lease_seconds)}
        )

    def _change(self, interrupt_id: str, verb: str, decide: Decide) -> dict[str, Any]:
        """The loop every claim change runs: read the interrupt, `decide` on what it shows (the new state
        and the event of the change; None: nothing to change, a 200 with changed false; or an error),
        write it conditionally on what was read, and after a lost write decide again on a fresh read
        (`decide` is told it is deciding again)."""
        again = False
        while True:
            i, head = self.interrupts.current_for_decision(interrupt_id, verb)
            decided = decide(i, again)
            if decided is None:
                return self._result(i, changed=False)
            state, event_of = decided
            written = self._write(i, state, event_of, head)
            if written is None:
                again = True
                continue
            return self._result(written, changed=True)

    # ---- the operator's actions -----------------------------------------------------------------
    def claim(
        self,
        interrupt_id: str,
        *,
        operator: str,
        force: bool = False,
        reason: str | None = None,
        lease_seconds: int | None = None,
        holder: str | None = None,
    ) -> dict[str, Any]:
        """Claim for `operator` (see the module docstring). A take-over overrides the claim it saw
        (`holder` when named, else the one read), not one made since: after a lost write it is decided
        again without force."""
        lease = check_lease_seconds(lease_seconds)
        why = check_reason(reason, required=force)

        def decide(i: Interaction, again: bool) -> Decision | None:
            previous = i.state.claimed_by
            if previous == operator:
                return None
            if previous is not None and (not force or again or (holder is not None and previous != holder)):
                raise self._held_elsewhere(i, "claim", "; send force=true with a reason to take it over")
            taken = {"previous": previous, "reason": why} if previous is not None else {}
            return self._claimed_state(i, operator, lease), lambda claimed: InterruptClaimed(
                interaction_id=interrupt_id,
                node=i.request.node,
                by=operator,
                lease_expires_at=claimed.state.lease_expires_at,
                **taken,
            )

        return self._change(interrupt_id, "claimed", decide)

    def renew(self, interrupt_id: str, *, operator: str, lease_seconds: int | None = None) -> dict[str, Any]:
        """The holder's lease, extended to now + `lease_seconds` (the default when omitted)."""
        lease = check_lease_seconds(lease_seconds)

        def decide(i: Interaction, _again: bool) -> Decision:
            if i.state.claimed_by is None:
                raise self._not_claimed(i, "renew")
            if i.state.claimed_by != operator:
                raise self._held_elsewhere(i, "renew", "; only its holder can renew it")
            return i.state.model_copy(
                update={"lease_expires_at": self._until(lease)}
            ), lambda renewed: InterruptClaimRenewed(
                interaction_id=interrupt_id,
                node=i.request.node,
                by=operator,
                lease_expires_at=renewed.state.lease_expires_at or "",
            )

        return self._change(interrupt_id, "renewed", decide)

    def release(self, interrupt_id: str, *, operator: str) -> dict[str, Any]:
        """The holder gives the claim up; an unclaimed interrupt is left as it is (changed false)."""

        def decide(i: Interaction, _again: bool) -> Decision | None:
            if i.state.claimed_by is None:
                return None
            if i.state.claimed_by != operator:
                raise self._held_elsewhere(i, "release", "; only its holder can release it")
            free = i.state.model_copy(update={"claimed_by": None, "claimed_at": None, "lease_expires_at": None})
            return free, lambda _released: InterruptClaimReleased(
                interaction_id=interrupt_id, node=i.request.node, by=operator
            )

        return self._change(interrupt_id, "released", decide)

    def reassign(
        self,
        interrupt_id: str,
        *,
        operator: str,
        to: str,
        reason: str | None = None,
        lease_seconds: int | None = None,
        holder: str | None = None,
    ) -> dict[str, Any]:
        """`operator` gives the claim to `to`: over the claim it saw (`holder` when named, else whoever
        held it at the door), never over one made since (after a lost write: a 409 naming the new holder)."""
        lease = check_lease_seconds(lease_seconds)
        why = check_reason(reason, required=False)

        def decide(i: Interaction, again: bool) -> Decision | None:
            previous = i.state.claimed_by
            if previous == to:
                return None
            if again or (holder is not None and previous != holder):
                raise self._held_elsewhere(i, "reassign", "; read it again and decide on the claim it has now")
            return self._claimed_state(i, to, lease), lambda assigned: InterruptReassigned(
                interaction_id=interrupt_id,
                node=i.request.node,
                by=operator,
                to=to,
                previous=previous,
                reason=why,
                lease_expires_at=assigned.state.lease_expires_at or "",
            )

        return self._change(interrupt_id, "reassigned", decide)

    def _not_claimed(self, i: Interaction, verb: str) -> ConflictError:
        return ConflictError(
            f"interrupt {i.interaction_id} is not claimed (or its lease ended); claim it instead of trying to {verb}",
            details={"claimedBy": None, "interrupt": public_view(i)},
        )
