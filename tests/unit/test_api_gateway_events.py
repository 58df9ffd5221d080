"""REST API (v1) proxy events as API Gateway sends them to `functions/api/handler.py`, deployed (no local
bearer token): the infra's `/api/{proxy+}` resource on stage `live`, reached at the execute-api URL
(`path` without the stage, `requestContext.path` with it), every header and query parameter in both the
single- and multi-value maps, and the caller where each authorizer puts it: IAM (SigV4) in
`requestContext.identity` (an IAM user, an agent role's run session, an IAM Identity Center role), the
Cognito user pools authorizer's claims (all strings) in `requestContext.authorizer.claims`. Each test
checks who Baton takes the caller to be and that the route answered as it should for them."""

from __future__ import annotations

import base64
import importlib.util
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from baton.api import deps
from baton.contracts import AskRequest
from baton.models import QuestionRequest
from baton.runtime.settings import Settings
from baton.runtime.wiring import Services
from baton.services.core import Core
from baton.services.runs import RunService

ROOT = Path(__file__).resolve().parents[2]
ACCOUNT = "123456789012"
STAGE = "live"  # infra/capabilities/api.py's stage
AGENT_ROLE = "baton-agent"
IAM_USER = f"arn:aws:iam::{ACCOUNT}:user/alice"
AGENT_SESSION = f"arn:aws:sts::{ACCOUNT}:assumed-role/{AGENT_ROLE}/run-r1"
SSO_ROLE = f"arn:aws:sts::{ACCOUNT}:assumed-role/AWSReservedSSO_BatonOperators_0123456789abcdef/carol@example.com"
USER_SUB = "8f1c2a4e-5b6d-4e7f-8a9b-0c1d2e3f4a5b"
POOL = "https://cognito-idp.us-east-1.amazonaws.com/us-east-1_Example"
# The claims of a Cognito ID token and of an access token for the same user, as the REST authorizer
# passes them (every value a string; a user pool whose sign-in alias is email: the username is the sub).
ID_TOKEN_CLAIMS = {
    "sub": USER_SUB,
    "email_verified": "true",
    "iss": POOL,
    "cognito:username": USER_SUB,
    "cognito:groups": "[release, ops]",
    "origin_jti": "0b1f2c3d-4e5f-4061-8293-a4b5c6d7e8f9",
    "aud": "4example0client0id0abcdefg",
    "event_id": "3c4d5e6f-7081-4293-a4b5-c6d7e8f90a1b",
    "token_use": "id",
    "auth_time": "1764876000",
    "exp": "Fri Dec 04 21:00:00 UTC 2026",
    "iat": "Fri Dec 04 20:00:00 UTC 2026",
    "jti": "5e6f7081-92a3-4b4c-8d6e-7f8091a2b3c4",
    "email": "bob@example.com",
}
ACCESS_TOKEN_CLAIMS = {
    "sub": USER_SUB,
    "cognito:groups": "[release, ops]",
    "iss": POOL,
    "client_id": "4example0client0id0abcdefg",
    "origin_jti": "0b1f2c3d-4e5f-4061-8293-a4b5c6d7e8f9",
    "event_id": "3c4d5e6f-7081-4293-a4b5-c6d7e8f90a1b",
    "token_use": "access",
    "scope": "aws.cognito.signin.user.admin",
    "auth_time": "1764876000",
    "exp": "Fri Dec 04 21:00:00 UTC 2026",
    "iat": "Fri Dec 04 20:00:00 UTC 2026",
    "jti": "6f708192-a3b4-4c5d-8e7f-8091a2b3c4d5",
    "username": USER_SUB,
}


@dataclass(frozen=True)
class LambdaContextStub:
    """What Powertools' logger reads of the Lambda context."""

    function_name: str = "baton-api"
    memory_limit_in_mb: int = 512
    invoked_function_arn: str = f"arn:aws:lambda:us-east-1:{ACCOUNT}:function:baton-api"
    aws_request_id: str = "c6af9ac6-7b61-11e6-9a41-93e8deadbeef"


def iam_identity(user_arn: str, caller: str) -> dict[str, Any]:
    """`requestContext.identity` of a SigV4-signed request (IAM authorization)."""
    return {
        "cognitoIdentityPoolId": None,
        "accountId": ACCOUNT,
        "cognitoIdentityId": None,
        "caller": caller,
        "sourceIp": "203.0.113.7",
        "principalOrgId": None,
        "accessKey": "ASIAEXAMPLEKEY000001",
        "cognitoAuthenticationType": None,
        "cognitoAuthenticationProvider": None,
        "userArn": user_arn,
        "userAgent": "Baton-SDK/1.0 python-httpx/0.28",
        "user": caller,
    }


def cognito_identity() -> dict[str, Any]:
    """`requestContext.identity` of a request the Cognito user pools authorizer let through."""
    return {key: None for key in iam_identity("", "")} | {"sourceIp": "203.0.113.8", "userAgent": "Mozilla/5.0"}


def rest_event(
    method: str,
    path: str,
    *,
    identity: dict[str, Any],
    claims: dict[str, str] | None = None,
    body: Any = None,
    query: dict[str, list[str]] | None = None,
    base64_body: bool = False,
) -> dict[str, Any]:
    """A proxy event for `/api/{proxy+}` on stage STAGE, as API Gateway builds it."""
    text = json.dumps(body) if body is not None else None
    if text is not None and base64_body:
        text = base64.b64encode(text.encode()).decode()
    headers = {
        "Accept": "application/json",
        "Content-Type": "application/json",
        "Host": "abc123defg.execute-api.us-east-1.amazonaws.com",
        "User-Agent": str(identity["userAgent"]),
        "X-Amzn-Trace-Id": "Root=1-6751a2b3-0123456789abcdef01234567",
        "X-Forwarded-For": str(identity["sourceIp"]),
        "X-Forwarded-Port": "443",
        "X-Forwarded-Proto": "https",
        "Authorization": "eyJraWQiOi.ID-TOKEN.sig" if claims else "AWS4-HMAC-SHA256 Credential=ASIA.../aws4_request",
    }
    multi_headers = {name: [value] for name, value in headers.items()}
    multi_headers["Accept"] = ["text/html", "application/json"]  # a repeated header: the last one in `headers`
    return {
        "resource": "/api/{proxy+}",
        "path": path,
        "httpMethod": method,
        "headers": headers,
        "multiValueHeaders": multi_headers,
        "queryStringParameters": {k: v[-1] for k, v in query.items()} if query else None,
        "multiValueQueryStringParameters": query or None,
        "pathParameters": {"proxy": path.removeprefix("/api/")},
        "stageVariables": None,
        "requestContext": {
            "resourceId": "a1b2c3",
            "resourcePath": "/api/{proxy+}",
            "httpMethod": method,
            "extendedRequestId": "CnKx4FxKoAMEb0g=",
            "requestTime": "04/Dec/2026:20:00:00 +0000",
            "path": f"/{STAGE}{path}",
            "accountId": ACCOUNT,
            "protocol": "HTTP/1.1",
            "stage": STAGE,
            "domainPrefix": "abc123defg",
            "requestTimeEpoch": 1796414400000,
            "requestId": "d6e3f7a1-5b2c-4d8e-9f01-23456789abcd",
            "identity": identity,
            "domainName": "abc123defg.execute-api.us-east-1.amazonaws.com",
            "apiId": "abc123defg",
            **({"authorizer": {"claims": claims}} if claims else {}),
        },
        "body": text,
        "isBase64Encoded": base64_body,
    }


@pytest.fixture
def handler(core: Core) -> Iterator[Any]:
    """`functions/api/handler.py`'s `lambda_handler`, deployed settings (no local token), in-memory services."""
    settings = Settings.model_validate({"BATON_TABLE_NAME": "t", "BATON_AGENT_ROLE_NAME": AGENT_ROLE})
    services = Services(settings=settings, core=core, runs=RunService(core))
    deps.set_services_provider(lambda: services)
    spec = importlib.util.spec_from_file_location("api_handler_under_test", ROOT / "functions" / "api" / "handler.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)

    def call(event: dict[str, Any]) -> tuple[int, Any]:
        result = module.lambda_handler(event, LambdaContextStub())
        return result["statusCode"], json.loads(result["body"]) if result.get("body") else None

    yield call
    deps.set_services_provider(deps._default_provider)


def _question(services_core: Core, run_id: str = "r1") -> str:
    from baton.services.questions import QuestionService

    asked = QuestionService(services_core).ask(run_id, AskRequest(node="draft", question="Which DB?"), caller="agent")
    return str(asked["interaction_id"])


def test_an_iam_user_is_an_operator_named_by_its_arn(handler: Any, core: Core) -> None:
    iid = _question(core)
    event = rest_event(
        "POST", f"/api/runs/r1/interactions/{iid}/answer", identity=iam_identity(IAM_USER, "AIDAEXAMPLEUSER00001")
    )
    event["body"] = json.dumps({"answer": "postgres"})
    status, body = handler(event)
    assert status == 200 and body["status"] == "answered", body
    answered = core.store.get_interaction("r1", iid)
    assert answered is not None and answered.state.answered_by == IAM_USER


def _answer(iid: str, answer: Any, **parts: Any) -> dict[str, Any]:
    return rest_event("POST", f"/api/runs/r1/interactions/{iid}/answer", body={"answer": answer}, **parts)


def test_an_agent_role_session_is_the_agent_of_its_run_only(handler: Any, core: Core) -> None:
    agent = iam_identity(AGENT_SESSION, "AROAEXAMPLEAGENTROLE:run-r1")
    question = {"node": "draft", "question": "DB?"}
    status, body = handler(rest_event("POST", "/api/runs/r1/questions", identity=agent, body=question))
    assert status == 201, body
    asked = core.store.get_interaction("r1", body["interaction_id"])
    assert asked is not None and isinstance(asked.request, QuestionRequest) and asked.request.asked_by == AGENT_SESSION
    status, body = handler(rest_event("POST", "/api/runs/r2/questions", identity=agent, body=question))
    assert status == 403 and body["principal"] == AGENT_SESSION and body["run_id"] == "r2", body
    status, body = handler(_answer(asked.interaction_id, "pg", identity=agent))
    assert status == 403 and "operator action" in body["message"], body


def test_an_identity_center_role_is_an_operator_named_by_its_session(handler: Any, core: Core) -> None:
    from baton.domain.interrupt_spec import InterruptSpec
    from baton.services.interrupts import InterruptService

    created, _ = InterruptService(core).create(InterruptSpec(session_id="r1", prompt="deploy?"), caller="agent")
    sso = iam_identity(SSO_ROLE, "AROAEXAMPLESSOROLE01:carol@example.com")
    claim = rest_event("POST", f"/api/v1/interrupts/{created.interaction_id}/claim", identity=sso, body={})
    status, body = handler(claim)
    assert status == 200 and body["interrupt"]["claimedBy"] == SSO_ROLE, body


def test_a_cognito_id_token_is_the_operator_of_its_email_with_its_groups(handler: Any, core: Core) -> None:
    iid = _question(core)
    status, body = handler(_answer(iid, "postgres", identity=cognito_identity(), claims=ID_TOKEN_CLAIMS))
    assert status == 200, body
    answered = core.store.get_interaction("r1", iid)
    assert answered is not None and answered.state.answered_by == "bob@example.com"


def test_a_cognito_access_token_is_refused_not_taken_as_another_operator(handler: Any, core: Core) -> None:
    """An access token carries no email: Baton took its `sub` as the principal, so one person was two
    operators (bob@example.com with the inbox's ID token, a uuid with an access token): two votes in one
    quorum, a claim its holder could not release. It is refused (401), and nothing is decided."""
    iid = _question(core)
    status, body = handler(_answer(iid, "postgres", identity=cognito_identity(), claims=ACCESS_TOKEN_CLAIMS))
    assert status == 401 and body["error"] == "unauthorized" and "ID token" in body["message"], body
    pending = core.store.get_interaction("r1", iid)
    assert pending is not None and pending.state.status == "pending"


def test_a_cognito_id_token_whose_email_is_not_verified_is_refused(handler: Any, core: Core) -> None:
    """A user may change their own email attribute (the app client may write it) to another operator's:
    the ID token then carries that email unverified. Baton took it as that operator."""
    iid = _question(core)
    claims = ID_TOKEN_CLAIMS | {"email": "boss@example.com", "email_verified": "false"}
    status, body = handler(_answer(iid, "postgres", identity=cognito_identity(), claims=claims))
    assert status == 401 and "verified" in body["message"], body
    pending = core.store.get_interaction("r1", iid)
    assert pending is not None and pending.state.status == "pending"


def test_a_base64_body_is_read_as_its_json(handler: Any, core: Core) -> None:
    iid = _question(core)
    identity = iam_identity(IAM_USER, "AIDAEXAMPLEUSER00001")
    status, body = handler(_answer(iid, {"engine": "postgres", "note": "é ✓"}, identity=identity, base64_body=True))
    assert status == 200, body
    answered = core.store.get_interaction("r1", iid)
    assert answered is not None and answered.state.answer == {"engine": "postgres", "note": "é ✓"}


def test_query_parameters_and_the_stage_prefix(handler: Any, core: Core) -> None:
    """The route is matched on `path` (no stage), whatever `requestContext.path` holds (/live/api/...);
    a query parameter is read from the maps API Gateway fills in."""
    _question(core)
    identity = iam_identity(IAM_USER, "AIDAEXAMPLEUSER00001")
    status, body = handler(rest_event("GET", "/api/runs/r1/events", identity=identity, query={"limit": ["1"]}))
    assert status == 200 and [e["type"] for e in body["events"]] == ["run_started"], body
    status, body = handler(rest_event("GET", "/api/runs/r1/events", identity=identity, query={"after": [body["next"]]}))
    assert status == 200 and [e["type"] for e in body["events"]] == ["human_input_requested"], body
    status, body = handler(rest_event("GET", "/api/nowhere", identity=identity))
    assert status == 404 and body["message"] == "no route GET /api/nowhere", body
