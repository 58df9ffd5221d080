"""Where route code gets its services and caller. Tests swap the provider for in-memory fakes."""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar
from typing import TYPE_CHECKING

from baton.api.auth import Caller

if TYPE_CHECKING:
    from baton.wiring import Services


def _default_provider() -> Services:
    from baton.wiring import services

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
