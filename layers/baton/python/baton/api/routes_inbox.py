"""The inbox's routes: `GET /api/inbox` (everything waiting for a person, across runs; operators only),
`GET /api/stats/waits` (how long things wait; operators only) and `GET /api/me` (who the caller is).
One call each into `baton.services.inbox` or `baton.services.waits`."""

from __future__ import annotations

from typing import Annotated, Literal

from aws_lambda_powertools.event_handler.openapi.params import Query
from aws_lambda_powertools.event_handler.router import APIGatewayRouter
from pydantic import BaseModel, BeforeValidator, Field

from baton.api import deps
from baton.api.contract import responses
from baton.contracts.inbox import DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, InboxKind, InboxPage, InboxQuery, MeView
from baton.contracts.waits import WaitStats
from baton.domain import fields
from baton.services.inbox import InboxService
from baton.services.waits import WaitStatsService

router = APIGatewayRouter()


def _comma_list(value: object) -> object:
    """`?kind=question&kind=ask` and `?kind=question,ask` are the same filter."""
    values = value if isinstance(value, list) else [value]
    parts: list[object] = []
    for v in values:
        if isinstance(v, str):
            parts.extend(p.strip() for p in v.split(",") if p.strip())
        else:
            parts.append(v)
    return parts


class InboxListQuery(BaseModel):
    kind: Annotated[list[InboxKind] | None, BeforeValidator(_comma_list)] = Field(
        default=None, max_length=5, description="question, ask, await, interrupt, review; repeat or comma-separate."
    )
    run: fields.RunId | None = Field(default=None, description="One run's items.")
    node: fields.NodeName | None = Field(default=None, description="One node's items.")
    claimed: Literal["me", "unclaimed", "any"] = Field(
        default="any", description="me: claimed by the caller; unclaimed: claimed by nobody; any."
    )
    min_age_s: int = Field(default=0, ge=0, le=fields.MAX_TIMEOUT_SECONDS, description="Waited at least this long.")
    order: Literal["newest", "oldest"] = Field(default="newest", description="By the time it was asked.")
    limit: int = Field(default=DEFAULT_PAGE_SIZE, ge=1, le=MAX_PAGE_SIZE, description="Page size.")
    next: str | None = Field(default=None, max_length=1024, description="The `next` of the previous page.")


@router.get(
    "/api/inbox",
    summary="Everything waiting for a person, across runs (?kind= ?run= ?node= ?claimed= ?min_age_s= ?order=), paged",
    tags=["inbox"],
    responses=responses({200: InboxPage}, 400, 403),
)
def inbox(query: Annotated[InboxListQuery, Query()]) -> InboxPage:
    caller = deps.require_operator("reading the inbox")
    services = deps.get_services()
    return InboxService(services.core).page(
        InboxQuery(
            kinds=tuple(query.kind) if query.kind else InboxQuery().kinds,
            run_id=query.run,
            node=query.node,
            claimed=query.claimed,
            min_age_s=query.min_age_s,
            order=query.order,
            limit=query.limit,
            next_token=query.next,
        ),
        caller=caller.principal,
    )


@router.get(
    "/api/stats/waits",
    summary="How long things wait: pending count and oldest age per kind and workflow, the oldest items, "
    "answer times (p50/p95) and deadlines met or missed over the last day and week",
    tags=["inbox"],
    responses=responses({200: WaitStats}, 403),
)
def wait_stats() -> WaitStats:
    deps.require_operator("reading the wait statistics")
    return WaitStatsService(deps.get_services().core).stats()


@router.get(
    "/api/me",
    summary="Who the caller is: operator or agent, and how it signed in",
    tags=["inbox"],
    responses=responses({200: MeView}),
)
def me() -> MeView:
    caller = deps.current_caller()
    role: Literal["operator", "agent"] = "agent" if caller.role == "agent" else "operator"
    session = caller.via == "local-session"
    passkeys = bool(deps.get_services().settings.webauthn_rp_id)  # the inbox offers Passkeys only then
    return MeView(
        principal=caller.principal, role=role, via=caller.via, run_id=caller.run_id, session=session, passkeys=passkeys
    )
