"""The error body every route answers with on a 4xx: `{"error", "message", ...details}`."""

from __future__ import annotations

from pydantic import ConfigDict, Field

from baton.contracts.base import Contract


class ErrorBody(Contract):
    """`error` is the stable machine-readable code (baton/errors.py); the rest of the keys are the
    error's details, e.g. the failing `path`, the current `interrupt` or the winning `answer`."""

    model_config = ConfigDict(extra="allow")

    error: str = Field(description="Machine-readable code, e.g. not_found, conflict, validation_failed.")
    message: str = Field(description="One readable sentence.")
