"""What every route declares besides its request model: the shared path parameters and its responses.

`responses(...)` gives Powertools the success model(s) and the error statuses a route can answer
with; every error has the one body of `baton.contracts.ErrorBody`, so `/api/openapi.json` describes
both. Some apply to every route, since the resolver checks them before any route runs: 400 (malformed
or too deeply nested JSON), 401 (no identity), 413 (a body over the limit), 415 (a body that is not
UTF-8 JSON by its Content-Type) and 422 (a body, path or query that fails its model)."""

from __future__ import annotations

from types import UnionType
from typing import Annotated, TypeVar

from aws_lambda_powertools.event_handler import Response, content_types
from aws_lambda_powertools.event_handler.openapi.params import Path
from aws_lambda_powertools.event_handler.openapi.types import OpenAPIResponse
from pydantic import BaseModel

from baton.contracts import AnswerResult, ErrorBody, InterruptResumed, ResumeResult, ReviewActionResult
from baton.domain import fields

RunId = Annotated[fields.RunId, Path(description="The run id (the Step Functions execution name).")]
InteractionId = Annotated[str, Path(min_length=1, max_length=80, description="The question's interaction id.")]
NodeName = Annotated[fields.NodeName, Path(description="The asking node.")]
InterruptId = Annotated[str, Path(min_length=1, max_length=64, description="The interrupt id.")]

_ERRORS = {
    400: "Malformed JSON, an invalid id or a value the service refuses",
    401: "No caller identity, or a token that is not valid for this API",
    403: "The caller may not do this (an agent acting as operator, or outside its run)",
    404: "No such run, interaction, interrupt or workflow",
    409: "Somebody else changed it first; the body carries the current state",
    410: "Nothing is waiting any more (timed out, cancelled or finished)",
    413: "The body (or a field of it) is over its size limit",
    415: "The body is not UTF-8 JSON by its Content-Type",
    422: "The body, path or query fails its model, or a value breaks a rule; the body names the path",
}
ALWAYS = (400, 401, 413, 415, 422)
DELIVERY_PENDING = 202  # an answer stored whose send failed: the reconciler delivers it (contracts `Delivery`)
AnswerModel = TypeVar("AnswerModel", AnswerResult, ResumeResult, ReviewActionResult, InterruptResumed)


def _describe(model: type[BaseModel] | UnionType) -> str:
    if isinstance(model, UnionType):
        return " or ".join(m.__name__ for m in model.__args__)
    return (model.__doc__ or model.__name__).strip().split("\n\n")[0]


def responses(ok: dict[int, type[BaseModel] | UnionType], *errors: int) -> dict[int, OpenAPIResponse]:
    """The OpenAPI responses of one route: `ok` maps each success status to its model (or a union)."""
    declared: dict[int, OpenAPIResponse] = {
        status: {"description": _describe(model), "content": {"application/json": {"model": model}}}
        for status, model in ok.items()
    }
    for status in sorted({*errors, *ALWAYS}):
        declared[status] = {"description": _ERRORS[status], "content": {"application/json": {"model": ErrorBody}}}
    return declared


def answered(result: AnswerModel) -> Response[AnswerModel]:
    """An answer's (resume's, review action's) response: 200, or 202 when it is stored and its delivery
    is pending (its send failed; the reconciler sends it): never an error for a stored answer."""
    status = DELIVERY_PENDING if result.delivery == "pending" else 200
    return Response(status_code=status, content_type=content_types.APPLICATION_JSON, body=result)
