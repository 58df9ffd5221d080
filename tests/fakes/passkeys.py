"""`PasskeyStore` (`baton/passkey_ports.py`) in memory, with the DynamoDB adapter's rules: a credential is
stored once, a challenge is taken once, a sign count advances only from the count read."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from baton.contracts.passkeys import PasskeyChallenge, StoredPasskey


class MemoryPasskeys:
    def __init__(self) -> None:
        self.passkeys: dict[tuple[str, str], StoredPasskey] = {}
        self.challenges: dict[tuple[str, str], PasskeyChallenge] = {}

    def add_passkey(self, passkey: StoredPasskey) -> bool:
        key = (passkey.operator, passkey.credential_id)
        if key in self.passkeys:
            return False
        self.passkeys[key] = passkey
        return True

    def list_passkeys(self, operator: str) -> list[StoredPasskey]:
        return [p for (owner, _), p in sorted(self.passkeys.items()) if owner == operator]

    def get_passkey(self, operator: str, credential_id: str) -> StoredPasskey | None:
        return self.passkeys.get((operator, credential_id))

    def delete_passkey(self, operator: str, credential_id: str) -> bool:
        return self.passkeys.pop((operator, credential_id), None) is not None

    def advance_sign_count(self, operator: str, credential_id: str, *, old: int, new: int, at: str) -> bool:
        found = self.passkeys.get((operator, credential_id))
        if found is None or found.sign_count != old:
            return False
        self.passkeys[(operator, credential_id)] = found.model_copy(update={"sign_count": new, "last_used_at": at})
        return True

    def put_challenge(self, challenge: PasskeyChallenge) -> None:
        self.challenges[(challenge.operator, challenge.challenge)] = challenge

    def take_challenge(self, operator: str, challenge: str) -> PasskeyChallenge | None:
        return self.challenges.pop((operator, challenge), None)
