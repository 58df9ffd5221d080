"""The Slack app's forms and Block Kit: option buttons, the "Answer…" button, the modal's fields, the inbox
link when Slack cannot render the form, and reading a submitted modal back into an answer."""

from __future__ import annotations

import json
from typing import Any

import pytest

from baton.channels.slack.blocks import inbox_item_url, message_blocks, modal_view, outcome_blocks
from baton.channels.slack.forms import answer_of, block_of_path, form_of
from baton.channels.slack.payloads import ButtonValue, ModalMetadata
from baton.models import Interaction, InterruptRequest, QuestionRequest, ReviewRequest

INBOX = "https://inbox.example.com/"


def _question(options: list[str] | None, *, free_text: bool = True) -> Interaction:
    request = QuestionRequest(node="draft", prompt="Which database?", options=options, allow_free_text=free_text)
    return Interaction(interaction_id="01IID", run_id="run-1", created_at="2026-01-01T00:00:00Z", request=request)


def _interrupt(*, schema: Any = None, json_schema: Any = None) -> Interaction:
    request = InterruptRequest(node="gate", prompt="Scale?", schema=schema, json_schema=json_schema)
    return Interaction(interaction_id="01INT", run_id="sess-1", created_at="2026-01-01T00:00:00Z", request=request)


def _actions(blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    (actions,) = [b for b in blocks if b["type"] == "actions"]
    elements: list[dict[str, Any]] = actions["elements"]
    return elements


def test_options_become_buttons_naming_run_interaction_and_option_never_a_token() -> None:
    elements = _actions(message_blocks(_question(["postgres", "dynamodb"]), inbox_url=INBOX))
    assert [e["text"]["text"] for e in elements] == ["postgres", "dynamodb", "Answer…"]
    assert [e["action_id"] for e in elements] == ["baton_option_0", "baton_option_1", "baton_open_form"]
    assert [json.loads(e["value"]) for e in elements] == [
        {"r": "run-1", "i": "01IID", "o": 0},
        {"r": "run-1", "i": "01IID", "o": 1},
        {"r": "run-1", "i": "01IID"},
    ]
    for element in elements:
        assert set(json.loads(element["value"])) <= set(ButtonValue.model_fields)  # nothing but the three ids


def test_options_without_free_text_have_no_answer_button() -> None:
    elements = _actions(message_blocks(_question(["yes", "no"], free_text=False), inbox_url=INBOX))
    assert [e["action_id"] for e in elements] == ["baton_option_0", "baton_option_1"]


@pytest.mark.parametrize(
    ("interaction", "inputs"),
    [
        (_question(None), {"answer": "plain_text_input"}),
        (_interrupt(), {"answer": "plain_text_input"}),
        (_interrupt(schema={"type": "boolean"}), {"answer": "radio_buttons"}),
        (_interrupt(schema={"type": "enum", "enum": ["a", "b"]}), {"answer": "static_select"}),
        (_interrupt(json_schema={"type": "number"}), {"answer": "number_input"}),
        (
            _interrupt(
                json_schema={
                    "type": "object",
                    "properties": {"n": {"type": "integer"}, "why": {"type": "string"}, "ok": {"type": "boolean"}},
                    "required": ["n"],
                }
            ),
            {"field_0": "number_input", "field_1": "plain_text_input", "field_2": "radio_buttons"},
        ),
    ],
)
def test_the_modal_has_one_input_per_field_slack_can_render(interaction: Interaction, inputs: dict[str, str]) -> None:
    form = form_of(interaction)
    assert form is not None and form.has_modal
    view = modal_view(interaction, form, channel="C1", ts="1.2")
    assert view["type"] == "modal" and view["callback_id"] == "baton_answer"
    assert {b["block_id"]: b["element"]["type"] for b in view["blocks"] if b["type"] == "input"} == inputs
    meta = ModalMetadata.model_validate_json(view["private_metadata"])
    assert (meta.r, meta.i, meta.c, meta.t) == (interaction.run_id, interaction.interaction_id, "C1", "1.2")


def test_optional_object_fields_are_optional_inputs() -> None:
    interaction = _interrupt(
        json_schema={
            "type": "object",
            "properties": {"n": {"type": "integer"}, "m": {"type": "string"}},
            "required": ["n"],
        }
    )
    form = form_of(interaction)
    assert form is not None
    inputs = [b for b in modal_view(interaction, form, channel=None, ts=None)["blocks"] if b["type"] == "input"]
    assert [b.get("optional", False) for b in inputs] == [False, True]


@pytest.mark.parametrize(
    "interaction",
    [
        _interrupt(json_schema={"type": "object", "properties": {"inner": {"type": "object"}}}),
        _interrupt(json_schema={"type": "array", "items": {"type": "object"}}),
        _interrupt(json_schema={"oneOf": [{"type": "string"}, {"type": "number"}]}),
        _interrupt(schema={"type": "object"}),
        _interrupt(schema={"type": "array"}),
        _question([f"option {n}" for n in range(30)]),
        Interaction(
            interaction_id="01REV",
            run_id="run-9",
            created_at="2026-01-01T00:00:00Z",
            request=ReviewRequest(node="review", prompt="Review the diff"),
        ),
    ],
)
def test_a_form_slack_cannot_render_links_to_the_inbox_item(interaction: Interaction) -> None:
    blocks = message_blocks(interaction, inbox_url=INBOX)
    (element,) = _actions(blocks)
    assert element["url"] == inbox_item_url(INBOX, interaction) and "value" not in element
    assert "Slack cannot show this form" in json.dumps(blocks)


def test_inbox_item_urls_follow_the_inbox_hash_routes() -> None:
    assert inbox_item_url(INBOX, _question(None)) == "https://inbox.example.com/#/question/run-1/01IID"
    assert inbox_item_url("https://x/inbox", _interrupt()) == "https://x/inbox/#/interrupt/01INT"


def test_a_submitted_modal_reads_back_into_the_answer() -> None:
    schema = {
        "type": "object",
        "properties": {
            "n": {"type": "integer"},
            "region": {"enum": ["eu", "us"]},
            "ok": {"type": "boolean"},
            "note": {"type": "string"},
        },
    }
    form = form_of(_interrupt(json_schema=schema))
    assert form is not None
    values = {
        "field_0": {"value": {"type": "number_input", "value": "3"}},
        "field_1": {"value": {"type": "static_select", "selected_option": {"value": "1"}}},
        "field_2": {"value": {"type": "radio_buttons", "selected_option": {"value": "false"}}},
        "field_3": {"value": {"type": "plain_text_input", "value": None}},
    }
    assert answer_of(form, values) == ({"n": 3, "region": "us", "ok": False}, [])


def test_values_no_answer_can_come_from_are_field_errors() -> None:
    schema = {"type": "object", "properties": {"n": {"type": "number"}, "s": {"type": "string"}}, "required": ["s"]}
    form = form_of(_interrupt(json_schema=schema))
    assert form is not None
    answer, errors = answer_of(form, {"field_0": {"value": {"value": "lots"}}})
    assert answer is None
    assert {(e.block_id, e.message) for e in errors} == {
        ("field_0", "'lots' is not a number"),
        ("field_1", "this field is required"),
    }


def test_a_validation_path_names_its_field_block() -> None:
    form = form_of(
        _interrupt(json_schema={"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "integer"}}})
    )
    assert form is not None
    assert block_of_path(form, "$.b") == "field_1"
    assert block_of_path(form, "$") == "field_0"
    scalar = form_of(_interrupt(schema={"type": "number"}))
    assert scalar is not None and block_of_path(scalar, "$") == "answer"


def test_the_answered_message_keeps_the_question_and_drops_the_buttons() -> None:
    blocks = outcome_blocks(_question(["a"]), "answered by alice with a")
    assert [b["type"] for b in blocks] == ["header", "section", "context", "section"]
    assert blocks[-1]["text"]["text"] == "answered by alice with a"
