"""The interrupt as the `/api/v1/interrupts` routes show it (camelCase, like the seed's REST API).

`InterruptView` is built once, from the stored record, by `baton.services.interrupts.interrupt_view`;
the routes answer with it and the SDK (`baton.client.interrupts`) parses it. Every field has a
default so a waiter can settle on a partial record (and on one from an older server)."""

from __future__ import annotations

from typing import Any

from pydantic import ConfigDict, Field
from pydantic.alias_generators import to_camel

from baton.contracts.base import DELIVERY_DESCRIPTION, Contract, Delivery
from baton.contracts.questions import ApprovalView


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
