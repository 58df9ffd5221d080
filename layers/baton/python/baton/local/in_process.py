"""The local stack's own AWS calls reach moto without a socket.

Every boto3 call a handler makes inside `baton dev` used to travel as HTTP to the in-process moto server
(a new connection each time: moto answers `Connection: close`) and through werkzeug and Flask: ~9 ms a
call, 7 calls per answer, all in one interpreter. moto's botocore stubber (what `mock_aws` uses) answers
the same request from the same backends in ~3 ms. While `calls_in_process` is open, every botocore client
created in this process hands requests addressed to the emulator's URL to that stubber (rewritten to the
service's AWS address it expects). Other processes (the CLI, agents, a merge subprocess) still use the
emulator port, and see the same data.

Two more costs of each such call go (`bench/parts/call_cpu.py` prints the CPU of each part):

**Routing.** moto's stubber matches each request's URL against the URL patterns of every service it
emulates, in order, until one matches (DynamoDB is the 70th or so), then rebuilds that service's URL
table (`BaseBackend.urls`, a property: every path formatted with every URL base, each anew) and matches
the URL against each. `DirectRoutes` keeps, per host, the service moto's own scan picked and that
service's URL table compiled, and then does what the stubber does with the handler it found (the same
request normalization, recorder and error handling). moto's passthrough and whitelist settings are asked
on every request as moto asks them; whatever the kept table does not answer goes to moto's stubber.

**Signing.** botocore signs every request with SigV4 (canonical request, string to sign, four HMACs).
moto reads only the access key from the `Authorization` header (it picks the account) and checks no
signature unless its IAM authentication is on (`INITIAL_NO_AUTH_ACTION_COUNT`). A request this process
hands to moto in process gets the header a signed one has (credential scope, signed headers, the date and
token headers) with its signature not computed; with moto's authentication on, every request is signed.
A request to any other address (a deployed AWS) is signed as always.

`tests/integration/test_in_process.py` compares both with moto's own path and counts the work skipped.
"""

from __future__ import annotations

import functools
import re
import threading
from contextlib import ExitStack, contextmanager
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from baton.local.moto_fixes import patched

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

# botocore service id (as in "before-send.<id>.<Operation>") → the endpoint prefix moto's patterns match
_ENDPOINT_PREFIX = {"dynamodb": "dynamodb", "sfn": "states", "sns": "sns", "lambda": "lambda"}
# the names SigV4 signs those services' requests with (the same prefixes)
_SIGNING_NAMES = frozenset(_ENDPOINT_PREFIX.values())
UNSIGNED = "0" * 64  # the signature field of an in-process request: the form of one, never checked

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


UNSIGNED_REQUESTS = [0]  # requests given the header form without a computed signature (tests count it)
SERIALIZERS_UNVALIDATED = [0]  # clients created without the parameter validation they asked for (tests count it)


def _add_auth(original: Callable[[Any, Any], None], moto_url: str) -> Callable[[Any, Any], None]:
    from moto import settings

    @functools.wraps(original)
    def add_auth(self: Any, request: Any) -> None:
        in_process = self._service_name in _SIGNING_NAMES and str(request.url).startswith(moto_url)
        moto_checks_signatures = float("inf") > settings.INITIAL_NO_AUTH_ACTION_COUNT
        if not in_process or moto_checks_signatures:
            original(self, request)
            return
        from botocore.auth import SIGV4_TIMESTAMP
        from botocore.compat import get_current_datetime
        from botocore.exceptions import NoCredentialsError

        if self.credentials is None:
            raise NoCredentialsError()
        request.context["timestamp"] = get_current_datetime().strftime(SIGV4_TIMESTAMP)
        self._modify_request_before_signing(request)  # the date and token headers, as signing sets them
        UNSIGNED_REQUESTS[0] += 1
        self._inject_signature_to_request(request, UNSIGNED)

    add_auth._baton_unsigned = True  # type: ignore[attr-defined]
    return add_auth


@contextmanager
def unsigned_in_process(moto_url: str) -> Iterator[None]:
    """While open, requests to `moto_url` of the in-process services skip computing SigV4 signatures."""
    from botocore.auth import SigV4Auth

    current = SigV4Auth.__dict__["add_auth"]
    if getattr(current, "_baton_unsigned", False):
        yield
        return
    with patched(SigV4Auth, {"add_auth": _add_auth(current, moto_url)}):
        yield


@contextmanager
def unvalidated_in_process() -> Iterator[None]:
    """While open, clients created in this process skip botocore's client-side parameter validation.

    The local stack's process addresses only the emulator, and its requests are built by the same adapters
    the test suite runs on moto with validation on (`baton/adapters/clients.py`): validating them again on
    every call was ~0.5 ms of a resume's client CPU. moto still validates what DynamoDB validates."""
    import botocore.serialize

    original = botocore.serialize.create_serializer

    @functools.wraps(original)
    def create_serializer(protocol_name: str, include_validation: bool = True, **kwargs: Any) -> Any:
        SERIALIZERS_UNVALIDATED[0] += include_validation
        return original(protocol_name, False, **kwargs)

    with patched(botocore.serialize, {"create_serializer": create_serializer}):
        yield


@contextmanager
def calls_in_process(moto_url: str, region: str) -> Iterator[None]:
    """While open, botocore clients created in this process call the emulator at `moto_url` directly."""
    from botocore.handlers import BUILTIN_HANDLERS

    entry = ("before-send", _hook(moto_url, region, DirectRoutes()))
    with ExitStack() as stack:
        # first, so it answers before moto's own (disabled) stubber or a real send is tried
        BUILTIN_HANDLERS.insert(0, entry)
        stack.callback(BUILTIN_HANDLERS.remove, entry)
        stack.enter_context(unsigned_in_process(moto_url))
        stack.enter_context(unvalidated_in_process())
        yield
