"""Email links answer what a page can: asks (an agent's blocking ask, a hosted pause) and interrupts whose
answer is an enum, a boolean or one light field, through the services the API uses and the API's answer
schema check; anything else links to the inbox item. The link rules are the question's: GET changes
nothing, POST answers once, a replay is a 410."""

from __future__ import annotations

import re
from typing import Any

from baton.channels.email.links import sign_link
from baton.channels.email.mail import EmailLinks, compose
from baton.domain.gate_payloads import ParkPayload
from baton.domain.interrupt_spec import InterruptSpec
from baton.notify.model import Notification
from baton.services.asks import AskService, BlockingAsk
from baton.services.core import Core
from baton.services.interrupts import InterruptService
from baton.services.runs import RunService
from tests.conftest import FixedClock
from tests.unit.test_email_links import ALICE, KEY, _claims, _snapshot, answers, api, links

__all__ = ["answers", "api", "links"]  # the fixtures, shared with the question's link tests


def _buttons(page: dict[str, Any]) -> list[tuple[str, str]]:
    return re.findall(r'<button type="submit" name="option" value="([^"]*)">([^<]*)</button>', page["body"])


def _mail_for(core: Core, clock: FixedClock, kind: str, iid: str, run_id: str) -> str:
    links = EmailLinks(key=lambda: KEY, base_url="https://api.example/", clock=clock.now)
    note = Notification(event="human_input_requested", kind=kind, run_id=run_id, interaction_id=iid, prompt="?")  # type: ignore[arg-type]
    return compose(note, ALICE, links, "https://inbox.example/", core.store.get_interaction(run_id, iid)).text


def test_an_ask_is_answered_once_from_its_link_through_the_resume_path(api: Any, core: Core, clock: FixedClock) -> None:
    asked = AskService(core).ask(
        BlockingAsk(
            "r1", node="deploy", question="Drop the table?", timeout_seconds=600, caller="agent", options=["yes", "no"]
        )
    )
    iid = asked.interaction_id
    assert "/answer/" in _mail_for(core, clock, "ask", iid, "r1")
    path = "/answer/" + sign_link(_claims(iid), KEY)
    before = _snapshot(core)
    for _ in range(2):
        page = api("GET", path)
        assert page["statusCode"] == 200 and _buttons(page) == [("yes", "yes"), ("no", "no")]
        assert "<textarea" not in page["body"]  # options only: no free text
    assert _snapshot(core) == before
    assert api("POST", path, {"option": "maybe"})["statusCode"] == 422
    assert _snapshot(core) == before
    assert api("POST", path, {"option": "no"})["statusCode"] == 200
    stored = core.store.get_interaction("r1", iid)
    assert stored is not None and (stored.state.answer, stored.state.answered_by) == ({"answer": "no"}, ALICE)
    replay = api("POST", path, {"option": "yes"})
    assert replay["statusCode"] == 410 and "already used" in replay["body"]


def test_a_hosted_pause_takes_free_text_and_sends_its_token(api: Any, core: Core) -> None:
    RunService(core).start("human_pause", {"prompt": "Ship it?", "timeout_seconds": 600}, run_id="r1", caller="op")
    pause = RunService(core).park(
        ParkPayload(run_id="r1", node="approve", token="tok-p", prompt="Ship it?", timeout_seconds=600)
    )
    path = "/answer/" + sign_link(_claims(pause.interaction_id), KEY)
    assert "<textarea" in api("GET", path)["body"]
    assert api("POST", path, {"text": "ship on Monday"})["statusCode"] == 200
    sent = core.tokens.sent  # type: ignore[attr-defined]
    assert [(kind, token) for kind, token, _ in sent] == [("success", "tok-p")]
    assert sent[0][2]["answers"] == {"answer": "ship on Monday"}


def _interrupt(core: Core, **schema: Any) -> str:
    spec = InterruptSpec(session_id="r1", prompt="Which region?", **schema)
    interaction, _ = InterruptService(core).create(spec, caller="agent")
    return interaction.interaction_id


def test_an_enum_interrupt_has_a_button_per_member_and_resumes_with_the_member(
    api: Any, core: Core, clock: FixedClock
) -> None:
    iid = _interrupt(core, schema={"type": "enum", "enum": ["eu-west-1", 3]})
    assert "/answer/" in _mail_for(core, clock, "interrupt", iid, "r1")
    path = "/answer/" + sign_link(_claims(iid), KEY)
    assert _buttons(api("GET", path)) == [("0", "eu-west-1"), ("1", "3")]
    before = _snapshot(core)
    assert api("POST", path, {"option": "7"})["statusCode"] == 422
    assert api("POST", path, {"text": "eu-west-1"})["statusCode"] == 422  # no text box: buttons only
    assert _snapshot(core) == before
    assert api("POST", path, {"option": "1"})["statusCode"] == 200
    stored = core.store.get_interaction("r1", iid)
    assert stored is not None and stored.state.answer["input"] == 3 and stored.state.answered_by == ALICE
    assert api("POST", path, {"option": "0"})["statusCode"] == 410


def test_a_boolean_interrupt_is_yes_or_no(api: Any, core: Core) -> None:
    iid = _interrupt(core, json_schema={"type": "boolean", "title": "Go?"})
    path = "/answer/" + sign_link(_claims(iid), KEY)
    assert _buttons(api("GET", path)) == [("true", "Yes"), ("false", "No")]
    assert api("POST", path, {"option": "false"})["statusCode"] == 200
    stored = core.store.get_interaction("r1", iid)
    assert stored is not None and stored.state.answer["input"] is False


def test_a_value_the_answer_schema_refuses_is_a_422_and_the_link_still_works(api: Any, core: Core) -> None:
    iid = _interrupt(core, json_schema={"type": "integer", "minimum": 1})
    path = "/answer/" + sign_link(_claims(iid), KEY)
    before = _snapshot(core)
    refused = api("POST", path, {"text": "0"})
    assert refused["statusCode"] == 422 and "bigger than or equal to 1" in refused["body"]
    assert api("POST", path, {"text": "three"})["statusCode"] == 422
    assert _snapshot(core) == before
    assert api("POST", path, {"text": "3"})["statusCode"] == 200
    stored = core.store.get_interaction("r1", iid)
    assert stored is not None and stored.state.answer["input"] == 3


def test_an_object_interrupt_links_to_the_inbox_from_the_mail_and_the_page(
    api: Any, core: Core, clock: FixedClock
) -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    iid = _interrupt(core, json_schema=schema)
    mail = _mail_for(core, clock, "interrupt", iid, "r1")
    assert "/answer/" not in mail and f"https://inbox.example/#/interrupt/{iid}" in mail
    page = api("GET", "/answer/" + sign_link(_claims(iid), KEY))
    assert page["statusCode"] == 409 and f"#/interrupt/{iid}" in page["body"]
