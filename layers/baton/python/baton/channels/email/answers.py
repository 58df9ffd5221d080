"""What an answer link's URL does: GET shows the confirmation page and changes nothing; POST answers,
once, as the link's recipient, through the API's own service for the kind (the same checks, the same
409 with the winner, the same 410 past a gate's deadline): `QuestionService.answer` for a question,
`RunService.resume` with `{"answer": ...}` for an ask (a hosted pause, an agent's blocking ask),
`InterruptService.resume` for an interrupt whose answer one page can give (`forms.py`),
`ToolApprovalService.answer` for a tool approval (Approve, or Deny with the reason the agent reads).

The order of a POST: the link's signature, expiry and recipient (no I/O); the interaction; the form,
and for an interrupt its answer schema (`baton/domain/answer_schema.py`: a refused value is a 422 page
and the link still works); then the link is spent on the answer (`LinkAnswers.answer_once`: the conditional
write that claims it, then the answer; an answer refused (409, 410, 422) releases the claim, so the link
is spent only by the answer it stored)."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from baton.channels.answering import LinkAnswers, LinkUsed
from baton.channels.email.forms import LinkForm, NotAnAnswer, answer_of, link_form
from baton.channels.email.links import LinkClaims, LinkRefused, LinkUse, read_link
from baton.channels.email.pages import Page
from baton.domain.questions import answer_text
from baton.errors import BatonError
from baton.ids import iso
from baton.models import InterruptRequest
from baton.notify.model import inbox_item_url

if TYPE_CHECKING:
    from collections.abc import Callable, Collection, Mapping

    from baton.models import Interaction

log = logging.getLogger("baton")


@dataclass
class EmailAnswers(LinkAnswers):
    key: Callable[[], bytes]  # read on first use (deployed: from Secrets Manager)
    recipients: Collection[str]  # who may hold a link (config); an address not here is refused
    inbox_url: str = ""

    # ---- GET ------------------------------------------------------------------------------------
    def view(self, token: str) -> Page:
        """The confirmation page: what is asked, for whom, until when. Reads only."""
        try:
            claims, interaction, form = self._open(token)
        except LinkRefused as refused:
            return _refused(refused)
        used = self.links.get_link(claims.run_id, claims.link_id)
        if used is not None and used.state == "answered":
            return _used(used)
        settled = self._settled(interaction)
        if settled is not None:
            return settled
        # A tool approval's text box is its deny: the page says so, and what the reason is for.
        tool = form.kind == "tool"
        return Page(
            200,
            "Approve this tool call?" if tool else "Answer this question",
            prompt=interaction.request.prompt,
            paragraphs=["Nothing is answered until you press a button below."],
            options=[label for label, _ in form.buttons],
            option_values=[value for _, value in form.buttons],
            free_text=form.free_text,
            text_label="Or deny it, with the reason (the agent reads it):" if tool else Page.text_label,
            text_button="Deny" if tool else Page.text_button,
            meta=self._meta(claims, interaction),
        )

    # ---- POST -----------------------------------------------------------------------------------
    def submit(self, token: str, form: Mapping[str, str]) -> Page:
        ready = self._ready(token, form)
        if isinstance(ready, Page):
            return ready
        claims, interaction, answer = ready
        try:
            self.answer_once(claims, interaction, answer)
        except LinkUsed as used:
            return _used(used.use)
        except BatonError as err:
            return _answer_refused(err)
        except Exception:
            log.exception("answer by email link failed", extra={"run_id": claims.run_id})
            return Page(503, "Not answered: try again", ["Baton could not store the answer just now. Nothing changed."])
        return Page(
            200,
            "Answered",
            [f"Your answer was recorded: {answer_text(answer)}", "This link is now used up."],
            meta=self._meta(claims, interaction),
        )

    def _ready(self, token: str, form: Mapping[str, str]) -> tuple[LinkClaims, Interaction, Any] | Page:
        """The link's claims, its interaction and the checked answer; or the page that says why not
        (nothing read or written beyond the interaction: the link still works)."""
        try:
            claims, interaction, link = self._open(token)
        except LinkRefused as refused:
            return _refused(refused)
        try:
            return claims, interaction, self._checked(interaction, link, form)
        except NotAnAnswer as why:
            meta = self._meta(claims, interaction)
            return Page(422, "No answer given", [str(why), "Nothing was changed."], meta=meta)
        except BatonError as err:  # the answer schema refused it: said, and the link still works
            return Page(err.http_status, "Not answered", [err.message, "Nothing was changed."])

    def _checked(self, interaction: Interaction, form: LinkForm, posted: Mapping[str, str]) -> Any:
        """The answer the form gives, checked by the interrupt's answer schema (the API's check)."""
        value = answer_of(form, posted)
        request = interaction.request
        if isinstance(request, InterruptRequest):
            from baton.domain.answer_schema import validate_answer

            return validate_answer(value, schema=request.schema_, json_schema=request.json_schema)
        return value

    # ---- the shared part ------------------------------------------------------------------------
    def _open(self, token: str) -> tuple[LinkClaims, Interaction, LinkForm]:
        """The link's claims, its question and the question's form, or why not (nothing is read for a link
        that fails its mac)."""
        claims = read_link(token, self.key(), now=self.clock())
        if claims.recipient.lower() not in {r.lower() for r in self.recipients}:
            raise LinkRefused(
                "not_a_recipient",
                403,
                f"This link was made for {claims.recipient}, who is not (or no longer) a recipient of Baton's mail.",
            )
        found = self.core.store.get_interaction(claims.run_id, claims.interaction_id)
        if found is None:
            raise LinkRefused(
                "not_found", 404, f"Question {claims.interaction_id} of run {claims.run_id} was not found."
            )
        form = link_form(found)
        if form is None:
            url = inbox_item_url(self.inbox_url, found.request.kind, found.run_id, found.interaction_id)
            raise LinkRefused(
                "not_answerable",
                409,
                "This item cannot be answered from a mail link: open it in the inbox.",
                url=url if self.inbox_url else "",
            )
        return claims, found, form

    def _settled(self, interaction: Interaction) -> Page | None:
        st = interaction.state
        if st.status == "pending":
            return None
        if st.status == "answered":
            return Page(
                409,
                "Already answered",
                [f"Already answered by {st.answered_by} with {answer_text(st.answer)} at {st.answered_at}."],
                prompt=interaction.request.prompt,
            )
        return Page(
            410,
            "No longer waiting",
            [f"This question is {st.status.replace('_', ' ')}{': ' + st.reason if st.reason else ''}."],
            prompt=interaction.request.prompt,
        )

    def _meta(self, claims: LinkClaims, interaction: Interaction) -> list[str]:
        until = iso(datetime.fromtimestamp(claims.expires_at, UTC))
        meta = [
            f"For: {claims.recipient}",
            f"Run: {claims.run_id} · node {interaction.request.node} · question {claims.interaction_id}",
            f"This link works once, until {until}.",
        ]
        if interaction.expires_at:
            meta.append(f"The question itself closes at {interaction.expires_at}.")
        return meta


def _refused(refused: LinkRefused) -> Page:
    titles = {
        "malformed": "Not a Baton link",
        "tampered": "This link was altered",
        "expired": "This link has expired",
        "not_a_recipient": "Not a recipient",
        "not_found": "Question not found",
        "not_answerable": "Answer this in the inbox",
    }
    link = ("Open it in the inbox", refused.url) if refused.url else None
    return Page(refused.status, titles[refused.reason], [refused.message, "Nothing was changed."], link=link)


def _used(use: LinkUse) -> Page:
    if use.state == "answered":
        said = f"It was used by {use.recipient} at {use.at} to answer: {answer_text(use.answer)}."
    else:
        said = f"It is being used by {use.recipient} right now (since {use.at})."
    return Page(410, "This link was already used", [said, "A link answers once. Nothing was changed."])


def _answer_refused(err: BatonError) -> Page:
    found = err.details.get("winner")
    if err.http_status == 409 and isinstance(found, dict) and found.get("status") == "answered":
        text = f"Already answered by {found.get('by')} with {answer_text(found.get('value'))} at {found.get('at')}."
        return Page(409, "Already answered", [text, "Your answer was not recorded."])
    return Page(err.http_status, "Not answered", [err.message, "Your answer was not recorded."])
