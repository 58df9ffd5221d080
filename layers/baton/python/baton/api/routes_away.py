"""The caller's own away (issue 32 item 4; `baton.services.away`): `PUT`, `GET` and `DELETE /api/me/away`.
An operator action each (an agent identity is refused); one call each into `AwayService`."""

from __future__ import annotations

from aws_lambda_powertools.event_handler.router import APIGatewayRouter

from baton.api import deps
from baton.api.contract import responses
from baton.contracts.away import AwaySet, AwayView
from baton.services.away import AwayService

router = APIGatewayRouter()
PATH = "/api/me/away"


def _service() -> AwayService:
    return AwayService(deps.get_services().core)


@router.put(
    PATH,
    summary="Set yourself away until a time, with a delegate (409 naming a delegate who is away too)",
    tags=["inbox"],
    responses=responses({200: AwayView}, 403, 409),
)
def set_away(body: AwaySet) -> AwayView:
    return _service().set(deps.require_operator("setting yourself away").principal, body)


@router.get(PATH, summary="Your away, if you are", tags=["inbox"], responses=responses({200: AwayView}, 403))
def get_away() -> AwayView:
    return _service().get(deps.require_operator("reading your away").principal)


@router.delete(PATH, summary="Back: clear your away", tags=["inbox"], responses=responses({200: AwayView}, 403))
def clear_away() -> AwayView:
    return _service().clear(deps.require_operator("clearing your away").principal)
