"""SigV4 signing for the deployed API (API Gateway with IAM auth), for the SDK and the CLI.

The machines' API of a deployed team environment accepts only IAM-signed requests: the caller's usual
AWS credential chain (env, profile, SSO, instance/task role) signs each request for `execute-api`.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import httpx

from baton.errors import BatonError

if TYPE_CHECKING:
    from collections.abc import Generator

_EXECUTE_API_HOST = re.compile(r"^[a-z0-9]+\.execute-api\.([a-z0-9-]+)\.amazonaws\.com(\.cn)?$")


_FROM_CHAIN: Any = object()  # look credentials up in the usual AWS chain


class CredentialsMissingError(BatonError):
    code = "credentials_missing"
    http_status = 401


def region_of(api_url: str, default: str | None = None) -> str | None:
    """`https://abc123.execute-api.eu-west-1.amazonaws.com/prod` -> eu-west-1 (custom domains: default)."""
    match = _EXECUTE_API_HOST.match(urlsplit(api_url).hostname or "")
    return match.group(1) if match else default


def is_aws_api(api_url: str) -> bool:
    return region_of(api_url) is not None


class SigV4Auth(httpx.Auth):
    """httpx auth that signs every request with SigV4 for `execute-api` (works for sync and async)."""

    requires_request_body = True

    def __init__(self, region: str, credentials: Any = _FROM_CHAIN, service: str = "execute-api") -> None:
        if credentials is _FROM_CHAIN:
            import boto3

            credentials = boto3.session.Session().get_credentials()
        if credentials is None:
            raise CredentialsMissingError(
                "the Baton API uses IAM auth and no AWS credentials were found: configure the AWS credential "
                "chain (AWS_PROFILE, env vars, SSO) or set BATON_TOKEN for a bearer-token API"
            )
        self._credentials = credentials
        self._region = region
        self._service = service

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        from botocore.auth import SigV4Auth as BotocoreSigV4
        from botocore.awsrequest import AWSRequest

        # Sign exactly what is sent: method, URL with query, body, and the content type.
        headers = {k: v for k, v in request.headers.items() if k.lower() in ("content-type", "host")}
        aws_request = AWSRequest(method=request.method, url=str(request.url), data=request.content, headers=headers)
        frozen = (
            self._credentials.get_frozen_credentials()
            if hasattr(self._credentials, "get_frozen_credentials")
            else self._credentials
        )
        BotocoreSigV4(frozen, self._service, self._region).add_auth(aws_request)
        for name in ("Authorization", "X-Amz-Date", "X-Amz-Security-Token"):
            if name in aws_request.headers:
                request.headers[name] = aws_request.headers[name]
        yield request
