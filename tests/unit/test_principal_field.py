"""An operator's principal is refused for the same characters by the server and by a JSON Schema client:
`\\s` is Unicode White_Space in the server's regex engine (with U+0085) and ECMAScript's set in a client's
(with U+FEFF), so the pattern names the differing characters itself (tests/e2e/test_fuzz.py found U+0085)."""

from __future__ import annotations

import pytest
from pydantic import TypeAdapter, ValidationError

from baton.domain.fields import Principal

PRINCIPAL = TypeAdapter(Principal)
# ECMAScript's \s (WhiteSpace and LineTerminator) and Unicode's White_Space property, together.
SPACES = "\t\n\v\f\r \x85\xa0\u1680" + "".join(map(chr, range(0x2000, 0x200B))) + "\u2028\u2029\u202f\u205f\u3000\ufeff"
CONTROLS = "".join(map(chr, [*range(0x00, 0x20), *range(0x7F, 0xA0)]))


@pytest.mark.parametrize("char", list(dict.fromkeys(SPACES + CONTROLS)), ids=lambda c: f"U+{ord(c):04X}")
def test_a_space_or_control_character_in_a_principal_is_refused(char: str) -> None:
    with pytest.raises(ValidationError):
        PRINCIPAL.validate_python(f"alice{char}smith")


@pytest.mark.parametrize("name", ["alice", "alice@example.com", "arn:aws:iam::123456789012:role/ops", "日本語"])
def test_a_principal_without_them_is_accepted(name: str) -> None:
    assert PRINCIPAL.validate_python(name) == name
