"""The interrupt as the `/api/v1/interrupts` routes show it (camelCase, like the seed's REST API), and
the commands an operator sends it.

`InterruptView` is built once, from the stored record, by `InterruptView.of`; the routes answer with it
and the SDK (`baton.client.interrupts`) parses it. Every field has a default so a waiter can settle on a
partial record (and on one from an older server). It keeps the seed's words: a timed-out interrupt is
"cancelled" with reason "timeout" and `timedOut: true`.

The commands (`ResumeInterrupt`, `CancelInterrupt`, `ClaimInterrupt`, `RenewClaim`, `ReassignClaim`) are
what `InterruptService` and `ClaimService` take: the routes' request bodies derive from them (adding the
optional `operator`), the Slack and email doors build them; who acts is always passed beside them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, StrictBool, model_validator
from pydantic.alias_generators import to_camel

from baton.contracts.base import DELIVERY_DESCRIPTION, Contract, Delivery
from baton.contracts.questions import ApprovalView
from baton.domain.fields import Principal
from baton.domain.interrupt_fields import (
    DEFAULT_LEASE_SECONDS,
    MAX_LEASE_SECONDS,
    MAX_REASON_CHARS,
    MIN_LEASE_SECONDS,
    LeaseSeconds,
    Reason,
)

if TYPE_CHECKING:
    from baton.models import Interaction, InteractionState

TIMEOUT_REASON = "timeout"
# The API's words and the domain statuses behind each (timed_out shows, and is listed, as cancelled).
DOMAIN_STATUSES: dict[str, tuple[InteractionState, ...]] = {
    "pending": ("pending",),
    "answered": ("answered",),
    "cancelled": ("cancelled", "timed_out"),
}
STATUSES = tuple(DOMAIN_STATUSES)
DEFAULT_PAGE_SIZE = 50  # GET /api/v1/interrupts ?limit= (max MAX_PAGE_SIZE) and ?next=
MAX_PAGE_SIZE = 200
PAGE_FILTERS = "status and sessionId"  # what a page token is bound to


def edge_status(i: Interaction) -> str:
    """The status in the API's (the seed's) words: a timed-out interrupt is "cancelled"."""
    return "cancelled" if i.state.status == "timed_out" else i.state.status


class InterruptView(Contract):
    model_config = ConfigDict(alias_generator=to_camel)

    interrupt_id: str = Field(default="", alias="id")
    session_id: str = ""
    workflow_id: str | None = None
    node: str | None = None
    prompt: str | None = None
    schema_: dict[str, Any] | None = Field(default=None, alias="schema", description="The light schema form.")
    json_schema: dict[str, Any] | None = None
    state: dict[str, Any] | None = Field(default=None, description="The snapshot the reviewer can edit.")
    notify: list[str] | None = None
    timeout_ms: int | None = None
    hosted: bool = False
    key: str | None = None
    status: str = Field(default="pending", description="pending | answered | cancelled")
    created_at: str | None = None
    created_by: str | None = None
    expires_at: str | None = None
    claimed_by: str | None = Field(default=None, description="Who holds the claim (null once its lease ended).")
    claimed_at: str | None = None
    lease_expires_at: str | None = Field(default=None, description="When the claim's lease ends.")
    resolved_by: str | None = None
    resolved_at: str | None = None
    value: Any = Field(default=None, description="The resume value, validated against the schema.")
    edited_state: dict[str, Any] | None = None
    state_edits: list[str] | None = None
    reason: str | None = None
    timed_out: bool = False
    version: int = 0
    state_version: str = Field(
        default="",
        description="The version of the state a resume applies to (the snapshot; once resumed, the edited state). "
        "Send it back as the resume's stateVersion: a resume decided on another version is a 409 naming this one.",
    )
    outcome: str | None = Field(
        default=None,
        description="timed_out_default: nobody answered; the pause's declared default was taken at its deadline "
        "(resolvedBy is then empty). Absent otherwise.",
    )

    @classmethod
    def of(cls, i: Interaction) -> InterruptView:
        from baton.domain.state_edits import state_version
        from baton.models import InterruptRequest

        req, st = i.request_as(InterruptRequest), i.state
        answer = st.answer if isinstance(st.answer, dict) else {}
        # The state a resume applies to: the snapshot while pending, the edited state once resumed.
        edited = answer.get("state") if st.status == "answered" else None
        timed_out = st.status == "timed_out"
        return cls(
            interrupt_id=i.interaction_id,
            session_id=i.run_id,
            workflow_id=req.workflow_id,
            node=req.node,
            prompt=req.prompt,
            schema_=req.schema_,
            json_schema=req.json_schema,
            state=req.state,
            notify=req.notify,
            timeout_ms=req.timeout_ms,
            hosted=req.hosted,
            key=req.key,
            status=edge_status(i),
            created_at=i.created_at,
            created_by=req.created_by,
            expires_at=i.expires_at,
            claimed_by=st.claimed_by,
            claimed_at=st.claimed_at,
            lease_expires_at=st.lease_expires_at,
            resolved_by=st.answered_by,
            resolved_at=st.answered_at,
            value=answer.get("input"),
            edited_state=answer.get("state"),
            state_edits=answer.get("state_edits"),
            reason=TIMEOUT_REASON if timed_out else st.reason,
            timed_out=timed_out,
            version=st.version,
            state_version=state_version(edited if isinstance(edited, dict) else req.state),
            outcome=st.outcome,
        )


class InterruptPage(Contract):
    interrupts: list[InterruptView]
    count: int
    next: str | None = Field(default=None, description="Pass it as ?next= for the next page; null on the last.")


class InterruptClaimed(Contract):
    interrupt: InterruptView
    claimed: bool
    changed: bool = Field(description="False when nothing changed (a re-claim, a release of a free one).")


class InterruptResumed(Contract):
    interrupt: InterruptView
    resumed: bool = Field(description="The waiter was released (hosted: the task token was sent).")
    approval: ApprovalView | None = Field(default=None, description="A quorum interrupt: the count after this vote.")
    delivery: Delivery | None = Field(default=None, description=DELIVERY_DESCRIPTION)


class InterruptCancelled(Contract):
    model_config = ConfigDict(alias_generator=to_camel)

    interrupt: InterruptView
    cancelled: bool
    workflow_failed: bool = Field(description="Hosted: the parked task was failed with InterruptCancelled.")
    approval: ApprovalView | None = Field(default=None, description="A quorum interrupt: the count after this vote.")


# ---- the commands ------------------------------------------------------------------------------------
class ResumeInterrupt(BaseModel):
    input: Any = Field(default=None, description="The value for the waiter; validated against the schema.")
    stateEdits: list[str] = Field(default_factory=list, description='Edits of the snapshot: ["path=value", ...].')
    stateVersion: str | None = Field(
        default=None,
        max_length=64,
        description="The stateVersion of the interrupt as the operator saw it: a resume decided on another "
        "version is a 409 naming the current one. Omitted (older clients): the current one.",
    )

    model_config = ConfigDict(extra="forbid")


class CancelInterrupt(BaseModel):
    reason: str = Field(
        min_length=1,
        max_length=MAX_REASON_CHARS,
        description="Why; shown to the waiter and in the run.",
        json_schema_extra={"pattern": r"\S"},  # the service refuses a reason of only spaces (400)
    )

    model_config = ConfigDict(extra="forbid")


LEASE_DESCRIPTION = (
    f"How long the claim holds, in whole seconds ({MIN_LEASE_SECONDS}..{MAX_LEASE_SECONDS}; default "
    f"{DEFAULT_LEASE_SECONDS}). Past it the interrupt is unclaimed by itself."
)
HOLDER_DESCRIPTION = (
    "The holder whose claim this overrides (the one the operator saw); a claim held by anyone else is a "
    "409 naming them. Omitted: the claim held when the request arrives."
)


class ClaimInterrupt(BaseModel):
    force: StrictBool = Field(default=False, description="Take over a claim held by another operator (needs a reason).")
    reason: Reason = Field(default=None, description="Why a claim is taken over; recorded with the claim.")
    holder: Principal | None = Field(default=None, description=HOLDER_DESCRIPTION)
    leaseSeconds: LeaseSeconds = Field(default=None, description=LEASE_DESCRIPTION)

    # The document says what _take_over_has_a_reason enforces: with force=true, a reason with some text.
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "if": {"properties": {"force": {"const": True}}, "required": ["force"]},
            "then": {"properties": {"reason": {"type": "string", "pattern": r"\S"}}, "required": ["reason"]},
        },
    )

    @model_validator(mode="after")
    def _take_over_has_a_reason(self) -> ClaimInterrupt:
        if self.force and not (self.reason or "").strip():
            raise ValueError("force=true (a take-over) needs a reason")
        return self


class RenewClaim(BaseModel):
    leaseSeconds: LeaseSeconds = Field(default=None, description=LEASE_DESCRIPTION + " Counted from now.")

    model_config = ConfigDict(extra="forbid")


class ReassignClaim(BaseModel):
    to: Principal = Field(description="The operator the claim is given to.")
    reason: Reason = Field(default=None, description="Why; recorded with the reassignment.")
    holder: Principal | None = Field(default=None, description=HOLDER_DESCRIPTION)
    leaseSeconds: LeaseSeconds = Field(default=None, description=LEASE_DESCRIPTION)

    model_config = ConfigDict(extra="forbid")
