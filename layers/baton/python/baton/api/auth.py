"""Who is calling. Deployed, API Gateway authenticates (IAM SigV4 or Cognito) and the handler reads
the identity it put in the request context; locally, a bearer token stands in for both.

Two roles: operators answer, resume, claim and cancel; agents ask, drain, await and create
interrupts, each on its own run only. A local agent token is scoped to one run: `agent.<run_id>.<mac>`,
where the mac is an HMAC of the run id keyed with the stack's operator token (`baton agent-token <run>`
prints one).

Deployed, an IAM principal is an agent when it is a session of the stack's agent role
(BATON_AGENT_ROLE_NAME) or its ARN matches BATON_AGENT_PRINCIPAL_PATTERN. Its run comes from its
credentials: the role session name, `run-<run_id>`, which API Gateway reports in
`requestContext.identity.userArn` (`arn:aws:sts::<account>:assumed-role/<role>/run-<run_id>`); the agent
role's trust policy only lets sessions named `run-*` start. Deny by default: an agent whose run cannot
be read from its ARN (an IAM user, another session name) is refused with a 403 (`admit`), never
treated as unscoped."""

from __future__ import annotations

import hmac
import re
from collections.abc import Mapping
from dataclasses import dataclass
from hashlib import sha256
from typing import Any

from baton.domain.fields import RUN_ID_PATTERN
from baton.errors import ForbiddenError, UnauthorizedError

RUN_SESSION_PREFIX = "run-"  # an agent role session for run R is named run-R
_ASSUMED_ROLE = re.compile(r"^arn:aws[a-z-]*:sts::\d{12}:assumed-role/(?P<role>[^/]+)/(?P<session>[^/]+)$")


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


def run_of_session(arn: str) -> str | None:
    """The run an assumed-role session is for (`.../assumed-role/<role>/run-<run_id>`), else None."""
    found = _ASSUMED_ROLE.match(arn)
    if found is None or not found["session"].startswith(RUN_SESSION_PREFIX):
        return None
    run_id = found["session"].removeprefix(RUN_SESSION_PREFIX)
    return run_id if RUN_ID_PATTERN.match(run_id) else None


def _is_agent(arn: str, agent_principal_pattern: str, agent_role_name: str) -> bool:
    if agent_principal_pattern and re.search(agent_principal_pattern, arn):
        return True
    found = _ASSUMED_ROLE.match(arn)
    return bool(agent_role_name) and found is not None and found["role"] == agent_role_name


def resolve_caller(
    event: Mapping[str, Any], local_api_token: str, agent_principal_pattern: str = "", agent_role_name: str = ""
) -> Caller:
    ctx = event.get("requestContext") or {}
    claims = ((ctx.get("authorizer") or {}).get("claims")) or {}
    if claims:
        return Caller(principal=claims.get("email") or claims.get("cognito:username") or claims["sub"], via="cognito")
    identity = ctx.get("identity") or {}
    if identity.get("userArn"):
        arn = str(identity["userArn"])
        if _is_agent(arn, agent_principal_pattern, agent_role_name):
            return Caller(principal=arn, via="iam", role="agent", run_id=run_of_session(arn))
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


def admit(caller: Caller) -> Caller:
    """Deny by default: an agent identity must say which run it is for (403 otherwise)."""
    if caller.role == "agent" and caller.run_id is None:
        raise ForbiddenError(
            "this agent identity is not scoped to a run: an agent signs with a session of the agent role "
            f"named '{RUN_SESSION_PREFIX}<run_id>' (sts:AssumeRole RoleSessionName={RUN_SESSION_PREFIX}<run_id>)",
            details={"principal": caller.principal},
        )
    return caller
