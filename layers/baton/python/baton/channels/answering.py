"""An operator's answer from a channel (an email link, a Slack button, a push notification's one tap): the
API's own service call for the item's kind, as that operator, so a channel gets the same checks, the same
409 naming the winner and the same 410 past a deadline as the API; an answer that comes with a signed link
spends the link once (`LinkAnswers`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from baton.channels.email.links import STALE_CLAIM_SECONDS, LinkClaims, LinkUse
from baton.ids import iso

if TYPE_CHECKING:
    from collections.abc import Callable

    from baton.contracts import InterruptResumed
    from baton.contracts.questions import AnswerResult
    from baton.contracts.runs import ResumeResult
    from baton.models import Interaction
    from baton.ports import AnswerLinkStore
    from baton.services.core import Core


def answer_as(
    core: Core, item: Interaction, value: Any, operator: str, *, via: str | None = None
) -> AnswerResult | ResumeResult | InterruptResumed | None:
    """Answer `item` with `value` as `operator`; None for a kind no channel answers (a review has its own
    actions). `via`: the channel, kept in the decision (`InteractionAnswered.via`) where the kind records it."""
    run_id, iid, kind = item.run_id, item.interaction_id, item.request.kind
    if kind == "question":
        from baton.services.questions import QuestionService

        return QuestionService(core).answer(run_id, iid, value, caller=operator, via=via)
    if kind == "tool_approval":
        from baton.services.tool_approvals import ToolApprovalService

        return ToolApprovalService(core).answer(run_id, iid, value, caller=operator, via=via)
    if kind == "ask":
        from baton.services.pauses import Resume
        from baton.services.runs import RunService

        return RunService(core).resume(Resume(run_id, {"answer": value}, caller=operator, node=item.request.node))
    if kind == "interrupt":
        from baton.contracts import ResumeInterrupt
        from baton.services.interrupts import InterruptService

        return InterruptService(core).resume(iid, ResumeInterrupt(input=value), caller=operator)
    return None


@dataclass(frozen=True)
class LinkUsed(Exception):
    """A link spent before, or being spent now: `use` says by whom, when and with what."""

    use: LinkUse


@dataclass
class LinkAnswers:
    """A channel whose answer comes with a signed link (an email link, a push's one-tap credential) that
    answers once. The channel declares what it records: `channel` on the link's use, `via` on the decision
    (`InteractionAnswered.via`; an email answer records none)."""

    core: Core
    links: AnswerLinkStore
    clock: Callable[[], datetime] = field(default=lambda: datetime.now(UTC), kw_only=True)
    channel: ClassVar[Literal["email", "push"]] = "email"
    via: ClassVar[str | None] = None

    def answer_once(
        self, claims: LinkClaims, item: Interaction, value: Any
    ) -> AnswerResult | ResumeResult | InterruptResumed | None:
        """Spend the link `claims` describes on answering `item` with `value` as its recipient (`answer_as`).
        The conditional write that claims the link comes first (`LinkUsed` if an earlier request spent it, or
        is spending it); an answer refused or failed releases the claim, so the link is spent only by the
        answer it stored. A request that dies between the claim and the answer leaves a claim that a retry
        may take over after `STALE_CLAIM_SECONDS`."""
        now = self.clock()
        # The use of the link the claims name (a push credential's answer digest is not kept).
        use = LinkUse(**claims.model_dump(exclude={"answer"}), at=iso(now), channel=self.channel)
        earlier = self.links.claim_link(use, stale_before=iso(now - timedelta(seconds=STALE_CLAIM_SECONDS)))
        if earlier is not None:
            raise LinkUsed(earlier)
        try:
            result = answer_as(self.core, item, value, claims.recipient, via=self.via)
        except Exception:
            self.links.release_link(use)  # not answered: the link still works
            raise
        self.links.complete_link(use.model_copy(update={"state": "answered", "answer": value}))
        return result
