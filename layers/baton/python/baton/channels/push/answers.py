"""A notification's one-tap answer (`PushAnswers`, behind `POST /api/push/answer`): a push is a channel
where the notification lands and is answered, as an email link is. Its credential (`sender.py`
`credential_signer`) is spent once through the email links' record (`AnswerLinkStore.claim_link`, channel
`push`), and the answer is the API's own for the kind (`baton.channels.answering`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from baton.channels.answering import LinkAnswers, LinkUsed
from baton.channels.email.links import (
    PUSH_ANSWER_CONTEXT,
    LinkClaims,
    LinkRefused,
    LinkUse,
    answer_digest,
    read_link,
)
from baton.channels.push.subscriptions import PUSH_NOT_CONFIGURED
from baton.contracts.push import ONE_TAP_KINDS
from baton.contracts.questions import AnswerResult
from baton.errors import BadRequestError, BatonError, ConflictError, ForbiddenError, GoneError, NotFoundError, winner

if TYPE_CHECKING:
    from collections.abc import Callable

    from baton.channels.push.web_push import VapidKeys
    from baton.contracts.push import PushAnswerRequest

PUSH_CHANNEL: Final = "push"  # the link record's channel and the decision's `via` (InteractionAnswered)


@dataclass
class PushAnswers(LinkAnswers):
    """`POST /api/push/answer`: a one-tap credential's answer, given once, as the operator it was made for,
    through the API's own service for the kind (the same 409 naming the winner, the same 410 past the
    deadline). Refused before any read: no push key (404), a credential that is malformed (400), altered
    or for another answer (403), or expired (410); nothing changes then."""

    keys: Callable[[], VapidKeys | None]
    channel = via = PUSH_CHANNEL  # what the link's use and the decision record (class values, not fields)

    def answer(self, request: PushAnswerRequest) -> AnswerResult:
        claims = self._claims(request)
        interaction = self.core.store.get_interaction(claims.run_id, claims.interaction_id)
        if interaction is None:
            raise NotFoundError(f"item {claims.interaction_id} of run {claims.run_id} was not found")
        if (kind := interaction.request.kind) not in ONE_TAP_KINDS:
            raise ConflictError(f"a {kind} is answered in the inbox, not from a notification", details={"kind": kind})
        try:
            result = self.answer_once(claims, interaction, request.answer)
        except LinkUsed as used:
            raise _used(used.use) from None
        assert isinstance(result, AnswerResult)  # a question's or a tool approval's (ONE_TAP_KINDS)
        return result

    def _claims(self, request: PushAnswerRequest) -> LinkClaims:
        keys = self.keys()
        if keys is None:
            raise NotFoundError(PUSH_NOT_CONFIGURED)
        try:
            claims = read_link(request.credential, keys.answer_key, now=self.clock(), context=PUSH_ANSWER_CONTEXT)
        except LinkRefused as refused:
            raise _refused(refused) from None
        if claims.answer is None or claims.answer != answer_digest(request.answer):
            raise ForbiddenError(
                "This one-tap credential was made for another answer: it answers only the one its "
                "notification offered. Nothing was changed.",
                details={"reason": "other_answer"},
            )
        return claims


_REFUSED: dict[str, type[BatonError]] = {"malformed": BadRequestError, "tampered": ForbiddenError, "expired": GoneError}


def _refused(refused: LinkRefused) -> BatonError:
    """A refused credential in the notification's words (the link's reasons, its status)."""
    messages = {
        "malformed": "This is not a Baton one-tap credential.",
        "tampered": "This one-tap credential was altered: its signature does not match the item, the operator, "
        "the answer or the expiry it names.",
        "expired": f"This notification's answer has expired: {refused.message.removeprefix('This link has expired: ')}"
        " Open the item in the inbox.",
    }
    error = _REFUSED.get(refused.reason, BadRequestError)
    text = messages.get(refused.reason, refused.message)
    return error(f"{text} Nothing was changed.", details={"reason": refused.reason})


def _used(use: LinkUse) -> ConflictError:
    """A credential spent before: who spent it, with what, when (the 409's winner)."""
    if use.state == "answered":
        return ConflictError(
            f"This notification's answer was already used by {use.recipient} at {use.at}. Nothing was changed.",
            details={
                "reason": "used",
                "winner": winner(status="answered", value=use.answer, by=use.recipient, at=use.at),
            },
        )
    return ConflictError(
        f"This notification's answer is being given right now (since {use.at}). Nothing was changed.",
        details={"reason": "in_use"},
    )
