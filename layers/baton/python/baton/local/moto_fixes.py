"""Fidelity fixes for moto as Baton's local AWS.

moto's DynamoDB checks a ConditionExpression and then writes, without a lock: two threads can both pass
the check (seen: 2 of 20 racing conditional writes "won"). Real DynamoDB decides each conditional write
atomically, and Baton's exactly-one-winner guarantees rest on that, so the local stack and the moto
integration tests serialize moto's DynamoDB writes with one lock.

moto 5.2's port of the `states:startExecution(.sync:2)` integration leaves parameter and response
casing alone (its `_normalise_*` hooks are no-ops), so ASL's `StateMachineArn`/`Input`/`Name` reach
botocore unconverted and fail, and `$.Output` is never found. AWS converts both ways; so does
`sfn_integration_casing`, so the same ASL (a gate run as one Task) works here and on AWS.
"""

from __future__ import annotations

import functools
import threading
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Iterator

_WRITE_METHODS = ("put_item", "update_item", "delete_item", "transact_write_items")
_lock = threading.RLock()


@contextmanager
def atomic_dynamodb_writes() -> Iterator[None]:
    """While open, every moto DynamoDB write (condition check + write) runs under one process-wide lock."""
    from moto.dynamodb.models import DynamoDBBackend

    originals: dict[str, Any] = {name: getattr(DynamoDBBackend, name) for name in _WRITE_METHODS}
    if getattr(originals["put_item"], "_baton_atomic", False):  # already installed (nested use)
        yield
        return

    def locked(method: Any) -> Any:
        @functools.wraps(method)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with _lock:
                return method(*args, **kwargs)

        wrapper._baton_atomic = True  # type: ignore[attr-defined]
        return wrapper

    for name, method in originals.items():
        setattr(DynamoDBBackend, name, locked(method))
    try:
        yield
    finally:
        for name, method in originals.items():
            setattr(DynamoDBBackend, name, method)


def _camel(key: str) -> str:
    return key[:1].lower() + key[1:]


def _pascal(key: str) -> str:
    return key[:1].upper() + key[1:]


@contextmanager
def sfn_integration_casing() -> Iterator[None]:
    """While open, moto's Step Functions service integration converts casing as AWS does."""
    from moto.stepfunctions.parser.asl.component.state.exec.state_task.service.state_task_service_sfn import (
        StateTaskServiceSfn,
    )

    original_params = StateTaskServiceSfn._normalise_parameters
    original_response = StateTaskServiceSfn._normalise_response

    def normalise_parameters(self: Any, parameters: dict[str, Any], *args: Any, **kwargs: Any) -> None:
        original_params(self, parameters, *args, **kwargs)
        for key in [k for k in parameters if k[:1].isupper()]:
            parameters[_camel(key)] = parameters.pop(key)

    def normalise_response(self: Any, response: Any, *args: Any, **kwargs: Any) -> None:
        original_response(self, response, *args, **kwargs)
        if isinstance(response, dict):
            for key in [k for k in response if k[:1].islower()]:
                response[_pascal(key)] = response.pop(key)

    StateTaskServiceSfn._normalise_parameters = normalise_parameters  # type: ignore[method-assign]
    StateTaskServiceSfn._normalise_response = normalise_response  # type: ignore[method-assign]
    try:
        yield
    finally:
        StateTaskServiceSfn._normalise_parameters = original_params  # type: ignore[method-assign]
        StateTaskServiceSfn._normalise_response = original_response  # type: ignore[method-assign]
