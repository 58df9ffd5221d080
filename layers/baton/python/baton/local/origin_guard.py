"""Only the owner's own programs reach `baton dev` (issue 29): both servers answer a request only when its
`Host` is a loopback name with their port and its `Origin`, when sent, the same, so no web page drives
the API, `/mcp` or the emulator, cross-origin or by DNS rebinding (the rules of the `mcp` SDK's
`TransportSecuritySettings`, whose import would cost a cold start)."""

from __future__ import annotations

import contextlib
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from unittest.mock import patch

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")
FORBIDDEN_CODE = "forbidden_origin"


@dataclass(frozen=True)
class LoopbackOnly:
    """The `Host` values and `Origin`s a server on a loopback `port` answers (exact matches only)."""

    port: int

    def refusal(self, host: str | None, origin: str | None, *, any_host: bool = False) -> str | None:
        """Why a request with these headers is refused, or None when it is the owner's. `any_host`: a
        route that authenticates every request itself, reached through a tunnel with its own name."""
        hosts = {f"{name}:{self.port}" for name in LOOPBACK_NAMES}
        if not any_host and (host or "").lower() not in hosts:
            return f"Host {(host or '')[:100]!r} is not this local stack's (only loopback names on port {self.port})"
        if origin is not None and origin.lower() not in {f"http://{own}" for own in hosts}:
            return f"Origin {origin[:100]!r} is not this local stack's: cross-origin requests are refused"
        return None


def error_body(code: str, message: str) -> bytes:
    """An error in the API's JSON shape, for what the local servers answer without the API."""
    return json.dumps({"error": code, "message": message}).encode()


@contextlib.contextmanager
def emulator_refuses_other_origins() -> Iterator[None]:
    """moto's server without flask-cors (it allows every `Origin`; the constant moto read `MOTO_DISABLE_GLOBAL_CORS`
    into at import is switched), behind the loopback check on its port (refused: a 403 with no CORS header)."""
    from moto.moto_server import threaded_moto_server, werkzeug_app

    wrapped = threaded_moto_server.__dict__["DomainDispatcherApplication"]

    def dispatcher(create_app: Any) -> Callable[..., Iterable[bytes]]:
        app = wrapped(create_app)

        def guarded(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
            reason = LoopbackOnly(int(environ["SERVER_PORT"])).refusal(
                environ.get("HTTP_HOST"), environ.get("HTTP_ORIGIN")
            )
            if reason is None:
                return app(environ, start_response)  # type: ignore[no-any-return]
            body = error_body(FORBIDDEN_CODE, reason)
            start_response("403 Forbidden", [("Content-Type", "application/json"), ("Content-Length", str(len(body)))])
            return [body]

        return guarded

    with (
        patch.object(werkzeug_app, "DISABLE_GLOBAL_CORS", True),
        patch.object(threaded_moto_server, "DomainDispatcherApplication", dispatcher),
    ):
        yield
