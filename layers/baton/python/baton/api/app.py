"""The resolver: validation, auth, one exception handler per domain error, OpenAPI and Swagger."""

from __future__ import annotations

import base64
import binascii
import contextlib
import importlib
import json
import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import unquote

from aws_lambda_powertools.event_handler import APIGatewayRestResolver, Response, content_types
from aws_lambda_powertools.event_handler.openapi.exceptions import RequestValidationError

from baton.api import deps
from baton.api.auth import Caller, admit, resolve_caller, with_local_groups
from baton.api.openapi_docs import add_docs_route
from baton.api.route_families import ANSWER_PREFIX, FAMILIES, family_of
from baton.domain.fields import MAX_JSON_DEPTH, json_text_depth
from baton.domain.json_input import load_json_input
from baton.domain.origins import check_origin
from baton.errors import (
    API_ERRORS,
    BadRequestError,
    BatonError,
    ForbiddenError,
    MethodNotAllowedError,
    NotFoundError,
    PayloadTooLargeError,
    ServiceBusyError,
    UnauthorizedError,
    UnsupportedMediaTypeError,
    ValidationFailedError,
)
from baton.runtime.observability import logger

# The answer links carry their own credential (a signed, single-use link: baton/channels/email/links.py).
PUBLIC_PATHS = ("/api/openapi.json", "/api/docs", ANSWER_PREFIX)
# Its body carries its own credential (a push's one-tap answer): the body is checked, no caller resolved.
CREDENTIAL_PATHS = ("/api/push/answer",)  # contracts.push.PUSH_ANSWER_PATH, not imported at cold start
MAX_BODY_BYTES = 256 * 1024


def _error(err: BatonError) -> Response[Any]:
    headers: dict[str, str] | None = None
    if isinstance(err, ServiceBusyError):
        headers = {"Retry-After": str(err.retry_after_seconds)}
    elif isinstance(err, MethodNotAllowedError):
        headers = {"Allow": ", ".join(err.allow)}
    return Response(
        status_code=err.http_status, content_type=content_types.APPLICATION_JSON, body=err.to_body(), headers=headers
    )


def _resolve(event: Mapping[str, Any]) -> Caller:
    services = deps.get_services()
    settings = services.settings
    if not settings.local_api_token:  # locally the HTTP adapter checked Host and Origin (origin_guard.py)
        check_origin(event, settings.allowed_origins)
    caller = resolve_caller(event, settings.local_api_token, settings.agent_principal_pattern, settings.agent_role_name)
    # A signed session cookie is honoured only while its session is open: a logout ends it here too.
    if caller.session_id is not None and not services.inbox_session_store().is_open(
        caller.principal, caller.session_id
    ):
        raise UnauthorizedError("the inbox session has ended (signed out or revoked): sign in again with a new link")
    return admit(with_local_groups(caller, settings.local_groups) if settings.local_api_token else caller)


def _header(event: Mapping[str, Any], name: str) -> str:
    headers = event.get("headers") or {}
    return next((str(v) for k, v in headers.items() if k.lower() == name), "")


def _is_json_media_type(content_type: str) -> bool:
    """`application/json` or a `+json` type, with no charset or UTF-8 (JSON is UTF-8 on the wire)."""
    media_type, *params = (part.strip().lower() for part in content_type.split(";"))
    if media_type != "application/json" and not (
        media_type.startswith("application/") and media_type.endswith("+json")
    ):
        return False
    charsets = [p.partition("=")[2].strip('"') for p in params if p.startswith("charset=")]
    return all(c in ("utf-8", "utf8") for c in charsets)


def _text_body(event: Mapping[str, Any]) -> str:
    """The body as text; a base64 body (API Gateway's form for non-UTF-8 bytes) must decode as UTF-8."""
    body = event.get("body") or ""
    if not event.get("isBase64Encoded") or not body:
        return str(body)
    try:
        return base64.b64decode(str(body), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        raise UnsupportedMediaTypeError("the request body is not UTF-8 JSON") from None


def _check_body(event: Mapping[str, Any]) -> str:
    """Refuse, before any work, a body that is not UTF-8 JSON by its type, nests too deep, is not an
    object, or holds text that is not valid Unicode or a number out of range (baton.domain.json_input).
    Returns the body as text. An empty body passes: routes with an optional body accept it."""
    text = _text_body(event)  # its size was checked before the caller was resolved (BatonResolver.resolve)
    if not text:
        return text
    content_type = _header(event, "content-type")
    if content_type and not _is_json_media_type(content_type):
        raise UnsupportedMediaTypeError(
            f"the request body must be application/json (UTF-8), got {content_type[:100]!r}",
            details={"content_type": content_type[:100]},
        )
    if json_text_depth(text) > MAX_JSON_DEPTH:
        raise BadRequestError(
            f"the request body is nested deeper than {MAX_JSON_DEPTH} levels", details={"limit": MAX_JSON_DEPTH}
        )
    # a syntax error is left to the route's request validation, which words it (400, "not valid JSON")
    with contextlib.suppress(json.JSONDecodeError):
        if not isinstance(load_json_input(text), dict):
            # every route's body is an object; Powertools would take a one-item array's item as the body
            problem = "the request body must be a JSON object"
            raise ValidationFailedError(problem, details={"problems": [{"path": "$", "problem": problem}]})
    return text


def _error_result(err: BatonError) -> dict[str, Any]:
    return {
        "statusCode": err.http_status,
        "headers": {"Content-Type": content_types.APPLICATION_JSON},
        "body": json.dumps(err.to_body()),
        "isBase64Encoded": False,
    }


class BatonResolver(APIGatewayRestResolver):
    """Authentication (and the body checks: size, UTF-8 JSON by Content-Type, nesting depth) come
    before everything else, request validation included: a caller without an identity learns nothing
    about the API but "401". The caller is resolved once here and handed to the routes through
    `deps.current_caller()`."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._families: set[str] = set()

    def include_family(self, family: str) -> None:
        """Import a route module (baton/api/route_families.py) and include its routes, once."""
        if family not in self._families:
            self.include_router(importlib.import_module(f"baton.api.{family}").router)
            self._families.add(family)

    @property
    def included_families(self) -> frozenset[str]:
        return frozenset(self._families)

    def include_all(self) -> None:
        for family in FAMILIES:
            self.include_family(family)

    def _convert_matches_into_route_keys(self, match: re.Match[str]) -> dict[str, str]:
        """Path parameters percent-decoded, as API Gateway's `pathParameters` are: a REST API's `path`
        keeps its encoding (`/nodes/a%3Ab`), and Powertools matches on it and hands over the raw segment.
        Decoded after the match, so an encoded '/' stays inside its segment."""
        return {name: unquote(value) for name, value in match.groupdict().items()}

    def methods_of(self, path: str) -> list[str]:
        """The methods the routes of `path` answer, sorted; none for a path no route has."""
        routes = self._static_routes + self._dynamic_routes
        return sorted({route.method for route in routes if route.rule.match(path)})

    def get_openapi_schema(self, **kwargs: Any) -> Any:
        from baton.api.query_schema import declare_query_constraints  # the document's models: not on a cold start

        self.include_all()  # the spec describes every route, loaded or not
        spec = super().get_openapi_schema(**kwargs)
        return declare_query_constraints(spec, self._static_routes + self._dynamic_routes)

    def resolve(self, event: Mapping[str, Any], context: Any) -> dict[str, Any]:
        path = str(event.get("path") or "")
        family = family_of(path)
        if family is None:
            self.include_all()  # no one family claims the path: answer it over every route, as eagerly
        else:
            self.include_family(family)
        if not path.startswith(PUBLIC_PATHS):
            body = event.get("body") or ""
            try:
                if len(body) > MAX_BODY_BYTES:
                    raise PayloadTooLargeError(f"request body is {len(body)} bytes; the limit is {MAX_BODY_BYTES}")
                if path not in CREDENTIAL_PATHS:
                    deps.set_current_caller(_resolve(event))
                text = _check_body(event)
            except (
                UnauthorizedError,
                ForbiddenError,
                PayloadTooLargeError,
                UnsupportedMediaTypeError,
                BadRequestError,
                ValidationFailedError,
            ) as err:
                return _error_result(err)
            if event.get("isBase64Encoded"):
                event = {**event, "body": text, "isBase64Encoded": False}
        return super().resolve(event, context)


def _answer_aws_busy(app: BatonResolver) -> None:
    @app.exception_handler(Exception)
    def _aws_busy(err: Exception) -> Response[Any]:
        """AWS still throttling after the client's retries: a 503 to send again, not a crash (a 502)."""
        from baton.adapters.aws_errors import busy_error  # only on an error: botocore stays out of the cold start

        busy = busy_error(err)
        if busy is None:
            raise err
        logger.warning("aws busy", extra={"reason": busy.details.get("reason")})
        return _error(busy)


def create_app(*, lazy: bool = False) -> BatonResolver:
    """The API's resolver. `lazy` (the API function) includes each route module on the first request
    that needs it (baton/api/route_families.py), so a cold start imports only the request's routes."""
    app = BatonResolver(enable_validation=True)
    if not lazy:
        app.include_all()

    def _register(error_type: type[BatonError]) -> None:
        # One handler per domain error: the body is always {"error", "message", ...details}.
        @app.exception_handler(error_type)
        def _handle(err: BatonError) -> Response[Any]:
            if err.http_status >= 500:
                logger.exception("server error")
            return _error(err)

    for error_type in API_ERRORS:
        _register(error_type)

    _answer_aws_busy(app)

    @app.exception_handler(RequestValidationError)
    def _invalid_request(err: RequestValidationError) -> Response[Any]:
        problems = []
        for e in err.errors():
            loc = ".".join(str(p) for p in e.get("loc", ()) if p != "body")
            problems.append({"path": loc or "$", "problem": e.get("msg") or e.get("type")})
        if any(e.get("type") == "json_invalid" for e in err.errors()):
            return _error(BadRequestError("request body is not valid JSON", details={"problems": problems}))
        summary = "; ".join(f"{p['path']}: {p['problem']}" for p in problems)
        return _error(ValidationFailedError(f"invalid request: {summary}", details={"problems": problems}))

    @app.not_found
    def _not_found(_: Exception) -> Response[Any]:
        method, path = app.current_event.http_method.upper(), app.current_event.path
        allow = app.methods_of(path)
        if allow:  # a known path: 405 names the methods it has (RFC 9110 15.5.6), as a 404 would not
            return _error(MethodNotAllowedError(f"{method} is not a method of {path}", allow=allow))
        return _error(NotFoundError(f"no route {method} {path}"))

    @app.get("/api/openapi.json", include_in_schema=False)
    def _openapi() -> Response[str]:
        return Response(
            status_code=200,
            content_type=content_types.APPLICATION_JSON,
            body=app.get_openapi_json_schema(title="Baton API", version=_version()),
        )

    add_docs_route(app, path="/api/docs", title="Baton API", version=_version())
    return app


def _version() -> str:
    from baton import __version__

    return __version__
