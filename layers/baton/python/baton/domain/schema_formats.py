"""The `format` keyword of a `jsonSchema`, validated without backtracking without end.

fastjsonschema validates `format` with regular expressions run by Python's backtracking `re`
(`FORMAT_REGEXS` of the code generator it picks for the schema's draft), on strings of any length.
Analysed one by one with the safe-subset checker `pattern` went through before patterns ran in RE2 (now in
`tests/unit/test_schema_formats.py`, which keeps this list honest against the installed fastjsonschema) and
with adversarial strings:

* outside the safe subset: `email`, `idn-hostname`, `duration` (lookarounds), `hostname`, `ipv4`,
  `uri-template` (alternations in repeats), `ipv6`, `json-pointer`, `relative-json-pointer` (nested
  repeats). Of these `email` is quadratic: "a@" + "a." * n + "@" took 0.7 s at 4,000 characters and
  minutes at 80,000; `hostname`, the pointers and `uri-template` about linear (0.1-0.2 s at 80,000);
  `ipv4`, `ipv6`, `duration` and `idn-hostname` repeat only with small bounds, so a match ends within
  a few dozen characters.
* inside the safe subset, so at most polynomial: `date`, `time`, `date-time`, `uuid`, `uri`, `iri`,
  `uri-reference`, `iri-reference`, and `idn-email`, which is quadratic on the same input as `email`.

So every format gets a length bound before its regex sees the string, the longest value the format can
have in practice (an address: 254 characters, RFC 5321; a host name: 253, RFC 1035; a URI, a pointer or
a template: 8 KB, what HTTP servers take in a request line), and the regex itself is fastjsonschema's, so
a value the bound admits is judged exactly as before. At these bounds the quadratic `email` costs
~65,000 steps. The `regex` format (fastjsonschema compiles the value) gets the same 8 KB bound.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable

ADDRESS_CHARS = 254  # RFC 5321: the longest path (mailbox) an SMTP server takes
HOSTNAME_CHARS = 253  # RFC 1035: 255 octets on the wire, 253 characters written
LONG_TEXT_CHARS = 8 * 1024  # URIs, pointers, templates, patterns
SHORT_TEXT_CHARS = 64  # dates, times, IP addresses, UUIDs, durations: all far shorter

FORMAT_LIMITS: dict[str, int] = {
    "email": ADDRESS_CHARS,
    "idn-email": ADDRESS_CHARS,
    "hostname": HOSTNAME_CHARS,
    "idn-hostname": HOSTNAME_CHARS,
    "uri": LONG_TEXT_CHARS,
    "iri": LONG_TEXT_CHARS,
    "uri-reference": LONG_TEXT_CHARS,
    "iri-reference": LONG_TEXT_CHARS,
    "uri-template": LONG_TEXT_CHARS,
    "json-pointer": LONG_TEXT_CHARS,
    "relative-json-pointer": LONG_TEXT_CHARS,
    "regex": LONG_TEXT_CHARS,
    "date": SHORT_TEXT_CHARS,
    "time": SHORT_TEXT_CHARS,
    "date-time": SHORT_TEXT_CHARS,
    "ipv4": SHORT_TEXT_CHARS,
    "ipv6": SHORT_TEXT_CHARS,
    "uuid": SHORT_TEXT_CHARS,
    "duration": SHORT_TEXT_CHARS,
}


def _bounded(pattern: re.Pattern[str], limit: int) -> Callable[[str], bool]:
    def check(value: str) -> bool:
        return len(value) <= limit and pattern.match(value) is not None

    return check


def _bounded_regex(limit: int) -> Callable[[str], bool]:
    def check(value: str) -> bool:
        if len(value) > limit:
            return False
        try:
            re.compile(value)
        except (re.error, RecursionError, OverflowError):
            return False
        return True

    return check


def format_regexes(json_schema: dict[str, Any]) -> dict[str, str]:
    """The regexes fastjsonschema validates `format` with, for this schema's draft."""
    import fastjsonschema

    # the code generator fastjsonschema.compile picks for this `$schema` (its own choice, so they agree)
    generator = fastjsonschema._get_code_generator_class(json_schema)
    return dict(generator.FORMAT_REGEXS)


def safe_formats(json_schema: dict[str, Any]) -> dict[str, Callable[[str], bool]]:
    """The `formats` to compile this schema with: each of its draft's formats, length-bounded, and `regex`.
    A format a later fastjsonschema adds gets the long bound here, and fails the test until analysed."""
    checks: dict[str, Callable[[str], bool]] = {"regex": _bounded_regex(FORMAT_LIMITS["regex"])}
    for name, regex in format_regexes(json_schema).items():
        checks[name] = _bounded(re.compile(regex), FORMAT_LIMITS.get(name, LONG_TEXT_CHARS))
    return checks
