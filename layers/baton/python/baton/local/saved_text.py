"""Saved local data repaired on load: text that is not valid Unicode (a lone surrogate, which the API
stored before its door refused them, `baton.domain.json_input`) becomes U+FFFD, in a string attribute or
in the JSON text one holds (a request, an answer, an event's data); how many items needed it is logged
once (`baton.local.persist.load` calls it)."""

from __future__ import annotations

import json
import logging
import re
from typing import Any

from baton.domain.json_input import with_valid_text

log = logging.getLogger("baton")

# A surrogate's escape in JSON text (`\ud800`): where a lone one may hide in an attribute holding JSON.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def may_hold_invalid_text(saved_json: str) -> bool:
    """Whether a saved file's text (ASCII JSON: every surrogate in it is written as its escape) may hold
    a lone surrogate; `repaired` walks the items only then (a second per 20,000 items, this a few ms)."""
    return _SURROGATE_ESCAPE.search(saved_json) is not None


def _valid_text(text: str) -> str:
    """`text` with each lone surrogate as U+FFFD, those in the JSON it may hold included (written back
    compact: every reader parses it)."""
    text = with_valid_text(text)
    if not _SURROGATE_ESCAPE.search(text):
        return text
    try:
        held = json.loads(text)
    except ValueError:
        return text  # not JSON: the escape is plain text
    valid = with_valid_text(held)
    return json.dumps(valid, separators=(",", ":")) if valid != held else text


def _valid_attribute(value: Any) -> Any:
    """A DynamoDB JSON value with valid text all through (strings, string sets, map keys, nested values)."""
    if isinstance(value, str):
        return _valid_text(value)
    if isinstance(value, list):
        return [_valid_attribute(v) for v in value]
    if isinstance(value, dict):
        return {_valid_text(k): _valid_attribute(v) for k, v in value.items()}
    return value  # numbers are text too, but never hold a surrogate; binary stays bytes


def repaired(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The saved items with valid text; how many needed it is logged once (nothing when none did)."""
    fixed = [_valid_attribute(attrs) for attrs in items]
    count = sum(1 for before, after in zip(items, fixed, strict=True) if before != after)
    if count:
        log.warning(
            "local stack: %d saved item(s) held text that is not valid Unicode (a lone surrogate, stored before the "
            "API refused them); each such character now reads U+FFFD",
            count,
        )
    return fixed
