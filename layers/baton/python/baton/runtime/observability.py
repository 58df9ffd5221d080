"""The one shared Powertools logger, tracer and metrics of every Baton function.

The tracer is Powertools' `Tracer` only when tracing is on (in a Lambda sandbox, unless
`POWERTOOLS_TRACE_DISABLED` says otherwise: the same rule Powertools applies). Powertools' `Tracer()`
imports the X-Ray SDK even when it is disabled (and, outside Lambda, builds X-Ray clients), which is
most of a handler's cold import; so with tracing off the tracer is `Untraced`, whose decorators return
the function unchanged. With tracing on it patches botocore only: the default patches every library
the X-Ray SDK knows and so imports httpx, requests and the rest at cold start.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, cast

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.shared import constants
from aws_lambda_powertools.shared.functions import resolve_truthy_env_var_choice

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

F = TypeVar("F", bound="Callable[..., Any]")


class HandlerTracer(Protocol):
    """What the handlers use of a tracer: Powertools' `Tracer` (whose decorator keeps the handler's
    signature) or `Untraced`."""

    def capture_lambda_handler(self, lambda_handler: F) -> F: ...


# What X-Ray traces when tracing is on: the AWS calls (DynamoDB, Step Functions, SNS, ...).
TRACED_MODULES = ("botocore",)


def tracing_enabled(environ: Mapping[str, str] | None = None) -> bool:
    """Tracing is on in a Lambda sandbox (not under SAM local or Chalice) unless POWERTOOLS_TRACE_DISABLED."""
    env = os.environ if environ is None else environ
    if resolve_truthy_env_var_choice(env=env.get(constants.TRACER_DISABLED_ENV) or "false"):
        return False
    in_lambda = bool(env.get(constants.LAMBDA_TASK_ROOT_ENV))
    emulated = bool(env.get(constants.SAM_LOCAL_ENV) or env.get(constants.CHALICE_LOCAL_ENV))
    return in_lambda and not emulated


class Untraced:
    """The tracer when tracing is off: the subset of Powertools' `Tracer` that Baton uses, doing nothing."""

    disabled = True

    def capture_lambda_handler(self, lambda_handler: F) -> F:
        return lambda_handler

    def capture_method(self, method: F) -> F:
        return method

    def put_annotation(self, key: str, value: str | float | bool) -> None:
        return None

    def put_metadata(self, key: str, value: Any, namespace: str | None = None) -> None:
        return None


def build_tracer(environ: Mapping[str, str] | None = None) -> HandlerTracer:
    if not tracing_enabled(environ):
        return Untraced()
    from aws_lambda_powertools import Tracer

    return cast("HandlerTracer", Tracer(service="baton", disabled=False, patch_modules=TRACED_MODULES))


logger = Logger(service="baton")
tracer = build_tracer()
metrics = Metrics(namespace="Baton", service="baton")
