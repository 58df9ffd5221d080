"""Who is calling. Deployed, API Gateway authenticates (IAM SigV4 or Cognito) and the handler reads
the identity it put in the request context; locally, a bearer token stands in for both.

Two roles: operators answer, resume, claim and cancel; agents ask, drain, await and create
interrupts, each on its own run only. A local agent token is scoped to one run: `agent.<run_id>.<mac>`,
where the mac is an HMAC of the run id keyed with the stack's operator token (`baton agent-token <run>`
prints one). A named local operator (`baton operator-token <name>`) is `operator.<name>.<mac>`, the mac
keyed the same way: the local stack has many operators (for claims, quorum and the audit log), one
bearer token stands for `local-operator`.

Deployed, an IAM principal is an agent when it is a session of the stack's agent role
(BATON_AGENT_ROLE_NAME) or its ARN matches BATON_AGENT_PRINCIPAL_PATTERN. Its run comes from its
credentials: the role session name, `run-<run_id>`, which API Gateway reports in
`requestContext.identity.userArn` (`arn:aws:sts::<account>:assumed-role/<role>/run-<run_id>`); the agent
role's trust policy only lets sessions named `run-*` start. Deny by default: an agent whose run cannot
be read from its ARN (an IAM user, another session name) is refused with a 403 (`admit`), never
treated as unscoped.

Locally, the web inbox signs in without the bearer token: `baton dev` prints a one-time code, the local
stack exchanges it (`baton/local/inbox.py`) for an HttpOnly, SameSite=Strict cookie holding a session
token (`inbox_session_token`: an expiry, a session id and an HMAC keyed with the operator token), and
the cookie is the local operator while its session is open in the table (`InboxSessionStore`: signing out
or `baton inbox-login --revoke-all` ends it on the server; the API checks it on every request). Writes
with the cookie must carry `X-Baton-Inbox: 1`: SameSite does not separate ports, so a page of another
server on 127.0.0.1 is same-site and its forms would carry the cookie; a custom header cannot be sent
cross-origin without a CORS preflight, which this API never grants."""

from __future__ import annotations

import hmac
import re
import secrets
import time
from collections.abc import Mapping
from dataclasses import dataclass, replace
from hashlib import sha256
from typing import Any

from baton.domain.fields import RUN_ID_PATTERN
from baton.errors import ForbiddenError, UnauthorizedError

RUN_SESSION_PREFIX = "run-"  # an agent role session for run R is named run-R
SESSION_COOKIE = "baton_session"
SESSION_SECONDS = 12 * 3600
INBOX_OPERATOR = "local-operator"  # who a local inbox session signs in as (the operator bearer token's name)
CSRF_HEADER = "x-baton-inbox"
_SAFE_METHODS = ("GET", "HEAD", "OPTIONS")
_ASSUMED_ROLE = re.compile(r"^arn:aws[a-z-]*:sts::\d{12}:assumed-role/(?P<role>[^/]+)/(?P<session>[^/]+)$")


@dataclass(frozen=True)
class Caller:
    principal: str
    via: str  # cognito | iam | local-token
    role: str = "operator"  # operator | agent
    run_id: str | None = None  # an agent scoped to one run
    # quorum approver groups (baton/domain/approval.py): Cognito's `cognito:groups`, or locally BATON_LOCAL_GROUPS
    groups: frozenset[str] = frozenset()
    session_id: str | None = None  # the local inbox session a cookie caller signed in with


def cognito_groups(claims: Mapping[str, Any]) -> frozenset[str]:
    """The `cognito:groups` claim: API Gateway's REST authorizer passes every claim as a string
    (`[a, b]` or `a,b`); a list is taken as it is."""
    value = claims.get("cognito:groups")
    if isinstance(value, list):
        return frozenset(str(g) for g in value if str(g))
    if not isinstance(value, str):
        return frozenset()
    return frozenset(g for g in re.split(r"[\s,]+", value.strip().strip("[]")) if g)


def with_local_groups(caller: Caller, local_groups: Mapping[str, list[str]]) -> Caller:
    """A local operator's groups, from BATON_LOCAL_GROUPS (`{"release": ["alice", "bob"]}`)."""
    if caller.via not in ("local-token", "local-session") or caller.role != "operator" or not local_groups:
        return caller
    found = frozenset(group for group, members in local_groups.items() if caller.principal in members)
    return replace(caller, groups=caller.groups | found)


def agent_token(operator_token: str, run_id: str) -> str:
    mac = hmac.new(operator_token.encode(), f"agent:{run_id}".encode(), sha256).hexdigest()[:32]
    return f"agent.{run_id}.{mac}"


OPERATOR_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9@._+-]{0,63}$")


def operator_token(operator_token: str, name: str) -> str:
    """A named local operator's bearer token: `operator.<name>.<mac>` (names may hold dots: the mac is last)."""
    if not OPERATOR_NAME.match(name):
        raise ValueError(f"an operator name is 1-64 of A-Z a-z 0-9 @ . _ + - starting with a letter or digit: {name!r}")
    mac = hmac.new(operator_token.encode(), f"operator:{name}".encode(), sha256).hexdigest()[:32]
    return f"operator.{name}.{mac}"


def _local_operator(token: str, operator_secret: str) -> Caller | None:
    prefix, _, rest = token.partition(".")
    name, _, _mac = rest.rpartition(".")
    if prefix != "operator" or not OPERATOR_NAME.match(name):
        return None
    if not hmac.compare_digest(token.encode(), operator_token(operator_secret, name).encode()):
        return None
    return Caller(principal=name, via="local-token")


def _local_agent(token: str, operator_token: str) -> Caller | None:
    parts = token.split(".")
    if len(parts) != 3 or parts[0] != "agent" or not parts[1]:
        return None
    if not hmac.compare_digest(token.encode(), agent_token(operator_token, parts[1]).encode()):
        return None
    return Caller(principal=f"agent:{parts[1]}", via="local-token", role="agent", run_id=parts[1])


def _session_mac(operator_token: str, expires: str, nonce: str) -> str:
    return hmac.new(operator_token.encode(), f"inbox-session:{expires}:{nonce}".encode(), sha256).hexdigest()


def inbox_session_token(operator_token: str, now: float | None = None) -> str:
    """A local inbox session: `s1.<expires>.<nonce>.<mac>`, valid SESSION_SECONDS (the cookie's value)."""
    expires = str(int((time.time() if now is None else now) + SESSION_SECONDS))
    nonce = secrets.token_urlsafe(12)
    return f"s1.{expires}.{nonce}.{_session_mac(operator_token, expires, nonce)}"


def inbox_session(value: str, operator_token: str, now: float) -> tuple[str, int] | None:
    """The session id (its nonce) and expiry of a session token signed with `operator_token` and not
    expired at `now`, else None. Whether the session is still open is the store's to say
    (`InboxSessionStore.is_open`): a signed-out session's token stays well-formed."""
    parts = value.split(".")
    if len(parts) != 4 or parts[0] != "s1" or not parts[1].isdigit():
        return None
    expected = _session_mac(operator_token, parts[1], parts[2])
    if not hmac.compare_digest(parts[3].encode(), expected.encode()) or int(parts[1]) <= now:
        return None
    return parts[2], int(parts[1])


def request_cookie(headers: Mapping[str, Any], name: str) -> str | None:
    for pair in str(headers.get("cookie", "")).split(";"):
        key, _, value = pair.strip().partition("=")
        if key == name:
            return value
    return None


def _session_caller(event: Mapping[str, Any], headers: Mapping[str, Any], operator_token: str) -> Caller | None:
    """The local operator signed in by the inbox's cookie, or None when there is no such cookie."""
    value = request_cookie(headers, SESSION_COOKIE)
    if value is None:
        return None
    session = inbox_session(value, operator_token, time.time())
    if session is None:
        raise UnauthorizedError("the inbox session has expired or is not valid: sign in again with a new link")
    method = str(event.get("httpMethod") or "GET").upper()
    if method not in _SAFE_METHODS and headers.get(CSRF_HEADER) != "1":
        raise ForbiddenError(
            "a write signed in by the inbox's session cookie must carry the header 'X-Baton-Inbox: 1'",
            details={"header": "X-Baton-Inbox"},
        )
    return Caller(principal=INBOX_OPERATOR, via="local-session", session_id=session[0])


def local_bearer_operator(authorization: str, operator_secret: str) -> str | None:
    """The local operator an `Authorization: Bearer` header names: INBOX_OPERATOR for the stack's own
    token, `<name>` for a named operator's (`operator_token`); None for anything else."""
    scheme, _, token = authorization.partition(" ")
    if scheme.lower() != "bearer":
        return None
    if hmac.compare_digest(token.strip().encode(), operator_secret.encode()):
        return INBOX_OPERATOR
    named = _local_operator(token.strip(), operator_secret)
    return named.principal if named is not None else None


def _named_local_caller(token: str, operator_secret: str) -> Caller | None:
    return _local_agent(token, operator_secret) or _local_operator(token, operator_secret)


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


def _cognito_caller(claims: Mapping[str, Any]) -> Caller:
    """The operator an ID token names: its verified email (the name the inbox, audit log, claims and
    quorum votes know them by). Deny by default: an access token carries no email (its `sub` would make
    the same person a second operator: two votes in one quorum), and an email the user set themselves
    is not verified until Cognito has checked it (it could be another operator's)."""
    if claims.get("token_use") == "access":
        raise UnauthorizedError("sign in with the user pool's ID token: an access token does not name the operator")
    if not claims.get("email") or str(claims.get("email_verified")).lower() != "true":
        raise UnauthorizedError("the ID token's email is not verified: verify it with the user pool and sign in again")
    return Caller(principal=str(claims["email"]), via="cognito", groups=cognito_groups(claims))


def resolve_caller(
    event: Mapping[str, Any], local_api_token: str, agent_principal_pattern: str = "", agent_role_name: str = ""
) -> Caller:
    ctx = event.get("requestContext") or {}
    claims = ((ctx.get("authorizer") or {}).get("claims")) or {}
    if claims:
        return _cognito_caller(claims)
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
        named = _named_local_caller(token.strip(), local_api_token) if scheme.lower() == "bearer" else None
        if named is not None:
            return named
        if auth:
            raise UnauthorizedError("the bearer token is not valid for this Baton API")
        session = _session_caller(event, headers, local_api_token)
        if session is not None:
            return session
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
