"""The `path=value` grammar an operator uses to edit an interrupt's state snapshot before resuming it.

Grammar of one edit (``--edit-state`` on the CLI, one element of ``stateEdits`` in the API)::

    edit     := path "=" value            split at the FIRST "=": keys cannot contain "="
    path     := ["$."] segment ("." segment)*
    segment  := key ("[" index "]")*
    key      := one or more characters other than ".", "[", "]"
    index    := decimal digits (0, 1, 2, ...; no sign)

Arrays are addressed either way:

* ``items[2].name=x`` - bracket form: ``[2]`` is always an array index; applied to anything that is not
  an array it is an error.
* ``items.2.name=x`` - dot form: a segment of only digits is an array index when the value it is applied
  to is an array, and an ordinary object key (``"2"``) when it is an object or missing.

The value is parsed as JSON when it is valid JSON (``true``, ``3``, ``null``, ``{"a":1}``, ``"quoted"``)
and otherwise kept as the raw string (``name=Ada`` sets the string ``"Ada"``). Non-finite numbers
(``NaN``, ``Infinity``, ``1e999``) are not JSON values, so they stay strings too. Surrounding whitespace
of the path is ignored; the value is taken as written.

Semantics: missing intermediate objects are created as empty objects. An edit may replace an existing
array element but never grows an array (an index past the end is an error), never indexes a non-array
and never descends into a scalar. Edits apply in order to a deep copy of the state, all or nothing:
the first failing edit raises :class:`~baton.errors.ValidationFailedError` and no result is produced.
"""

from __future__ import annotations

import copy
import hashlib
import json
import math
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from baton.domain.fields import MAX_JSON_DEPTH, json_text_depth
from baton.errors import ValidationFailedError

if TYPE_CHECKING:
    from collections.abc import Sequence

PathToken = str | int
"""A parsed path step: ``str`` is a dot segment (object key, or array index when all digits), ``int`` a
bracket index."""

_SEGMENT_RE = re.compile(r"(?P<key>[^\[\]]*)(?P<indices>(?:\[[^\[\]]*\])*)")
_INDEX_RE = re.compile(r"\[([^\[\]]*)\]")
_DIGITS_RE = re.compile(r"[0-9]+")
MAX_PATH_CHARS = 1024
MAX_PATH_SEGMENTS = 32  # with the value's own depth, the edited state stays within MAX_JSON_DEPTH
MAX_EDITS = 100


@dataclass(frozen=True, slots=True)
class StateEdit:
    """One parsed edit: the original text, the path tokens and the decoded value."""

    text: str
    path: tuple[PathToken, ...]
    value: Any

    @property
    def path_text(self) -> str:
        """The path in canonical form, e.g. ``config.items[2].name``."""
        return format_path(self.path)


def format_path(tokens: Sequence[PathToken]) -> str:
    """Render path tokens back to text: keys joined with dots, bracket indices as ``[n]``."""
    out: list[str] = []
    for token in tokens:
        if isinstance(token, int):
            out.append(f"[{token}]")
        else:
            out.append(f".{token}" if out else token)
    return "".join(out)


def parse_edit(text: str) -> StateEdit:
    """Parse one ``path=value`` edit; raises ValidationFailedError naming the edit when it is malformed."""
    if not isinstance(text, str):
        raise ValidationFailedError(
            f"state edit must be a string of the form path=value, got {type(text).__name__}",
            details={"edit": repr(text), "path": ""},
        )
    raw_path, sep, raw_value = text.partition("=")
    path_text = raw_path.strip()
    if not sep:
        raise _edit_error(text, path_text, "expected path=value (no '=' found)")
    if len(path_text) > MAX_PATH_CHARS:
        raise _edit_error(text[:80], path_text[:80], f"the path is longer than {MAX_PATH_CHARS} characters")
    tokens = _parse_path(path_text, text)
    if len(tokens) > MAX_PATH_SEGMENTS:
        raise _edit_error(text[:80], path_text[:80], f"the path has more than {MAX_PATH_SEGMENTS} segments")
    if json_text_depth(raw_value) > MAX_JSON_DEPTH - len(tokens):
        reason = f"the value is nested deeper than {MAX_JSON_DEPTH - len(tokens)} levels at this path"
        raise _edit_error(text[:80], path_text, reason)
    return StateEdit(text=text, path=tokens, value=_parse_value(raw_value))


def parse_edits(edits: Sequence[str]) -> list[StateEdit]:
    """Parse every edit, failing on the first malformed one."""
    if isinstance(edits, str):  # a lone string would otherwise be split into characters
        raise ValidationFailedError(
            "state edits must be a list of path=value strings, got a single string",
            details={"edit": edits, "path": ""},
        )
    if len(edits) > MAX_EDITS:
        raise ValidationFailedError(f"at most {MAX_EDITS} state edits at once", details={"path": ""})
    parsed: list[StateEdit] = []
    for index, text in enumerate(edits):
        try:
            parsed.append(parse_edit(text))
        except ValidationFailedError as exc:
            exc.details["index"] = index
            raise
    return parsed


def state_version(state: dict[str, Any] | None) -> str:
    """The version of a state snapshot: a digest of its canonical JSON. A resume names the version it was
    decided on (the snapshot the operator saw and previewed its edits against), so edits are never applied
    to a state that has changed since (another operator's resume, or another interrupt's snapshot)."""
    canonical = json.dumps(state or {}, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sv-" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:16]


def apply_state_edits(state: dict[str, Any], edits: Sequence[str]) -> dict[str, Any]:
    """Return a NEW state with every edit applied in order; the input is never mutated.

    All or nothing: when any edit is malformed or cannot be applied, ValidationFailedError is raised
    (``details`` carry ``edit``, its position ``index``, the failing ``path`` and a ``reason``) and
    nothing is applied.
    """
    if not isinstance(state, dict):
        raise ValidationFailedError(
            f"state must be a JSON object to be edited, got {_kind(state)}", details={"path": "$"}
        )
    parsed = parse_edits(edits)
    result: dict[str, Any] = copy.deepcopy(state)
    for index, edit in enumerate(parsed):
        try:
            _apply(result, edit)
        except ValidationFailedError as exc:
            exc.details["index"] = index
            raise
    return result


def _parse_path(path_text: str, text: str) -> tuple[PathToken, ...]:
    body = path_text[2:] if path_text.startswith("$.") else path_text
    if not body or body == "$":
        raise _edit_error(text, path_text, "the path is empty")
    tokens: list[PathToken] = []
    for segment in body.split("."):
        prefix = format_path(tokens)
        match = _SEGMENT_RE.fullmatch(segment)
        if match is None:
            raise _edit_error(text, _join(prefix, segment), f"malformed path segment {segment!r}")
        key = match.group("key")
        if not key:
            where = _join(prefix, segment) or path_text
            raise _edit_error(text, where, "empty path segment (a key is required before '.' or '[')")
        tokens.append(key)
        for raw_index in _INDEX_RE.findall(match.group("indices")):
            if not _DIGITS_RE.fullmatch(raw_index):
                where = f"{format_path(tokens)}[{raw_index}]"
                raise _edit_error(text, where, f"array index must be a non-negative integer, got {raw_index!r}")
            tokens.append(int(raw_index))
    return tuple(tokens)


def _join(prefix: str, segment: str) -> str:
    return f"{prefix}.{segment}" if prefix else segment


def _parse_value(raw: str) -> Any:
    try:
        return json.loads(raw, parse_constant=_reject_constant, parse_float=_finite_float)
    except ValueError:  # JSONDecodeError is a ValueError; so are the two rejections above
        return raw


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON value")


def _finite_float(text: str) -> float:
    number = float(text)
    if not math.isfinite(number):
        raise ValueError(f"{text} does not fit a finite number")
    return number


def _apply(root: dict[str, Any], edit: StateEdit) -> None:
    node: Any = root
    last = len(edit.path) - 1
    for depth, token in enumerate(edit.path):
        where = format_path(edit.path[: depth + 1])
        parent = format_path(edit.path[:depth]) or "$"
        if isinstance(node, dict):
            if isinstance(token, int):
                raise _edit_error(edit.text, where, f"{parent} is an object, not an array; use .key instead")
            if depth == last:
                node[token] = copy.deepcopy(edit.value)
                return
            if token not in node:
                node[token] = {}
            node = node[token]
        elif isinstance(node, list):
            if isinstance(token, str) and not _DIGITS_RE.fullmatch(token):
                raise _edit_error(edit.text, where, f"{parent} is an array; {token!r} is not an index")
            index = int(token)
            if index >= len(node):
                raise _edit_error(edit.text, where, f"index {index} is past the end of {parent} (length {len(node)})")
            if depth == last:
                node[index] = copy.deepcopy(edit.value)
                return
            node = node[index]
        else:
            raise _edit_error(
                edit.text, where, f"{parent} is {_kind(node)}, not an object or array; cannot descend into it"
            )


# How an error names a value's JSON kind, in lookup order (bool before int: a boolean is an int too).
_KIND_NAMES: tuple[tuple[type | tuple[type, ...], str], ...] = (
    (bool, "a boolean"),
    ((int, float), "a number"),
    (str, "a string"),
    (list, "an array"),
    (dict, "an object"),
)


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    return next((name for types, name in _KIND_NAMES if isinstance(value, types)), f"a {type(value).__name__}")


def _edit_error(text: str, path: str, reason: str) -> ValidationFailedError:
    return ValidationFailedError(
        f"state edit {text!r} failed at {path or '$'}: {reason}",
        details={"edit": text, "path": path or "$", "reason": reason},
    )
