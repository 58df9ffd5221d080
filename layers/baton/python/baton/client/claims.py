"""The SDK's claim calls (`baton.Client` inherits them): claim with a lease, renew, release, reassign.
The rules are the server's (`baton/services/claims.py`); each call returns `InterruptClaimed`."""

from __future__ import annotations

from typing import Any, Protocol

from baton.client.transport import seg
from baton.contracts import InterruptClaimed


class _Requests(Protocol):
    def request(
        self, method: str, path: str, *, json_body: Any = None, params: dict[str, Any] | None = None
    ) -> Any: ...


def _body(operator: str | None, **fields: Any) -> dict[str, Any]:
    body = {name: value for name, value in fields.items() if value is not None}
    return body | ({"operator": operator} if operator else {})


class ClaimCalls:
    def claim_interrupt(
        self: _Requests,
        interrupt_id: str,
        *,
        force: bool = False,
        reason: str | None = None,
        lease_seconds: int | None = None,
        operator: str | None = None,
        holder: str | None = None,
    ) -> InterruptClaimed:
        """Claim for the caller (lease: `lease_seconds`, else the server's default). Another operator's
        live claim is a ConflictError naming them, unless `force` with a `reason` (a take-over). `holder`:
        the claim the take-over is decided on (anyone else's claim meanwhile: a ConflictError naming them)."""
        body = _body(operator, force=force or None, reason=reason, leaseSeconds=lease_seconds, holder=holder)
        claimed = self.request("POST", f"/api/v1/interrupts/{seg(interrupt_id)}/claim", json_body=body)
        return InterruptClaimed.model_validate(claimed)

    def renew_claim(
        self: _Requests, interrupt_id: str, *, lease_seconds: int | None = None, operator: str | None = None
    ) -> InterruptClaimed:
        """Extend the caller's lease from now; ConflictError when the caller does not hold the claim."""
        body = _body(operator, leaseSeconds=lease_seconds)
        renewed = self.request("POST", f"/api/v1/interrupts/{seg(interrupt_id)}/claim/renew", json_body=body)
        return InterruptClaimed.model_validate(renewed)

    def release_claim(self: _Requests, interrupt_id: str, *, operator: str | None = None) -> InterruptClaimed:
        """Give the caller's claim up; ConflictError when another operator holds it."""
        released = self.request(
            "POST", f"/api/v1/interrupts/{seg(interrupt_id)}/claim/release", json_body=_body(operator)
        )
        return InterruptClaimed.model_validate(released)

    def reassign_interrupt(
        self: _Requests,
        interrupt_id: str,
        to: str,
        *,
        reason: str | None = None,
        lease_seconds: int | None = None,
        operator: str | None = None,
        holder: str | None = None,
    ) -> InterruptClaimed:
        """Give the claim to the operator `to` (recorded as `interrupt_reassigned`); with `holder`, only
        over that operator's claim (the one it was decided on)."""
        body = _body(operator, to=to, reason=reason, leaseSeconds=lease_seconds, holder=holder)
        assigned = self.request("POST", f"/api/v1/interrupts/{seg(interrupt_id)}/reassign", json_body=body)
        return InterruptClaimed.model_validate(assigned)
