"""What a `jsonSchema` must be before it is compiled: bounded in size, sane in its keywords, free of
`$ref` cycles that never consume data, and with patterns that cannot backtrack without end.

fastjsonschema evaluates `pattern` and `patternProperties` with Python's backtracking `re`, so a
pattern such as `^(a+)+$` takes time doubling with each character of the answer. A pattern is allowed
only inside a safe subset, refused at creation otherwise (a 400 naming the pattern):

* no backreferences, lookarounds or conditionals;
* no quantified part that itself holds a quantifier or an alternation of several characters (the
  nested and overlapping repeats behind exponential backtracking);
* at most `MAX_PATTERN_CHARS` characters and `MAX_UNBOUNDED_REPEATS` repeats with no small bound.

Every `pattern` string and `patternProperties` key anywhere in the schema document is checked, not only
those on the keywords' paths: a `$ref` may point at any object in the document (`{"$ref": "#/x", "x":
{...}}`, a definition's child, a `default`), and fastjsonschema compiles whatever it reaches. There is
no linear-time engine to hand (Python's `re` always backtracks; `google-re2` is not a dependency).

What is left can still cost polynomial time, about n^(r+1) steps for r unbounded repeats on a string of
n characters, so validation has a size budget: `pattern_subject_limit` is the longest string (or object
key) an answer may hold under such a schema, chosen so that n^(r+1) stays under `PATTERN_STEP_BUDGET`.
"""

from __future__ import annotations

import json
import math
import re
from re import _constants as sre_constants  # type: ignore[attr-defined]
from re import _parser as sre_parser  # type: ignore[attr-defined]
from typing import TYPE_CHECKING, Any, NoReturn
from urllib.parse import unquote

from baton.errors import BadRequestError, ValidationFailedError

if TYPE_CHECKING:
    from collections.abc import Iterator

MAX_SCHEMA_BYTES = 32 * 1024
MAX_PATTERN_CHARS = 256
MAX_UNBOUNDED_REPEATS = 3
SMALL_REPEAT = 32  # a repeat bounded by at most this many counts as bounded
PATTERN_STEP_BUDGET = 10**8  # about a few tenths of a second of `re` in the worst case

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
_REFUSED_OPCODES = frozenset(
    {sre_constants.GROUPREF, sre_constants.GROUPREF_EXISTS, sre_constants.ASSERT, sre_constants.ASSERT_NOT}
)
_REPEATS = frozenset({sre_constants.MAX_REPEAT, sre_constants.MIN_REPEAT, sre_constants.POSSESSIVE_REPEAT})


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
    """BadRequestError for a schema that is too large, has an insane keyword, a `$ref` cycle on one
    instance, or a pattern outside the safe subset. The schema's nesting depth was checked before."""
    size = len(json.dumps(json_schema, separators=(",", ":")).encode())
    if size > MAX_SCHEMA_BYTES:
        _refuse(f"jsonSchema is {size} bytes of compact JSON; the limit is {MAX_SCHEMA_BYTES}", "#")
    for where, node in iter_subschemas(json_schema):
        _check_keywords(node, where)
    for where, pattern in iter_patterns(json_schema):
        check_pattern(pattern, where)
    _check_ref_cycles(json_schema)


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


def check_pattern(pattern: Any, where: str) -> int:
    """The pattern's number of unbounded repeats; BadRequestError when it is outside the safe subset."""
    if not isinstance(pattern, str):
        _refuse(f"jsonSchema pattern at {where} must be a string", where)
    if len(pattern) > MAX_PATTERN_CHARS:
        _unsafe(pattern[:40] + "...", where, f"longer than {MAX_PATTERN_CHARS} characters")
    try:
        parsed = sre_parser.parse(pattern)
    except (re.error, OverflowError, RecursionError) as exc:
        _refuse(f"jsonSchema pattern {pattern!r} at {where} is not a valid regular expression: {exc}", where)
    unbounded = _count_unbounded(parsed, pattern, where, inside_repeat=False)
    if unbounded > MAX_UNBOUNDED_REPEATS:
        _unsafe(pattern, where, f"{unbounded} unbounded repeats; at most {MAX_UNBOUNDED_REPEATS} are allowed")
    return unbounded


def _count_unbounded(items: Any, pattern: str, where: str, *, inside_repeat: bool) -> int:
    count = 0
    for opcode, argument in items:
        if opcode in _REFUSED_OPCODES:
            _unsafe(pattern, where, "backreferences, lookarounds and conditionals are not allowed")
        if opcode in _REPEATS:
            _low, high, body = argument
            if inside_repeat and high > 1:
                _unsafe(pattern, where, "a repeated part may not itself contain a repeat (nested quantifiers)")
            repeats = high > 1
            count += 1 if repeats and (high == sre_constants.MAXREPEAT or high > SMALL_REPEAT) else 0
            count += _count_unbounded(body, pattern, where, inside_repeat=inside_repeat or repeats)
        elif opcode == sre_constants.BRANCH:
            if inside_repeat:
                _unsafe(pattern, where, "a repeated part may not contain an alternation (use a character class)")
            count += max((_count_unbounded(b, pattern, where, inside_repeat=False) for b in argument[1]), default=0)
        elif opcode == sre_constants.SUBPATTERN:
            count += _count_unbounded(argument[-1], pattern, where, inside_repeat=inside_repeat)
        elif opcode == sre_constants.ATOMIC_GROUP:
            count += _count_unbounded(argument, pattern, where, inside_repeat=inside_repeat)
    return count


def pattern_subject_limit(json_schema: dict[str, Any]) -> int | None:
    """The longest string an answer may hold under this schema's patterns (None: no budget needed)."""
    repeats = [check_pattern(pattern, where) for where, pattern in iter_patterns(json_schema)]
    worst = max(repeats, default=0)
    return int(PATTERN_STEP_BUDGET ** (1 / (worst + 1))) if worst else None


def check_subject_sizes(value: Any, limit: int) -> None:
    """ValidationFailedError when a string or object key of `value` is longer than `limit`."""
    stack: list[tuple[Any, str]] = [(value, "$")]
    while stack:
        node, path = stack.pop()
        if isinstance(node, str) and len(node) > limit:
            _too_long(path, len(node), limit)
        elif isinstance(node, dict):
            for key, child in node.items():
                if isinstance(key, str) and len(key) > limit:
                    _too_long(path, len(key), limit)
                stack.append((child, f"{path}.{key}"))
        elif isinstance(node, list):
            stack.extend((child, f"{path}[{n}]") for n, child in enumerate(node))


def _too_long(path: str, size: int, limit: int) -> NoReturn:
    reason = f"is {size} characters; under this schema's patterns the limit is {limit}"
    raise ValidationFailedError(f"answer at {path} {reason}", details={"path": path, "reason": reason, "rule": "size"})


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


def _unsafe(pattern: str, where: str, reason: str) -> NoReturn:
    # A 422, like a value that breaks a rule: the schema is well-formed JSON Schema, but not allowed here.
    raise ValidationFailedError(
        f"jsonSchema pattern {pattern!r} at {where} could take exponential time: {reason}",
        details={"field": "jsonSchema", "path": where, "reason": reason, "rule": "pattern"},
    )


def _refuse(message: str, where: str) -> NoReturn:
    raise BadRequestError(message, details={"field": "jsonSchema", "path": where})
