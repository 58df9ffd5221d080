"""Who is calling. Deployed, API Gateway authenticates (IAM SigV4 or Cognito) and the handler reads
the identity it put in the request context; locally, a bearer token stands in for both."""

from __future__ import annotations

import hmac
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from baton.errors import UnauthorizedError


@dataclass(frozen=True)
class Caller:
    principal: str
    via: str  # cognito | iam | local-token


def resolve_caller(event: Mapping[str, Any], local_api_token: str) -> Caller:
    ctx = event.get("requestContext") or {}
    claims = ((ctx.get("authorizer") or {}).get("claims")) or {}
    if claims:
        return Caller(principal=claims.get("email") or claims.get("cognito:username") or claims["sub"], via="cognito")
    identity = ctx.get("identity") or {}
    if identity.get("userArn"):
        return Caller(principal=identity["userArn"], via="iam")
    if local_api_token:
        headers = {k.lower(): v for k, v in (event.get("headers") or {}).items()}
        auth = headers.get("authorization", "")
        scheme, _, token = auth.partition(" ")
        if scheme.lower() == "bearer" and hmac.compare_digest(token.strip().encode(), local_api_token.encode()):
            return Caller(principal="local-operator", via="local-token")
        if auth:
            raise UnauthorizedError("the bearer token is not valid for this Baton API")
    raise UnauthorizedError(
        "no caller identity: send 'Authorization: Bearer <token>' (local stack: see .baton/local.json) "
        "or sign the request with IAM"
    )
