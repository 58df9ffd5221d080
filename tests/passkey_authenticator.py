"""A software WebAuthn authenticator for tests (issue 32, item 3): what a browser and a passkey make of the
server's options, built with `cryptography` and `cbor2` (py_webauthn's own dependency). ES256: a P-256 key
per credential, "none" attestation; an assertion signs authenticatorData || SHA-256(clientDataJSON). Each
assertion counts one more use (the sign count), as a device-bound authenticator does."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import struct
from dataclasses import dataclass, field
from typing import Any

import cbor2
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec

USER_PRESENT, USER_VERIFIED, ATTESTED = 0x01, 0x04, 0x40


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unb64url(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


@dataclass
class SoftCredential:
    credential_id: bytes
    key: ec.EllipticCurvePrivateKey
    rp_id: str
    sign_count: int = 0


@dataclass
class SoftAuthenticator:
    """Makes credentials (`create`) and assertions (`get`) for pages at `origin`."""

    origin: str
    credentials: list[SoftCredential] = field(default_factory=list)

    def create(self, options: dict[str, Any]) -> dict[str, Any]:
        """`navigator.credentials.create({publicKey: options})` as `PublicKeyCredential.toJSON()`."""
        rp_id = options["rp"]["id"]
        credential = SoftCredential(os.urandom(32), ec.generate_private_key(ec.SECP256R1()), rp_id)
        self.credentials.append(credential)
        numbers = credential.key.public_key().public_numbers()
        cose = {1: 2, 3: -7, -1: 1, -2: numbers.x.to_bytes(32, "big"), -3: numbers.y.to_bytes(32, "big")}
        attested = bytes(16) + struct.pack(">H", len(credential.credential_id)) + credential.credential_id
        auth_data = self._auth_data(rp_id, USER_PRESENT | USER_VERIFIED | ATTESTED, 0) + attested + cbor2.dumps(cose)
        client_data = self._client_data("webauthn.create", options["challenge"])
        attestation = cbor2.dumps({"fmt": "none", "attStmt": {}, "authData": auth_data})
        return {
            "id": b64url(credential.credential_id),
            "rawId": b64url(credential.credential_id),
            "type": "public-key",
            "response": {"clientDataJSON": b64url(client_data), "attestationObject": b64url(attestation)},
            "clientExtensionResults": {},
        }

    def get(self, options: dict[str, Any], *, origin: str | None = None) -> dict[str, Any]:
        """`navigator.credentials.get({publicKey: options})` with the first allowed credential this holds."""
        allowed = {unb64url(c["id"]) for c in options.get("allowCredentials", [])}
        credential = next(c for c in self.credentials if not allowed or c.credential_id in allowed)
        credential.sign_count += 1
        auth_data = self._auth_data(options["rpId"], USER_PRESENT | USER_VERIFIED, credential.sign_count)
        client_data = self._client_data("webauthn.get", options["challenge"], origin=origin)
        signature = credential.key.sign(auth_data + hashlib.sha256(client_data).digest(), ec.ECDSA(hashes.SHA256()))
        return {
            "id": b64url(credential.credential_id),
            "rawId": b64url(credential.credential_id),
            "type": "public-key",
            "response": {
                "clientDataJSON": b64url(client_data),
                "authenticatorData": b64url(auth_data),
                "signature": b64url(signature),
            },
            "clientExtensionResults": {},
        }

    @staticmethod
    def _auth_data(rp_id: str, flags: int, sign_count: int) -> bytes:
        return hashlib.sha256(rp_id.encode()).digest() + bytes([flags]) + struct.pack(">I", sign_count)

    def _client_data(self, kind: str, challenge: str, *, origin: str | None = None) -> bytes:
        said = {"type": kind, "challenge": challenge, "origin": origin or self.origin, "crossOrigin": False}
        return json.dumps(said, separators=(",", ":")).encode()
