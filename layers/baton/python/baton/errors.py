"""Domain errors. Each maps to one HTTP status and one CLI message; the API has one handler per class."""

from __future__ import annotations

from typing import Any


class BatonError(Exception):
    """Base of every error Baton raises on purpose. `code` is the stable machine-readable name."""

    code = "baton_error"
    http_status = 400

    def __init__(self, message: str, *, details: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.details = details or {}

    def to_body(self) -> dict[str, Any]:
        body: dict[str, Any] = {"error": self.code, "message": self.message}
        body.update(self.details)
        return body


class BadRequestError(BatonError):
    code = "bad_request"
    http_status = 400


class UnauthorizedError(BatonError):
    code = "unauthorized"
    http_status = 401


class ForbiddenError(BatonError):
    code = "forbidden"
    http_status = 403


class NotFoundError(BatonError):
    code = "not_found"
    http_status = 404


class ConflictError(BatonError):
    """A conditional write lost: somebody else changed the record first. `details` carries the current state."""

    code = "conflict"
    http_status = 409


class GoneError(BatonError):
    """The thing waiting for this input is no longer waiting (its gate timed out or finished)."""

    code = "gone"
    http_status = 410


class MethodNotAllowedError(BatonError):
    """A known path, a method none of its routes has: the answer's `Allow` header names the ones it has."""

    code = "method_not_allowed"
    http_status = 405

    def __init__(self, message: str, *, allow: list[str]) -> None:
        super().__init__(message, details={"allow": allow})
        self.allow = allow


class PayloadTooLargeError(BatonError):
    code = "payload_too_large"
    http_status = 413


class UnsupportedMediaTypeError(BatonError):
    """The body is not JSON by its Content-Type (or not UTF-8)."""

    code = "unsupported_media_type"
    http_status = 415


class ValidationFailedError(BatonError):
    """Input is well-formed but breaks a rule (schema, options, path). `details` names the failing path."""

    code = "validation_failed"
    http_status = 422


class ServiceBusyError(BatonError):
    """AWS throttled a call, or kept it in contention, past every retry: send the request again (a
    decision already stored is not taken twice: its repeat is answered from the stored one)."""

    code = "service_busy"
    http_status = 503
    retry_after_seconds = 1


class TaskTokenError(BatonError):
    """Step Functions refused a task token. `reason` is TaskTimedOut, InvalidToken or TaskDoesNotExist."""

    code = "task_token_rejected"
    http_status = 410

    def __init__(self, message: str, *, reason: str, details: dict[str, Any] | None = None) -> None:
        super().__init__(message, details={"reason": reason, **(details or {})})
        self.reason = reason


class InterruptTimeoutError(GoneError):
    """SDK: the interrupt's deadline (timeoutMs) passed; it is cancelled with reason "timeout"."""

    code = "interrupt_timed_out"


class InterruptCancelledError(GoneError):
    """SDK: an operator cancelled the interrupt; `details["reason"]` says why."""

    code = "interrupt_cancelled"


class InterruptValidationError(ValidationFailedError):
    """SDK: a resume value or state edit failed validation; the interrupt stays open for another try."""

    code = "validation_failed"


def already_parked(run_id: str, gate: str) -> ConflictError:
    """A gate tried to park while another token of the same gate is still parked (the store refuses)."""
    return ConflictError(
        f"gate '{gate}' of run {run_id} is already parked with another task token; inside a Map iteration, "
        "give each item its own gate (map_item)",
        details={"run_id": run_id, "gate": gate},
    )


def winner(*, status: str, value: Any, by: str | None, at: str | None) -> dict[str, Any]:
    """Who won a conditional write, with what and when. Every 409 (and the 410 of a settled interrupt)
    of answer, resume, claim and cancel carries it as `details["winner"]`, next to the current record
    in the route's own shape."""
    return {"status": status, "value": value, "by": by, "at": at}


# Every error the API answers with (one handler each, baton/api/app.py). A client reads a status back
# as the first class listed for it (410 is GoneError, not TaskTokenError).
API_ERRORS: tuple[type[BatonError], ...] = (
    BadRequestError,
    UnauthorizedError,
    ForbiddenError,
    NotFoundError,
    ConflictError,
    GoneError,
    MethodNotAllowedError,
    PayloadTooLargeError,
    UnsupportedMediaTypeError,
    ValidationFailedError,
    TaskTokenError,
    ServiceBusyError,
)
ERROR_BY_STATUS: dict[int, type[BatonError]] = {}
for _error in API_ERRORS:
    ERROR_BY_STATUS.setdefault(_error.http_status, _error)
