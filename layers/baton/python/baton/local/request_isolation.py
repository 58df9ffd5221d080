"""Lambda's one request per container, restored for handlers run as threads of one process.

Powertools keeps the request being resolved on the class (`BaseRouter.current_event`, `lambda_context`)
and the route context on the resolver that every module-level router points to; a route module's
router is one object per process, pointing at whichever container's resolver included it last. On
Lambda one container serves one request at a time, so that is harmless; here one request's body could
be read while another's path is served. `install` makes the three per request (a context variable,
each `resolve` run in its own copy of the context), on every resolver of this process.
"""

from __future__ import annotations

import contextvars
import functools
from types import SimpleNamespace
from typing import Any

from aws_lambda_powertools.event_handler.api_gateway import ApiGatewayResolver

_request: contextvars.ContextVar[SimpleNamespace | None] = contextvars.ContextVar("baton_request", default=None)
_FIELDS = ("current_event", "lambda_context", "context")


def _state(resolver: Any) -> SimpleNamespace:
    """The request being resolved; outside one (routes being registered), the resolver's own."""
    found = _request.get()
    if found is None:
        idle = SimpleNamespace(current_event=None, lambda_context=None, context={})
        found = resolver.__dict__.setdefault("_baton_idle", idle)
    return found


def _field(name: str) -> property:
    return property(lambda self: getattr(_state(self), name), lambda self, value: setattr(_state(self), name, value))


def install() -> None:
    """Idempotent: the local stack's dispatcher calls it before loading any handler."""
    if getattr(ApiGatewayResolver, "_baton_isolated", False):
        return
    original = ApiGatewayResolver.resolve

    @functools.wraps(original)
    def resolve(self: Any, event: dict[str, Any], context: Any) -> Any:
        idle = _state(self)  # the routers' registration context, copied in as include_router left it
        # Powertools assigns the event to BaseRouter's class attribute, which these properties shadow.
        state = SimpleNamespace(
            current_event=self._to_proxy_event(dict(event)), lambda_context=context, context=dict(idle.context)
        )

        def run() -> Any:
            _request.set(state)
            return original(self, event, context)

        return contextvars.copy_context().run(run)

    for name in _FIELDS:
        setattr(ApiGatewayResolver, name, _field(name))
    ApiGatewayResolver.resolve = resolve  # type: ignore[method-assign,assignment]
    ApiGatewayResolver._baton_isolated = True  # type: ignore[attr-defined]
