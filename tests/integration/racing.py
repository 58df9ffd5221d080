"""What the 50-way race tests share: IAM operators as the deployed API sees them, one request through
the real API handler (the dispatcher's handler copies) as a caller, a barrier that releases every racer
at once, and the run's event types counted after the race."""

from __future__ import annotations

import json
import threading
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, TypeVar

from baton.local.http_adapter import to_proxy_event

if TYPE_CHECKING:
    from collections.abc import Callable

    from tests.integration.conftest import MotoStack

RACERS = 50
T = TypeVar("T")
Result = tuple[int, dict[str, Any]]  # status code, parsed body


def operator(n: int) -> str:
    return f"arn:aws:sts::123456789012:assumed-role/operators/op-{n}"


def call_api(stack: MotoStack, caller: str, method: str, path: str, body: Any) -> Result:
    """One API request as `caller` (an IAM principal's ARN), answered by the real handler."""
    raw = b"" if body is None else json.dumps(body).encode()  # None: no body (a GET), not JSON null
    event = to_proxy_event(method, path, {"Content-Type": "application/json"}, raw, "10.0.0.1")
    event["requestContext"]["identity"]["userArn"] = caller
    payload, errored = stack.dispatcher.invoke("api", event)
    assert not errored, payload
    return payload["statusCode"], json.loads(payload["body"])


def race(request: Callable[[int], T]) -> list[T]:
    """`request(n)` for n in 0..RACERS-1, from RACERS threads released together by one barrier."""
    barrier = threading.Barrier(RACERS)

    def one(n: int) -> T:
        barrier.wait()
        return request(n)

    with ThreadPoolExecutor(RACERS) as pool:
        return list(pool.map(one, range(RACERS)))


def event_types(stack: MotoStack, run_id: str) -> Counter[str]:
    return Counter(e.type for e in stack.services.core.store.list_events(run_id, limit=1000))
