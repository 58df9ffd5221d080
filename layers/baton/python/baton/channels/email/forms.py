"""What an answer link's page can offer, and the answer its form gives.

A link answers what a page of buttons and one text box can: a question or an ask (its options as
buttons, free text when allowed: an ask's answer is delivered as `{"answer": <value>}`, the inbox's own
form), and an interrupt whose answer is one field: an enum (a button per member), a boolean (Yes / No),
a string or a number (the text box), or no schema at all (free text). The field is read by the Slack
form's rules (`baton/channels/slack/forms.py form_of`, the same judgement of what a light form is);
anything else (an object, nested or composed schemas, a review, an await) has no link form, and the
mail links to the inbox item instead. The answer is validated by `baton/domain/answer_schema.py`, the
check the API's resume runs, before the link is spent.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from baton.channels.slack.forms import FormField, form_of, parse_number

if TYPE_CHECKING:
    from collections.abc import Mapping

    from baton.models import Interaction

FormKind = Literal[
    "options", "enum", "boolean", "text", "number", "integer", "tool"
]  # tool: approve, or deny with a reason


@dataclass(frozen=True)
class LinkForm:
    """The page's buttons (label, posted value) and whether it has a text box, and how to read them."""

    kind: FormKind
    buttons: list[tuple[str, str]] = field(default_factory=list)
    free_text: bool = False
    choices: list[Any] = field(default_factory=list)  # an enum's members, by their button's index


def link_form(interaction: Interaction) -> LinkForm | None:
    kind = interaction.request.kind
    if kind == "tool_approval":  # Approve is a button; the text box is the deny, with the reason the agent reads
        return LinkForm(kind="tool", buttons=[("Approve", "approve")], free_text=True)
    if kind not in ("question", "ask", "interrupt"):
        return None
    form = form_of(interaction)
    if form is None:
        return None
    if kind != "interrupt":
        return LinkForm(kind="options", buttons=[(b, b) for b in form.buttons], free_text=form.has_modal)
    if form.is_object or len(form.fields) != 1:
        return None
    return _field_form(form.fields[0])


def _field_form(only: FormField) -> LinkForm:
    if only.kind == "enum":
        labels = [m if isinstance(m, str) else _json(m) for m in only.choices]
        return LinkForm(kind="enum", buttons=[(label, str(n)) for n, label in enumerate(labels)], choices=only.choices)
    if only.kind == "boolean":
        return LinkForm(kind="boolean", buttons=[("Yes", "true"), ("No", "false")])
    return LinkForm(kind=only.kind, free_text=True)


def _json(value: Any) -> str:
    import json

    return json.dumps(value)


class NotAnAnswer(ValueError):
    """The form gave nothing an answer can be made from (the page says why)."""


def answer_of(form: LinkForm, posted: Mapping[str, str]) -> Any:
    """The value the posted form gives (before the schema's check), or `NotAnAnswer`."""
    option = (posted.get("option") or "").strip()
    text = (posted.get("text") or "").strip()
    if option:
        return _option(form, option)
    if not text or not form.free_text:
        raise NotAnAnswer("The form had neither an option nor a text. Go back and choose one.")
    if form.kind == "tool":
        return {"decision": "deny", "reason": text}
    if form.kind in ("number", "integer"):
        number, problem = parse_number(text)
        if problem is not None:
            raise NotAnAnswer(f"{problem}: this question takes a number.")
        return number
    return text


def _option(form: LinkForm, option: str) -> Any:
    if form.kind == "enum":
        if not option.isdigit() or int(option) >= len(form.choices):
            raise NotAnAnswer("That is not one of the choices. Go back and choose one.")
        return form.choices[int(option)]
    if form.kind == "boolean":
        if option not in ("true", "false"):
            raise NotAnAnswer("Answer Yes or No.")
        return option == "true"
    if option in {value for _, value in form.buttons}:
        return {"decision": option} if form.kind == "tool" else option
    raise NotAnAnswer("That is not one of the options. Go back and choose one.")
