"""Faster paths through moto's handling of an `UpdateExpression`, each giving moto's own result.

**Parsing.** moto parses every `UpdateExpression` twice per Update: the request handler parses it to
check its placeholders, the backend parses it again to apply it (the release of a gate, a wait and its
run updated in one transaction: four parses). The tree depends on the text alone, and neither reader
changes it (the handler only looks for placeholders; the backend's validator works on its own deep copy,
which moto's `Validator.__init__` makes), so `cached_update_parsing` keeps the tree per text (bounded).
A text that fails to parse is parsed (and fails) each time.

**Checks.** The backend then runs ten processors over that copy. The first three only check the tree
and hand every node back unchanged: at most one clause of each kind (`ActionCountValidator`, which
searches the node's whole subtree at every node: quadratic in the expression), no overlapping paths
(`OverlappingPathsValidator`, by the attribute names), no key attribute updated
(`UpdateHashRangeKeyValidator`, by the table's key attributes). Their verdict depends on the tree, the
attribute names and the table's keys alone, so `checked_updates_once` remembers which (tree, names,
keys) passed them and skips the three for those; a failure is never kept (it raises each time, as in
moto). The other seven (values, paths resolved against the item, functions, operations, types, empty
keys) depend on the item and run every time.
"""

from __future__ import annotations

import functools
import json
import threading
from collections import OrderedDict
from contextlib import ExitStack, contextmanager
from typing import TYPE_CHECKING, Any

from baton.local.moto_fixes import KeptPerKey, patched

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

CACHE_SIZE = 1024  # distinct texts (and (text, names, keys)) kept
PURE_CHECKS = 3  # moto's first three update processors: checks of the tree that change nothing


def _cached_update_parser(original: Callable[[Any, str], Any]) -> Callable[[Any, str], Any]:
    trees = KeptPerKey(CACHE_SIZE)

    @functools.wraps(original)
    def make(cls: Any, expression_str: str) -> Any:
        if type(expression_str) is not str:
            return original(cls, expression_str)
        return trees.get(expression_str, lambda: original(cls, expression_str))

    make._baton_cached = True  # type: ignore[attr-defined]
    return make


@contextmanager
def cached_update_parsing() -> Iterator[None]:
    """While open, moto parses each distinct update expression text once."""
    from moto.dynamodb.parsing.expressions import UpdateExpressionParser  # type: ignore[attr-defined]

    current = UpdateExpressionParser.__dict__["make"]  # a classmethod
    if getattr(current.__func__, "_baton_cached", False):
        yield
        return
    with patched(UpdateExpressionParser, {"make": classmethod(_cached_update_parser(current.__func__))}):
        yield


def _check_key(validator: Any) -> tuple[Any, str, tuple[str, ...]] | None:
    """What the three checks depend on: the tree moto was given, the names, the table's key attributes."""
    try:
        names = json.dumps(validator.expression_attribute_names, sort_keys=True)
    except (TypeError, ValueError):
        return None
    return validator._baton_tree, names, tuple(validator.table.table_key_attrs)


def _checked_once(original_init: Callable[..., None], original_validate: Callable[[Any], Any]) -> dict[str, Any]:
    from moto.dynamodb.parsing.validators import (
        ActionCountValidator,
        OverlappingPathsValidator,
        UpdateHashRangeKeyValidator,
    )

    pure = (ActionCountValidator, OverlappingPathsValidator, UpdateHashRangeKeyValidator)
    passed: OrderedDict[tuple[Any, str, tuple[str, ...]], bool] = OrderedDict()
    lock = threading.Lock()

    @functools.wraps(original_init)
    def init(self: Any, expression: Any, *args: Any, **kwargs: Any) -> None:
        original_init(self, expression, *args, **kwargs)
        self._baton_tree = expression  # the (cached) tree itself: the key holds it, so its id is never reused

    @functools.wraps(original_validate)
    def validate(self: Any) -> Any:
        if tuple(type(p) for p in self.processors[:PURE_CHECKS]) != pure:
            return original_validate(self)  # another moto's processors: its own validation
        key = _check_key(self)
        with lock:
            known = key is not None and key in passed
        node = self.node_to_validate
        if not known:
            for processor in self.processors[:PURE_CHECKS]:
                node = processor.traverse(node)
            if key is not None:
                with lock:
                    passed[key] = True
                    while len(passed) > CACHE_SIZE:
                        passed.popitem(last=False)
        for processor in self.processors[PURE_CHECKS:]:
            node = processor.traverse(node)
        return node

    validate._baton_checked = True  # type: ignore[attr-defined]
    return {"__init__": init, "validate": validate}


@contextmanager
def checked_updates_once() -> Iterator[None]:
    """While open, moto checks an update expression's shape once per (tree, names, table keys)."""
    from moto.dynamodb.parsing.validators import UpdateExpressionValidator, Validator

    if "validate" in UpdateExpressionValidator.__dict__:  # installed already (or moto defines its own)
        yield
        return
    for name, method in _checked_once(Validator.__init__, Validator.validate).items():
        setattr(UpdateExpressionValidator, name, method)  # over the methods it inherits from Validator
    try:
        yield
    finally:
        for name in ("__init__", "validate"):
            delattr(UpdateExpressionValidator, name)


@contextmanager
def update_expressions_once() -> Iterator[None]:
    """Both of the above, while open."""
    with ExitStack() as stack:
        stack.enter_context(cached_update_parsing())
        stack.enter_context(checked_updates_once())
        yield
