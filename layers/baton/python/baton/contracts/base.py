"""The base of every API contract: one wire name per field, and mapping-style reads.

Responses are serialized with their aliases (`model_dump(by_alias=True)`), so a model can name a field
in snake_case while the wire keeps the camelCase of the interrupt routes. `model["key"]` and
`model.get("key")` read a field by its wire name: agent code written against the SDK's earlier
dict results keeps working while it moves to attributes."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict


class Contract(BaseModel):
    """A response body (or a part of one). Unknown keys from a newer server are ignored by the SDK."""

    model_config = ConfigDict(populate_by_name=True, extra="ignore", defer_build=True)

    def _field_of(self, key: str) -> str | None:
        fields = type(self).model_fields
        if key in fields:
            return key
        for name, info in fields.items():
            if key in (info.alias, info.serialization_alias):
                return name
        return None

    def __getitem__(self, key: str) -> Any:
        name = self._field_of(key)
        if name is not None:
            return getattr(self, name)
        if self.model_extra and key in self.model_extra:
            return self.model_extra[key]
        raise KeyError(key)

    def get(self, key: str, default: Any = None) -> Any:
        try:
            return self[key]
        except KeyError:
            return default

    def wire(self) -> dict[str, Any]:
        """The JSON object this contract is on the wire."""
        return self.model_dump(mode="json", by_alias=True)


Delivery = Literal["delivered", "pending"]
# The `delivery` field of an answer's, a resume's and a review action's result (one text for all three).
DELIVERY_DESCRIPTION = (
    "delivered: the waiting workflow (or agent) was released. pending (HTTP 202): the answer is stored, but "
    "its send to the workflow failed (Step Functions throttled or unreachable); the reconciler sends it "
    "within a minute, nothing needs sending again. null: nothing was waiting to be sent to."
)
