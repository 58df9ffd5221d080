"""Claim leases on interrupts and tool approvals: who is working on one, until when. Advisory: any
operator may still answer. Past its lease (`leaseSeconds`, else DEFAULT_LEASE_SECONDS) a claim is nobody's
(`InteractionStatus.without_lapsed_claim`). Another's live claim is a 409 naming the holder unless `force`
with a `reason` takes it over; a take-over and a reassign override only the claim they were decided on
(`holder`, else the one read), so of many at once exactly one wins. Every change is one conditional write
(`InteractionStore.write_claim`) with its event, chained after the run's head: three calls in all. The
events keep their interrupt names (`InterruptClaimed`, ...) for every kind: the decision log's types."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from baton.contracts import InterruptClaimed, InterruptView
from baton.contracts.tool_approvals import ToolApprovalClaimed, ToolApprovalView
from baton.domain.claim_leases import claimed, held_details, lease_until, unclaimed
from baton.errors import ConflictError
from baton.events import InterruptClaimed as ClaimedEvent
from baton.events import InterruptClaimReleased, InterruptClaimRenewed, InterruptReassigned
from baton.services.away import delegate_for
from baton.services.pause_answers import conflict

if TYPE_CHECKING:
    from collections.abc import Callable

    from baton.contracts import ClaimInterrupt, ReassignClaim, RenewClaim
    from baton.domain.audit import AuditHead
    from baton.events import EventPayload
    from baton.models import Interaction, InteractionStatus
    from baton.services.core import Core
    from baton.services.interrupts import InterruptService
    from baton.services.tool_approvals import ToolApprovalService

    # A claim change decided: the state to write and its event.
    Decision = tuple[InteractionStatus, EventPayload]
    # What a change decides on the interaction as read (and whether this is a decision again after a
    # lost write): a Decision, None for nothing to change, or an error raised.
    Decide = Callable[[Interaction, bool], Decision | None]


Result = TypeVar("Result")


class Claims(ABC, Generic[Result]):
    """Claim, renew, release and reassign the claim of a pending interaction; a kind says how it is read,
    shown in a 409 and returned."""

    noun = "interaction"
    core: Core

    @abstractmethod
    def _current(self, interaction_id: str, verb: str) -> tuple[Interaction, AuditHead | None]:
        """Pending (else a 409/410 saying why not to `verb`), and the run's head if read."""

    @abstractmethod
    def _shown(self, i: Interaction) -> dict[str, Any]:
        """Under the kind's name ({"interrupt": ...})."""

    @abstractmethod
    def _result(self, i: Interaction, changed: bool) -> Result: ...

    def _held_elsewhere(self, i: Interaction, verb: str, hint: str) -> ConflictError:
        """Its claim as the winner (only a pending interaction's claim changes: the claim is what holds it)."""
        st = i.state
        return ConflictError(
            f"{self.noun} {i.interaction_id} is claimed by {st.claimed_by} until {st.lease_expires_at}; "
            f"you cannot {verb} it{hint}",
            details=held_details(st, self._shown(i)),
        )

    def _change(self, interaction_id: str, verb: str, decide: Decide) -> tuple[Interaction, bool]:
        """`decide` on the interaction as read, write conditionally (after a lost write, again): it, and if changed."""
        again = False
        while True:
            i, audit_head = self._current(interaction_id, verb)
            decided = decide(i, again)
            if decided is None:
                return i, False
            state, payload = decided
            event = self.core.new_event(i.run_id, payload)
            try:
                stored = self.core.store.write_claim(
                    i,
                    state,
                    expected_holder=i.state.claimed_by,
                    now=self.core.now(),
                    with_records=[event],
                    audit_head=audit_head,
                )
            except ConflictError as err:
                if err.details.get("reason") == "contention":
                    raise
                again = True
                continue
            return stored, True

    # ---- the operator's actions -----------------------------------------------------------------
    def claim(self, interaction_id: str, command: ClaimInterrupt, *, operator: str) -> Result:
        """Claim for `operator`; a take-over is decided again without force after a lost write."""
        why = (command.reason or "").strip() or None

        def decide(i: Interaction, again: bool) -> Decision | None:
            previous = i.state.claimed_by
            if previous == operator:
                return None
            if previous is not None and (not command.force or again or command.holder not in (None, previous)):
                raise self._held_elsewhere(i, "claim", "; send force=true with a reason to take it over")
            taken = {"previous": previous, "reason": why} if previous is not None else {}
            state = claimed(i.state, operator, self.core.clock.now(), command.leaseSeconds)
            return state, ClaimedEvent(
                interaction_id=interaction_id,
                node=i.request.node,
                by=operator,
                lease_expires_at=state.lease_expires_at,
                **taken,
            )

        return self._result(*self._change(interaction_id, "claimed", decide))

    def renew(self, interaction_id: str, command: RenewClaim, *, operator: str) -> Result:
        def decide(i: Interaction, _again: bool) -> Decision:
            if i.state.claimed_by is None:
                raise ConflictError(
                    f"{self.noun} {i.interaction_id} is not claimed (or its lease ended); claim it instead of "
                    "trying to renew",
                    details={"claimedBy": None} | self._shown(i),
                )
            if i.state.claimed_by != operator:
                raise self._held_elsewhere(i, "renew", "; only its holder can renew it")
            until = lease_until(self.core.clock.now(), command.leaseSeconds)
            renewed = i.state.model_copy(update={"lease_expires_at": until})
            return renewed, InterruptClaimRenewed(
                interaction_id=interaction_id,
                node=i.request.node,
                by=operator,
                lease_expires_at=renewed.lease_expires_at or "",
            )

        return self._result(*self._change(interaction_id, "renewed", decide))

    def release(self, interaction_id: str, *, operator: str) -> Result:
        def decide(i: Interaction, _again: bool) -> Decision | None:
            if i.state.claimed_by is None:
                return None
            if i.state.claimed_by != operator:
                raise self._held_elsewhere(i, "release", "; only its holder can release it")
            free = unclaimed(i.state)
            return free, InterruptClaimReleased(interaction_id=interaction_id, node=i.request.node, by=operator)

        return self._result(*self._change(interaction_id, "released", decide))

    def reassign(self, interaction_id: str, command: ReassignClaim, *, operator: str) -> Result:
        """`operator` gives the claim to `command.to` (away: to their delegate, saying for whom); after a lost
        write: a 409 naming the new holder."""
        why = (command.reason or "").strip() or None
        away = delegate_for(self.core, command.to)
        to = away.delegate if away is not None else command.to
        stood_in = {"on_behalf_of": command.to, "note": away.for_whom()} if away is not None else {}

        def decide(i: Interaction, again: bool) -> Decision | None:
            previous = i.state.claimed_by
            if previous == to:
                return None
            if again or command.holder not in (None, previous):
                raise self._held_elsewhere(i, "reassign", "; read it again and decide on the claim it has now")
            assigned = claimed(i.state, to, self.core.clock.now(), command.leaseSeconds)
            return assigned, InterruptReassigned(
                interaction_id=interaction_id,
                node=i.request.node,
                by=operator,
                to=to,
                previous=previous,
                reason=why,
                lease_expires_at=assigned.lease_expires_at or "",
                **stood_in,
            )

        given, changed = self._change(interaction_id, "reassigned", decide)
        if changed:  # to their devices
            self.core.push_to([to], given, "assigned")
        return self._result(given, changed)


class ClaimService(Claims[InterruptClaimed]):
    """Read with its run's head in one BatchGetItem."""

    noun = "interrupt"

    def __init__(self, interrupts: InterruptService) -> None:
        self.interrupts = interrupts
        self.core = interrupts.core

    def _current(self, interaction_id: str, verb: str) -> tuple[Interaction, AuditHead | None]:
        i, found = self.interrupts.current_for_decision(interaction_id, verb)
        return i, found.audit_head

    def _shown(self, i: Interaction) -> dict[str, Any]:
        return {"interrupt": InterruptView.of(i).model_dump(by_alias=True)}

    def _result(self, i: Interaction, changed: bool) -> InterruptClaimed:
        return InterruptClaimed(interrupt=InterruptView.of(i), claimed=i.state.claimed_by is not None, changed=changed)


class ToolApprovalClaims(Claims[ToolApprovalClaimed]):
    noun = "tool approval"

    def __init__(self, approvals: ToolApprovalService, run_id: str) -> None:
        self.approvals, self.run_id = approvals, run_id
        self.core = approvals.core

    def _current(self, interaction_id: str, verb: str) -> tuple[Interaction, AuditHead | None]:
        i = self.approvals.current(self.run_id, interaction_id)
        if i.state.status != "pending":
            raise conflict(i, f"tool approval {interaction_id} was already decided; it cannot be {verb}")
        return i, None

    def _shown(self, i: Interaction) -> dict[str, Any]:
        return {"interaction": i.public()}

    def _result(self, i: Interaction, changed: bool) -> ToolApprovalClaimed:
        view = ToolApprovalView.of(i)
        return ToolApprovalClaimed(approval=view, claimed=i.state.claimed_by is not None, changed=changed)
