"""`POST /slack/interactions`: the two things decided inside the request beyond a queued click, loaded
on the first such request (the ack's fast path is `ack.py`, which verifies, refuses replays and queues
clicks without any of this):

- the "Answer…" button opens the modal (`views.open` must use the click's `trigger_id` within 3 s);
- a modal's values are checked against the answer schema (`baton/domain/answer_schema.py`, the API's
  check), so a refused value comes back as Slack's per-field error and nothing is stored; an accepted
  one is queued for the worker like a click.

`SlackInteractions` is the whole endpoint (`ack.SlackAck` with this desk behind it), as tests and the
local stack build it.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any, Protocol

from pydantic import ValidationError
from slack_sdk.errors import SlackClientError

from baton.channels.slack.ack import Click, JobQueue, ReplayGuard, SlackAck, SlackReply, not_an_operator
from baton.channels.slack.blocks import modal_view
from baton.channels.slack.forms import answer_of, block_of_path, form_of
from baton.channels.slack.payloads import InteractionPayload, MessageRef, ModalMetadata, SlackJob, SlackView
from baton.domain.answer_schema import validate_answer
from baton.errors import BatonError, ValidationFailedError
from baton.models import InterruptRequest

if TYPE_CHECKING:
    from collections.abc import Callable

    from baton.channels.slack.forms import SlackForm
    from baton.models import Interaction
    from baton.ports import InteractionStore

log = logging.getLogger("baton")

__all__ = ["SlackForms", "SlackInteractions", "SlackReply", "not_an_operator"]


class ViewOpener(Protocol):
    def views_open(self, *, trigger_id: str, view: dict[str, Any]) -> Any: ...


class SlackForms:
    """The `FormDesk` of `ack.py`: the modal opened, and a submitted modal checked, then queued."""

    def __init__(
        self,
        *,
        operators: Callable[[], dict[str, str]],
        store: InteractionStore,
        jobs: JobQueue,
        views: Callable[[], ViewOpener],
    ) -> None:
        self._operators = operators
        self._store = store
        self._jobs = jobs
        self._views = views

    def open_modal(self, click: Click, operator: str) -> SlackReply:
        interaction = self._store.get_interaction(click.run_id, click.interaction_id)
        form = form_of(interaction) if interaction is not None else None
        if interaction is None or form is None or not form.has_modal or not click.trigger_id:
            return SlackReply.refused(404, f"interaction {click.interaction_id} has no Slack form", "not_found")
        view = modal_view(interaction, form, channel=click.message.channel, ts=click.message.ts)
        try:
            self._views().views_open(trigger_id=click.trigger_id, view=view)
        except SlackClientError as err:  # Slack refused or did not answer: said, and nothing changed
            log.warning("views.open failed", extra={"run_id": click.run_id, "error": str(err)[:300]})
            return SlackReply.refused(502, "Slack did not open the answer form; click again", "bad_gateway")
        return SlackReply()

    def submit_view(self, raw: dict[str, Any]) -> SlackReply:
        try:
            payload = InteractionPayload.model_validate(raw)
        except ValidationError as err:
            return SlackReply.refused(400, f"not a Slack interaction payload: {str(err)[:200]}", "bad_request")
        view = payload.view
        assert view is not None  # ack.py routes only a view_submission with its view here
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


class SlackInteractions(SlackAck):
    """The whole endpoint on injected parts: the fast path with `SlackForms` behind it."""

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
        forms = SlackForms(operators=operators, store=store, jobs=jobs, views=views)
        super().__init__(
            signing_secret=signing_secret,
            operators=operators,
            replay=replay,
            jobs=jobs,
            forms=lambda: forms,
            clock=clock,
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
