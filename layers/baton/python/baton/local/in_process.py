"""The local stack's own botocore: one data loader for the process, and calls that reach moto without a
socket. A boto3 call over HTTP to the in-process moto server costs ~9 ms (a new connection each time,
werkzeug, Flask); moto's botocore stubber (what `mock_aws` uses) answers it from the same backends in
~3 ms. Other processes (the CLI, agents) still use the emulator's port and see the same data."""

from __future__ import annotations

import contextlib
import functools
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any
from unittest.mock import patch
from urllib.parse import urlsplit, urlunsplit

if TYPE_CHECKING:
    from collections.abc import Iterator

# botocore service id (as in "before-send.<id>.<Operation>") -> the endpoint prefix moto's patterns match
_ENDPOINT_PREFIX = {"dynamodb": "dynamodb", "sfn": "states", "sns": "sns", "lambda": "lambda"}


def _hook(moto_url: str, region: str) -> Any:
    from botocore.awsrequest import AWSResponse
    from moto.core.botocore_stubber import MockRawResponse
    from moto.core.models import botocore_stubber

    def before_send(request: Any, event_name: str = "", **_: Any) -> Any:
        prefix = _ENDPOINT_PREFIX.get(event_name.split(".")[1] if event_name.count(".") >= 1 else "")
        if prefix is None or not request.url.startswith(moto_url):
            return None  # anything else goes over HTTP as before
        parts = urlsplit(request.url)
        request.url = urlunsplit(("https", f"{prefix}.{region}.amazonaws.com", parts.path or "/", parts.query, ""))
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
    BUILTIN_HANDLERS.insert(0, entry)  # first: it answers before a real send is tried
    try:
        yield
    finally:
        BUILTIN_HANDLERS.remove(entry)


def shared_botocore_loader() -> contextlib.AbstractContextManager[object]:
    """Each service model (and the ~1 MB endpoint list) parsed once, not once per session (the stack's,
    each handler's, moto's backends': over a second of CPU at start-up); botocore only reads them."""
    import botocore.loaders
    import botocore.session

    loader: Any = functools.cache(botocore.loaders.create_loader)
    return patch.object(botocore.session, "create_loader", loader)
