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
    REVIEW_ACTION,
    ButtonValue,
    ModalMetadata,
)
from baton.domain.review_gate import verdict_blocks_approval
from baton.models import ToolApprovalPause

if TYPE_CHECKING:
    from baton.channels.slack.forms import FormField, SlackForm
    from baton.models import Interaction, ReviewTurn

_HEADER_MAX = 150
_SECTION_MAX = 3000
_OPTION_TEXT_MAX = 75
_MAX_AWAIT_QUESTIONS = 10  # a message holds 50 blocks: 10 questions of up to 4 blocks, the head and a link
_TITLE_PREFIX = {
    "question": "Question",
    "ask": "Question (agent waiting)",
    "await": "Gate waiting",
    "interrupt": "Interrupt",
    "review": "Review requested",
    "tool_approval": "Tool call needs approval",
}
_ARGUMENTS_MAX = 2500  # the code block of a tool call's arguments, within a section's 3000


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
    if kind == "tool_approval":
        return f"{base}#/tool/{run}/{iid}"
    return f"{base}#/run/{run}"


def tool_call_text(request: ToolApprovalPause) -> str:
    """A tool call for a person: the tool, its risk, the agent's reason, and the command (a shell tool's
    `command` string) or the arguments as JSON in a code block of bounded length."""
    spec = request.tool
    args = spec.call.arguments
    command = next((args[k] for k in ("command", "cmd", "script") if isinstance(args.get(k), str)), None)
    shown = command if command is not None and len(args) == 1 else json.dumps(args, indent=2, ensure_ascii=False)
    said = f"*{escape(spec.call.tool)}* ({spec.risk} risk): {escape(spec.reason)}"
    return f"{clip(said, _SECTION_MAX - _ARGUMENTS_MAX - 8)}\n```{clip(escape(shown), _ARGUMENTS_MAX)}```"


def _head(interaction: Interaction) -> list[Block]:
    req = interaction.request
    title = f"{_TITLE_PREFIX.get(req.kind, 'Waiting')}: {' '.join(req.prompt.split())}"
    if isinstance(req, ToolApprovalPause):
        title = f"{_TITLE_PREFIX['tool_approval']}: {req.tool.call.tool} ({req.tool.risk} risk)"
    body = tool_call_text(req) if isinstance(req, ToolApprovalPause) else clip(escape(req.prompt), _SECTION_MAX)
    ids = f"*run* `{escape(interaction.run_id)}`  *interaction* `{escape(interaction.interaction_id)}`"
    return [
        HeaderBlock(text=PlainTextObject(text=clip(title, _HEADER_MAX))),
        SectionBlock(text=MarkdownTextObject(text=body)),
        ContextBlock(elements=[MarkdownTextObject(text=f"{ids}  *node* `{escape(req.node)}`")]),
    ]


def _value(interaction: Interaction, option: int | None = None) -> str:
    button = ButtonValue(r=interaction.run_id, i=interaction.interaction_id, o=option)
    return button.model_dump_json(exclude_none=True)


def _answer_blocks(interaction: Interaction, *, inbox_url: str, block_id: str = "baton_actions") -> list[Block]:
    """The buttons that answer one interaction (its options, "Answer…" for its modal), or the inbox link
    with a note when Slack cannot render its form."""
    form = form_of(interaction)
    blocks: list[Block] = []
    elements: list[ButtonElement] = []
    if form is not None:
        for n, option in enumerate(form.buttons):
            elements.append(
                ButtonElement(
                    text=clip(option, _OPTION_TEXT_MAX),
                    action_id=f"{OPTION_ACTION}_{n}",
                    value=_value(interaction, n),
                    style="primary" if isinstance(interaction.request, ToolApprovalPause) else None,
                )
            )
        if form.has_modal:
            # A tool approval's modal is its deny (the reason is required): a danger button, not the answer.
            deny = isinstance(interaction.request, ToolApprovalPause)
            elements.append(
                ButtonElement(
                    text="Deny…" if deny else "Answer…",
                    action_id=OPEN_FORM_ACTION,
                    value=_value(interaction),
                    style="danger" if deny else "primary",
                )
            )
    if form is None or not elements:
        elements.append(_inbox_button(inbox_url, interaction))
        note = "Slack cannot show this form: answer it in the web inbox."
        blocks.append(ContextBlock(elements=[MarkdownTextObject(text=note)]))
    approval = getattr(interaction.request, "approval", None)
    if approval is not None:
        note = f"A quorum decides: {approval.approvals} approval(s) needed; each person's click is one vote."
        blocks.append(ContextBlock(elements=[MarkdownTextObject(text=escape(note))]))
    blocks.append(ActionsBlock(block_id=block_id, elements=list(elements)))
    return blocks


def _inbox_button(inbox_url: str, interaction: Interaction) -> ButtonElement:
    return ButtonElement(
        text="Open in the Baton inbox", action_id="baton_open_inbox", url=inbox_item_url(inbox_url, interaction)
    )


def message_blocks(interaction: Interaction, *, inbox_url: str, note: str | None = None) -> list[dict[str, Any]]:
    """The asking message: option buttons and "Answer…" when Slack can render the form, else a link to
    the inbox item (and the CLI command, as every channel shows). `note` (a vote counted) goes above
    the buttons, which stay: the quorum is not met yet."""
    blocks = _head(interaction)
    if note:
        blocks.append(SectionBlock(text=MarkdownTextObject(text=clip(escape(note), _SECTION_MAX))))
    blocks += _answer_blocks(interaction, inbox_url=inbox_url)
    return [block.to_dict() for block in blocks]


def await_blocks(gate: Interaction, questions: list[Interaction], *, inbox_url: str) -> list[dict[str, Any]]:
    """An await is not answered itself: its message lists the questions it waits on, each with its own
    buttons (or its inbox link); the gate goes on once they are answered."""
    blocks = _head(gate)
    if not questions:
        blocks.append(ContextBlock(elements=[MarkdownTextObject(text="No question is pending any more.")]))
    for question in questions[:_MAX_AWAIT_QUESTIONS]:
        prompt = f"*{escape(question.request.node)}*: {escape(question.request.prompt)}"
        blocks.append(SectionBlock(text=MarkdownTextObject(text=clip(prompt, _SECTION_MAX))))
        blocks += _answer_blocks(question, inbox_url=inbox_url, block_id=f"baton_actions_{question.interaction_id}")
    if len(questions) > _MAX_AWAIT_QUESTIONS:
        more = f"{len(questions) - _MAX_AWAIT_QUESTIONS} more question(s): open the run in the inbox."
        blocks.append(ContextBlock(elements=[MarkdownTextObject(text=more)]))
        blocks.append(ActionsBlock(block_id="baton_await_more", elements=[_inbox_button(inbox_url, gate)]))
    return [block.to_dict() for block in blocks]


def review_blocks(review: Interaction, turns: list[ReviewTurn], *, inbox_url: str) -> list[dict[str, Any]]:
    """A review: the companion's verdict and test steps, then "Request changes" and "Approve & merge"
    (answered through the review service the API uses, with its guards) and the inbox for the rest
    (a reply to the companion, force_merge, the diff)."""
    blocks = _head(review)
    verdict = next((t.verdict for t in reversed(turns) if t.verdict), None)
    steps = next((t.test_steps for t in turns if t.test_steps), [])
    if verdict is not None:
        said = f"*Companion's verdict:* {escape(str(verdict.get('decision', '?')))}"
        if verdict.get("summary"):
            said += f"\n{escape(str(verdict['summary']))}"
        blockers = [str(b) for b in verdict.get("blockers") or []]
        if blockers:
            said += "\n*Blockers:*\n" + "\n".join(f"• {escape(b)}" for b in blockers)
        blocks.append(SectionBlock(text=MarkdownTextObject(text=clip(said, _SECTION_MAX))))
    if steps:
        listed = "\n".join(f"{n}. {escape(step)}" for n, step in enumerate(steps, 1))
        blocks.append(SectionBlock(text=MarkdownTextObject(text=clip(f"*Test steps:*\n{listed}", _SECTION_MAX))))
    # With blockers approve is not offered (the API would refuse it): Request changes is the primary action.
    blocked = verdict_blocks_approval(verdict)
    elements = [
        ButtonElement(
            text="Request changes",
            action_id=f"{REVIEW_ACTION}_request_changes",
            value=_value(review),
            style="primary" if blocked else "danger",
        ),
        *(
            []
            if blocked
            else [
                ButtonElement(
                    text="Approve & merge",
                    action_id=f"{REVIEW_ACTION}_approve_merge",
                    value=_value(review),
                    style="primary",
                )
            ]
        ),
        _inbox_button(inbox_url, review),
    ]
    blocks.append(ActionsBlock(block_id="baton_actions", elements=elements))
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
    request = interaction.request
    asked = (
        tool_call_text(request)
        if isinstance(request, ToolApprovalPause)
        else clip(escape(request.prompt), _SECTION_MAX)
    )
    blocks: list[Block] = [SectionBlock(text=MarkdownTextObject(text=asked))]
    for field in form.fields:
        blocks.append(
            InputBlock(
                block_id=field.block_id,
                label=clip(field.label, 2000),
                element=_element(field),
                optional=not field.required,
            )
        )
    deny = isinstance(interaction.request, ToolApprovalPause)
    view = View(
        type="modal",
        callback_id=MODAL_CALLBACK,
        title=PlainTextObject(text="Deny the tool call" if deny else "Answer"),
        submit=PlainTextObject(text="Deny" if deny else "Send"),
        close=PlainTextObject(text="Cancel"),
        blocks=blocks,
        private_metadata=metadata.model_dump_json(exclude_none=True),
    )
    return view.to_dict()


def outcome_blocks(interaction: Interaction, outcome: str) -> list[dict[str, Any]]:
    """The message once settled: what was asked, and who answered what (no buttons left to click)."""
    blocks = [*_head(interaction), SectionBlock(text=MarkdownTextObject(text=clip(escape(outcome), _SECTION_MAX)))]
    return [block.to_dict() for block in blocks]
