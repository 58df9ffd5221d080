"""How the SDK writes a pause's deadline ladder, quorum and gated action into a request body: through the
API's own models (`baton.domain.ladder.LadderFields` / `AwaitLadderFields`, `baton.domain.approval.ApprovalPolicy`,
`baton.domain.interrupt_fields.GateAction`), never a copy of their shape. A malformed one raises pydantic's
ValidationError here, before any request; the server checks them again (against the pause's options,
timeout and schema: a 422)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel

from baton.domain.approval import ApprovalPolicy
from baton.domain.interrupt_fields import GateAction
from baton.domain.ladder import LadderFields

if TYPE_CHECKING:
    from baton.domain.ladder import OnTimeout

Request = TypeVar("Request", bound=BaseModel)

# What a caller may hand in: the model itself, or its JSON object (validated by the same model).
LadderArg = LadderFields | dict[str, Any] | None
ApprovalArg = ApprovalPolicy | dict[str, Any] | None
ActionArg = GateAction | dict[str, Any] | None


def ladder_fields(
    ladder: LadderArg,
    *,
    on_timeout: OnTimeout | dict[str, Any] | None = None,
    model: type[LadderFields] = LadderFields,
) -> dict[str, Any]:
    """The ladder's wire fields (only those it sets), `on_timeout` given on its own merged in (both at
    once is a ValueError: one place says what happens at the deadline)."""
    declared = {} if ladder is None else model.model_validate(ladder).model_dump(mode="json", exclude_defaults=True)
    if on_timeout is not None:
        if "on_timeout" in declared:
            raise ValueError("on_timeout is given twice: in the ladder and on its own; give it once")
        declared = model.model_validate({**declared, "on_timeout": on_timeout}).model_dump(
            mode="json", exclude_defaults=True
        )
    return declared


def request_of(model: type[Request], ladder: LadderArg, approval: ApprovalArg = None, **fields: Any) -> Request:
    """The API's own request model built from the SDK's keyword form: the ladder's fields, each of `fields`
    that is not None, the quorum. A malformed request raises pydantic's ValidationError before any call."""
    given = ladder_fields(ladder) | {k: v for k, v in fields.items() if v is not None} | approval_body(approval)
    return model.model_validate(given)


def body_of(request: BaseModel) -> dict[str, Any]:
    """The wire body of a request model: the fields it was given, by their wire names."""
    return request.model_dump(mode="json", by_alias=True, exclude_unset=True)


def approval_body(approval: ApprovalArg) -> dict[str, Any]:
    """`{"approval": {...}}` for a quorum pause, `{}` without one."""
    if approval is None:
        return {}
    return {"approval": ApprovalPolicy.model_validate(approval).model_dump(mode="json", exclude_defaults=True)}


def action_body(action: ActionArg) -> dict[str, Any]:
    """`{"action": {...}}` (camelCase, as the API reads it) for an interrupt that gates an action, `{}`
    without one."""
    if action is None:
        return {}
    return {"action": GateAction.model_validate(action).model_dump(mode="json", by_alias=True)}
