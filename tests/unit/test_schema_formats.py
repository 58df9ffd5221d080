"""`format` in a jsonSchema (baton.domain.schema_formats): every regex fastjsonschema validates a format
with is analysed, bounded in length before it runs, and adversarial strings are refused at once."""

from __future__ import annotations

import re
from re import _constants as sre_constants  # type: ignore[attr-defined]
from re import _parser as sre_parser  # type: ignore[attr-defined]
from typing import Any

import pytest

from baton.domain.answer_schema import validate_answer
from baton.domain.schema_formats import FORMAT_LIMITS, format_regexes, safe_formats
from baton.errors import ValidationFailedError

DRAFTS = [
    {},
    {"$schema": "http://json-schema.org/draft-04/schema#"},
    {"$schema": "http://json-schema.org/draft-06/schema#"},
    {"$schema": "http://json-schema.org/draft-07/schema#"},
]
# What the module docstring says the safe-subset checker makes of each format's regex.
SAFE_SUBSET = {"date", "time", "date-time", "uuid", "uri", "iri", "uri-reference", "iri-reference", "idn-email"}
ADVERSARIAL_CHARS = 200_000
ADVERSARIAL = {
    "email": "a@" + "a." * (ADVERSARIAL_CHARS // 2) + "@",  # quadratic on fastjsonschema's own regex
    "idn-email": "a@" + "a." * (ADVERSARIAL_CHARS // 2) + "@",
    "hostname": "a." * (ADVERSARIAL_CHARS // 2) + "!",
    "json-pointer": "/a" * (ADVERSARIAL_CHARS // 2) + "~",
    "relative-json-pointer": "0" + "/a" * (ADVERSARIAL_CHARS // 2) + "~2",
    "uri-reference": "a:" + "/" * ADVERSARIAL_CHARS + " ",
}
VALID = {
    "email": "ops@example.com",
    "idn-email": "ops@example.com",
    "hostname": "api.example.com",
    "ipv4": "192.168.0.1",
    "ipv6": "2001:db8::1",
    "uri": "https://example.com/a?b=c",
    "date": "2026-12-01",
    "date-time": "2026-12-01T18:00:00Z",
    "json-pointer": "/a/b~1c",
    "regex": "^[a-z]+$",
}


def _all_formats() -> dict[str, str]:
    found: dict[str, str] = {}
    for draft in DRAFTS:
        found.update(format_regexes(draft))
    return found


def test_every_format_fastjsonschema_checks_by_regex_has_an_analysed_bound() -> None:
    formats = _all_formats()
    assert set(formats) <= set(FORMAT_LIMITS)  # a new format in an upgrade: analyse it, then bound it
    for draft in DRAFTS:
        assert set(safe_formats(draft)) == set(format_regexes(draft)) | {"regex"}


# The safe subset the analysis sorts the formats' regexes by (the guard `pattern` went through before
# patterns ran in RE2): no backreference, lookaround or conditional, no repeat inside a repeat, no
# alternation inside a repeat, at most MAX_UNBOUNDED_REPEATS repeats with no small bound.
MAX_UNBOUNDED_REPEATS = 3
SMALL_REPEAT = 32
_REFUSED = {sre_constants.GROUPREF, sre_constants.GROUPREF_EXISTS, sre_constants.ASSERT, sre_constants.ASSERT_NOT}
_REPEATS = {sre_constants.MAX_REPEAT, sre_constants.MIN_REPEAT, sre_constants.POSSESSIVE_REPEAT}


def _unbounded_repeats(items: Any, *, inside_repeat: bool) -> int | None:
    """The unbounded repeats of a parsed regex; None when it is outside the safe subset."""
    count = 0
    for opcode, argument in items:
        found: int | None = 0
        if opcode in _REFUSED:
            return None
        if opcode in _REPEATS:
            _low, high, body = argument
            if inside_repeat and high > 1:
                return None
            count += 1 if high > 1 and (high == sre_constants.MAXREPEAT or high > SMALL_REPEAT) else 0
            found = _unbounded_repeats(body, inside_repeat=inside_repeat or high > 1)
        elif opcode == sre_constants.BRANCH:
            if inside_repeat:
                return None
            branches = [_unbounded_repeats(b, inside_repeat=False) for b in argument[1]]
            found = None if None in branches else max((b for b in branches if b is not None), default=0)
        elif opcode == sre_constants.SUBPATTERN:
            found = _unbounded_repeats(argument[-1], inside_repeat=inside_repeat)
        elif opcode == sre_constants.ATOMIC_GROUP:
            found = _unbounded_repeats(argument, inside_repeat=inside_repeat)
        if found is None:
            return None
        count += found
    return count


def test_the_safe_subset_checker_agrees_with_the_analysis() -> None:
    accepted = set()
    for name, regex in _all_formats().items():
        repeats = _unbounded_repeats(sre_parser.parse(regex), inside_repeat=False)
        if repeats is not None and repeats <= MAX_UNBOUNDED_REPEATS:
            accepted.add(name)
    assert accepted == SAFE_SUBSET


@pytest.mark.timeout(60)  # a bound on a hang (fastjsonschema's email regex alone takes hours here), not a timing
@pytest.mark.parametrize("name", sorted(ADVERSARIAL))
def test_an_adversarial_string_is_refused_at_once(name: str) -> None:
    value = ADVERSARIAL[name]
    with pytest.raises(ValidationFailedError) as refused:
        validate_answer(value, json_schema={"type": "string", "format": name})
    assert name in str(refused.value)


@pytest.mark.parametrize("name", sorted(VALID))
def test_valid_values_still_pass_and_invalid_ones_still_fail(name: str) -> None:
    schema: dict[str, Any] = {"type": "string", "format": name}
    assert validate_answer(VALID[name], json_schema=schema) == VALID[name]
    with pytest.raises(ValidationFailedError):
        validate_answer("not a " + name + " \u0000 (", json_schema=schema)


@pytest.mark.parametrize("name", sorted(set(_all_formats()) - {"regex"}))
def test_within_its_bound_a_format_is_judged_by_fastjsonschemas_own_regex(name: str) -> None:
    check = safe_formats({})[name] if name in format_regexes({}) else safe_formats(DRAFTS[3])[name]
    pattern = re.compile(_all_formats()[name])
    samples = [VALID.get(name, ""), "a", "a@b.c", "a..b@c.d", "1.2.3.4", "::1", "/x", "0#", "P1D", "12:00:00Z"]
    for sample in samples:
        assert check(sample) == (pattern.match(sample) is not None)
    too_long = VALID.get(name, "a") + "a" * (FORMAT_LIMITS[name] + 1)
    assert not check(too_long)


def test_a_non_string_is_not_a_format_question() -> None:
    assert validate_answer(12, json_schema={"format": "email"}) == 12
