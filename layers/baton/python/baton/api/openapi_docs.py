"""`/api/docs`: the Swagger UI page, served as Powertools' `enable_swagger` serves it, built on first request.

`enable_swagger` imports Powertools' OpenAPI document models and the Swagger UI module when it is
called, which is at the API function's cold start (about a fifth of that import); this route imports
them when someone opens the page. Same page: `?format=json` answers the spec, `?format=oauth2-redirect`
the OAuth2 redirect stanza, otherwise the HTML with the bundled Swagger UI script and stylesheet.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from aws_lambda_powertools.event_handler import Response, content_types

if TYPE_CHECKING:
    from aws_lambda_powertools.event_handler import APIGatewayRestResolver


def add_docs_route(app: APIGatewayRestResolver, *, path: str, title: str, version: str) -> None:
    @app.get(path, include_in_schema=False)
    def _swagger() -> Response[str]:
        from aws_lambda_powertools.event_handler.openapi import swagger_ui
        from aws_lambda_powertools.event_handler.openapi.models import Server

        query = app.current_event.query_string_parameters or {}
        if query.get("format") == "oauth2-redirect":
            return Response(status_code=200, content_type="text/html", body=swagger_ui.generate_oauth2_redirect_html())
        servers = [Server(url=app._get_base_path() or "/")]  # the base path enable_swagger uses
        spec = app.get_openapi_json_schema(title=title, version=version, servers=servers).replace("</", "<\\/")
        if query.get("format") == "json":
            return Response(status_code=200, content_type=content_types.APPLICATION_JSON, body=spec)
        assets = Path(swagger_ui.__file__).parent  # the Swagger UI bundle Powertools ships
        script = (assets / "swagger-ui-bundle.min.js").read_text(encoding="utf-8")
        style = (assets / "swagger-ui.min.css").read_text(encoding="utf-8")
        page = swagger_ui.generate_swagger_html(spec, script, style, "", None)
        return Response(status_code=200, content_type="text/html", body=page)
