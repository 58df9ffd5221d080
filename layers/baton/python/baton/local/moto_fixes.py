"""Fidelity fixes for moto as Baton's local AWS.

moto's DynamoDB checks a ConditionExpression and then writes, without a lock: two threads can both pass
the check (seen: 2 of 20 racing conditional writes "won"). Real DynamoDB decides each conditional write
atomically, and Baton's exactly-one-winner guarantees rest on that, so the local stack and the moto
integration tests serialize moto's DynamoDB calls with one lock (reads too: a read that walks the
table while another thread inserts fails with "dictionary changed size during iteration").

moto's DynamoDB also has costs that grow with the table: `baton.local.moto_scale` narrows them.

moto 5.2's port of the `states:startExecution(.sync:2)` integration leaves parameter and response
casing alone (its `_normalise_*` hooks are no-ops), so ASL's `StateMachineArn`/`Input`/`Name` reach
botocore unconverted and fail, and `$.Output` is never found. AWS converts both ways; so does
`sfn_integration_casing`, so the same ASL (a gate run as one Task) works here and on AWS.
"""

from __future__ import annotations

import functools
import itertools
import threading
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

_LOCKED_METHODS = (
    "put_item",
    "update_item",
    "delete_item",
    "transact_write_items",
    "get_item",
    "query",
    "scan",
    "batch_get_item",
    "batch_write_item",
    "transact_get_items",
)
_WRITE_METHODS = frozenset({"put_item", "update_item", "delete_item", "transact_write_items", "batch_write_item"})
_lock = threading.RLock()
_write_counter = itertools.count(1)
_last_write = 0


def dynamodb_lock() -> threading.RLock:
    """The lock every moto DynamoDB call runs under while `atomic_dynamodb_writes` is open (a snapshot
    taken under it is consistent: no write is half done)."""
    return _lock


def dynamodb_writes() -> int:
    """How many moto DynamoDB writes have run so far (a changed number means the data changed)."""
    return _last_write


def _wrap(name: str, method: Callable[..., Any]) -> Callable[..., Any]:
    is_write = name in _WRITE_METHODS

    @functools.wraps(method)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        global _last_write
        with _lock:
            try:
                return method(*args, **kwargs)
            finally:
                if is_write:
                    _last_write = next(_write_counter)

    wrapper._baton_atomic = True  # type: ignore[attr-defined]
    return wrapper


@contextmanager
def patched(owner: Any, replacements: dict[str, Any]) -> Iterator[None]:
    originals = {name: owner.__dict__[name] for name in replacements}
    for name, value in replacements.items():
        setattr(owner, name, value)
    try:
        yield
    finally:
        for name, value in originals.items():
            setattr(owner, name, value)


@contextmanager
def atomic_dynamodb_writes() -> Iterator[None]:
    """While open, every moto DynamoDB call (condition check + write, or a read) runs under one lock."""
    from moto.dynamodb.models import DynamoDBBackend

    if getattr(DynamoDBBackend.put_item, "_baton_atomic", False):  # already installed (nested use)
        yield
        return
    names = [name for name in _LOCKED_METHODS if name in DynamoDBBackend.__dict__]
    with patched(DynamoDBBackend, {name: _wrap(name, getattr(DynamoDBBackend, name)) for name in names}):
        yield


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
