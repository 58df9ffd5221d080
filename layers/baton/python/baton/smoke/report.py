"""What `baton smoke` reports: one `CheckResult` per check (ok / failed / skipped, with why in words), the
whole `SmokeReport` (its `--json`), and an API error put in words for a person deploying Baton."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, Field

if TYPE_CHECKING:
    from baton.errors import BatonError

Outcome = Literal["ok", "failed", "skipped"]

# What a status means on a fresh deployment, said once for every check that meets it.
_STATUS_HINTS: dict[int, str] = {
    401: "the API did not accept the credentials (a bearer-token API: check BATON_TOKEN or --token)",
    403: "the API refused the caller: with IAM auth, check that AWS credentials are set and allowed "
    "execute-api:Invoke on this API; API Gateway also answers 403 for a path it does not serve "
    "(is the URL the `baton-<team>-api-url` output?)",
    404: "nothing answers at this path: is the URL the API's stage URL (the `baton-<team>-api-url` output)?",
    502: "the API's Lambda failed (see its CloudWatch logs)",
    503: "the API is unavailable (throttled or still deploying?)",
    504: "the API's integration timed out (API Gateway's 29 s limit)",
}
_MAX_MESSAGE = 200


class CheckFailedError(Exception):
    """A check's outcome: what went wrong, in words."""


class CheckSkippedError(Exception):
    """A check that could not run here, and why."""


class CheckResult(BaseModel):
    name: str = Field(description="The check: api, ask, answer, await gate, interrupt, review, notify <channel>.")
    outcome: Outcome
    detail: str = Field(description="What was seen (ok), what went wrong (failed) or why it did not run (skipped).")
    seconds: float = Field(description="How long the check took.")

    def line(self) -> str:
        return f"{self.name:<16} {self.outcome}: {self.detail}"


class SmokeReport(BaseModel):
    api_url: str
    tag: str = Field(description="The prefix of every run id this smoke test created.")
    checks: list[CheckResult] = Field(default_factory=list)
    cleanup: list[str] = Field(default_factory=list, description="What was cleaned up, or left behind and why.")

    @property
    def failed(self) -> list[CheckResult]:
        return [check for check in self.checks if check.outcome == "failed"]


def _short(message: str) -> str:
    """One line: an HTML error page or a long body must not flood the report."""
    flat = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", message)).strip()
    return flat if len(flat) <= _MAX_MESSAGE else flat[: _MAX_MESSAGE - 1] + "…"


def in_words(err: BatonError, doing: str) -> str:
    """`doing` (e.g. "POST /api/runs") and what the API answered, with what that status usually means."""
    status = getattr(err, "http_status", None)
    if err.code == "api_unavailable":  # no HTTP answer at all: the transport's sentence says where and why
        return _short(err.message)
    said = f"{doing} answered {status} ({err.code}): {_short(err.message)}"
    hint = _STATUS_HINTS.get(status) if isinstance(status, int) else None
    return f"{said}; {hint}" if hint else said
