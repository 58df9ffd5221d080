"""Faster paths through the DynamoDB wire inside the local stack (botocore's request and response walks,
moto's parsing and result building), each giving the generic code's own result.

`baton.local.moto_speed` copies item values past moto's response serializer; two more walks over every
attribute value of every call remained (profiled under `bench/parts/load.py`):

**Request values.** moto parses each request body against the operation's input shape
(`moto.core.parse`): an `AttributeValue` is a structure of ten members, each looked up, and every map
value and list element recursed into the same way. For a value in the plain wire form (`{"S": "x"}`,
`{"M": {...}}`, no binary) that walk returns a copy of the same dict, members in shape order: exactly
what `moto_speed.wire_copy` builds. `fast_request_values` hands such a value over as that copy; a
binary (`B`/`BS`: base64 decoded by the walk), an unknown member, a None or a wrongly typed value goes
through moto's own parser.

**Results.** Every DynamoDB result goes through `dynamo_to_dict` before serializing, which asks each
object (every string included) `isinstance` against datetime and DynamoType and `hasattr(.., "to_json")`.
`fast_result_values` answers the plain cases (a DynamoType other than B/BS, a dict, a list, a string, a
number, a boolean, None) by their exact type and leaves everything else to moto's function.

**The client's side.** botocore walks the same shapes once more in this process: serializing each
request (`JSONSerializer`) and parsing each response (`BaseJSONParser`), member by member. For a plain
value both walks give a copy of it (the serializer in the value's own order, the parser in shape order:
the same for a value of one member, and `wire_copy` takes nothing else); `fast_client_values` hands
such a value over as that copy. Parameter validation still walks every value first.

`tests/integration/test_moto_wire.py` compares each with plain moto and botocore and counts the work they
skip.
"""

from __future__ import annotations

from contextlib import ExitStack, contextmanager
from typing import TYPE_CHECKING, Any

from baton.local.moto_fixes import patched
from baton.local.moto_speed import ATTRIBUTE_VALUE_SHAPE, wire_copy

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

FAST_REQUEST_VALUES = [0]  # request attribute values taken as copies (tests count it)


def _parse_structure(original: Callable[..., Any]) -> Callable[..., Any]:
    def parse_structure(self: Any, shape: Any, value: Any) -> Any:
        if shape.name == ATTRIBUTE_VALUE_SHAPE and self.MAP_TYPE is dict:
            copied = wire_copy(value)
            if copied is not None:
                FAST_REQUEST_VALUES[0] += 1
                return copied
        return original(self, shape, value)

    parse_structure._baton_fast = True  # type: ignore[attr-defined]
    return parse_structure


@contextmanager
def fast_request_values() -> Iterator[None]:
    """While open, moto's JSON request parser takes plain DynamoDB attribute values as copies."""
    from moto.core.parse import BaseJSONParser

    current = BaseJSONParser.__dict__["_parse_structure"]
    if getattr(current, "_baton_fast", False):
        yield
        return
    with patched(BaseJSONParser, {"_parse_structure": _parse_structure(current)}):
        yield


def _result_values(original: Callable[[Any], Any]) -> Callable[[Any], Any]:
    from moto.dynamodb.models.dynamo_type import DynamoType, LimitedSizeDict

    leaves = (str, bool, int, float, type(None))
    mappings = (dict, LimitedSizeDict)

    def dynamo_to_dict(obj: Any) -> Any:
        kind = type(obj)
        if kind in leaves:
            return obj
        if kind is DynamoType and obj.type not in ("B", "BS"):
            return {obj.type: dynamo_to_dict(obj.value)}
        if kind in mappings:
            return {key: dynamo_to_dict(value) for key, value in obj.items()}
        if kind is list:
            return [dynamo_to_dict(item) for item in obj]
        return original(obj)  # its own recursion comes back here (it looks the module name up)

    dynamo_to_dict._baton_fast = True  # type: ignore[attr-defined]
    return dynamo_to_dict


@contextmanager
def fast_result_values() -> Iterator[None]:
    """While open, moto turns DynamoDB results into plain values by type, not by asking each object."""
    from moto.dynamodb import responses
    from moto.dynamodb.models import utilities

    current = utilities.__dict__["dynamo_to_dict"]
    if getattr(current, "_baton_fast", False):
        yield
        return
    fast = _result_values(current)
    with patched(utilities, {"dynamo_to_dict": fast}), patched(responses, {"dynamo_to_dict": fast}):
        yield


FAST_CLIENT_VALUES = [0]  # attribute values botocore serialized or parsed as copies (tests count it)


def _serialize_structure(original: Callable[..., None]) -> Callable[..., None]:
    def serialize_structure(self: Any, serialized: Any, value: Any, shape: Any, key: Any) -> None:
        if key is not None and shape.name == ATTRIBUTE_VALUE_SHAPE and self.MAP_TYPE is dict:
            copied = wire_copy(value)
            if copied is not None:
                FAST_CLIENT_VALUES[0] += 1
                serialized[key] = copied
                return
        original(self, serialized, value, shape, key)

    serialize_structure._baton_fast = True  # type: ignore[attr-defined]
    return serialize_structure


def _handle_structure(original: Callable[..., Any]) -> Callable[..., Any]:
    def handle_structure(self: Any, shape: Any, value: Any) -> Any:
        if shape.name == ATTRIBUTE_VALUE_SHAPE and not shape.is_tagged_union:
            copied = wire_copy(value)
            if copied is not None:
                FAST_CLIENT_VALUES[0] += 1
                return copied
        return original(self, shape, value)

    handle_structure._baton_fast = True  # type: ignore[attr-defined]
    return handle_structure


@contextmanager
def fast_client_values() -> Iterator[None]:
    """While open, botocore serializes and parses plain DynamoDB attribute values as copies."""
    from botocore.parsers import BaseJSONParser
    from botocore.serialize import JSONSerializer

    current = JSONSerializer.__dict__["_serialize_type_structure"]
    if getattr(current, "_baton_fast", False):
        yield
        return
    with (
        patched(JSONSerializer, {"_serialize_type_structure": _serialize_structure(current)}),
        patched(BaseJSONParser, {"_handle_structure": _handle_structure(BaseJSONParser.__dict__["_handle_structure"])}),
    ):
        yield


@contextmanager
def moto_wire_paths() -> Iterator[None]:
    """All of the above, while open."""
    with ExitStack() as stack:
        stack.enter_context(fast_request_values())
        stack.enter_context(fast_result_values())
        stack.enter_context(fast_client_values())
        yield
