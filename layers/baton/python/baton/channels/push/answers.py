"""A notification's one-tap answer (`PushAnswers`, behind `POST /api/push/answer`): a push is a channel
where the notification lands and is answered, as an email link is. Its credential (`sender.py`
`credential_signer`) is spent once through the email links' record (`AnswerLinkStore.claim_link`, channel
`push`), and the answer is the API's own for the kind (`baton.channels.answering`)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from functools import partial
from typing import TYPE_CHECKING, Final

from baton.channels.answering import answer_as
from baton.channels.email.links import (
    PUSH_ANSWER_CONTEXT,
    STALE_CLAIM_SECONDS,
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
from baton.ids import iso

if TYPE_CHECKING:
    from collections.abc import Callable

    from baton.channels.push.web_push import VapidKeys
    from baton.contracts.push import PushAnswerRequest
    from baton.ports import AnswerLinkStore
    from baton.services.core import Core

PUSH_CHANNEL: Final = "push"  # the decision's `via` (InteractionAnswered)


class PushAnswers:
    """`POST /api/push/answer`: a one-tap credential's answer, given once, as the operator it was made for,
    through the API's own service for the kind (the same 409 naming the winner, the same 410 past the
    deadline). Refused before any read: no push key (404), a credential that is malformed (400), altered
    or for another answer (403), or expired (410); nothing changes then."""

    def __init__(
        self,
        core: Core,
        links: AnswerLinkStore,
        keys: Callable[[], VapidKeys | None],
        clock: Callable[[], datetime] = partial(datetime.now, UTC),
    ) -> None:
        self._core, self._links, self._keys, self._clock = core, links, keys, clock

    def answer(self, request: PushAnswerRequest) -> AnswerResult:
        claims = self._claims(request)
        interaction = self._core.store.get_interaction(claims.run_id, claims.interaction_id)
        if interaction is None:
            raise NotFoundError(f"item {claims.interaction_id} of run {claims.run_id} was not found")
        if (kind := interaction.request.kind) not in ONE_TAP_KINDS:
            raise ConflictError(f"a {kind} is answered in the inbox, not from a notification", details={"kind": kind})
        now = self._clock()
        use = LinkUse.claiming(claims, iso(now), channel="push")
        earlier = self._links.claim_link(use, stale_before=iso(now - timedelta(seconds=STALE_CLAIM_SECONDS)))
        if earlier is not None:
            raise _used(earlier)
        try:
            result = answer_as(self._core, interaction, request.answer, claims.recipient, via=PUSH_CHANNEL)
            assert isinstance(result, AnswerResult)  # a question's or a tool approval's (ONE_TAP_KINDS)
        except Exception:
            self._links.release_link(use)  # not answered: the credential still works
            raise
        self._links.complete_link(use.model_copy(update={"state": "answered", "answer": request.answer}))
        return result

    def _claims(self, request: PushAnswerRequest) -> LinkClaims:
        keys = self._keys()
        if keys is None:
            raise NotFoundError(PUSH_NOT_CONFIGURED)
        try:
            claims = read_link(request.credential, keys.answer_key, now=self._clock(), context=PUSH_ANSWER_CONTEXT)
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
