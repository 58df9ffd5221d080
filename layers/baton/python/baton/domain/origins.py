"""Which web pages may call the deployed API and `/mcp` (issue 29): a browser names the calling page's
origin in `Origin`, and a request that carries one is answered only when that is the API's own origin or
one the deployment allows (`cdk deploy -c allowed_origins=https://a.example,https://b.example`, passed to
the API and MCP functions as `BATON_ALLOWED_ORIGINS`); any other is a 403 before any work. A request
without `Origin` (the CLI, the SDK, agents, a server) is no page's: it passes, and its credentials decide.

The API's own origin is read from the event (`requestContext.domainName`: the name API Gateway was called
by, its execute-api name or a custom domain's), so the function needs no reference to its API (a cycle in
CloudFormation). The web inbox calls `/api/*` through its CloudFront distribution, whose edge function
refuses another site's `Origin` and drops its own before the request goes on (infra/capabilities/inbox.py).
`Host` needs no check deployed: API Gateway routes only its own names. Locally the HTTP adapter checks
`Host` and `Origin` against loopback names before an event exists (baton/local/origin_guard.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from baton.errors import ForbiddenError

if TYPE_CHECKING:
    from collections.abc import Mapping


def normalized_origin(text: str) -> str:
    """`scheme://host[:port]` in lower case, as browsers send it (a pasted trailing `/` dropped); ValueError
    for anything else."""
    origin = text.strip().lower().removesuffix("/")
    parts = urlsplit(origin)
    if parts.scheme not in ("https", "http") or not parts.hostname or parts.path or parts.query or parts.fragment:
        raise ValueError(f"{text!r} is not an origin (scheme://host[:port], nothing after it)")
    return origin


def parse_origins(value: object) -> object:
    """`BATON_ALLOWED_ORIGINS`, a comma-separated list, as normalized origins; a list passes as it is."""
    if isinstance(value, str):
        return tuple(normalized_origin(o) for o in value.split(",") if o.strip())
    return value


def _header(event: Mapping[str, Any], name: str) -> str | None:
    headers = event.get("headers") or {}
    return next((str(v) for k, v in headers.items() if str(k).lower() == name), None)


def check_origin(event: Mapping[str, Any], allowed: tuple[str, ...]) -> None:
    """ForbiddenError when the request comes from a page whose origin is neither the API's own nor allowed."""
    origin = _header(event, "origin")
    if origin is None:
        return
    domain = str((event.get("requestContext") or {}).get("domainName") or "").lower()
    if domain and origin.strip().lower() == f"https://{domain}":
        return
    if origin.strip().lower() in allowed:
        return
    raise ForbiddenError(
        f"Origin {origin[:100]!r} is not allowed to call this API: only its own origin and the deployment's "
        "allowed_origins are; requests without an Origin (CLI, SDK, servers) are not checked",
        details={"origin": origin[:100]},
    )
