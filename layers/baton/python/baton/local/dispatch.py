"""Lambda invokes dispatched in-process to the real `functions/<name>/handler.py` (moto runs Lambda code only
in Docker). The function's `invoke`, used by the Invoke API (so by Step Functions) and by SNS subscriptions,
calls our handler; each concurrent invocation gets its own "container" (a separately loaded module)."""

from __future__ import annotations

import contextvars
import functools
import importlib.util
import json
import queue
import sys
import threading
import time
import traceback
import uuid
from contextlib import contextmanager
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any
from unittest.mock import patch

from aws_lambda_powertools.event_handler.api_gateway import ApiGatewayResolver

from baton.workflows.resources import FUNCTIONS, FunctionSpec

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path
    from types import ModuleType

_request: contextvars.ContextVar[SimpleNamespace | None] = contextvars.ContextVar("baton_request", default=None)


def _state(resolver: Any) -> SimpleNamespace:
    """The request being resolved; outside one (routes being registered), the resolver's own."""
    found = _request.get()
    if found is None:
        idle = SimpleNamespace(current_event=None, lambda_context=None, context={})
        found = resolver.__dict__.setdefault("_baton_idle", idle)
    return found


def _field(name: str) -> property:
    return property(lambda self: getattr(_state(self), name), lambda self, value: setattr(_state(self), name, value))


def isolate_requests() -> None:
    """Lambda's one request per container, for handlers run as threads of one process (idempotent). Powertools
    keeps the request being resolved on the class (`BaseRouter.current_event`, `lambda_context`) and the route
    context on the resolver every module-level router points to (one router per process, pointing at the container
    that included it last): one request's body could be read while another's path is served. These three become per
    request (a context variable; each `resolve` in its own context copy)."""
    if getattr(ApiGatewayResolver, "_baton_isolated", False):
        return
    original = ApiGatewayResolver.resolve

    @functools.wraps(original)
    def resolve(self: Any, event: dict[str, Any], context: Any) -> Any:
        idle = _state(self)  # the routers' registration context, copied in as include_router left it
        # Powertools assigns the event to BaseRouter's class attribute, which these properties shadow.
        state = SimpleNamespace(
            current_event=self._to_proxy_event(dict(event)), lambda_context=context, context=dict(idle.context)
        )

        def run() -> Any:
            _request.set(state)
            return original(self, event, context)

        return contextvars.copy_context().run(run)

    for name in ("current_event", "lambda_context", "context"):
        setattr(ApiGatewayResolver, name, _field(name))
    ApiGatewayResolver.resolve = resolve  # type: ignore[method-assign,assignment]
    ApiGatewayResolver._baton_isolated = True  # type: ignore[attr-defined]


@dataclass
class LocalContext:
    """The parts of Lambda's context object that handlers and Powertools read."""

    function_name: str
    memory_limit_in_mb: int = 512
    timeout_seconds: int = 30
    aws_request_id: str = field(default_factory=lambda: str(uuid.uuid4()))
    invoked_function_arn: str = ""
    _started: float = field(default_factory=time.monotonic)

    def get_remaining_time_in_millis(self) -> int:
        return max(0, int((self.timeout_seconds - (time.monotonic() - self._started)) * 1000))


class LambdaDispatcher:
    def __init__(self, specs: tuple[FunctionSpec, ...] = FUNCTIONS) -> None:
        self.specs = {s.name: s for s in specs}
        self._pools: dict[str, queue.SimpleQueue[ModuleType]] = {s.name: queue.SimpleQueue() for s in specs}
        self._loaded = 0
        self._load_lock = threading.Lock()
        self.invocations: dict[str, int] = {s.name: 0 for s in specs}
        isolate_requests()  # before any handler is loaded

    def _load(self, name: str) -> ModuleType:
        path: Path = self.specs[name].directory / "handler.py"
        # One load at a time: two racing first imports of the package see each other's half-initialised modules
        with self._load_lock:
            self._loaded += 1
            module_name = f"baton_local_fn_{name}_{self._loaded}"
            spec = importlib.util.spec_from_file_location(module_name, path)
            if spec is None or spec.loader is None:
                raise RuntimeError(f"cannot load {path}")
            module = importlib.util.module_from_spec(spec)
            sys.modules[module_name] = module
            spec.loader.exec_module(module)
        return module

    def invoke(self, function_name: str, event: Any) -> tuple[Any, bool]:
        """Run the handler; returns (payload, errored). Errors come back shaped like Lambda's."""
        spec = self.specs[function_name]
        self.invocations[function_name] += 1
        context = LocalContext(
            function_name=function_name,
            memory_limit_in_mb=spec.memory_mb,
            timeout_seconds=spec.timeout_seconds,
            invoked_function_arn=f"arn:aws:lambda:us-east-1:123456789012:function:{function_name}",  # moto's account
        )
        pool = self._pools[function_name]  # the idle containers
        try:
            module = pool.get_nowait()
        except queue.Empty:
            module = self._load(function_name)  # a cold start
        try:
            return module.lambda_handler(event, context), False
        except Exception as err:  # returned as Lambda's Unhandled error so ASL Catch can match
            return {
                "errorType": type(err).__name__,
                "errorMessage": str(err),
                "stackTrace": traceback.format_exception(err)[-5:],
            }, True
        finally:
            pool.put(module)

    @contextmanager
    def installed(self) -> Iterator[LambdaDispatcher]:
        """Route moto's Lambda invokes of our functions here while the context is open."""
        from moto.awslambda.models import LambdaFunction
        from moto.awslambda_simple.models import LambdaSimpleBackend

        original = LambdaFunction.invoke
        original_simple = LambdaSimpleBackend.invoke

        def invoke(fn: Any, body: str, request_headers: Any, response_headers: Any) -> str | bytes:
            if fn.function_name not in self.specs:
                return original(fn, body, request_headers, response_headers)
            payload, errored = self.invoke(fn.function_name, json.loads(body) if body else {})
            if errored:
                response_headers["x-amz-function-error"] = "Unhandled"
            text = json.dumps(payload, default=str)
            inv_type = (request_headers or {}).get("x-amz-invocation-type", "RequestResponse")
            return text.encode() if inv_type == "RequestResponse" else text

        def simple_invoke(backend: Any, function_name: str, qualifier: str | None, *request: Any) -> str | bytes | None:
            # With use_docker=False the Invoke API goes to this backend, which only echoes. `request` is
            # moto's (body, headers, response_headers), passed through as it calls us.
            fn = backend.get_function(function_name, qualifier)
            if fn.function_name not in self.specs:
                return original_simple(backend, function_name, qualifier, *request)
            return invoke(fn, *request)

        with patch.object(LambdaFunction, "invoke", invoke), patch.object(LambdaSimpleBackend, "invoke", simple_invoke):
            yield self
