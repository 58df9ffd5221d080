"""Email answer links on in-memory services: the link's signature and expiry (an injected clock), its
binding to one recipient and one question, GET changing nothing, POST answering once, the 410 replay."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

import pytest

from baton.api import deps
from baton.api.app import create_app
from baton.channels.email.answers import EmailAnswers
from baton.channels.email.links import LinkClaims, LinkRefused, local_link_key, read_link, sign_link
from baton.channels.email.mail import EmailLinks, EmailNotifier, Mail, compose
from baton.contracts import AskRequest
from baton.local.http_adapter import to_proxy_event
from baton.notify.model import Notification
from baton.runtime.settings import Settings
from baton.runtime.wiring import Services
from baton.services.core import Core
from baton.services.questions import QuestionService
from baton.services.runs import RunService

if TYPE_CHECKING:
    from pathlib import Path
from tests.conftest import FixedClock
from tests.fakes import MemoryStore
from tests.fakes.links import MemoryAnswerLinks

KEY = local_link_key("operator-token-for-tests")
ALICE, BOB = "alice@example.com", "bob@example.com"
NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


def _claims(iid: str, recipient: str = ALICE, *, run_id: str = "r1", expires: datetime | None = None) -> LinkClaims:
    return LinkClaims(
        link_id=f"link-{iid}-{recipient}",
        run_id=run_id,
        interaction_id=iid,
        recipient=recipient,
        expires_at=int((expires or NOW + timedelta(days=1)).timestamp()),
    )


def _swap(token: str, **changes: Any) -> str:
    """The same mac over other claims: what someone editing a link would make."""
    import base64

    encoded, mac = token.split(".")
    data = json.loads(base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4)))
    data.update(changes)
    swapped = base64.urlsafe_b64encode(json.dumps(data, separators=(",", ":")).encode()).rstrip(b"=").decode()
    return f"{swapped}.{mac}"


@pytest.fixture
def links() -> MemoryAnswerLinks:
    return MemoryAnswerLinks()


@pytest.fixture
def answers(core: Core, clock: FixedClock, links: MemoryAnswerLinks) -> EmailAnswers:
    return EmailAnswers(
        core=core,
        links=links,
        key=lambda: KEY,
        recipients=(ALICE, BOB),
        inbox_url="http://127.0.0.1:8787/inbox/",
        clock=clock.now,
    )


@pytest.fixture
def api(core: Core, answers: EmailAnswers) -> Iterator[Any]:
    settings = Settings.model_validate({"BATON_TABLE_NAME": "t", "BATON_LOCAL_API_TOKEN": "tok"})
    services = Services(settings=settings, core=core, runs=RunService(core), email_answers=answers)
    deps.set_services_provider(lambda: services)
    app = create_app()

    def call(method: str, path: str, form: dict[str, str] | None = None, content_type: str = "") -> dict[str, Any]:
        body = urlencode(form).encode() if form is not None else b""
        headers = {"Content-Type": content_type or "application/x-www-form-urlencoded"} if form is not None else {}
        result: dict[str, Any] = app.resolve(to_proxy_event(method, path, headers, body, "127.0.0.1"), None)
        return result

    yield call
    deps.set_services_provider(deps._default_provider)


def _ask(core: Core, question: str = "Which database?", **kwargs: Any) -> str:
    options = kwargs.pop("options", ["postgres", "dynamodb"])
    request = AskRequest(node="draft", question=question, options=options, **kwargs)
    return QuestionService(core).ask("r1", request, caller="agent").interaction_id


def _snapshot(core: Core) -> tuple[Any, ...]:
    store = core.store
    assert isinstance(store, MemoryStore)
    return (
        {k: v.model_dump() for k, v in store.interactions.items()},
        [e.model_dump() for e in store.list_events("r1")],
    )


# ---- the link itself -------------------------------------------------------------------------------


def test_a_link_reads_back_its_claims_and_carries_no_token_or_secret() -> None:
    token = sign_link(_claims("q1"), KEY)
    assert read_link(token, KEY, now=NOW) == _claims("q1")
    assert "token" not in token.lower() and len(token) < 400


def test_an_altered_or_foreign_link_is_refused_before_its_claims_are_believed() -> None:
    token = sign_link(_claims("q1"), KEY)
    for forged in (_swap(token, t=BOB), _swap(token, i="q2"), _swap(token, e=2**40), token[:-2] + "AA"):
        with pytest.raises(LinkRefused) as refused:
            read_link(forged, KEY, now=NOW)
        assert refused.value.reason == "tampered" and refused.value.status == 403
    with pytest.raises(LinkRefused) as other_key:
        read_link(token, local_link_key("another stack"), now=NOW)
    assert other_key.value.reason == "tampered"
    for junk in ("", "abc", "a.b.c", "x" * 3000):
        with pytest.raises(LinkRefused) as malformed:
            read_link(junk, KEY, now=NOW)
        assert malformed.value.status == 400


def test_a_link_expires_by_the_injected_clock() -> None:
    token = sign_link(_claims("q1", expires=NOW + timedelta(hours=1)), KEY)
    assert read_link(token, KEY, now=NOW + timedelta(minutes=59)).interaction_id == "q1"
    with pytest.raises(LinkRefused) as expired:
        read_link(token, KEY, now=NOW + timedelta(hours=1))
    assert expired.value.reason == "expired" and expired.value.status == 410
    assert "2026-11-30T13:00:00.000Z" in expired.value.message


# ---- the pages -------------------------------------------------------------------------------------


def test_get_shows_the_question_and_changes_nothing_twice(api: Any, core: Core) -> None:
    iid = _ask(core)
    path = "/answer/" + sign_link(_claims(iid), KEY)
    before = _snapshot(core)
    first, second = api("GET", path), api("GET", path)
    assert first["statusCode"] == second["statusCode"] == 200
    assert _snapshot(core) == before
    page = first["body"]
    assert "Which database?" in page and 'value="postgres"' in page and 'value="dynamodb"' in page
    assert ALICE in page and "2026-12-01T12:00:00.000Z" in page and 'method="post"' in page
    assert "<script" not in page and "http" not in page.split("<body>")[1]  # no external asset, no script
    headers = {k: v[-1] for k, v in (first.get("multiValueHeaders") or {}).items()} | (first.get("headers") or {})
    assert headers["Cache-Control"] == "no-store" and headers["Referrer-Policy"] == "no-referrer"
    assert headers["Content-Type"].startswith("text/html")


def test_post_answers_once_as_the_recipient_and_a_second_post_is_a_410(api: Any, core: Core) -> None:
    iid = _ask(core)
    path = "/answer/" + sign_link(_claims(iid), KEY)
    answered = api("POST", path, {"option": "postgres"})
    assert answered["statusCode"] == 200 and "postgres" in answered["body"]
    question = core.store.get_interaction("r1", iid)
    assert question is not None and question.state.status == "answered"
    assert question.state.answer == "postgres" and question.state.answered_by == ALICE
    [event] = [e for e in core.store.list_events("r1") if e.type == "interaction_answered"]
    assert event.data["by"] == ALICE
    after = _snapshot(core)
    replay = api("POST", path, {"option": "dynamodb"})
    assert replay["statusCode"] == 410
    assert "already used" in replay["body"] and ALICE in replay["body"] and "postgres" in replay["body"]
    assert _snapshot(core) == after
    assert api("GET", path)["statusCode"] == 410  # the page says so too


def test_another_recipients_link_after_an_answer_is_a_409_page_naming_the_winner(
    api: Any, core: Core, links: MemoryAnswerLinks
) -> None:
    iid = _ask(core)
    api("POST", "/answer/" + sign_link(_claims(iid), KEY), {"option": "postgres"})
    bob = "/answer/" + sign_link(_claims(iid, BOB), KEY)
    after = _snapshot(core)
    refused = api("POST", bob, {"option": "dynamodb"})
    assert refused["statusCode"] == 409 and "Already answered by alice@example.com with postgres" in refused["body"]
    assert _snapshot(core) == after
    assert links.get_link("r1", f"link-{iid}-{BOB}") is None  # not spent: the refusal released it
    assert api("GET", bob)["statusCode"] == 409


def test_links_for_another_recipient_or_question_or_tampered_or_expired_change_nothing(
    api: Any, core: Core, clock: FixedClock
) -> None:
    first, second = _ask(core), _ask(core, "Release name?", options=None)
    token = sign_link(_claims(first), KEY)
    stranger = sign_link(_claims(first, "mallory@example.com"), KEY)  # signed, but not a recipient
    cases = {
        _swap(token, t=BOB): 403,  # alice's link made out to bob
        _swap(token, i=second): 403,  # alice's link pointed at the other question
        token[:-3] + "abc": 403,
        stranger: 403,
        sign_link(_claims("nope"), KEY): 404,
    }
    before = _snapshot(core)
    for link, status in cases.items():
        for method in ("GET", "POST"):
            result = api(method, "/answer/" + link, {"option": "postgres"} if method == "POST" else None)
            assert result["statusCode"] == status, (link, method, result["body"])
            assert "Nothing was changed" in result["body"]
    clock.advance(86400)
    expired = api("POST", "/answer/" + token, {"option": "postgres"})
    assert expired["statusCode"] == 410 and "expired" in expired["body"]
    assert _snapshot(core) == before


def test_free_text_the_schema_refuses_and_empty_forms_change_nothing(api: Any, core: Core) -> None:
    closed = _ask(core)  # options only: free text is off
    path = "/answer/" + sign_link(_claims(closed), KEY)
    before = _snapshot(core)
    assert api("POST", path, {"option": "mysql"})["statusCode"] == 422
    assert api("POST", path, {"text": "   "})["statusCode"] == 422
    assert api("POST", path, {"option": "postgres"}, content_type="application/json")["statusCode"] == 415
    assert _snapshot(core) == before
    assert api("POST", path, {"option": "postgres"})["statusCode"] == 200  # the link still works
    open_ = _ask(core, "Release name?", options=None)
    free = "/answer/" + sign_link(_claims(open_), KEY)
    assert "<textarea" in api("GET", free)["body"]
    assert api("POST", free, {"text": "  Nimbus <b>  "})["statusCode"] == 200
    stored = core.store.get_interaction("r1", open_)
    assert stored is not None and stored.state.answer == "Nimbus <b>"


def test_an_interrupt_link_points_at_the_inbox_instead(api: Any, core: Core) -> None:
    from baton.models import Interaction, InterruptRequest

    iid = "int-1"
    request = InterruptRequest(node="agent", prompt="Deploy?", json_schema={"type": "object"})
    core.store.put_interaction(
        Interaction(interaction_id=iid, run_id="r1", created_at="2026-11-30T12:00:00Z", request=request)
    )
    page = api("GET", "/answer/" + sign_link(_claims(iid), KEY))
    assert page["statusCode"] == 409 and f"#/interrupt/{iid}" in page["body"]


def test_a_claim_left_by_a_dead_request_is_taken_over_once_stale(
    answers: EmailAnswers, core: Core, clock: FixedClock, links: MemoryAnswerLinks
) -> None:
    from baton.channels.email.links import LinkUse

    iid = _ask(core)
    claims = _claims(iid)
    dead = LinkUse(
        link_id=claims.link_id, run_id="r1", interaction_id=iid, recipient=ALICE, at="2026-11-30T12:00:00.000Z"
    )
    assert links.claim_link(dead, stale_before="2026-11-30T11:59:00.000Z") is None
    token = sign_link(claims, KEY)
    assert answers.submit(token, {"option": "postgres"}).status == 410  # another request holds it
    clock.advance(61)
    assert answers.submit(token, {"option": "postgres"}).status == 200


# ---- the mail -----------------------------------------------------------------------------------------


class _Outbox:
    def __init__(self) -> None:
        self.sent: list[Mail] = []

    def send(self, mail: Mail) -> str:
        self.sent.append(mail)
        return str(len(self.sent))


def test_each_recipient_gets_their_own_link_and_no_task_token(clock: FixedClock) -> None:
    outbox = _Outbox()
    links = EmailLinks(key=lambda: KEY, base_url="https://api.example/live/", ttl_seconds=3600, clock=clock.now)
    notifier = EmailNotifier(outbox, [ALICE, BOB], links, inbox_url="https://inbox.example/inbox/")
    question = Notification(
        event="human_input_requested", kind="question", run_id="r1", interaction_id="q1", prompt="Which?", options=["a"]
    )
    notifier.deliver(question)
    assert [m.to for m in outbox.sent] == [ALICE, BOB]
    tokens = []
    for mail in outbox.sent:
        [line] = [ln.strip() for ln in mail.text.splitlines() if "/answer/" in ln]
        assert line.startswith("https://api.example/live/answer/")
        claims = read_link(line.rsplit("/", 1)[1], KEY, now=clock.now())
        assert claims.recipient == mail.to and claims.interaction_id == "q1" and claims.run_id == "r1"
        assert "task" not in mail.text.lower() and "Which?" in mail.text
        tokens.append(line)
    assert tokens[0] != tokens[1]
    interrupt = Notification(event="interrupt_created", kind="interrupt", run_id="r1", interaction_id="i1", prompt="?")
    mail = compose(interrupt, ALICE, links, "https://inbox.example/inbox/")
    assert "https://inbox.example/inbox/#/interrupt/i1" in mail.text and "/answer/" not in mail.text


def test_the_local_outbox_prints_an_answerable_mail_whole_and_any_other_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from baton.channels.email.mail import ANSWER_LINK_HEADING
    from baton.channels.email.outbox import OutboxMailSender, read_outbox

    sender = OutboxMailSender(tmp_path)
    sender.send(Mail(to="a@x", subject="Question: db?", text=f"db?\n\n{ANSWER_LINK_HEADING}\n  http://x/answer/l"))
    sender.send(Mail(to="a@x", subject="Run ended", text="Run r1 succeeded\n\nDetails:\n  run: r1"))
    printed = capsys.readouterr().out.splitlines()
    assert printed[0] == "[baton] mail to a@x: Question: db?" and "  http://x/answer/l" in printed
    assert printed[-1].startswith("[baton] mail to a@x: Run ended (kept in ") and "Details:" not in printed
    assert [m.subject for m in read_outbox(tmp_path)] == ["Question: db?", "Run ended"]  # both kept whole


class _FailsOnceFor(_Outbox):
    """An outbox whose send to `recipient` fails the first time (an SES throttle, say)."""

    def __init__(self, recipient: str) -> None:
        super().__init__()
        self.recipient = recipient
        self.failed = 0

    def send(self, mail: Mail) -> str:
        if mail.to == self.recipient and not self.failed:
            self.failed += 1
            raise RuntimeError("SES throttled")
        return super().send(mail)


def test_a_failed_send_for_one_recipient_remails_only_that_recipient_on_the_retry(clock: FixedClock) -> None:
    from baton.notify.transport import NotificationDeliveryError
    from tests.fakes.links import MemoryMailMarks

    outbox = _FailsOnceFor(BOB)
    links = EmailLinks(key=lambda: KEY, base_url="https://api.example/live/", ttl_seconds=3600, clock=clock.now)
    notifier = EmailNotifier(outbox, [ALICE, BOB], links, ledger=MemoryMailMarks())
    question = Notification(
        event="human_input_requested", kind="question", run_id="r1", interaction_id="q1", prompt="Which?", options=["a"]
    )
    with pytest.raises(NotificationDeliveryError) as failed:
        notifier.deliver(question)
    assert failed.value.details["failures"] == {BOB: "SES throttled"} and [m.to for m in outbox.sent] == [ALICE]
    notifier.deliver(Notification.from_message(question.to_message()))  # SNS retries the same message
    assert [m.to for m in outbox.sent] == [ALICE, BOB]  # alice once, bob once after the retry
    notifier.deliver(question)  # a third delivery of it mails nobody
    assert len(outbox.sent) == 2
    later = question.model_copy(update={"event": "reminder_sent"})  # another notification mails both again
    notifier.deliver(later)
    assert [m.to for m in outbox.sent] == [ALICE, BOB, ALICE, BOB]
