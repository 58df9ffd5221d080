"""Where route code gets its services and caller. Tests swap the provider for in-memory fakes."""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar
from typing import TYPE_CHECKING

from baton.api.auth import Caller
from baton.errors import ForbiddenError

if TYPE_CHECKING:
    from baton.runtime.wiring import Services


def _default_provider() -> Services:
    from baton.runtime.wiring import services

    return services()


_provider: Callable[[], Services] = _default_provider


def set_services_provider(provider: Callable[[], Services]) -> None:
    global _provider
    _provider = provider


def get_services() -> Services:
    return _provider()


# A context variable, not resolver state: routes live on shared routers, and the local stack runs
# several handler "containers" in threads of one process.
_caller: ContextVar[Caller] = ContextVar("baton_caller")


def set_current_caller(caller: Caller) -> None:
    _caller.set(caller)


def current_caller() -> Caller:
    return _caller.get()


def require_operator(action: str) -> Caller:
    """Answering, resuming, claiming and cancelling are operator actions; an agent identity is refused (403)."""
    caller = current_caller()
    if caller.role != "operator":
        raise ForbiddenError(
            f"{action} is an operator action; this identity is an agent",
            details={"principal": caller.principal},
        )
    return caller


def require_run(run_id: str | None) -> Caller:
    """An agent identity may touch its own run only; an agent without a run touches none (deny by default)."""
    caller = current_caller()
    if caller.role == "agent" and (caller.run_id is None or caller.run_id != run_id):
        scope = f"scoped to run {caller.run_id}" if caller.run_id else "not scoped to any run"
        raise ForbiddenError(
            f"this agent identity is {scope}",
            details={"principal": caller.principal, "run_id": run_id},
        )
    return caller


def own_run_or(run_id: str | None) -> str | None:
    """A listing's run filter: an agent's listing is of its own run (the filter defaults to it)."""
    caller = current_caller()
    if caller.role == "agent" and run_id is None:
        return caller.run_id
    return run_id
