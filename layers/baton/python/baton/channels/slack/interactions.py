"""`POST /slack/interactions`: what Slack sends when someone clicks a Baton button or submits its modal.

Order matters, and is the whole point:
1. the signature (`X-Slack-Signature`, HMAC-SHA256 over `v0:{timestamp}:{raw body}` with the signing
   secret, timestamp within 5 minutes, constant-time compare: `slack_sdk`'s `SignatureVerifier`) is
   checked on the raw bytes before anything is parsed: a bad one or an old timestamp is a 401;
2. the signature is then written once (`ReplayGuard`, a conditional write with a TTL): a request seen
   before is refused (409) and changes nothing;
3. only then the payload is parsed, the Slack user mapped to a Baton operator, and the work handed to
   the worker (`JobQueue`): Slack needs its ack within 3 s, so the answer runs after it.

Two things are decided here, synchronously, because Slack needs them in the response or at once: the
"Answer…" button opens the modal (`views.open` must use the click's `trigger_id` within 3 s), and a
modal's values are checked against the answer schema (`baton/domain/answer_schema.py`, the API's
check), so a refused value comes back as Slack's per-field error and nothing is stored.
"""

from __future__ import annotations

import json
import logging
import time
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import parse_qs

from pydantic import BaseModel, ValidationError
from slack_sdk.errors import SlackClientError
from slack_sdk.signature import Clock, SignatureVerifier

from baton.channels.slack.blocks import modal_view
from baton.channels.slack.forms import answer_of, block_of_path, form_of
from baton.channels.slack.payloads import (
    MODAL_CALLBACK,
    OPEN_FORM_ACTION,
    OPTION_ACTION,
    ButtonValue,
    Container,
    InteractionPayload,
    MessageRef,
    ModalMetadata,
    SlackJob,
    SlackView,
)
from baton.domain.answer_schema import validate_answer
from baton.errors import BatonError, ValidationFailedError
from baton.models import InterruptRequest

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from baton.channels.slack.forms import SlackForm
    from baton.models import Interaction
    from baton.ports import InteractionStore

log = logging.getLogger("baton")

WINDOW_SECONDS = 5 * 60  # Slack's: a request older than this is refused (slack_sdk checks the same)


class ReplayGuard(Protocol):
    def first_use(self, signature: str, *, expires_at: int) -> bool:
        """True the first time `signature` is seen; False for every later use (kept until expires_at)."""
        ...


class JobQueue(Protocol):
    def submit(self, job: SlackJob) -> None:
        """Run `job` in the worker after this request is answered."""
        ...


class ViewOpener(Protocol):
    def views_open(self, *, trigger_id: str, view: dict[str, Any]) -> Any: ...


class SlackReply(BaseModel):
    """What the interaction endpoint answers: a status and a JSON body (None: an empty 200, Slack's ack)."""

    status: int = 200
    body: dict[str, Any] | None = None

    @classmethod
    def refused(cls, status: int, message: str, code: str) -> SlackReply:
        return cls(status=status, body={"error": code, "message": message})


def not_an_operator(slack_user: str) -> str:
    return f"you are not a Baton operator: ask your admin to map {slack_user}"


class SlackInteractions:
    def __init__(
        self,
        *,
        signing_secret: Callable[[], str],
        operators: Callable[[], dict[str, str]],
        store: InteractionStore,
        replay: ReplayGuard,
        jobs: JobQueue,
        views: Callable[[], ViewOpener],
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._secret = signing_secret
        self._operators = operators
        self._store = store
        self._replay = replay
        self._jobs = jobs
        self._views = views
        self._clock = clock

    def handle(self, body: bytes, headers: Mapping[str, str]) -> SlackReply:
        refused = self._verify(body, headers)
        if refused is not None:
            return refused
        try:
            payload = _parse(body)
        except (ValueError, ValidationError) as err:
            return SlackReply.refused(400, f"not a Slack interaction payload: {str(err)[:200]}", "bad_request")
        if payload.type == "block_actions":
            return self._block_action(payload)
        if payload.type == "view_submission" and payload.view is not None:
            return self._view_submission(payload, payload.view)
        return SlackReply()  # other interaction types: acknowledged, nothing to do

    def _verify(self, body: bytes, headers: Mapping[str, str]) -> SlackReply | None:
        """None when the request is Slack's, signed within the window and seen for the first time."""
        lowered = {k.lower(): v for k, v in headers.items()}
        timestamp = lowered.get("x-slack-request-timestamp")
        signature = lowered.get("x-slack-signature")
        if not timestamp or not signature or not timestamp.isdigit():
            return SlackReply.refused(401, "missing or malformed Slack signature headers", "unauthorized")
        verifier = SignatureVerifier(self._secret(), clock=_Clock(self._clock))
        if not verifier.is_valid(body=body, timestamp=timestamp, signature=signature):
            return SlackReply.refused(401, "bad Slack signature, or a timestamp outside 5 minutes", "unauthorized")
        if not self._replay.first_use(signature, expires_at=int(timestamp) + WINDOW_SECONDS + 60):
            return SlackReply.refused(409, "this Slack request was already received (a replay)", "replayed")
        return None

    # ---- a button --------------------------------------------------------------------------------
    def _block_action(self, payload: InteractionPayload) -> SlackReply:
        action = payload.actions[0] if payload.actions else None
        if action is None or not action.value or not action.action_id.startswith(("baton_option_", OPEN_FORM_ACTION)):
            return SlackReply()  # the inbox link button, or someone else's
        try:
            button = ButtonValue.model_validate_json(action.value)
        except ValidationError:
            return SlackReply.refused(400, "the button's value is not one Baton made", "bad_request")
        container = payload.container or _NO_CONTAINER
        message = MessageRef(response_url=payload.response_url, channel=container.channel_id, ts=container.message_ts)
        operator = self._operators().get(payload.user.id)
        if operator is None:
            self._jobs.submit(_refusal(payload.user.id, button.r, button.i, message))
            return SlackReply()
        if action.action_id == OPEN_FORM_ACTION:
            return self._open_modal(payload, button, message)
        if not action.action_id.startswith(OPTION_ACTION) or button.o is None:
            return SlackReply.refused(400, "an option button without its option", "bad_request")
        job = SlackJob(
            action="answer",
            slack_user=payload.user.id,
            operator=operator,
            run_id=button.r,
            interaction_id=button.i,
            option=button.o,
            message=message,
        )
        self._jobs.submit(job)
        return SlackReply()

    def _open_modal(self, payload: InteractionPayload, button: ButtonValue, message: MessageRef) -> SlackReply:
        interaction = self._store.get_interaction(button.r, button.i)
        form = form_of(interaction) if interaction is not None else None
        if interaction is None or form is None or not form.has_modal or not payload.trigger_id:
            return SlackReply.refused(404, f"interaction {button.i} has no Slack form", "not_found")
        view = modal_view(interaction, form, channel=message.channel, ts=message.ts)
        try:
            self._views().views_open(trigger_id=payload.trigger_id, view=view)
        except SlackClientError as err:  # Slack refused or did not answer: said, and nothing changed
            log.warning("views.open failed", extra={"run_id": button.r, "error": str(err)[:300]})
            return SlackReply.refused(502, "Slack did not open the answer form; click again", "bad_gateway")
        return SlackReply()

    # ---- a modal's Submit -----------------------------------------------------------------------
    def _view_submission(self, payload: InteractionPayload, view: SlackView) -> SlackReply:
        if view.callback_id != MODAL_CALLBACK:
            return SlackReply()
        target = self._modal_target(view)
        if isinstance(target, SlackReply):
            return target
        meta, interaction, form = target
        operator = self._operators().get(payload.user.id)
        if operator is None:
            return _errors({form.fields[0].block_id: not_an_operator(payload.user.id)})
        value, problems = answer_of(form, view.values)
        refusal = {p.block_id: p.message for p in problems} or _schema_refusal(interaction, form, value)
        if refusal:
            return _errors(refusal)
        job = SlackJob(
            action="answer",
            slack_user=payload.user.id,
            operator=operator,
            run_id=meta.r,
            interaction_id=meta.i,
            value=value,
            from_modal=True,
            message=MessageRef(channel=meta.c, ts=meta.t),
        )
        self._jobs.submit(job)
        return SlackReply()  # an empty 200 closes the modal

    def _modal_target(self, view: SlackView) -> tuple[ModalMetadata, Interaction, SlackForm] | SlackReply:
        try:
            meta = ModalMetadata.model_validate_json(view.private_metadata)
        except ValidationError:
            return SlackReply.refused(400, "the modal's metadata is not one Baton made", "bad_request")
        interaction = self._store.get_interaction(meta.r, meta.i)
        form = form_of(interaction) if interaction is not None else None
        if interaction is None or form is None or not form.fields:
            return SlackReply.refused(404, f"interaction {meta.i} has no Slack form", "not_found")
        return meta, interaction, form


class _Clock(Clock):
    """slack_sdk's clock over an injected time source."""

    def __init__(self, now: Callable[[], float]) -> None:
        self._now = now

    def now(self) -> float:
        return float(self._now())


_NO_CONTAINER = Container()


def _parse(body: bytes) -> InteractionPayload:
    """Slack posts `application/x-www-form-urlencoded` with one field, `payload`, holding the JSON."""
    fields = parse_qs(body.decode("utf-8"), strict_parsing=True)
    raw = fields.get("payload")
    if not raw:
        raise ValueError("no payload field")
    return InteractionPayload.model_validate(json.loads(raw[0]))


def _refusal(slack_user: str, run_id: str, interaction_id: str, message: MessageRef) -> SlackJob:
    return SlackJob(
        action="refuse", slack_user=slack_user, run_id=run_id, interaction_id=interaction_id, message=message
    )


def _errors(errors: dict[str, str]) -> SlackReply:
    return SlackReply(body={"response_action": "errors", "errors": {k: v[:150] for k, v in errors.items()}})


def _schema_refusal(interaction: Interaction, form: SlackForm, value: Any) -> dict[str, str] | None:
    """The answer schema's verdict on an interrupt's value (the check the API's resume runs), as
    Slack's per-field errors. Questions have no schema: their free text only has to be there."""
    request = interaction.request
    if not isinstance(request, InterruptRequest):
        return None
    try:
        validate_answer(value, schema=request.schema_, json_schema=request.json_schema)
    except ValidationFailedError as err:
        path = str(err.details.get("path") or "$")
        reason = str(err.details.get("reason") or err.message)
        return {block_of_path(form, path): reason}
    except BatonError as err:
        return {form.fields[0].block_id: err.message}
    return None
