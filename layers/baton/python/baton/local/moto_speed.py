"""moto writes DynamoDB item values in its responses by copying them, not by its generic serializer walk.

moto 5.2 serializes every response by walking the output shape, asking an attribute picker (six alias
providers) for each member; an `AttributeValue` has ten members, so an item of twenty attributes costs ~200
picker calls and a run's Query spent more time there than in DynamoDB (~35% of the stack's CPU per
answer: 8.6 -> 13.1 ms without it, `bench/parts/load.py`). The values moto's DynamoDB hands over are
already the wire form (`{"S": "x"}`, `{"M": {...}}`), for which the walk returns a copy in shape member
order: `wire_copy` makes that copy. A binary, an unknown member or a wrong type goes through moto's own
serializer. `tests/integration/test_moto_speed.py` compares the bytes with plain moto's.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from baton.local.moto_fixes import patched

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

ATTRIBUTE_VALUE_SHAPE = "AttributeValue"


def wire_copy(value: Any) -> Any:
    """A copy of a plain wire-form attribute value (one member, no binary, all the way down), as moto's
    generic serializer writes it; None for anything else (then the generic serializer writes it)."""
    if type(value) is not dict or len(value) != 1:
        return None
    ((member, inner),) = value.items()
    kind = type(inner)
    if member in ("S", "N"):
        plain = kind is str
    elif member in ("NULL", "BOOL"):
        plain = kind is bool
    elif member in ("SS", "NS"):
        plain = kind is list and all(type(s) is str for s in inner)
        inner = list(inner) if plain else inner
    elif member == "M":
        plain = kind is dict and all(type(k) is str for k in inner)
        inner = {k: wire_copy(v) for k, v in inner.items()} if plain else inner
        plain = plain and None not in inner.values()
    elif member == "L":
        plain = kind is list
        inner = [wire_copy(v) for v in inner] if plain else inner
        plain = plain and None not in inner
    else:
        return None  # B/BS (base64 encoded on the way out) or an unknown member
    return {member: inner} if plain else None


def _structure(original: Callable[..., None], counter: list[int]) -> Callable[..., None]:
    def serialize_structure(self: Any, serialized: Any, value: Any, shape: Any, key: str) -> None:
        if key and shape.name == ATTRIBUTE_VALUE_SHAPE:
            copied = wire_copy(value)
            if copied is not None:
                counter[0] += 1
                self._default_serialize(serialized, copied, shape, key)
                return
        original(self, serialized, value, shape, key)

    serialize_structure._baton_fast = True  # type: ignore[attr-defined]
    return serialize_structure


FAST_VALUES = [0]  # how many attribute values took the fast path (tests count it)


@contextmanager
def fast_attribute_values() -> Iterator[None]:
    """While open, moto's JSON serializer writes plain DynamoDB attribute values by copying them."""
    from moto.core.serialize import BaseJSONSerializer

    if getattr(BaseJSONSerializer.__dict__["_serialize_type_structure"], "_baton_fast", False):
        yield
        return
    original = BaseJSONSerializer.__dict__["_serialize_type_structure"]
    with patched(BaseJSONSerializer, {"_serialize_type_structure": _structure(original, FAST_VALUES)}):
        yield
