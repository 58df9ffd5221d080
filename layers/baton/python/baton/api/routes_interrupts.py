"""Interrupts (`/api/v1/interrupts`, the seed's REST API): create, list, read (with long-poll), resume
with state edits, cancel (claims: `baton/api/routes_claims.py`). Each route makes one call into `InterruptService`."""

from __future__ import annotations

from typing import Annotated, Any

from aws_lambda_powertools.event_handler import Response, content_types
from aws_lambda_powertools.event_handler.openapi.params import Query
from aws_lambda_powertools.event_handler.router import APIGatewayRouter
from pydantic import BaseModel, Field, model_validator

from baton.api import deps
from baton.api.contract import DELIVERY_PENDING, InterruptId, answered, responses
from baton.contracts import (
    CancelInterrupt,
    InterruptCancelled,
    InterruptPage,
    InterruptResumed,
    InterruptView,
    ResumeInterrupt,
)
from baton.contracts.interrupts import DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, STATUSES
from baton.domain.answer_schema import STATE_SNAPSHOT_LIMIT_BYTES
from baton.domain.approval import ApprovalPolicy
from baton.domain.ballot import Voter
from baton.domain.fields import RunId
from baton.domain.interrupt_fields import MAX_TIMEOUT_MS, GateAction, InterruptKey, NotifyChannels, Prompt, TimeoutMs
from baton.domain.interrupt_spec import InterruptSpec
from baton.domain.ladder import Ladder, LadderFields, OnTimeout
from baton.errors import ForbiddenError
from baton.notify.model import Channel
from baton.services.asks import MAX_WAIT_SECONDS
from baton.services.interrupts import InterruptService

router = APIGatewayRouter()


class CreateInterruptRequest(BaseModel):
    sessionId: RunId = Field(description="Session (= run id); created on first use.")
    prompt: Prompt = Field(description="What the reviewer is asked.")
    workflowId: str | None = Field(default=None, max_length=200, description="Logical workflow tag.")
    schema_: dict[str, Any] | None = Field(
        default=None,
        alias="schema",
        description='Light form of the expected value: {"type", "enum"?, "default"?}.',
    )
    jsonSchema: dict[str, Any] | None = Field(default=None, description="Full JSON Schema; wins over schema.")
    state: dict[str, Any] | None = Field(
        default=None,
        description=f"State snapshot the reviewer can inspect and edit; at most {STATE_SNAPSHOT_LIMIT_BYTES} "
        "bytes of compact JSON (413 above).",
    )
    notify: NotifyChannels = Field(default=None, description="Channels: console, email, webhook, slack.")
    timeoutMs: TimeoutMs = Field(
        default=None,
        description=f"Deadline (at most {MAX_TIMEOUT_MS}); then cancelled (reason timeout). Omitted: 24 hours.",
    )
    key: InterruptKey = Field(
        default=None,
        description="Idempotency key: creating again with the same (sessionId, key) returns the first interrupt.",
    )
    approval: ApprovalPolicy | None = Field(
        default=None,
        description="A quorum: each resume is an approval, each cancel a rejection; the waiter is released when "
        "`approvals` approvers agree (with the value of the resume that met it). The creator cannot vote.",
    )
    action: GateAction | None = Field(
        default=None,
        description="The action this interrupt gates: the policy in force decides it at creation (an enforced "
        "allow resumes at once with `onAllow`, a deny with `onDeny`, by `policy:<rule>`; an ask goes to the "
        "rule's approvers). Each value is checked against the schema now (422).",
    )
    onTimeout: OnTimeout = Field(
        default="fail",
        description='"fail" (timed out at the deadline) or {"default": <value>}: taken at the deadline as '
        "timed_out_default; checked against the schema now (422)",
    )
    remindAfter: int | None = Field(
        default=None, ge=1, description="Seconds after creation: one reminder to its channels (its own timer)"
    )
    escalateAfter: int | None = Field(default=None, ge=1, description="Seconds after creation: announce to escalateTo")
    escalateTo: list[Channel] | None = Field(
        default=None, min_length=1, max_length=4, description="Channels the escalation notifies"
    )

    model_config = {"extra": "forbid", "populate_by_name": True}

    @model_validator(mode="after")
    def _ladder_rules(self) -> CreateInterruptRequest:
        self.ladder()  # LadderFields refuses a malformed ladder with a ValueError: a 422 at the door
        return self

    def ladder(self) -> Ladder | None:
        """The ladder the camelCase fields declare (`baton.domain.ladder.LadderFields`, snake_case)."""
        return LadderFields(
            remind_after=self.remindAfter,
            escalate_after=self.escalateAfter,
            escalate_to=self.escalateTo,
            on_timeout=self.onTimeout,
        ).ladder()


# Who acts comes only from the credentials: a body's `operator` is accepted (older clients send it) when it
# names the caller, and refused otherwise, so a token can never act, nor be logged, as someone else.
OPERATOR_FIELD_DESCRIPTION = (
    "Optional; must name the authenticated caller (403 otherwise). Who acts is always the caller: "
    "locally, use a named operator's token (`baton operator-token <name>`)."
)
OperatorField = Field(default=None, max_length=200, description=OPERATOR_FIELD_DESCRIPTION)


# The bodies: each verb's command (baton/contracts/interrupts.py) and the optional `operator`.
class ResumeInterruptRequest(ResumeInterrupt):
    operator: str | None = OperatorField


class CancelInterruptRequest(CancelInterrupt):
    operator: str | None = OperatorField


class ListInterruptsQuery(BaseModel):
    # checked by the service (400, its own words); the enum documents the same list (STATUSES)
    status: str | None = Field(
        default=None, description="pending | answered | cancelled", json_schema_extra={"enum": list(STATUSES)}
    )
    session_id: RunId | None = Field(default=None, alias="sessionId", description="One session's interrupts.")
    limit: int = Field(default=DEFAULT_PAGE_SIZE, ge=1, le=MAX_PAGE_SIZE, description="Page size.")
    next_token: str | None = Field(
        default=None, alias="next", max_length=4096, description="The `next` of the previous page."
    )


class GetInterruptQuery(BaseModel):
    wait_seconds: float = Field(
        default=0,
        alias="waitSeconds",
        ge=0,
        le=MAX_WAIT_SECONDS,
        description="Hold the request until the interrupt is no longer pending, at most this long.",
    )


def _service() -> InterruptService:
    return deps.get_services().interrupts


def _operator(requested: str | None, action: str = "claiming, resuming or cancelling an interrupt") -> str:
    """The authenticated caller, on every stack: a body's `operator` naming anyone else is a 403."""
    caller = deps.require_operator(action)
    if requested is None or requested == caller.principal:
        return caller.principal
    raise ForbiddenError(
        f"you are {caller.principal}; you cannot act as {requested}: who acts comes from the credentials",
        details={"operator": requested, "caller": caller.principal},
    )


def _voter() -> Voter:
    """A quorum vote is the authenticated caller's, never the `operator` a local body names."""
    caller = deps.current_caller()
    return Voter(caller.principal, caller.groups)


acting_operator = _operator  # the claim routes (baton/api/routes_claims.py) decide who acts the same way


@router.post(
    "/api/v1/interrupts",
    summary="Create an interrupt (a typed pause); 200 when `key` names an existing one",
    tags=["interrupts"],
    responses=responses({201: InterruptView, 200: InterruptView}, 400, 403, 409, 413),
)
def create_interrupt(body: CreateInterruptRequest) -> Response[InterruptView]:
    deps.require_run(body.sessionId)
    interrupt, created = _service().create(
        InterruptSpec(
            session_id=body.sessionId,
            prompt=body.prompt,
            workflow_id=body.workflowId,
            schema=body.schema_,
            json_schema=body.jsonSchema,
            state=body.state,
            notify=body.notify,
            timeout_ms=body.timeoutMs,
            key=body.key,
            approval=body.approval,
            ladder=body.ladder(),
            action=body.action,
        ),
        caller=deps.current_caller().principal,
    )
    return Response(
        status_code=201 if created else 200,
        content_type=content_types.APPLICATION_JSON,
        body=InterruptView.of(interrupt),
    )


@router.get(
    "/api/v1/interrupts",
    summary="List interrupts (?status= ?sessionId= ?limit= ?next=), paged",
    tags=["interrupts"],
    responses=responses({200: InterruptPage}, 400, 403),
)
def list_interrupts(query: Annotated[ListInterruptsQuery, Query()]) -> InterruptPage:
    session_id = deps.own_run_or(query.session_id)  # an agent lists its own session's interrupts only
    deps.require_run(session_id)
    found, token = _service().list_page(
        status=query.status, session_id=session_id, limit=query.limit, next_token=query.next_token
    )
    return InterruptPage(interrupts=[InterruptView.of(i) for i in found], count=len(found), next=token)


@router.get(
    "/api/v1/interrupts/<interrupt_id>",
    summary="One interrupt; ?waitSeconds= long-polls",
    tags=["interrupts"],
    responses=responses({200: InterruptView}, 403, 404),
)
def get_interrupt(interrupt_id: InterruptId, query: Annotated[GetInterruptQuery, Query()]) -> InterruptView:
    if deps.current_caller().role == "agent":  # scoped before any waiting
        deps.require_run(_service().get(interrupt_id).run_id)
    return InterruptView.of(_service().get(interrupt_id, wait_seconds=query.wait_seconds))


@router.post(
    "/api/v1/interrupts/<interrupt_id>/resume",
    summary="Resume with a value and state edits",
    tags=["interrupts"],
    responses=responses({200: InterruptResumed, DELIVERY_PENDING: InterruptResumed}, 400, 403, 404, 409, 410, 413),
)
def resume_interrupt(interrupt_id: InterruptId, body: ResumeInterruptRequest) -> Response[InterruptResumed]:
    caller = _operator(body.operator)
    # A repeat (same caller, value and edits) gets the first one's 200 from the stored answer; another
    # value meets the deciding write's 409 with the winner (baton.services.interrupts).
    return answered(_service().resume(interrupt_id, body, caller=caller, voter=_voter()))


@router.post(
    "/api/v1/interrupts/<interrupt_id>/cancel",
    summary="Cancel with a reason",
    tags=["interrupts"],
    responses=responses({200: InterruptCancelled}, 400, 403, 404, 409, 410),
)
def cancel_interrupt(interrupt_id: InterruptId, body: CancelInterruptRequest) -> InterruptCancelled:
    return _service().cancel(interrupt_id, body, caller=_operator(body.operator), voter=_voter())
