"""The API's resolver over a moto stack's services, on a fixed clock and the local bearer token: what the
tool-approval and agent-state tests call, and what the framework adapters' SDK client reaches through an
httpx MockTransport (`dispatch`). The test's fixture resets `deps` after it."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import httpx

from baton.api import deps
from baton.api.app import create_app
from baton.local.http_adapter import to_proxy_event
from baton.runtime.settings import Settings
from baton.runtime.wiring import Services
from tests.conftest import FixedClock

if TYPE_CHECKING:
    from tests.integration.conftest import MotoStack

TOKEN = "local-secret"


class ResolverOnMoto:
    def __init__(self, stack: MotoStack, *, token: str = TOKEN) -> None:
        self.token = token
        self.clock = FixedClock(datetime.now(UTC))
        self.core = stack.services.core
        self.core.clock = self.clock
        settings = Settings.model_validate(
            {**stack.services.settings.model_dump(by_alias=True), "BATON_LOCAL_API_TOKEN": token}
        )
        services = Services(settings=settings, core=self.core, runs=stack.services.runs)
        deps.set_services_provider(lambda: services)
        self.app = create_app()

    def resolve(self, method: str, path: str, headers: dict[str, str], body: bytes) -> tuple[int, str]:
        result = self.app.resolve(to_proxy_event(method, path, headers, body, "127.0.0.1"), None)
        return result["statusCode"], result.get("body") or ""

    def dispatch(self, request: httpx.Request) -> httpx.Response:
        """An SDK request, as the API answers it."""
        path, headers = request.url.raw_path.decode(), dict(request.headers)
        status, body = self.resolve(request.method, path, headers, request.content)
        return httpx.Response(status, content=body.encode())

    def call(self, method: str, path: str, body: Any = None, *, token: str | None = None) -> tuple[int, Any]:
        """A JSON request as an operator (the local token) or `token`'s bearer; the status and JSON body."""
        headers = {"Content-Type": "application/json", "Authorization": f"Bearer {token or self.token}"}
        raw = json.dumps(body, ensure_ascii=False).encode() if body is not None else b""
        status, text = self.resolve(method, path, headers, raw)
        return status, json.loads(text) if text else None
