"""The API function includes each route module on the first request it serves (baton/api/route_families.py):
the table must name, for every route the modules declare, the module that declares it, and a lazily built
app must answer as the eager one does."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest

from baton.api import deps
from baton.api.app import create_app
from baton.api.route_families import ANSWER_PREFIX, FAMILIES, family_of
from baton.local.http_adapter import to_proxy_event
from baton.runtime.settings import Settings
from baton.runtime.wiring import Services
from baton.services.core import Core
from baton.services.runs import RunService

TOKEN = "local-secret"


def _routes() -> list[Any]:
    app = create_app()
    return [*app._static_routes, *app._dynamic_routes]


def _sample(rule: str) -> str:
    return re.sub(r"<(\w+)>", r"x-\1", rule)


def test_every_route_maps_to_the_module_that_declares_it() -> None:
    declared = [r for r in _routes() if r.func.__module__.startswith("baton.api.routes_")]
    assert {r.func.__module__.rsplit(".", 1)[1] for r in declared} == set(FAMILIES)
    for route in declared:
        assert family_of(_sample(route.path)) == route.func.__module__.rsplit(".", 1)[1], route.path


def test_no_route_of_another_module_matches_a_path_so_inclusion_order_cannot_matter() -> None:
    routes = _routes()
    for route in routes:
        path = _sample(route.path)
        matching = {r.func.__module__ for r in routes if r.rule.match(path)}
        assert matching == {route.func.__module__}, (route.path, matching)


def test_paths_no_family_claims() -> None:
    for path in ("/api/openapi.json", "/api/docs", "/", "/api/nope", "/api/runsx"):
        assert family_of(path) is None, path
    assert family_of(ANSWER_PREFIX + "abc") == "routes_email"


@pytest.fixture
def call(core: Core) -> Iterator[Any]:
    settings = Settings.model_validate({"BATON_TABLE_NAME": "t", "BATON_LOCAL_API_TOKEN": TOKEN})
    services = Services(settings=settings, core=core, runs=RunService(core))
    deps.set_services_provider(lambda: services)

    def resolve(app: Any, method: str, path: str, query: str = "") -> tuple[int, str, str]:
        headers = {"Authorization": f"Bearer {TOKEN}"}
        event = to_proxy_event(method, path + query, headers, b"", "127.0.0.1")
        result = app.resolve(event, None)
        answered = {**(result.get("headers") or {}), **(result.get("multiValueHeaders") or {})}
        content_type = next((str(v) for k, v in answered.items() if k.lower() == "content-type"), "")
        return result["statusCode"], content_type, result.get("body") or ""

    yield resolve
    deps.set_services_provider(deps._default_provider)


def test_a_lazy_app_includes_only_the_family_a_request_needs(call: Any) -> None:
    app = create_app(lazy=True)
    assert app.included_families == set()
    status, _, body = call(app, "GET", "/api/runs/r-missing")
    assert status == 404 and json.loads(body)["error"] == "not_found"
    assert app.included_families == {"routes_runs"}
    call(app, "GET", "/api/v1/interrupts/i-1/claim")  # a GET the claims module does not serve: still its family
    assert app.included_families == {"routes_runs", "routes_claims"}


def test_a_lazy_app_answers_unknown_paths_and_the_spec_over_every_route(call: Any) -> None:
    eager, lazy = create_app(), create_app(lazy=True)
    for method, path in (("GET", "/api/nope"), ("DELETE", "/api/runs/r1"), ("GET", "/api/v1/interrupts/i/claim")):
        assert call(lazy, method, path)[:2] == call(eager, method, path)[:2], (method, path)
    status, _, spec = call(create_app(lazy=True), "GET", "/api/openapi.json")
    assert status == 200
    assert json.loads(spec) == json.loads(call(eager, "GET", "/api/openapi.json")[2])
    assert len(json.loads(spec)["paths"]) == len({r.path for r in _routes() if r.include_in_schema})


def test_the_docs_page_is_served_on_first_request(call: Any) -> None:
    app = create_app(lazy=True)
    status, content_type, page = call(app, "GET", "/api/docs")
    assert status == 200 and "text/html" in content_type
    assert "SwaggerUIBundle" in page and '"/api/runs/{run_id}/resume"' in page
    status, content_type, spec = call(app, "GET", "/api/docs", "?format=json")
    assert status == 200 and "application/json" in content_type
    assert json.loads(spec)["info"]["title"] == "Baton API"
    status, content_type, redirect = call(app, "GET", "/api/docs", "?format=oauth2-redirect")
    assert status == 200 and "text/html" in content_type and "oauth2" in redirect.lower()
