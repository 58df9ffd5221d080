"""Claim leases on interrupts: who is working on one, until when. Claims are advisory: resume and cancel
are allowed to any operator (`baton.services.interrupts`).

A claim's lease (`lease_expires_at`) is DEFAULT_LEASE_SECONDS unless the claim asks for `leaseSeconds`
(`baton.domain.interrupt_fields`); past it the claim is nobody's: every read shows the interrupt
unclaimed (`InteractionStatus.without_lapsed_claim`, on `Core.clock`), and claiming it needs no force.

- claim: free (or lapsed) -> the caller's; already the caller's -> 200, changed false; another's live
  claim -> 409 naming the holder, unless `force` with a `reason`: a take-over (`previous`, `reason`).
- renew: the holder's lease, counted again from now; anyone else: 409.
- release: the holder lets it go; someone else's: 409; a free one: 200, changed false.
- reassign: any operator gives the claim to a named operator, over any claim.

A take-over and a reassign override the claim they were decided on (`holder` when named, else the one
read at the door), never one made since: of many at once exactly one wins, every other gets the 409
naming who holds it now. Every change is one conditional write (`InteractionStore.write_claim`) with its
event, a decision chained after the run's head read with the interrupt: three calls in all.
"""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING

from baton.contracts import InterruptClaimed, InterruptView
from baton.domain.interrupt_fields import DEFAULT_LEASE_SECONDS
from baton.errors import ConflictError
from baton.events import InterruptClaimed as ClaimedEvent
from baton.events import InterruptClaimReleased, InterruptClaimRenewed, InterruptReassigned
from baton.ids import iso
from baton.services.interrupts import conflict_details

if TYPE_CHECKING:
    from collections.abc import Callable

    from baton.contracts import ClaimInterrupt, ReassignClaim, RenewClaim
    from baton.events import EventPayload
    from baton.models import Interaction, InteractionStatus
    from baton.services.interrupts import InterruptService

    # A claim change decided: the state to write, and the event of it given the interrupt written.
    Decision = tuple[InteractionStatus, Callable[[Interaction], EventPayload]]
    # What a change decides on the interrupt as read (and whether this is a decision again after a
    # lost write): a Decision, None for nothing to change, or an error raised.
    Decide = Callable[[Interaction, bool], Decision | None]


class ClaimService:
    """Claim, renew, release and reassign an interrupt's claim (`baton/api/routes_claims.py`)."""

    def __init__(self, interrupts: InterruptService) -> None:
        self.interrupts = interrupts
        self.core = interrupts.core

    def _until(self, lease_seconds: int | None) -> str:
        return iso(self.core.clock.now() + timedelta(seconds=lease_seconds or DEFAULT_LEASE_SECONDS))

    @staticmethod
    def _held_elsewhere(i: Interaction, verb: str, hint: str) -> ConflictError:
        st = i.state
        return ConflictError(
            f"interrupt {i.interaction_id} is claimed by {st.claimed_by} until {st.lease_expires_at}; "
            f"you cannot {verb} it{hint}",
            details=conflict_details(
                i, claimedBy=st.claimed_by, claimedAt=st.claimed_at, leaseExpiresAt=st.lease_expires_at
            ),
        )

    def _change(self, interrupt_id: str, verb: str, decide: Decide) -> InterruptClaimed:
        """Read the interrupt, `decide` on what it shows (None: nothing to change), write the change
        conditionally on what was read; after a lost write, decide again on a fresh read."""
        again = False
        while True:
            i, found = self.interrupts.current_for_decision(interrupt_id, verb)
            decided = decide(i, again)
            if decided is None:
                return self._result(i, changed=False)
            state, event_of = decided
            written = i.model_copy(update={"state": state.model_copy(update={"version": i.state.version + 1})})
            event = self.core.new_event(i.run_id, event_of(written))
            try:
                stored = self.core.store.write_claim(
                    i,
                    state,
                    expected_holder=i.state.claimed_by,
                    now=self.core.now(),
                    with_records=[event],
                    audit_head=found.audit_head,
                )
            except ConflictError as err:
                if err.details.get("reason") == "contention":
                    raise
                again = True
                continue
            return self._result(stored, changed=True)

    @staticmethod
    def _result(i: Interaction, *, changed: bool) -> InterruptClaimed:
        return InterruptClaimed(interrupt=InterruptView.of(i), claimed=i.state.claimed_by is not None, changed=changed)

    def _claimed_state(self, i: Interaction, operator: str, lease_seconds: int | None) -> InteractionStatus:
        update = {"claimed_by": operator, "claimed_at": self.core.now(), "lease_expires_at": self._until(lease_seconds)}
        return i.state.model_copy(update=update)

    # ---- the operator's actions -----------------------------------------------------------------
    def claim(self, interrupt_id: str, command: ClaimInterrupt, *, operator: str) -> InterruptClaimed:
        """Claim for `operator`; a take-over is decided again without force after a lost write."""
        why = (command.reason or "").strip() or None

        def decide(i: Interaction, again: bool) -> Decision | None:
            previous = i.state.claimed_by
            if previous == operator:
                return None
            if previous is not None and (not command.force or again or command.holder not in (None, previous)):
                raise self._held_elsewhere(i, "claim", "; send force=true with a reason to take it over")
            taken = {"previous": previous, "reason": why} if previous is not None else {}
            return self._claimed_state(i, operator, command.leaseSeconds), lambda claimed: ClaimedEvent(
                interaction_id=interrupt_id,
                node=i.request.node,
                by=operator,
                lease_expires_at=claimed.state.lease_expires_at,
                **taken,
            )

        return self._change(interrupt_id, "claimed", decide)

    def renew(self, interrupt_id: str, command: RenewClaim, *, operator: str) -> InterruptClaimed:
        def decide(i: Interaction, _again: bool) -> Decision:
            if i.state.claimed_by is None:
                raise ConflictError(
                    f"interrupt {i.interaction_id} is not claimed (or its lease ended); claim it instead of "
                    "trying to renew",
                    details=conflict_details(i, settled=False, claimedBy=None),
                )
            if i.state.claimed_by != operator:
                raise self._held_elsewhere(i, "renew", "; only its holder can renew it")
            renewed = i.state.model_copy(update={"lease_expires_at": self._until(command.leaseSeconds)})
            return renewed, lambda written: InterruptClaimRenewed(
                interaction_id=interrupt_id,
                node=i.request.node,
                by=operator,
                lease_expires_at=written.state.lease_expires_at or "",
            )

        return self._change(interrupt_id, "renewed", decide)

    def release(self, interrupt_id: str, *, operator: str) -> InterruptClaimed:
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

    def reassign(self, interrupt_id: str, command: ReassignClaim, *, operator: str) -> InterruptClaimed:
        """`operator` gives the claim to `command.to`; after a lost write: a 409 naming the new holder."""
        why = (command.reason or "").strip() or None

        def decide(i: Interaction, again: bool) -> Decision | None:
            previous = i.state.claimed_by
            if previous == command.to:
                return None
            if again or command.holder not in (None, previous):
                raise self._held_elsewhere(i, "reassign", "; read it again and decide on the claim it has now")
            return self._claimed_state(i, command.to, command.leaseSeconds), lambda assigned: InterruptReassigned(
                interaction_id=interrupt_id,
                node=i.request.node,
                by=operator,
                to=command.to,
                previous=previous,
                reason=why,
                lease_expires_at=assigned.state.lease_expires_at or "",
            )

        return self._change(interrupt_id, "reassigned", decide)
