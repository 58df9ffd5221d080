"""The query parameters' schemas in the OpenAPI document, from the query models that enforce them.

A route reads its query string as one model (`query: Annotated[InboxListQuery, Query()]`), so one
declaration enforces each field's type, enum and bounds. Powertools (3.x) expands such a model into one
parameter per field but writes only the field's basic type (`_get_basic_type_schema`): `limit` became
`{"type": "integer"}` although 0 and 201 are refused. This puts pydantic's own JSON Schema of each
field in its place, so the document declares exactly what the model enforces."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.event_handler.api_gateway import Route
from aws_lambda_powertools.event_handler.openapi.models import OpenAPI, Operation, Parameter, Schema
from aws_lambda_powertools.event_handler.openapi.params import Query
from pydantic import BaseModel

_OPERATIONS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")


def _without_null(schema: dict[str, Any]) -> dict[str, Any]:
    """An optional field's `anyOf [X, null]` is X for a query parameter: absent is how it is left out
    (a query string has no null)."""
    variants = schema.get("anyOf")
    if not isinstance(variants, list):
        return schema
    kept = [v for v in variants if v != {"type": "null"}]
    rest = {k: v for k, v in schema.items() if k != "anyOf"}
    if len(kept) == 1:
        return {**kept[0], **rest}
    return {**rest, "anyOf": kept}


def query_field_schemas(model: type[BaseModel]) -> dict[str, dict[str, Any]]:
    """Each query parameter's schema by its name on the wire (a field's alias)."""
    schema = model.model_json_schema(by_alias=True, mode="validation")
    if "$defs" in schema:  # no query model uses one; a $ref here would point nowhere in the document
        raise ValueError(f"{model.__name__}: a query model's fields must not need $defs")
    properties: dict[str, dict[str, Any]] = schema.get("properties", {})
    return {name: _without_null({k: v for k, v in prop.items() if k != "title"}) for name, prop in properties.items()}


def _query_models(route: Route) -> list[type[BaseModel]]:
    found: list[type[BaseModel]] = []
    for param in route.dependant.query_params:
        annotation = param.field_info.annotation
        if isinstance(param.field_info, Query) and isinstance(annotation, type) and issubclass(annotation, BaseModel):
            found.append(annotation)
    return found


def _operation(spec: OpenAPI, route: Route) -> Operation | None:
    item = (spec.paths or {}).get(route.openapi_path)
    method = route.method.lower()
    if item is None or method not in _OPERATIONS:
        return None
    operation = getattr(item, method, None)
    return operation if isinstance(operation, Operation) else None


def declare_query_constraints(spec: OpenAPI, routes: list[Route]) -> OpenAPI:
    """Replace the bare types Powertools wrote for the fields of each route's query model."""
    for route in routes:
        operation = _operation(spec, route)
        if operation is None or not operation.parameters:
            continue
        schemas: dict[str, dict[str, Any]] = {}
        for model in _query_models(route):
            schemas.update(query_field_schemas(model))
        for parameter in operation.parameters:
            if isinstance(parameter, Parameter) and parameter.in_.value == "query" and parameter.name in schemas:
                parameter.schema_ = Schema.model_validate(schemas[parameter.name])
    return spec
