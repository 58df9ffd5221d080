"""A signed answer link: `<claims>.<mac>`, both base64url without padding.

The claims are compact JSON with the link's id, the run, the interaction, the recipient and the expiry
(unix seconds). Nothing else is in it: no task token, no answer, nothing secret (the ids and the
recipient's address are what the page shows anyway). The mac is HMAC-SHA256 over `LINK_CONTEXT` + the
encoded claims, keyed with the link key (deployed: a Secrets Manager secret; locally: derived from the
operator token, `local_link_key`), compared in constant time. A link is single-use through its id: the
first POST that answers records it (`AnswerLinkStore.claim_link`, a conditional write), so a second is a
410 that says who used it, when and with what.

The same format is the Web Push one-tap credential (`baton/channels/push/sender.py`), under its own context
(`PUSH_ANSWER_CONTEXT`, so an email link is never a push credential or the reverse) and with one more
claim: the digest of the exact answer it may give (`answer_digest`), so it answers nothing else.
Both are spent the same way (`baton.channels.answering.LinkAnswers`).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import re
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from baton.ids import iso

LINK_CONTEXT = b"baton-email-link-v1."
PUSH_ANSWER_CONTEXT = b"baton-push-answer-v1."
STALE_CLAIM_SECONDS = 60  # a claim whose request died (never answered) may be taken over after this
MAX_LINK_CHARS = 2048  # a link longer than this is not one of ours (refused before decoding)
_TOKEN = re.compile(r"^[A-Za-z0-9_-]{1,1900}\.[A-Za-z0-9_-]{43}$")

RefusalReason = Literal["malformed", "tampered", "expired", "not_a_recipient", "not_found", "not_answerable"]


class LinkClaims(BaseModel):
    """What a link is for. The field aliases are the short keys of the encoded JSON."""

    # Built with the first link signed or read, not with the notify function's import.
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True, defer_build=True)

    link_id: str = Field(alias="l", min_length=8, max_length=64)
    run_id: str = Field(alias="r", min_length=1, max_length=200)
    interaction_id: str = Field(alias="i", min_length=1, max_length=200)
    recipient: str = Field(alias="t", min_length=1, max_length=320)  # a mail address, or a push's operator
    expires_at: int = Field(alias="e", ge=0)
    # A push credential's one answer (`answer_digest`); an email link has none (left out of its JSON).
    answer: str | None = Field(default=None, alias="a", min_length=43, max_length=43)


class LinkUse(BaseModel):
    """The record of a link's one use, kept in the run's partition (`LINK#<link_id>`). `state` is
    `claimed` while its answer is being stored and `answered` once it is."""

    model_config = ConfigDict(frozen=True, defer_build=True)

    link_id: str
    run_id: str
    interaction_id: str
    recipient: str
    at: str
    state: Literal["claimed", "answered"] = "claimed"
    answer: Any = None
    expires_at: int = 0  # the link's own expiry (the item's TTL counts from it)
    channel: Literal["email", "push"] = "email"


@dataclass(frozen=True)
class LinkRefused(Exception):
    """A link that cannot be used, and why (the page says it in words, with `status`)."""

    reason: RefusalReason
    status: int
    message: str
    url: str = ""  # where to go instead (the inbox item), when there is such a place

    def __str__(self) -> str:
        return self.message


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def local_link_key(operator_token: str) -> bytes:
    """The local stack's link key: derived from its operator token, never the token itself."""
    return hmac.new(operator_token.encode(), b"baton-email-link-key", hashlib.sha256).digest()


def new_link_id() -> str:
    return secrets.token_urlsafe(16)


def answer_digest(answer: Any) -> str:
    """The digest a push credential carries for its answer: SHA-256 of the answer's canonical JSON."""
    text = json.dumps(answer, separators=(",", ":"), sort_keys=True, ensure_ascii=False)
    return _b64(hashlib.sha256(text.encode("utf-8")).digest())


def _mac(key: bytes, encoded_claims: str, context: bytes) -> str:
    return _b64(hmac.new(key, context + encoded_claims.encode("ascii"), hashlib.sha256).digest())


def sign_link(claims: LinkClaims, key: bytes, *, context: bytes = LINK_CONTEXT) -> str:
    if len(key) < 16:
        raise ValueError("the link key must be at least 16 bytes")
    body = json.dumps(claims.model_dump(by_alias=True, exclude_none=True), separators=(",", ":"), sort_keys=True)
    encoded = _b64(body.encode("utf-8"))
    return f"{encoded}.{_mac(key, encoded, context)}"


def read_link(token: str, key: bytes, *, now: datetime, context: bytes = LINK_CONTEXT) -> LinkClaims:
    """The claims of a link made with `key`, or `LinkRefused`: malformed (400), altered (403), expired (410).
    The mac is checked before the claims are parsed, so nothing of an altered link is believed."""
    if len(token) > MAX_LINK_CHARS or not _TOKEN.match(token):
        raise LinkRefused("malformed", 400, "This is not a Baton answer link (it may have been cut short).")
    encoded, mac = token.split(".")
    if not hmac.compare_digest(mac.encode("ascii"), _mac(key, encoded, context).encode("ascii")):
        raise LinkRefused(
            "tampered",
            403,
            "This link has been altered: its signature does not match what it says (the recipient, the "
            "question or the expiry was changed). Use the link from your own mail.",
        )
    try:
        claims = LinkClaims.model_validate_json(_unb64(encoded))
    except (ValidationError, binascii.Error, ValueError):
        raise LinkRefused("malformed", 400, "This is not a Baton answer link.") from None
    if now.timestamp() >= claims.expires_at:
        until = iso(datetime.fromtimestamp(claims.expires_at, UTC))
        raise LinkRefused("expired", 410, f"This link has expired: it could be used until {until}.")
    return claims
