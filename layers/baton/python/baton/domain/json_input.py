"""JSON from outside, refused at the door when it holds what Baton cannot keep or show again.

Every door that parses a JSON body (the API's resolver for every route, the SDK's and the CLI's
included; the MCP endpoint) calls `load_json_input`, so a value that would be stored and then break
every read (a lone UTF-16 surrogate cannot be encoded as UTF-8: each listing showing it was a 502)
or break on the way in (a 5,000-digit integer is past Python's int-from-string limit; NaN and
Infinity are not JSON and DynamoDB has no such number) is a 422 naming where it is.
"""

from __future__ import annotations

import json
import math
import re
from functools import partial
from typing import Any

from baton.errors import ValidationFailedError

# DynamoDB numbers: 38 significant digits, magnitudes in [1E-130, 1E126).
MAX_INTEGER_DIGITS = 38
MAX_NUMBER_MAGNITUDE = 1e126
MIN_NUMBER_MAGNITUDE = 1e-130
MAX_PROBLEMS = 10  # enough to fix a request by; a body full of them is not listed whole
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")  # json.loads joins valid pairs: any left is alone
# Where a surrogate can come from in the text (itself, or its escape): the walk runs only then, or on a
# refused number (the walk is 5x the parse of a 250 KB body; this search a fifth of it)
_MAYBE_SURROGATE = re.compile("[\ud800-\udfff]|\\\\u[dD][89a-fA-F]")


class _Refused:
    """A parsed value Baton refuses; the walk after the parse says where it is."""

    __slots__ = ("problem",)

    def __init__(self, problem: str) -> None:
        self.problem = problem


def _refuse(refused: list[_Refused], problem: str) -> _Refused:
    refused.append(_Refused(problem))
    return refused[-1]


def _integer(refused: list[_Refused], text: str) -> int | _Refused:
    digits = len(text.lstrip("-"))
    if digits > MAX_INTEGER_DIGITS:
        return _refuse(refused, f"an integer of {digits} digits; at most {MAX_INTEGER_DIGITS} are kept")
    return int(text)


def _number(refused: list[_Refused], text: str) -> float | _Refused:
    value = float(text)
    magnitude = abs(value)
    if not math.isfinite(value) or magnitude >= MAX_NUMBER_MAGNITUDE or 0 < magnitude < MIN_NUMBER_MAGNITUDE:
        return _refuse(refused, f"{text[:40]} is out of range: numbers are within 1E-130 and 1E126 in magnitude")
    return value


def _constant(refused: list[_Refused], name: str) -> _Refused:
    return _refuse(refused, f"{name} is not a JSON number")


def _text_problem(text: str) -> str | None:
    found = _LONE_SURROGATE.search(text)
    if found is None:
        return None
    return f"not valid Unicode: a lone surrogate U+{ord(found.group()):04X} at character {found.start()}"


def _problems(value: Any) -> list[dict[str, str]]:
    """Every refused value and invalid text (keys included), by path: `a.0.b`, `$` for the whole."""
    problems: list[dict[str, str]] = []
    stack: list[tuple[tuple[str, ...], Any]] = [((), value)]
    while stack and len(problems) < MAX_PROBLEMS:
        path, item = stack.pop()
        problem: str | None = None
        if isinstance(item, _Refused):
            problem = item.problem
        elif isinstance(item, str):
            problem = _text_problem(item)
        elif isinstance(item, dict):
            for key, child in reversed(item.items()):
                # the path is shown back: a bad key appears escaped, as valid text
                segment = key.encode("utf-8", "backslashreplace").decode("utf-8")
                key_problem = _text_problem(key)
                if key_problem is not None:
                    problems.append({"path": ".".join((*path, segment)), "problem": f"the key is {key_problem}"})
                stack.append(((*path, segment), child))
        elif isinstance(item, list):
            stack.extend(((*path, str(i)), child) for i, child in reversed(list(enumerate(item))))
        if problem is not None:
            problems.append({"path": ".".join(path) or "$", "problem": problem})
    return problems


def with_valid_text(value: Any) -> Any:
    """`value` (parsed JSON) with each lone surrogate, in strings and keys, replaced by U+FFFD: how an
    item stored before the door refused them is shown (its text marked invalid), not a broken read."""
    if isinstance(value, str):
        return _LONE_SURROGATE.sub("\ufffd", value)
    if isinstance(value, dict):
        return {with_valid_text(k): with_valid_text(v) for k, v in value.items()}
    if isinstance(value, list):
        return [with_valid_text(v) for v in value]
    return value


def load_json_input(text: str) -> Any:
    """`text` parsed, or ValidationFailedError naming each refused value's path.
    A syntax error is json.JSONDecodeError, as from json.loads: each door words its own."""
    refused: list[_Refused] = []
    value = json.loads(
        text,
        parse_int=partial(_integer, refused),
        parse_float=partial(_number, refused),
        parse_constant=partial(_constant, refused),
    )
    if not refused and _MAYBE_SURROGATE.search(text) is None:
        return value
    problems = _problems(value)
    if problems:
        summary = "; ".join(f"{p['path']}: {p['problem']}" for p in problems)
        raise ValidationFailedError(f"invalid request: {summary}", details={"problems": problems})
    return value
