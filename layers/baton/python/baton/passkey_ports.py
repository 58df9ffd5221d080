"""Passkeys' ports (issue 32, item 3): each operator's WebAuthn credentials and the challenges issued for
them (`baton/services/passkeys.py`), and the second factor the answer path asks for (`Core.second_factor`).
Beside `baton/ports.py` as Web Push's are (`push_ports.py`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from baton.contracts.passkeys import PasskeyChallenge, StoredPasskey


class PasskeyStore(Protocol):
    """An operator's credentials, one item each under the operator, and the challenges issued to them.
    `add_passkey` is False when the credential is registered already; `advance_sign_count` is a conditional
    write (False: the stored count was not `old` any more); `take_challenge` deletes it and returns what it
    was (None: unknown or already taken), so a challenge is used once."""

    def add_passkey(self, passkey: StoredPasskey) -> bool: ...
    def list_passkeys(self, operator: str) -> list[StoredPasskey]: ...
    def get_passkey(self, operator: str, credential_id: str) -> StoredPasskey | None: ...
    def delete_passkey(self, operator: str, credential_id: str) -> bool: ...
    def advance_sign_count(self, operator: str, credential_id: str, *, old: int, new: int, at: str) -> bool: ...
    def put_challenge(self, challenge: PasskeyChallenge) -> None: ...
    def take_challenge(self, operator: str, challenge: str) -> PasskeyChallenge | None: ...


class SecondFactor(Protocol):
    """Confirms that `operator` holds a registered passkey for exactly this answer of this item: the
    assertion (`PublicKeyCredential.toJSON()` of `navigator.credentials.get`) answers a challenge issued for
    the run, the item and the answer's digest, unexpired and unused. Raises `ForbiddenError` (reason
    `passkey_required`) when there is none and a `ForbiddenError` naming the fault when it does not verify."""

    def confirm(
        self, operator: str, run_id: str, interaction_id: str, answer: Any, assertion: dict[str, Any] | None
    ) -> str: ...
