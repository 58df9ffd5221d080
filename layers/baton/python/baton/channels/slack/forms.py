"""Which form an interaction takes in Slack, and the answer a submitted modal gives.

A question's options become buttons; its free text, and an interrupt's answer schema, become a modal
of fields Slack can render: a text input, a number input, yes/no radio buttons or a select of the
enum's members. A JSON-Schema answer renders when it is one such field or an object whose properties
are all such fields; anything else (nested objects, arrays, `oneOf`, ...) has no Slack form and links to
the web inbox item instead (`form_of` returns None). Validation is not done here: the answer a modal
gives goes through `baton/domain/answer_schema.py`, the same check the API runs.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from baton.models import InterruptRequest, PauseRequest, QuestionRequest, ToolApprovalPause

if TYPE_CHECKING:
    from baton.models import Interaction

FieldKind = Literal["text", "number", "integer", "boolean", "enum"]
MAX_BUTTONS = 24  # an actions block holds 25 elements; one is the "Answer…" button
MAX_CHOICES = 100  # a static select holds 100 options
MAX_BUTTON_LABEL = 75
_SCALAR_TYPES: dict[str, FieldKind] = {"string": "text", "number": "number", "integer": "integer", "boolean": "boolean"}
_LABEL_MAX = 2000
TOOL_APPROVE = "Approve"  # a tool approval's one button; its modal is the deny, whose reason the agent reads
DENY_REASON_LABEL = "Why deny it (the agent reads this)"


class FormField(BaseModel):
    """One input of the modal. `name` is the object property it fills (None: the whole answer)."""

    model_config = ConfigDict(frozen=True)

    block_id: str
    kind: FieldKind
    label: str
    name: str | None = None
    required: bool = True
    choices: list[Any] = Field(default_factory=list)  # the enum's members, in order (a select's value is the index)
    multiline: bool = False


class SlackForm(BaseModel):
    """How an interaction is answered in Slack: option buttons and/or a modal of `fields`."""

    model_config = ConfigDict(frozen=True)

    buttons: list[str] = Field(default_factory=list)
    fields: list[FormField] = Field(default_factory=list)
    is_object: bool = False  # the answer is an object of the fields' values (else the one field's value)

    @property
    def has_modal(self) -> bool:
        return bool(self.fields)


class FieldError(BaseModel):
    """A value Slack cannot give the answer (not a number, a field left empty): the block it belongs to."""

    block_id: str
    message: str


def form_of(interaction: Interaction) -> SlackForm | None:
    """The interaction's Slack form, or None when Slack cannot render what it asks (link to the inbox)."""
    request = interaction.request
    if isinstance(request, QuestionRequest | PauseRequest):
        # A question, or an ask (a hosted pause, an agent's blocking ask): its options are buttons, its
        # free text a modal; an ask's answer is delivered as {"answer": <value>} (the inbox's own form).
        buttons = list(request.options or [])
        if len(buttons) > MAX_BUTTONS or any(len(b) > MAX_BUTTON_LABEL for b in buttons):
            return None
        free = request.allow_free_text or not buttons
        fields = [FormField(block_id="answer", kind="text", label="Your answer", multiline=True)]
        return SlackForm(buttons=buttons, fields=fields if free else [])
    if isinstance(request, InterruptRequest):
        return _interrupt_form(request)
    if isinstance(request, ToolApprovalPause):
        reason = FormField(block_id="reason", kind="text", label=DENY_REASON_LABEL, multiline=True)
        return SlackForm(buttons=[TOOL_APPROVE], fields=[reason])
    return None  # awaits are answered by their questions, reviews by their own buttons (blocks.py)


def _interrupt_form(request: InterruptRequest) -> SlackForm | None:
    if request.json_schema is not None:  # it wins over the light form, as in validate_answer
        return _json_schema_form(request.json_schema)
    if request.schema_ is not None:
        field = _field_of(request.schema_, block_id="answer", label="Your answer")
        return SlackForm(fields=[field]) if field is not None else None
    return SlackForm(fields=[FormField(block_id="answer", kind="text", label="Your answer", multiline=True)])


def _label(schema: dict[str, Any], default: str) -> str:
    title = schema.get("title") or schema.get("description") or default
    return str(title)[:_LABEL_MAX]


def _field_of(
    schema: Any, *, block_id: str, label: str, name: str | None = None, required: bool = True
) -> FormField | None:
    if not isinstance(schema, dict):
        return None
    kind_name = schema.get("type")
    members = schema.get("enum")
    if isinstance(members, list) and members and kind_name in (None, "enum", *_SCALAR_TYPES):
        if len(members) > MAX_CHOICES:
            return None
        kind: FieldKind = "enum"
    elif isinstance(kind_name, str) and kind_name in _SCALAR_TYPES and not _has_composition(schema):
        kind = _SCALAR_TYPES[kind_name]
    else:
        return None
    return FormField(
        block_id=block_id,
        kind=kind,
        label=_label(schema, label),
        name=name,
        required=required,
        choices=list(members) if kind == "enum" and isinstance(members, list) else [],
        multiline=kind == "text" and name is None,
    )


def _has_composition(schema: dict[str, Any]) -> bool:
    return any(key in schema for key in ("oneOf", "anyOf", "allOf", "not", "$ref", "if"))


def _json_schema_form(schema: dict[str, Any]) -> SlackForm | None:
    if schema.get("type") != "object":
        field = _field_of(schema, block_id="answer", label="Your answer")
        return SlackForm(fields=[field]) if field is not None else None
    properties = schema.get("properties")
    if not isinstance(properties, dict) or not properties or _has_composition(schema):
        return None
    required = set(schema.get("required") or [])
    fields: list[FormField] = []
    for n, (name, subschema) in enumerate(properties.items()):
        field = _field_of(subschema, block_id=f"field_{n}", label=str(name), name=str(name), required=name in required)
        if field is None:
            return None  # one field Slack cannot render: the whole form goes to the inbox
        fields.append(field)
    return SlackForm(fields=fields, is_object=True)


# ---- reading a submitted modal -------------------------------------------------------------------------


def answer_of(form: SlackForm, values: dict[str, dict[str, Any]]) -> tuple[Any, list[FieldError]]:
    """The answer from a `view_submission`'s `view.state.values` ({block_id: {action_id: state}}), or the
    field errors of values no answer can be made from (an empty required field, a number that is not one)."""
    answer: dict[str, Any] = {}
    errors: list[FieldError] = []
    for field in form.fields:
        state: dict[str, Any] = next(iter((values.get(field.block_id) or {}).values()), {})
        value, problem = _value_of(field, state)
        if problem is not None:
            errors.append(FieldError(block_id=field.block_id, message=problem))
        elif value is not None:
            answer[field.name or ""] = value
    if errors:
        return None, errors
    if form.is_object:
        return answer, []
    return answer.get(""), []


def _value_of(field: FormField, state: dict[str, Any]) -> tuple[Any, str | None]:
    selected = state.get("selected_option")
    raw = selected.get("value") if isinstance(selected, dict) else state.get("value")
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return None, ("this field is required" if field.required else None)
    text = str(raw)
    if field.kind == "text":
        return text, None
    if field.kind == "boolean":
        return text == "true", None
    if field.kind == "enum":
        if not text.isdigit() or int(text) >= len(field.choices):
            return None, "pick one of the options"
        return field.choices[int(text)], None
    return parse_number(text)


def parse_number(text: str) -> tuple[Any, str | None]:
    """A number input's text as a JSON number: whole numbers as integers (the schema decides the rest)."""
    try:
        number = float(text)
    except ValueError:
        return None, f"{text[:40]!r} is not a number"
    if not math.isfinite(number):
        return None, f"{text[:40]!r} is not a number"
    return (int(number) if number.is_integer() else number), None


def block_of_path(form: SlackForm, path: str) -> str:
    """The block a validation error's path (`$`, `$.name`, `$.name[0]`) belongs to; the first field else."""
    if form.is_object and path.startswith("$."):
        name = path[2:].split(".")[0].split("[")[0]
        for field in form.fields:
            if field.name == name:
                return field.block_id
    return form.fields[0].block_id if form.fields else "answer"
