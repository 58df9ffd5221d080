"""Unit tests are pure: the network is blocked for every test in this folder."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest
from pytest_socket import disable_socket, enable_socket

if TYPE_CHECKING:
    from baton.services.core import Core

# The local stack's bearer token the `app` fixture's API accepts (BATON_LOCAL_API_TOKEN).
LOCAL_TOKEN = "local-secret"


@pytest.fixture(autouse=True)
def _no_network() -> Iterator[None]:
    disable_socket(allow_unix_socket=True)
    yield
    enable_socket()


@pytest.fixture
def app(core: Core) -> Iterator[Any]:
    """The API (`create_app`) over the test's in-memory `core`, as the local stack runs it: LOCAL_TOKEN is
    its operator bearer token. A test file that needs other settings declares its own `app`. Imported here,
    not at the top: this conftest loads for every unit test, some of which check what a cold import loads."""
    from baton.api import deps
    from baton.api.app import create_app
    from baton.runtime.settings import Settings
    from baton.runtime.wiring import Services
    from baton.services.runs import RunService
    from tests.fakes.memory import MemoryInboxSessions

    settings = Settings.model_validate({"BATON_TABLE_NAME": "t", "BATON_LOCAL_API_TOKEN": LOCAL_TOKEN})
    services = Services(settings=settings, core=core, runs=RunService(core), inbox_sessions=MemoryInboxSessions())
    deps.set_services_provider(lambda: services)
    yield create_app()
    deps.set_services_provider(deps._default_provider)
