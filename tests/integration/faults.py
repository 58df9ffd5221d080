"""Faults the emulator never makes, injected where AWS would make them: DynamoDB's transaction conflicts
(a single write's TransactionConflictException, a transaction cancelled with reason TransactionConflict)
and throttling, Step Functions' and Lambda's throttling.

A `before-send` handler on each client answers an attempt with the error response AWS sends (status,
headers, body in the service's protocol), so botocore parses it and its retry logic decides on it exactly
as on one from AWS. An injected attempt never reaches moto (its URL is pointed where moto serves
nothing), so it writes nothing, as AWS writes nothing for a refused request. Faults are chosen by a
seeded RNG at a fixed rate (`FaultInjector`), or queued one by one for the next call of an operation
(`FaultInjector.queue`); only threads inside `FaultInjector.active()` get them (the test's own requests:
the Step Functions engine's Lambdas run in other threads), and each of their API calls' attempts is
counted (`calls`: one entry per call, its attempts)."""

from __future__ import annotations

import json
import random
import threading
from collections import Counter
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from botocore.awsrequest import AWSResponse
from botocore.compat import HTTPHeaders
from moto.core.botocore_stubber import MockRawResponse

if TYPE_CHECKING:
    from collections.abc import Iterator

    import pytest

NOWHERE = "https://fault-injected.invalid/"  # no moto service matches it: the attempt reaches nothing
_DYNAMODB_TYPE = "com.amazonaws.dynamodb.v20120810#"


@dataclass(frozen=True)
class Fault:
    """One error response. `reason`: a TransactionCanceledException whose one item's reason is this (the
    item at index `item`, else one chosen by the RNG)."""

    code: str
    status: int = 400
    reason: str | None = None
    item: int | None = None

    @property
    def name(self) -> str:
        return f"TransactionCanceledException[{self.reason}]" if self.reason else self.code


TRANSACTION_CONFLICT = Fault("TransactionConflictException")
CANCELLED_FOR_CONFLICT = Fault("TransactionCanceledException", reason="TransactionConflict")
THROUGHPUT_EXCEEDED = Fault("ProvisionedThroughputExceededException")
THROTTLED = Fault("ThrottlingException")
LAMBDA_THROTTLED = Fault("TooManyRequestsException", status=429)

_WRITE_FAULTS = (TRANSACTION_CONFLICT, THROUGHPUT_EXCEEDED, THROTTLED)
_READ_FAULTS = (THROUGHPUT_EXCEEDED,)
# What each operation may get ("<botocore service id>.<Operation>"), as AWS documents for it.
FAULTS: dict[str, tuple[Fault, ...]] = {
    "dynamodb.TransactWriteItems": (CANCELLED_FOR_CONFLICT, THROUGHPUT_EXCEEDED, THROTTLED),
    "dynamodb.PutItem": _WRITE_FAULTS,
    "dynamodb.UpdateItem": _WRITE_FAULTS,
    "dynamodb.DeleteItem": _WRITE_FAULTS,
    "dynamodb.GetItem": _READ_FAULTS,
    "dynamodb.BatchGetItem": _READ_FAULTS,
    "dynamodb.Query": _READ_FAULTS,
    "sfn.SendTaskSuccess": (THROTTLED,),
    "sfn.SendTaskFailure": (THROTTLED,),
    "sfn.StartExecution": (THROTTLED,),
    "lambda.Invoke": (LAMBDA_THROTTLED,),
}


def _items_in(request: Any) -> int:
    body = request.body.decode() if isinstance(request.body, bytes) else str(request.body or "{}")
    return len(json.loads(body).get("TransactItems") or [])


def error_response(service: str, fault: Fault, request: Any, rng: random.Random) -> AWSResponse:
    """The response AWS sends for `fault`: JSON 1.0 (`__type`) for DynamoDB and Step Functions, REST-JSON
    (`x-amzn-ErrorType`) for Lambda. A cancelled transaction names one reason per item, "None" for the rest."""
    headers = {"x-amzn-RequestId": "fault-injected"}
    body: dict[str, object] = {"message": f"injected {fault.name}"}
    if service == "lambda":
        headers |= {"Content-Type": "application/json", "x-amzn-ErrorType": f"{fault.code}:http://internal/"}
        body |= {"Type": "User", "Reason": "ReservedFunctionConcurrentInvocationLimitExceeded"}
    else:
        headers["Content-Type"] = "application/x-amz-json-1.0"
        body["__type"] = (_DYNAMODB_TYPE if service == "dynamodb" else "com.amazonaws.swf.base.model#") + fault.code
    if fault.reason:
        reasons = [{"Code": "None"} for _ in range(max(1, _items_in(request)))]
        conflicted = rng.randrange(len(reasons)) if fault.item is None else fault.item
        reasons[conflicted] = {"Code": fault.reason, "Message": "Transaction is ongoing for the item"}
        body["CancellationReasons"] = reasons
    http_headers = HTTPHeaders()
    for name, value in headers.items():
        http_headers[name] = value
    return AWSResponse(NOWHERE, fault.status, http_headers, MockRawResponse(json.dumps(body)))


@dataclass
class FaultInjector:
    """Injects FAULTS at `rate` (seeded) into the calls of the threads inside `active()`, and counts them."""

    seed: int = 27
    rate: float = 0.0
    calls: list[tuple[str, int]] = field(default_factory=list)  # (operation, attempts) per API call
    injected: Counter[str] = field(default_factory=Counter)  # "<operation> <fault>" → times
    _queued: dict[str, list[Fault]] = field(default_factory=dict)
    _local: threading.local = field(default_factory=threading.local)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self._rng = random.Random(self.seed)

    def attach(self, client: Any) -> None:
        service = client.meta.service_model.service_id.hyphenize()
        # more specific than moto's `before-send`, so it runs first and its response is the one used
        client.meta.events.register(f"before-call.{service}", self._call_started)
        client.meta.events.register(f"before-send.{service}", self._attempt)

    @contextmanager
    def active(self) -> Iterator[FaultInjector]:
        self._local.on = True
        try:
            yield self
        finally:
            self._local.on = False

    def queue(self, operation: str, *faults: Fault) -> None:
        """The next attempts at `operation` (in active threads) get `faults`, one each, then none."""
        with self._lock:
            self._queued.setdefault(operation, []).extend(faults)

    def attempts(self, operation: str) -> list[int]:
        """The attempts of each call of `operation`, in order."""
        return [n for op, n in self.calls if op == operation]

    def _call_started(self, model: Any, **_: Any) -> None:
        if getattr(self._local, "on", False):
            with self._lock:
                self._local.call = len(self.calls)
                self.calls.append((f"{model.service_model.service_id.hyphenize()}.{model.name}", 0))

    def _attempt(self, request: Any, event_name: str, **_: Any) -> AWSResponse | None:
        if not getattr(self._local, "on", False):
            return None
        _event, service, name = event_name.split(".")[:3]
        operation = f"{service}.{name}"
        with self._lock:
            n = self._local.call
            self.calls[n] = (operation, self.calls[n][1] + 1)
            fault = self._choose(operation)
            if fault is None:
                return None
            self.injected[f"{operation} {fault.name}"] += 1
            response = error_response(service, fault, request, self._rng)
        request.url = NOWHERE
        return response

    def _choose(self, operation: str) -> Fault | None:
        queued = self._queued.get(operation)
        if queued:
            return queued.pop(0)
        choices = FAULTS.get(operation)
        if not choices or self._rng.random() >= self.rate:
            return None
        return self._rng.choice(choices)


def on_every_client(monkeypatch: pytest.MonkeyPatch) -> FaultInjector:
    """A FaultInjector attached to every botocore client created from now on, until the test ends (so a
    fixture requested before `moto_stack` reaches the stack's clients and its handler copies' too)."""
    import botocore.session

    injector = FaultInjector()
    original = botocore.session.Session.create_client

    def create_client(self: Any, *args: Any, **kwargs: Any) -> Any:
        client = original(self, *args, **kwargs)
        injector.attach(client)
        return client

    monkeypatch.setattr(botocore.session.Session, "create_client", create_client)
    return injector
