"""The Slack app's Block Kit: the message that asks (option buttons, an "Answer…" button, or a link to
the web inbox when Slack cannot render the form), the answer modal, and the message as it is updated
in place once answered. Built with `slack_sdk.models` (their own limits are checked when dumped).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from slack_sdk.models.blocks import (
    ActionsBlock,
    Block,
    ButtonElement,
    ContextBlock,
    HeaderBlock,
    InputBlock,
    InputInteractiveElement,
    MarkdownTextObject,
    NumberInputElement,
    Option,
    PlainTextInputElement,
    PlainTextObject,
    RadioButtonsElement,
    SectionBlock,
    StaticSelectElement,
)
from slack_sdk.models.views import View

from baton.channels.slack.forms import form_of
from baton.channels.slack.payloads import (
    MODAL_CALLBACK,
    OPEN_FORM_ACTION,
    OPTION_ACTION,
    ButtonValue,
    ModalMetadata,
)

if TYPE_CHECKING:
    from baton.channels.slack.forms import FormField, SlackForm
    from baton.models import Interaction

_HEADER_MAX = 150
_SECTION_MAX = 3000
_OPTION_TEXT_MAX = 75
_TITLE_PREFIX = {
    "question": "Question",
    "ask": "Question (agent waiting)",
    "await": "Gate waiting",
    "interrupt": "Interrupt",
    "review": "Review requested",
}


def escape(text: str) -> str:
    """Slack mrkdwn control characters (&, <, >) must be escaped."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def inbox_item_url(inbox_url: str, interaction: Interaction) -> str:
    """The web inbox's hash route for the item (inbox/src/main.jsx): #/question/<run>/<id>, #/interrupt/<id>,
    #/review/<run>, else the run."""
    base = inbox_url.rstrip("/") + "/"
    kind, run, iid = interaction.request.kind, interaction.run_id, interaction.interaction_id
    if kind == "question":
        return f"{base}#/question/{run}/{iid}"
    if kind == "interrupt":
        return f"{base}#/interrupt/{iid}"
    if kind == "review":
        return f"{base}#/review/{run}"
    return f"{base}#/run/{run}"


def _head(interaction: Interaction) -> list[Block]:
    req = interaction.request
    title = f"{_TITLE_PREFIX.get(req.kind, 'Waiting')}: {' '.join(req.prompt.split())}"
    ids = f"*run* `{escape(interaction.run_id)}`  *interaction* `{escape(interaction.interaction_id)}`"
    return [
        HeaderBlock(text=PlainTextObject(text=clip(title, _HEADER_MAX))),
        SectionBlock(text=MarkdownTextObject(text=clip(escape(req.prompt), _SECTION_MAX))),
        ContextBlock(elements=[MarkdownTextObject(text=f"{ids}  *node* `{escape(req.node)}`")]),
    ]


def _value(interaction: Interaction, option: int | None = None) -> str:
    button = ButtonValue(r=interaction.run_id, i=interaction.interaction_id, o=option)
    return button.model_dump_json(exclude_none=True)


def message_blocks(interaction: Interaction, *, inbox_url: str) -> list[dict[str, Any]]:
    """The asking message: option buttons and "Answer…" when Slack can render the form, else a link to
    the inbox item (and the CLI command, as every channel shows)."""
    form = form_of(interaction)
    blocks = _head(interaction)
    elements: list[ButtonElement] = []
    if form is not None:
        for n, option in enumerate(form.buttons):
            elements.append(
                ButtonElement(
                    text=clip(option, _OPTION_TEXT_MAX),
                    action_id=f"{OPTION_ACTION}_{n}",
                    value=_value(interaction, n),
                )
            )
        if form.has_modal:
            elements.append(
                ButtonElement(text="Answer…", action_id=OPEN_FORM_ACTION, value=_value(interaction), style="primary")
            )
    if form is None or not elements:
        elements.append(
            ButtonElement(
                text="Open in the Baton inbox",
                action_id="baton_open_inbox",
                url=inbox_item_url(inbox_url, interaction),
            )
        )
        note = "Slack cannot show this form: answer it in the web inbox."
        blocks.append(ContextBlock(elements=[MarkdownTextObject(text=note)]))
    blocks.append(ActionsBlock(block_id="baton_actions", elements=list(elements)))
    return [block.to_dict() for block in blocks]


def message_text(interaction: Interaction) -> str:
    """The notification's plain text (Slack shows it where blocks cannot be)."""
    return clip(f"{interaction.request.prompt} (run {interaction.run_id})", _SECTION_MAX)


def _element(field: FormField) -> InputInteractiveElement:
    action_id = "value"
    if field.kind == "text":
        return PlainTextInputElement(action_id=action_id, multiline=field.multiline)
    if field.kind in ("number", "integer"):
        return NumberInputElement(action_id=action_id, is_decimal_allowed=field.kind == "number")
    if field.kind == "boolean":
        return RadioButtonsElement(
            action_id=action_id, options=[Option(value="true", label="Yes"), Option(value="false", label="No")]
        )
    options = [
        Option(value=str(n), label=clip(_show(member), _OPTION_TEXT_MAX)) for n, member in enumerate(field.choices)
    ]
    return StaticSelectElement(action_id=action_id, options=options, placeholder="Pick one")


def _show(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def modal_view(interaction: Interaction, form: SlackForm, *, channel: str | None, ts: str | None) -> dict[str, Any]:
    """The answer modal: one input block per field; `private_metadata` names the interaction and the
    message to update once answered."""
    metadata = ModalMetadata(r=interaction.run_id, i=interaction.interaction_id, c=channel, t=ts)
    blocks: list[Block] = [
        SectionBlock(text=MarkdownTextObject(text=clip(escape(interaction.request.prompt), _SECTION_MAX)))
    ]
    for field in form.fields:
        blocks.append(
            InputBlock(
                block_id=field.block_id,
                label=clip(field.label, 2000),
                element=_element(field),
                optional=not field.required,
            )
        )
    view = View(
        type="modal",
        callback_id=MODAL_CALLBACK,
        title=PlainTextObject(text="Answer"),
        submit=PlainTextObject(text="Send"),
        close=PlainTextObject(text="Cancel"),
        blocks=blocks,
        private_metadata=metadata.model_dump_json(exclude_none=True),
    )
    return view.to_dict()


def outcome_blocks(interaction: Interaction, outcome: str) -> list[dict[str, Any]]:
    """The message once settled: what was asked, and who answered what (no buttons left to click)."""
    blocks = [*_head(interaction), SectionBlock(text=MarkdownTextObject(text=clip(escape(outcome), _SECTION_MAX)))]
    return [block.to_dict() for block in blocks]
