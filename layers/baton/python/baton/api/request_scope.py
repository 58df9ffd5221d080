"""Per-request state of the resolver, kept per request rather than on the class.

Powertools' resolver stores the request it is handling on the class (`BaseRouter.current_event`,
`BaseRouter.lambda_context`), and the route context (`_route`, `_route_args`) on the resolver that
every module-level router points to. In Lambda one container handles one request at a time, so that
is harmless there; the local stack runs several handler "containers" in threads of one process, where
one request's body could be read while another request's path was being served. `RequestScopedResolver`
keeps all three in a context variable, and runs every `resolve` in its own copy of the context, so
concurrent requests in one process never see each other's state (whichever resolver instance, router
or thread reads them).
"""

from __future__ import annotations

import contextvars
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from aws_lambda_powertools.event_handler import APIGatewayRestResolver

if TYPE_CHECKING:
    from collections.abc import Mapping

    from aws_lambda_powertools.utilities.data_classes.common import BaseProxyEvent
    from aws_lambda_powertools.utilities.typing import LambdaContext


@dataclass
class RequestState:
    """What Powertools keeps for the request being resolved."""

    event: Any = None
    lambda_context: Any = None
    context: dict[str, Any] = field(default_factory=dict)


_request: contextvars.ContextVar[RequestState | None] = contextvars.ContextVar("baton_request", default=None)


class RequestScopedResolver(APIGatewayRestResolver):
    """An `APIGatewayRestResolver` whose `current_event`, `lambda_context` and `context` belong to the
    request being resolved. Outside a request (while routes are registered) they are the instance's."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._idle = RequestState()  # before super().__init__: it assigns `self.context`
        super().__init__(*args, **kwargs)

    def _state(self) -> RequestState:
        return _request.get() or self._idle

    @property  # type: ignore[override]
    def current_event(self) -> BaseProxyEvent:
        event: BaseProxyEvent = self._state().event
        return event

    @current_event.setter
    def current_event(self, value: BaseProxyEvent) -> None:
        self._state().event = value

    @property
    def lambda_context(self) -> LambdaContext:
        context: LambdaContext = self._state().lambda_context
        return context

    @lambda_context.setter
    def lambda_context(self, value: LambdaContext) -> None:
        self._state().lambda_context = value

    @property
    def context(self) -> dict[str, Any]:
        return self._state().context

    @context.setter
    def context(self, value: dict[str, Any]) -> None:
        self._state().context = value

    def resolve(self, event: Mapping[str, Any], context: Any) -> dict[str, Any]:
        """Resolve in a fresh copy of the context, with this request's own state (the routers'
        registration context copied in, as Powertools' own `include_router` left it)."""
        state = RequestState(
            event=self._to_proxy_event(dict(event)), lambda_context=context, context=dict(self._idle.context)
        )
        return contextvars.copy_context().run(self._resolve_in, state, event, context)

    def _resolve_in(self, state: RequestState, event: Mapping[str, Any], context: Any) -> dict[str, Any]:
        _request.set(state)
        return super().resolve(event, context)
