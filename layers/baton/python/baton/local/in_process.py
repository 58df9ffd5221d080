"""The local stack's own AWS calls reach moto without a socket.

A boto3 call over HTTP to the in-process moto server costs ~9 ms (a new connection each time, werkzeug,
Flask); moto's botocore stubber (what `mock_aws` uses) answers it from the same backends in ~3 ms. While
`calls_in_process` is open, botocore clients of this process hand requests addressed to the emulator to
that path. Other processes (the CLI, agents) still use the emulator's port and see the same data.

moto's stubber finds the service by matching the URL against every service's patterns (DynamoDB is ~70th)
and rebuilds that service's URL table on each call; `DirectRoutes` keeps both per host and then does what
the stubber does (`tests/integration/test_in_process.py` compares the answers byte for byte).
"""

from __future__ import annotations

import re
import threading
from contextlib import ExitStack, contextmanager
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

if TYPE_CHECKING:
    from collections.abc import Iterator

# botocore service id (as in "before-send.<id>.<Operation>") → the endpoint prefix moto's patterns match
_ENDPOINT_PREFIX = {"dynamodb": "dynamodb", "sfn": "states", "sns": "sns", "lambda": "lambda"}

Routes = tuple[tuple[re.Pattern[str], Any], ...]


class DirectRoutes:
    """moto's stubber (`moto.core.botocore_stubber.BotocoreStubber.process_request`) with the service
    and its URL table looked up once per host."""

    def __init__(self) -> None:
        self._routes: dict[tuple[str, bool], tuple[str, Routes] | None] = {}
        self._lock = threading.Lock()
        self.resolved = 0  # hosts resolved through moto's scan (tests count it)

    def _resolve(self, clean_url: str) -> tuple[str, Routes] | None:
        """The service moto's scan picks for this URL and its URL table, compiled in moto's order."""
        from moto import backend_index, backends
        from moto.core.base_backend import BackendDict
        from moto.core.models import DEFAULT_ACCOUNT_ID

        for service, pattern in backend_index.backend_url_patterns:
            if pattern.match(clean_url):
                backend_dict: Any = backends.get_backend(service)  # type: ignore[call-overload]
                if isinstance(backend_dict, BackendDict):
                    regions = backend_dict[DEFAULT_ACCOUNT_ID]
                    backend = regions["us-east-1"] if "us-east-1" in regions else regions["aws"]
                else:
                    backend = backend_dict["global"]
                return service, tuple((re.compile(url), handler) for url, handler in backend.urls.items())
        return None

    def process_request(self, request: Any) -> Any:
        from moto.core.config import passthrough_service, passthrough_url, service_whitelisted
        from moto.core.models import botocore_stubber
        from moto.core.request import normalize_request
        from moto.settings import enable_iso_regions

        parts = urlsplit(request.url)
        clean_url = f"{parts.scheme}://{parts.netloc}{parts.path}"
        key = (parts.netloc, enable_iso_regions())  # the URL table's alternative domains depend on it
        if key not in self._routes:
            with self._lock:
                if key not in self._routes:
                    self.resolved += 1
                    self._routes[key] = self._resolve(clean_url)
        found = self._routes[key]
        if found is None or passthrough_url(clean_url):
            return botocore_stubber.process_request(request)
        service, routes = found
        if passthrough_service(service) or not service_whitelisted(service):
            return botocore_stubber.process_request(request)  # moto's own answer (None, or its error)
        for url, method_to_execute in routes:
            if url.match(clean_url):
                from moto.moto_api import recorder
                from werkzeug.exceptions import HTTPException  # what moto.core.exceptions raises

                normalized_request = normalize_request(request)
                try:
                    recorder._record_request(normalized_request)
                    status, headers, body = method_to_execute(
                        normalized_request, normalized_request.raw_url, normalized_request.headers
                    )
                except HTTPException as e:
                    status, headers, body = e.code, e.get_headers(), e.get_body()
                return status, headers, body
        return botocore_stubber.process_request(request)  # moto then tries the services after this one


def _hook(moto_url: str, region: str, routes: DirectRoutes) -> Any:
    from botocore.awsrequest import AWSResponse
    from moto.core.botocore_stubber import MockRawResponse

    def before_send(request: Any, event_name: str = "", **_: Any) -> Any:
        if not request.url.startswith(moto_url):
            return None
        prefix = _ENDPOINT_PREFIX.get(event_name.split(".")[1] if event_name.count(".") >= 1 else "")
        if prefix is None:
            return None  # anything else goes over HTTP as before
        parts = urlsplit(request.url)
        query = f"?{parts.query}" if parts.query else ""
        request.url = f"https://{prefix}.{region}.amazonaws.com{parts.path or '/'}{query}"
        answered = routes.process_request(request)
        if answered is None:
            return None
        status, headers, body = answered
        return AWSResponse(request.url, status, headers, MockRawResponse(body))

    return before_send


@contextmanager
def calls_in_process(moto_url: str, region: str) -> Iterator[None]:
    """While open, botocore clients created in this process call the emulator at `moto_url` directly."""
    from botocore.handlers import BUILTIN_HANDLERS

    entry = ("before-send", _hook(moto_url, region, DirectRoutes()))
    with ExitStack() as stack:
        # first, so it answers before moto's own (disabled) stubber or a real send is tried
        BUILTIN_HANDLERS.insert(0, entry)
        stack.callback(BUILTIN_HANDLERS.remove, entry)
        yield
