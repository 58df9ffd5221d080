"""The `next` token of a paged listing (the inbox, the interrupts): the listing's cursor model as
base64url JSON, carrying the filters it was issued for. A token that is not such a cursor is a 400 before
any read; one issued for other filters is a 400 that says so."""

from __future__ import annotations

import base64
import json
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, StrictInt, field_validator

from baton.errors import BadRequestError

Cursor = TypeVar("Cursor", bound=BaseModel)


class PageCursor(BaseModel):
    """Where a store-paged listing goes on (its `next`): the store's position `k`, the filters `f` it was
    issued for, and which of the listing's stored statuses it is in, `p` (the interrupts: cancelled, then
    timed_out)."""

    model_config = ConfigDict(strict=True)

    k: dict[str, Any] | None
    f: list[str | None]
    p: StrictInt = Field(default=0, ge=0)

    @field_validator("k")
    @classmethod
    def _small(cls, k: dict[str, Any] | None) -> dict[str, Any] | None:
        # A store position is a small object (the store checks its own shape before any query).
        if k is not None and (len(k) > 8 or len(json.dumps(k)) > 4096):
            raise ValueError("not a store position")
        return k

    def token(self) -> str:
        return encode_page_token(self, sort_keys=True)


def encode_page_token(cursor: BaseModel, *, sort_keys: bool = False) -> str:
    raw = json.dumps(cursor.model_dump(exclude_defaults=True), separators=(",", ":"), sort_keys=sort_keys)
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def decode_page_token(token: str, cursor: type[Cursor]) -> Cursor:
    try:
        return cursor.model_validate_json(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
    except ValueError:
        raise invalid_page_token() from None


def decode_scoped_page_token(token: str, cursor: type[Cursor], scope: object, filters: str) -> Cursor:
    """`decode_page_token` of a cursor bound to the filters `f` it was issued for, and a 400 naming
    `filters` unless that is this `scope`."""
    decoded = decode_page_token(token, cursor)
    if getattr(decoded, "f", None) != scope:
        raise foreign_page_token(filters)
    return decoded


def decode_store_page_token(token: str | None, scope: list[str | None], filters: str) -> PageCursor:
    """Where a store-paged listing starts: its first page without `token`, else the token's position (bound
    to `scope`); a first page's position is never issued, so a token carrying one is another listing's."""
    if not token:
        return PageCursor(k=None, f=scope)
    cursor = decode_scoped_page_token(token, PageCursor, scope, filters)
    if cursor.k is None and not cursor.p:
        raise foreign_page_token(filters)
    return cursor


def invalid_page_token() -> BadRequestError:
    return BadRequestError("next is not a valid page token", details={"field": "next"})


def foreign_page_token(filters: str) -> BadRequestError:
    """A token another listing issued: `filters` names what must match."""
    return BadRequestError(
        f"next is a page token for another listing (use it with the same {filters})", details={"field": "next"}
    )
