"""The local stack's own AWS calls reach moto without a socket.

Every boto3 call a handler makes inside `baton dev` used to travel as HTTP to the in-process moto server
(a new connection each time: moto answers `Connection: close`) and through werkzeug and Flask: ~9 ms a
call, 7 calls per answer, all in one interpreter. moto's botocore stubber (what `mock_aws` uses) answers
the same request from the same backends in ~3 ms. While `calls_in_process` is open, every botocore client
created in this process hands requests addressed to the emulator's URL to that stubber (rewritten to the
service's AWS address it expects). Other processes (the CLI, agents, a merge subprocess) still use the
emulator port, and see the same data.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

if TYPE_CHECKING:
    from collections.abc import Iterator

# botocore service id (as in "before-send.<id>.<Operation>") → the endpoint prefix moto's patterns match
_ENDPOINT_PREFIX = {"dynamodb": "dynamodb", "sfn": "states", "sns": "sns", "lambda": "lambda"}


def _hook(moto_url: str, region: str) -> Any:
    from botocore.awsrequest import AWSResponse
    from moto.core.botocore_stubber import MockRawResponse
    from moto.core.models import botocore_stubber

    def before_send(request: Any, event_name: str = "", **_: Any) -> Any:
        if not request.url.startswith(moto_url):
            return None
        prefix = _ENDPOINT_PREFIX.get(event_name.split(".")[1] if event_name.count(".") >= 1 else "")
        if prefix is None:
            return None  # anything else goes over HTTP as before
        parts = urlsplit(request.url)
        query = f"?{parts.query}" if parts.query else ""
        request.url = f"https://{prefix}.{region}.amazonaws.com{parts.path or '/'}{query}"
        answered = botocore_stubber.process_request(request)
        if answered is None:
            return None
        status, headers, body = answered
        return AWSResponse(request.url, status, headers, MockRawResponse(body))  # type: ignore[arg-type]

    return before_send


@contextmanager
def calls_in_process(moto_url: str, region: str) -> Iterator[None]:
    """While open, botocore clients created in this process call the emulator at `moto_url` directly."""
    from botocore.handlers import BUILTIN_HANDLERS

    entry = ("before-send", _hook(moto_url, region))
    # first, so it answers before moto's own (disabled) stubber or a real send is tried
    BUILTIN_HANDLERS.insert(0, entry)
    try:
        yield
    finally:
        BUILTIN_HANDLERS.remove(entry)
