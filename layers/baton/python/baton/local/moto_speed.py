"""Faster paths through moto's per-call work, each giving the same result as moto's own code.

**Item values in responses.** moto (5.2) writes every JSON response by walking the operation's output
shape with a generic serializer: for each member of each structure it asks an attribute picker, which
builds six alias providers and tries every name they offer. A DynamoDB `AttributeValue` is a structure
of ten members, so one item of twenty attributes costs ~200 picker calls, and a `Query` returning a
run's items spent more time in the serializer than in DynamoDB itself (~30% of an answer through the
local stack, profiled).

The item values moto's DynamoDB handlers return are already the wire form: a dict such as `{"S": "x"}`
or `{"M": {"a": {"N": "1"}}}`. For those the generic walk returns a copy of the same dict (the picker
finds each member by its own name, a string member is `str()` of a string, a boolean member is the
boolean, a map or list recurses), so `fast_attribute_values` hands such a value over as that copy, in
the shape's member order. Anything else (a binary `B`/`BS`, which is base64 encoded on the way out, an
unexpected key or type, a None) goes through moto's own serializer unchanged. The response JSON is the
same byte for byte (`tests/integration/test_moto_speed.py` compares them).

**Condition expressions.** moto lexes every `ConditionExpression`, `FilterExpression` and
`KeyConditionExpression` character by character on every call (~20 lexings an answer, each building its
token table anew). The tokens depend on the expression text alone, so `cached_condition_lexing` keeps
them per text (bounded) and hands each parse fresh nodes, as a new lexing would. The parse after the
lexing (paths, functions, precedence, then the tree of operations) depends on the text, the attribute
names and the attribute values alone, and the tree is only read afterwards (an operation's `expr(item)`
evaluates it against an item), so `cached_condition_parsing` keeps the tree per (text, names, values)
(bounded; values as their JSON text, a binary value is never kept) and gives each parse the names and
values it found, as moto's own parse would. A text that fails to parse is parsed (and fails) each time.

**Update expressions** are parsed once per text and checked once per text: `baton.local.moto_updates`.

**Item size.** moto checks DynamoDB's 400 KB item limit as it builds an item: each attribute set into the
item's `LimitedSizeDict` sums the sizes of every attribute already in it, so building an item of n
attributes computes ~n²/2 attribute sizes (an interaction of 30 attributes: ~450, on every put and every
transaction). The sizes only add up, so the limit is passed at some attribute exactly when the whole
item passes it: `item_size_once` builds the item with one running total (each size computed once) and
raises moto's own `ItemSizeTooLarge` when it is over, as moto does.

**Handler methods.** Every moto request lists its handler class's methods with `inspect.getmembers` to
check the action exists; `cached_handler_methods` keeps that list per class, recomputed when the class
(or a base) gains or loses an attribute.
"""

from __future__ import annotations

import functools
import json
import threading
from collections import OrderedDict, deque
from contextlib import ExitStack, contextmanager
from typing import TYPE_CHECKING, Any

from baton.local.moto_fixes import patched
from baton.local.moto_updates import update_expressions_once

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

ATTRIBUTE_VALUE_SHAPE = "AttributeValue"
# The members of `AttributeValue` whose wire value is the value itself (not a blob), in shape order.
_MEMBER_ORDER = ("S", "N", "SS", "NS", "M", "L", "NULL", "BOOL")


def wire_copy(value: Any) -> Any:
    """The value as moto's generic serializer would write it, when it is a plain wire-form attribute
    value (one member, no binary, all the way down); None when it is not (then the generic serializer
    writes it)."""
    if type(value) is not dict or len(value) != 1:
        return None  # a valid value has one member; with more, the member order would matter: the generic path
    copied: dict[str, Any] = {}
    for member in _MEMBER_ORDER:
        if member not in value:
            continue
        inner = _member_copy(member, value[member])
        if inner is None:
            return None
        copied[member] = inner
    return copied if len(copied) == len(value) else None  # an unknown (or B/BS) key: the generic path


def _string(inner: Any) -> Any:
    return inner if type(inner) is str else None


def _boolean(inner: Any) -> Any:
    return inner if type(inner) is bool else None


def _string_set(inner: Any) -> Any:
    if type(inner) is not list or any(type(s) is not str for s in inner):
        return None
    return list(inner)


def _map(inner: Any) -> Any:
    if type(inner) is not dict:
        return None
    mapped = {}
    for key, item in inner.items():
        copied = wire_copy(item)
        if copied is None or type(key) is not str:
            return None
        mapped[key] = copied
    return mapped


def _list(inner: Any) -> Any:
    if type(inner) is not list:
        return None
    listed = []
    for item in inner:
        copied = wire_copy(item)
        if copied is None:
            return None
        listed.append(copied)
    return listed


_COPIERS: dict[str, Callable[[Any], Any]] = {
    "S": _string,
    "N": _string,
    "SS": _string_set,
    "NS": _string_set,
    "M": _map,
    "L": _list,
    "NULL": _boolean,
    "BOOL": _boolean,
}


def _member_copy(member: str, inner: Any) -> Any:
    return _COPIERS[member](inner)


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


LEX_CACHE_SIZE = 512  # distinct expression texts kept (Baton's code uses a few dozen)
LEXINGS = [0]  # how many expressions were lexed by moto's own lexer (tests count it)


def _cached_lexer(original: Callable[[Any], Any]) -> Callable[[Any], Any]:
    cache: OrderedDict[str, tuple[Any, ...]] = OrderedDict()
    lock = threading.Lock()

    @functools.wraps(original)
    def lex_condition_expression(self: Any) -> Any:
        text = self.condition_expression
        with lock:
            tokens = cache.get(text)
            if tokens is not None:
                cache.move_to_end(text)
        if tokens is None:
            LEXINGS[0] += 1
            tokens = tuple(original(self))
            with lock:
                cache[text] = tokens
                while len(cache) > LEX_CACHE_SIZE:
                    cache.popitem(last=False)
        # a lexed node is a namedtuple whose `children` list is always empty: each parse gets its own
        return deque(node._replace(children=[]) for node in tokens)

    lex_condition_expression._baton_cached = True  # type: ignore[attr-defined]
    return lex_condition_expression


@contextmanager
def cached_condition_lexing() -> Iterator[None]:
    """While open, moto lexes each distinct condition expression text once."""
    from moto.dynamodb.comparisons import ConditionExpressionParser

    current = ConditionExpressionParser.__dict__["_lex_condition_expression"]
    if getattr(current, "_baton_cached", False):
        yield
        return
    with patched(ConditionExpressionParser, {"_lex_condition_expression": _cached_lexer(current)}):
        yield


PARSE_CACHE_SIZE = 1024  # distinct (text, names, values) kept
PARSES = [0]  # how many condition expressions moto parsed itself (tests count it)


def _parse_key(parser: Any) -> tuple[str, str, str] | None:
    """What a parse depends on, as hashable text; None when a value is not JSON (a binary): not kept."""
    try:
        names = json.dumps(parser.expression_attribute_names)
        values = json.dumps(parser.expression_attribute_values)
    except (TypeError, ValueError):
        return None
    return str(parser.condition_expression), names, values


def _cached_parser(original: Callable[[Any], Any]) -> Callable[[Any], Any]:
    cache: OrderedDict[tuple[str, str, str], tuple[Any, tuple[str, ...], tuple[str, ...]]] = OrderedDict()
    lock = threading.Lock()

    @functools.wraps(original)
    def parse(self: Any) -> Any:
        key = _parse_key(self) if self.condition_expression else None
        if key is None:
            return original(self)
        with lock:
            kept = cache.get(key)
            if kept is not None:
                cache.move_to_end(key)
        if kept is None:
            PARSES[0] += 1
            names_before, values_before = len(self.expr_attr_names_found), len(self.expr_attr_values_found)
            given = self.expression_attribute_values
            # the kept tree holds the values it compares with: its own copy, not the caller's request
            self.expression_attribute_values = json.loads(key[2])
            try:
                tree = original(self)
            finally:
                self.expression_attribute_values = given
            kept = (
                tree,
                tuple(self.expr_attr_names_found[names_before:]),
                tuple(self.expr_attr_values_found[values_before:]),
            )
            with lock:
                cache[key] = kept
                while len(cache) > PARSE_CACHE_SIZE:
                    cache.popitem(last=False)
            return tree
        self.expr_attr_names_found.extend(kept[1])
        self.expr_attr_values_found.extend(kept[2])
        return kept[0]

    parse._baton_cached = True  # type: ignore[attr-defined]
    return parse


@contextmanager
def cached_condition_parsing() -> Iterator[None]:
    """While open, moto parses each distinct (expression, names, values) once."""
    from moto.dynamodb.comparisons import ConditionExpressionParser

    current = ConditionExpressionParser.__dict__["parse"]
    if getattr(current, "_baton_cached", False):
        yield
        return
    with patched(ConditionExpressionParser, {"parse": _cached_parser(current)}):
        yield


ITEM_SIZE_LIMIT = 405000  # moto's own limit (moto/dynamodb/models/dynamo_type.py LimitedSizeDict)


def _item_init(original: Callable[..., None]) -> Callable[..., None]:
    from moto.dynamodb.exceptions import ItemSizeTooLarge
    from moto.dynamodb.models.dynamo_type import DynamoType, LimitedSizeDict
    from moto.dynamodb.models.utilities import bytesize

    @functools.wraps(original)
    def item_init(self: Any, hash_key: Any, range_key: Any, attrs: dict[str, Any]) -> None:
        self.hash_key = hash_key
        self.range_key = range_key
        self.attrs = built = LimitedSizeDict.__new__(LimitedSizeDict)
        dict.__init__(built)
        total = 0
        for key, value in attrs.items():
            typed = DynamoType(value)
            total += bytesize(key) + typed.size()
            if total > ITEM_SIZE_LIMIT:
                raise ItemSizeTooLarge
            dict.__setitem__(built, key, typed)

    item_init._baton_fast = True  # type: ignore[attr-defined]
    return item_init


@contextmanager
def item_size_once() -> Iterator[None]:
    """While open, moto sizes each attribute of an item it builds once, not once per later attribute."""
    from moto.dynamodb.models.dynamo_type import Item

    current = Item.__dict__["__init__"]
    if getattr(current, "_baton_fast", False):
        yield
        return
    with patched(Item, {"__init__": _item_init(current)}):
        yield


def _cached_method_names(original: Callable[[object], list[str]]) -> Callable[[object], list[str]]:
    cache: dict[object, tuple[tuple[int, ...], list[str]]] = {}

    def method_names_from_class(clazz: object) -> list[str]:
        mro = getattr(clazz, "__mro__", ())
        shape = tuple(len(vars(klass)) for klass in mro)
        known = cache.get(clazz)
        if known is not None and known[0] == shape:
            return list(known[1])
        names = original(clazz)
        cache[clazz] = (shape, names)
        return list(names)

    method_names_from_class._baton_cached = True  # type: ignore[attr-defined]
    return method_names_from_class


@contextmanager
def cached_handler_methods() -> Iterator[None]:
    """While open, moto lists a response handler class's methods once (until the class changes)."""
    from moto.core import responses

    current = responses.__dict__["method_names_from_class"]
    if getattr(current, "_baton_cached", False):
        yield
        return
    with patched(responses, {"method_names_from_class": _cached_method_names(current)}):
        yield


@contextmanager
def moto_fast_paths() -> Iterator[None]:
    """All of the above, while open."""
    with ExitStack() as stack:
        stack.enter_context(fast_attribute_values())
        stack.enter_context(cached_condition_lexing())
        stack.enter_context(cached_condition_parsing())
        stack.enter_context(update_expressions_once())
        stack.enter_context(item_size_once())
        stack.enter_context(cached_handler_methods())
        yield
