"""What the benches that count a pause's life share (parts/question_life.py, parts/cost_model.py): the
embedded local stack with every botocore client hooked, each AWS call attributed to the Lambda handler
that made it (`who`), the DynamoDB capacity units of the counted calls (parts/capacity.py), and each
Lambda invocation with its handler's own duration (a nested invocation's time is its own, not its
caller's). `who` is the function's name, `api:<METHOD> <last path segment>` for the API, "bench" for the
bench's own polling and "stepfunctions-engine" for calls no handler made (the engine's Lambda invokes).
Counting runs only while `COUNT.counting` is set; `COUNT.life_calls()` and `COUNT.life_invocations()` keep
what belongs to the pause's life (`is_the_life`)."""

from __future__ import annotations

import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from capacity import CapacityMeter

_label = threading.local()  # .who: the handler this thread runs; .nested: time its child invokes took
# The bench's own polling (GET reads, describe_execution) and the run's start are not the pause's life;
# nor are the scheduled functions (the reconciler, the interrupt sweeper): they run every minute, pauses or not.
NOT_THE_LIFE = {"bench", "api:POST runs"}


@dataclass
class Invocation:
    function: str  # the Lambda function's name ("api" for every route)
    who: str  # as the calls it made are labelled
    seconds: float  # its handler's own wall time, nested invocations taken out


@dataclass
class Counting:
    calls: Counter[tuple[str, str]] = field(default_factory=Counter)  # (who, "service.Operation")
    invocations: list[Invocation] = field(default_factory=list)
    counting: threading.Event = field(default_factory=threading.Event)
    meter: CapacityMeter | None = None  # set once the stack is up (it reads the table to size the writes)
    dynamo_clients: list[Any] = field(default_factory=list)

    def begin(self) -> None:
        self.calls.clear()
        self.invocations.clear()
        assert self.meter is not None
        self.meter.reset()
        self.counting.set()
        self.meter.counting.set()

    def end(self) -> None:
        self.counting.clear()
        assert self.meter is not None
        self.meter.counting.clear()

    def life_calls(self) -> Counter[tuple[str, str]]:
        return Counter({k: v for k, v in self.calls.items() if is_the_life(k[0])})

    def life_invocations(self) -> list[Invocation]:
        return [i for i in self.invocations if is_the_life(i.who)]


COUNT = Counting()


def is_the_life(who: str) -> bool:
    return who not in NOT_THE_LIFE and not who.startswith("api:GET")


def who() -> str:
    return getattr(_label, "who", None) or "stepfunctions-engine"


def label(name: str | None) -> None:
    """Attribute this thread's next calls to `name` (None: back to no handler)."""
    _label.who = name


def _install_counter() -> None:
    """Every botocore client created from now on reports each API call to `COUNT.calls`."""
    import botocore.session

    original = botocore.session.Session.create_client

    def create_client(self: Any, *args: Any, **kwargs: Any) -> Any:
        client = original(self, *args, **kwargs)

        def count(model: Any, **_: Any) -> None:
            if COUNT.counting.is_set() and not CapacityMeter.is_meter_call():
                COUNT.calls[(who(), f"{model.service_model.service_name}.{model.name}")] += 1

        client.meta.events.register("before-call.*.*", count)
        if client.meta.service_model.service_name == "dynamodb":
            COUNT.dynamo_clients.append(client)
            if COUNT.meter is not None:
                COUNT.meter.attach(client)
        return client

    botocore.session.Session.create_client = create_client  # type: ignore[method-assign]


def _labelled_dispatcher(stack: Any) -> None:
    original = stack.dispatcher.invoke

    def invoke(function_name: str, event: Any) -> Any:
        previous, outer_nested = getattr(_label, "who", None), getattr(_label, "nested", 0.0)
        if function_name == "api":
            _label.who = f"api:{event.get('httpMethod')} {event.get('path', '').split('/')[-1]}"
        else:
            _label.who = function_name
        _label.nested = 0.0
        started = time.perf_counter()
        try:
            return original(function_name, event)
        finally:
            took = time.perf_counter() - started
            if COUNT.counting.is_set():
                COUNT.invocations.append(Invocation(function_name, _label.who, took - _label.nested))
            _label.who, _label.nested = previous, outer_nested + took

    stack.dispatcher.invoke = invoke


def _labelled_build_ends() -> None:
    """The local build runner hands a review build's end to the review service from its own thread, where
    deployed CodeBuild's event invokes the `build_finished` Lambda: its calls and its invocation are counted
    as that Lambda's (else they were the engine's, left out of the life)."""
    from baton.services.review import ReviewService

    original = ReviewService.build_finished

    def build_finished(self: Any, event: Any) -> Any:
        previous = getattr(_label, "who", None)
        _label.who, _label.nested = "build_finished", 0.0
        started = time.perf_counter()
        try:
            return original(self, event)
        finally:
            if COUNT.counting.is_set():
                took = time.perf_counter() - started - _label.nested
                COUNT.invocations.append(Invocation("build_finished", "build_finished", took))
            _label.who = previous

    ReviewService.build_finished = build_finished  # type: ignore[method-assign]


def start_stack(prefix: str) -> tuple[Any, Any]:
    """The local stack (its state in a fresh directory), counted: (stack, its StackInfo)."""
    _install_counter()
    _labelled_build_ends()
    from baton.local.stack import LocalStack
    from baton.workflows.resources import FUNCTIONS

    NOT_THE_LIFE.update(spec.name for spec in FUNCTIONS if spec.schedule)

    stack = LocalStack(api_port=0, state_dir=Path(tempfile.mkdtemp(prefix=prefix)))
    info = stack.start()
    _labelled_dispatcher(stack)
    import boto3

    COUNT.meter = CapacityMeter(boto3.client("dynamodb"), include=lambda: is_the_life(who()))
    for made in COUNT.dynamo_clients:  # the handlers' clients, made as the stack started
        COUNT.meter.attach(made)
    return stack, info
