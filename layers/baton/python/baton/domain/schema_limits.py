"""What a `jsonSchema` must be before it is compiled: bounded in size, sane in its keywords, free of
`$ref` cycles that never consume data, and with patterns the linear-time engine runs.

Every `pattern` string and `patternProperties` key is matched by RE2 (`baton.domain.linear_patterns`),
whose time is linear in the text whatever the pattern, so `^(a+)+$` is fine. A pattern RE2 cannot run
(a backreference, a lookaround, a conditional, or one past its memory budget) is refused at creation with
a 422 naming the pattern and why; one that is not a regular expression at all, with a 400. Every such
string anywhere in the schema document is checked, not only those on the keywords' paths: a `$ref` may
point at any object in the document (`{"$ref": "#/x", "x": {...}}`, a definition's child, a `default`).
"""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING, Any, NoReturn
from urllib.parse import unquote

from baton.domain.linear_patterns import PatternError, linear_pattern
from baton.errors import BadRequestError, ValidationFailedError

if TYPE_CHECKING:
    from collections.abc import Iterator

MAX_SCHEMA_BYTES = 32 * 1024
# RE2 instructions of all of a schema's patterns (~16 bytes each: some 16 MB), so the validators kept in
# memory stay bounded: a few patterns with large Unicode classes, or hundreds of ordinary ones.
MAX_SCHEMA_PROGRAM_SIZE = 1_000_000

SUBSCHEMA_MAPS = ("properties", "patternProperties", "definitions", "$defs", "dependencies")
SUBSCHEMA_LISTS = ("allOf", "anyOf", "oneOf", "items")
SUBSCHEMA_ONE = (
    "not",
    "items",
    "additionalItems",
    "additionalProperties",
    "contains",
    "propertyNames",
    "if",
    "then",
    "else",
)
# Keywords whose subschemas apply to the same instance: a $ref cycle through only these never ends.
_SAME_INSTANCE_LISTS = ("allOf", "anyOf", "oneOf")
_SAME_INSTANCE_ONE = ("not", "if", "then", "else")
_NON_NEGATIVE_INTEGERS = ("minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties")
_NUMBERS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf")
_TYPES = frozenset({"string", "number", "integer", "boolean", "object", "array", "null"})

SUPPORTED_DRAFTS = "draft-04, draft-06 and draft-07"
_UNSUPPORTED_DRAFTS = ("2019-09", "2020-12")
# Keywords of 2019-09/2020-12 that fastjsonschema would silently ignore.
_UNSUPPORTED_KEYWORDS = frozenset(
    {
        "prefixItems",
        "dependentRequired",
        "dependentSchemas",
        "unevaluatedProperties",
        "unevaluatedItems",
        "minContains",
        "maxContains",
        "$recursiveRef",
        "$recursiveAnchor",
        "$dynamicRef",
        "$dynamicAnchor",
    }
)


def check_supported_draft(json_schema: dict[str, Any]) -> None:
    """BadRequestError for a schema written for a draft fastjsonschema does not implement."""
    declared = json_schema.get("$schema")
    if isinstance(declared, str) and any(d in declared for d in _UNSUPPORTED_DRAFTS):
        raise BadRequestError(
            f"jsonSchema $schema {declared!r} is not supported; supported are {SUPPORTED_DRAFTS} "
            "(omit $schema for draft-07)",
            details={"field": "jsonSchema", "path": "$schema", "supported": ["draft-04", "draft-06", "draft-07"]},
        )
    _walk_keywords(json_schema, "#")


def _walk_keywords(node: Any, where: str) -> None:
    if not isinstance(node, dict):
        return
    for keyword in node:
        if keyword in _UNSUPPORTED_KEYWORDS:
            raise BadRequestError(
                f"jsonSchema keyword {keyword!r} at {where} belongs to JSON Schema 2019-09/2020-12, which is not "
                f"supported; supported are {SUPPORTED_DRAFTS} (e.g. use items as a list instead of prefixItems, "
                "dependencies instead of dependentRequired/dependentSchemas)",
                details={"field": "jsonSchema", "path": f"{where}/{keyword}", "keyword": keyword},
            )
    for keyword in SUBSCHEMA_MAPS:
        children = node.get(keyword)
        if isinstance(children, dict):
            for name, child in children.items():
                _walk_keywords(child, f"{where}/{keyword}/{name}")
    for keyword in SUBSCHEMA_LISTS:
        children = node.get(keyword)
        if isinstance(children, list):
            for n, child in enumerate(children):
                _walk_keywords(child, f"{where}/{keyword}/{n}")
    for keyword in SUBSCHEMA_ONE:
        _walk_keywords(node.get(keyword), f"{where}/{keyword}")


def check_schema_limits(json_schema: dict[str, Any]) -> None:
    """BadRequestError for a schema that is too large, has an insane keyword or a `$ref` cycle on one
    instance. The schema's nesting depth, and its patterns (`check_patterns`), were checked before."""
    size = len(json.dumps(json_schema, separators=(",", ":")).encode())
    if size > MAX_SCHEMA_BYTES:
        _refuse(f"jsonSchema is {size} bytes of compact JSON; the limit is {MAX_SCHEMA_BYTES}", "#")
    for where, node in iter_subschemas(json_schema):
        _check_keywords(node, where)
    _check_ref_cycles(json_schema)


def check_patterns(json_schema: dict[str, Any]) -> None:
    """Every pattern compiled by RE2, as the validator will: ValidationFailedError (422) naming one RE2
    cannot run, BadRequestError (400) naming one that is not a regular expression."""
    sizes: dict[str, int] = {}
    for where, pattern in iter_patterns(json_schema):
        try:
            sizes[pattern] = linear_pattern(pattern).program_size
        except PatternError as err:
            if err.not_a_regex:
                _refuse(f"jsonSchema pattern {pattern!r:.80} at {where} is not a regular expression: {err}", where)
            _not_linear(
                pattern,
                where,
                f"the linear-time engine (RE2) cannot run it: {err.reason} (RE2 has no backreferences, lookarounds "
                "or conditionals: they are what makes matching take exponential time)",
            )
        if sum(sizes.values()) > MAX_SCHEMA_PROGRAM_SIZE:
            _not_linear(
                pattern,
                where,
                f"the schema's patterns together compile to more than {MAX_SCHEMA_PROGRAM_SIZE} RE2 instructions "
                "(memory kept for the schema): use fewer or smaller ones (e.g. bounded repeats of large classes)",
            )


def iter_subschemas(node: Any, where: str = "#") -> Iterator[tuple[str, dict[str, Any]]]:
    """Every object subschema with its JSON pointer, the root first."""
    if not isinstance(node, dict):
        return
    yield where, node
    for keyword in SUBSCHEMA_MAPS:
        children = node.get(keyword)
        if isinstance(children, dict):
            for name, child in children.items():
                yield from iter_subschemas(child, f"{where}/{keyword}/{name}")
    for keyword in SUBSCHEMA_LISTS:
        children = node.get(keyword)
        if isinstance(children, list):
            for n, child in enumerate(children):
                yield from iter_subschemas(child, f"{where}/{keyword}/{n}")
    for keyword in SUBSCHEMA_ONE:
        yield from iter_subschemas(node.get(keyword), f"{where}/{keyword}")


def _check_keywords(node: dict[str, Any], where: str) -> None:
    for keyword in _NON_NEGATIVE_INTEGERS:
        value = node.get(keyword)
        if keyword in node and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
            _refuse(f"jsonSchema {keyword} at {where} must be a non-negative integer, got {value!r:.40}", where)
    for keyword in _NUMBERS:
        value = node.get(keyword)
        if (
            keyword in node
            and not _is_finite_number(value)
            and not (keyword.startswith("exclusive") and value in (True, False))
        ):
            _refuse(f"jsonSchema {keyword} at {where} must be a number, got {value!r:.40}", where)
    if "multipleOf" in node and not node["multipleOf"] > 0:
        _refuse(f"jsonSchema multipleOf at {where} must be greater than 0", where)
    _check_type_keyword(node.get("type"), where)
    required = node.get("required")
    if isinstance(required, list) and not all(isinstance(name, str) for name in required):
        _refuse(f"jsonSchema required at {where} must list property names (strings)", where)
    if "pattern" in node and not isinstance(node["pattern"], str):
        _refuse(f"jsonSchema pattern at {where}/pattern must be a string", f"{where}/pattern")


def iter_patterns(json_schema: dict[str, Any]) -> Iterator[tuple[str, str]]:
    """Every `pattern` string and `patternProperties` key in the whole document, with its JSON pointer.

    Walks every object, not only the keywords' subschemas: a `$ref` can reach any of them, so one the
    walk skipped would be compiled and run unchecked. A `pattern` that is not a string is skipped here
    (outside a subschema it may be plain data, e.g. a property named "pattern").
    """
    stack: list[tuple[Any, str]] = [(json_schema, "#")]
    while stack:
        node, where = stack.pop()
        if isinstance(node, list):
            stack.extend((child, f"{where}/{n}") for n, child in enumerate(node))
            continue
        if not isinstance(node, dict):
            continue
        if isinstance(node.get("pattern"), str):
            yield f"{where}/pattern", node["pattern"]
        pattern_properties = node.get("patternProperties")
        if isinstance(pattern_properties, dict):
            yield from ((f"{where}/patternProperties/{_pointer_part(k)}", k) for k in pattern_properties)
        stack.extend((child, f"{where}/{_pointer_part(key)}") for key, child in node.items())


def _pointer_part(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


def _check_type_keyword(kind: Any, where: str) -> None:
    kinds = kind if isinstance(kind, list) else [kind] if kind is not None else []
    if not all(isinstance(k, str) and k in _TYPES for k in kinds):
        _refuse(f"jsonSchema type at {where} must be one of {', '.join(sorted(_TYPES))} (or a list of them)", where)


def _is_finite_number(value: Any) -> bool:
    return not isinstance(value, bool) and isinstance(value, int | float) and math.isfinite(value)


def _check_ref_cycles(root: dict[str, Any]) -> None:
    """Refuse a `$ref` chain that comes back to where it started without descending into the data
    (`{"$ref": "#"}`, or two definitions referring to each other through allOf): validating would never end."""
    nodes = {id(node): (where, node) for where, node in iter_subschemas(root)}
    state: dict[int, int] = {}  # 1 = on the current path, 2 = done
    for start in nodes:
        if state.get(start):
            continue
        stack: list[tuple[int, Iterator[int]]] = [(start, iter(_same_instance_edges(root, nodes[start][1])))]
        state[start] = 1
        while stack:
            current, edges = stack[-1]
            following = next(edges, None)
            if following is None:
                state[current] = 2
                stack.pop()
            elif state.get(following) == 1:
                where = nodes[following][0] if following in nodes else "#"
                _refuse(f"jsonSchema $ref at {where} refers back to itself without consuming data", where)
            elif not state.get(following) and following in nodes:
                state[following] = 1
                stack.append((following, iter(_same_instance_edges(root, nodes[following][1]))))


def _same_instance_edges(root: dict[str, Any], node: dict[str, Any]) -> Iterator[int]:
    ref = node.get("$ref")
    if isinstance(ref, str):
        target = _resolve_pointer(root, ref)
        if isinstance(target, dict):
            yield id(target)
    for keyword in _SAME_INSTANCE_LISTS:
        children = node.get(keyword)
        if isinstance(children, list):
            yield from (id(c) for c in children if isinstance(c, dict))
    for keyword in _SAME_INSTANCE_ONE:
        child = node.get(keyword)
        if isinstance(child, dict):
            yield id(child)


def _resolve_pointer(root: dict[str, Any], ref: str) -> Any:
    """The subschema a local `#...` pointer names (None for other refs, which fastjsonschema resolves)."""
    if not ref.startswith("#"):
        return None
    node: Any = root
    for part in [p for p in unquote(ref[1:]).split("/") if p]:
        key = part.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and key in node:
            node = node[key]
        elif isinstance(node, list) and key.isdigit() and int(key) < len(node):
            node = node[int(key)]
        else:
            return None
    return node


def _not_linear(pattern: str, where: str, reason: str) -> NoReturn:
    # A 422, like a value that breaks a rule: the schema is well-formed JSON Schema, but not allowed here.
    raise ValidationFailedError(
        f"jsonSchema pattern {pattern!r:.80} at {where} is refused: {reason}",
        details={"field": "jsonSchema", "path": where, "reason": reason, "rule": "pattern"},
    )


def _refuse(message: str, where: str) -> NoReturn:
    raise BadRequestError(message, details={"field": "jsonSchema", "path": where})
