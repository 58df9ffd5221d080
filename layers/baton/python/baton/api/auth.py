"""Who is calling. Deployed, API Gateway authenticates (IAM SigV4 or Cognito) and the handler reads
the identity it put in the request context; locally, a bearer token stands in for both.

Two roles: operators answer, resume, claim and cancel; agents ask, drain, await and create
interrupts. A local agent token is scoped to one run: `agent.<run_id>.<mac>`, where the mac is an
HMAC of the run id keyed with the stack's operator token (`baton agent-token <run>` prints one).
Deployed, an IAM principal matching BATON_AGENT_PRINCIPAL_PATTERN is an agent."""

from __future__ import annotations

import hmac
import re
from collections.abc import Mapping
from dataclasses import dataclass
from hashlib import sha256
from typing import Any

from baton.errors import UnauthorizedError


@dataclass(frozen=True)
class Caller:
    principal: str
    via: str  # cognito | iam | local-token
    role: str = "operator"  # operator | agent
    run_id: str | None = None  # an agent scoped to one run


def agent_token(operator_token: str, run_id: str) -> str:
    mac = hmac.new(operator_token.encode(), f"agent:{run_id}".encode(), sha256).hexdigest()[:32]
    return f"agent.{run_id}.{mac}"


def _local_agent(token: str, operator_token: str) -> Caller | None:
    parts = token.split(".")
    if len(parts) != 3 or parts[0] != "agent" or not parts[1]:
        return None
    if not hmac.compare_digest(token.encode(), agent_token(operator_token, parts[1]).encode()):
        return None
    return Caller(principal=f"agent:{parts[1]}", via="local-token", role="agent", run_id=parts[1])


def resolve_caller(event: Mapping[str, Any], local_api_token: str, agent_principal_pattern: str = "") -> Caller:
    ctx = event.get("requestContext") or {}
    claims = ((ctx.get("authorizer") or {}).get("claims")) or {}
    if claims:
        return Caller(principal=claims.get("email") or claims.get("cognito:username") or claims["sub"], via="cognito")
    identity = ctx.get("identity") or {}
    if identity.get("userArn"):
        arn = identity["userArn"]
        if agent_principal_pattern and re.search(agent_principal_pattern, arn):
            return Caller(principal=arn, via="iam", role="agent")
        return Caller(principal=arn, via="iam")
    if local_api_token:
        headers = {k.lower(): v for k, v in (event.get("headers") or {}).items()}
        auth = headers.get("authorization", "")
        scheme, _, token = auth.partition(" ")
        if scheme.lower() == "bearer" and hmac.compare_digest(token.strip().encode(), local_api_token.encode()):
            return Caller(principal="local-operator", via="local-token")
        agent = _local_agent(token.strip(), local_api_token) if scheme.lower() == "bearer" else None
        if agent is not None:
            return agent
        if auth:
            raise UnauthorizedError("the bearer token is not valid for this Baton API")
    raise UnauthorizedError(
        "no caller identity: send 'Authorization: Bearer <token>' (local stack: see .baton/local.json) "
        "or sign the request with IAM"
    )
