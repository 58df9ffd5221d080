"""The SDK signs requests to a deployed (IAM-auth) API with SigV4, and only then."""

from __future__ import annotations

import httpx
import pytest

from baton.client.sdk import Client
from baton.client.sigv4 import CredentialsMissingError, SigV4Auth, region_of

API = "https://abc123.execute-api.eu-west-1.amazonaws.com/prod"
# One body that parses as both a run (GET) and a resume result (POST): the SDK returns typed results.
ANY_RESULT = {
    "run_id": "r1",
    "status": "running",
    "created_at": "2026-01-01T00:00:00Z",
    "updated_at": "2026-01-01T00:00:00Z",
    "interaction_id": "i1",
    "node": "approve",
    "queued": True,
    "resumed": True,
}


def _capture() -> tuple[list[httpx.Request], httpx.MockTransport]:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json=ANY_RESULT)

    return seen, httpx.MockTransport(handler)


def test_region_comes_from_the_execute_api_host() -> None:
    assert region_of(API) == "eu-west-1"
    assert region_of("http://127.0.0.1:8787") is None
    assert region_of("https://baton.example.com", default="us-east-2") == "us-east-2"


def test_deployed_api_requests_are_signed_for_execute_api(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "secret")
    monkeypatch.setenv("AWS_SESSION_TOKEN", "session-token")
    monkeypatch.delenv("BATON_TOKEN", raising=False)
    seen, transport = _capture()
    client = Client(API, transport=transport)
    client.resume("r1", {"ship": True})
    (request,) = seen
    auth = request.headers["Authorization"]
    assert auth.startswith("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/")
    assert "/eu-west-1/execute-api/aws4_request" in auth
    signed = auth.split("SignedHeaders=")[1].split(",")[0].split(";")
    assert {"host", "x-amz-date", "content-type"} <= set(signed)
    assert request.headers["X-Amz-Security-Token"] == "session-token"
    assert str(request.url) == f"{API}/api/runs/r1/resume"


def test_a_changed_body_changes_the_signature(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "secret")
    seen, transport = _capture()
    client = Client(API, transport=transport)
    client.resume("r1", {"ship": True})
    client.resume("r1", {"ship": False})
    first, second = (r.headers["Authorization"].split("Signature=")[1] for r in seen)
    assert first != second


def test_bearer_token_and_local_urls_are_not_signed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "secret")
    seen, transport = _capture()
    Client(API, "tok", transport=transport).get_run("r1")
    Client("http://127.0.0.1:8787", "tok", transport=transport).get_run("r1")
    assert [r.headers["Authorization"] for r in seen] == ["Bearer tok", "Bearer tok"]


def test_no_credentials_is_a_clear_error() -> None:
    # What the AWS credential chain returns when it finds nothing.
    with pytest.raises(CredentialsMissingError, match="IAM auth"):
        SigV4Auth("eu-west-1", credentials=None)


def test_ids_are_quoted_as_one_path_segment() -> None:
    seen, transport = _capture()
    Client("http://127.0.0.1:8787", "tok", transport=transport).get_run("a/b?c#d")
    assert seen[0].url.raw_path == b"/api/runs/a%2Fb%3Fc%23d"


def test_the_sdk_raises_the_api_error_class_of_every_status_it_can_answer() -> None:
    from baton.errors import ERROR_BY_STATUS, BatonError

    classes = {cls for cls in BatonError.__subclasses__() if cls.__module__ == "baton.errors"}
    declared = {cls.http_status for cls in classes}
    assert declared <= set(ERROR_BY_STATUS), "a status the API answers with has no SDK error class"
    assert all(ERROR_BY_STATUS[status].http_status == status for status in ERROR_BY_STATUS)
