"""The loopback rule of `baton dev` (baton/local/origin_guard.py): exactly the loopback names on the
server's own port, for `Host` and for an `Origin` when one is sent."""

from __future__ import annotations

import pytest

from baton.local.origin_guard import LoopbackOnly

OWN = LoopbackOnly(8787)


@pytest.mark.parametrize("host", ["127.0.0.1:8787", "localhost:8787", "[::1]:8787", "LOCALHOST:8787"])
def test_the_loopback_names_on_the_own_port_pass(host: str) -> None:
    assert OWN.refusal(host, None) is None
    assert OWN.refusal(host, f"http://{host}") is None


@pytest.mark.parametrize(
    ("host", "origin"),
    [
        ("evil.example:8787", None),  # DNS rebinding: the page's own name, resolved to 127.0.0.1
        ("127.0.0.1", None),  # no port: not what a client of this server sends
        ("127.0.0.1:8788", None),
        (None, None),
        ("127.0.0.1:8787", "http://evil.example"),
        ("127.0.0.1:8787", "https://127.0.0.1:8787"),
        ("127.0.0.1:8787", "http://127.0.0.1:8788"),  # another local server's page
        ("127.0.0.1:8787", "null"),  # a sandboxed frame or a file: page
        ("127.0.0.1:8787", ""),
    ],
)
def test_anything_else_is_refused_with_its_reason(host: str | None, origin: str | None) -> None:
    reason = OWN.refusal(host, origin)
    assert reason is not None and ("Origin" if origin is not None else "Host") in reason


def test_a_self_authenticating_route_takes_any_host_but_no_foreign_origin() -> None:
    assert OWN.refusal("abc.tunnel.example", None, any_host=True) is None
    assert OWN.refusal("abc.tunnel.example", "http://evil.example", any_host=True) is not None
