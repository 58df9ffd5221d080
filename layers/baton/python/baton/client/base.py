"""What every family of `baton.Client` calls stands on: one `Transport` (the endpoint, its token or
SigV4) and the raw request. `baton.client.sdk.Client` is this plus one mixin per family (runs,
questions, blocking asks, interrupts, review, claims, audit), each in its own module."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Self

from baton.client.transport import Transport

if TYPE_CHECKING:
    import httpx


class ClientBase:
    def __init__(
        self,
        api_url: str | None = None,
        token: str | None = None,
        *,
        timeout: float = 30.0,
        transport: httpx.BaseTransport | None = None,
        async_transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self._transport = Transport(
            api_url, token, timeout=timeout, transport=transport, async_transport=async_transport
        )
        self.api_url, self.token = self._transport.api_url, self._transport.token

    def close(self) -> None:
        self._transport.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def request(self, method: str, path: str, *, json_body: Any = None, params: dict[str, Any] | None = None) -> Any:
        """Any route, raw: the decoded JSON body (errors raise as for the typed calls)."""
        return self._transport.call(method, path, json_body=json_body, params=params)
